"""Kata 02 tests: gradients that change shape, against torch's."""
import contextlib
import math

import numpy as np
import pytest
# torch: imported in the tests, after your code ran (a kata not started never waits for it)
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

from plugin.grading.gpu_check import check_grads_on_gpu
from plugin.grading.oracle import Constant

DTYPES = st.sampled_from([np.float64, np.float32])

def away_from_zero(array, margin=0.25):
    """Shift values near 0 away from it: no division by ~0."""
    return np.where(np.abs(array) < margin, np.where(array < 0, -margin, margin), array).astype(array.dtype)


def values(shape, dtype=np.float64, seed=0):
    """Values in [-2, 2] (ties have probability 0: they get tests of their own)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-2.0, 2.0, size=shape).astype(dtype)


def draw_array(draw, shape, dtype=None):
    """Hypothesis picks the shape, the dtype and a seed; numpy picks the values. Gradients of
    shape operations depend on shapes, not values, and a failure shrinks fast to a small shape."""
    return values(shape, dtype or draw(DTYPES), seed=draw(st.integers(0, 7)))


@contextlib.contextmanager
def hint(text):
    """Add a sentence about the likely cause to a failure from the oracle."""
    __tracebackhide__ = True
    try:
        yield
    except AssertionError as error:
        raise AssertionError(f"{error}\n  hint: {text}") from None


def unbroadcast(ag):
    return ag.pieces.active.unbroadcast


# --- broadcasting: the engine reduces every binary operation's gradients with unbroadcast ------

@st.composite
def broadcast_operands(draw):
    """Two arrays of mutually broadcastable shapes; at least one of them is stretched."""
    shapes = draw(
        mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3).filter(
            lambda s: any(shape != s.result_shape for shape in s.input_shapes)
        )
    )
    dtype = draw(DTYPES)
    a, b = (draw_array(draw, shape, dtype) for shape in shapes.input_shapes)
    return a, b


BINARY = {
    "a + b": lambda lib, a, b: a + b,
    "a - b": lambda lib, a, b: a - b,
    "a * b": lambda lib, a, b: a * b,
    "a / b": lambda lib, a, b: a / b,
    "a ** b": lambda lib, a, b: a ** b,
}


@pytest.mark.parametrize("op", list(BINARY))
@given(pair=broadcast_operands())
def test_binary_operations_broadcast(oracle, op, pair):
    a, b = pair
    if op == "a / b":
        b = away_from_zero(b)
    if op == "a ** b":
        a = (np.abs(a) + 0.5).astype(a.dtype)  # a positive base: b's gradient takes log(a)
    with hint("each operand's gradient must be summed over the positions broadcasting copied it to"):
        oracle.check_grads(BINARY[op], op=f"{op} with a of shape {a.shape} and b of shape {b.shape}", a=a, b=b)


SCALAR_SIDES = {
    "s + x": lambda lib, s, x: s + x,
    "x - s": lambda lib, s, x: x - s,
    "s * x * 2": lambda lib, s, x: s * x * 2.0,
    "2 / (x * s)": lambda lib, s, x: 2.0 / (x * s),
    "(3 - s) * x + 1": lambda lib, s, x: (3.0 - s) * x + 1.0,
}


@pytest.mark.parametrize("op", list(SCALAR_SIDES))
def test_a_0d_tensor_on_either_side(oracle, op):
    """s is a 0-d tensor that requires grad, broadcast to x's shape: its gradient sums everything."""
    s = np.array(1.5)
    x = away_from_zero(values((2, 3)))
    oracle.check_grads(SCALAR_SIDES[op], op=f"{op} with a 0-d s and x of shape (2, 3)", s=s, x=x)


UNBROADCAST_CASES = [
    ((2, 3), (3,)),  # a missing leading dimension
    ((2, 3), (1, 3)),  # a size-1 dimension
    ((2, 3), (2, 1)),
    ((4, 2, 3), (2, 1)),  # both at once
    ((3, 4, 2), (1, 4, 1)),
    ((2, 3), ()),  # a 0-d operand
    ((2, 1, 3), (1, 1)),  # 1 stays 1 where grad has 1 too
    ((1, 3, 4), (3, 1)),  # a leading dimension of size 1, then a stretched one
    ((2, 0), (0,)),  # an empty operand: its size-0 dimension is not stretched
    ((2, 3), (2, 3)),  # nothing to do
]


@pytest.mark.parametrize("grad_shape, shape", UNBROADCAST_CASES, ids=[f"{g}->{s}" for g, s in UNBROADCAST_CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unbroadcast_directly(ag, grad_shape, shape, dtype):
    """unbroadcast(grad, shape) must equal torch's grad.sum_to_size(shape)."""
    g = values(grad_shape, dtype, seed=len(grad_shape))
    got = unbroadcast(ag)(ag.tensor(g), shape)
    call = f"unbroadcast(grad of shape {grad_shape}, {shape})"
    assert isinstance(got, ag.Tensor), f"{call} returned a {type(got).__name__}, not a Tensor"
    assert tuple(got.shape) == shape, f"{call} has shape {tuple(got.shape)}; it must be exactly {shape}"
    assert got.dtype == dtype, f"{call} is {got.dtype}; it must keep grad's dtype, {np.dtype(dtype)}"
    import torch
    expected = torch.tensor(g).sum_to_size(shape).numpy()
    mine = np.asarray(got.detach().numpy(), dtype=np.float64)
    copies = math.prod(grad_shape) // max(math.prod(shape), 1)
    if copies > 1 and np.allclose(mine * copies, expected, rtol=1e-4, atol=1e-5):
        pytest.fail(
            f"{call} looks like a mean: each value was copied {copies} times, so its gradient is "
            "the SUM of the copies' gradients, not their average", pytrace=False,
        )
    np.testing.assert_allclose(mine, expected, rtol=1e-4, atol=1e-5, err_msg=f"{call} differs from torch's sum_to_size")


# --- reductions -------------------------------------------------------------------------------

@st.composite
def reduction_cases(draw, min_dims=0):
    """(x, dim, keepdim): dim is None, an int or a tuple, negative or not."""
    shape = draw(array_shapes(min_dims=min_dims, max_dims=4, min_side=1, max_side=4))
    rank = max(len(shape), 1)  # a 0-d tensor takes dim 0 or -1, like a 1-D one
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        dim = None
    elif kind == "int":
        dim = draw(st.integers(-rank, rank - 1))
    else:
        axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
        dim = tuple(axis - rank if draw(st.booleans()) else axis for axis in axes)
    return draw_array(draw, shape), dim, draw(st.booleans())


@given(case=reduction_cases())
def test_sum(oracle, case):
    x, dim, keepdim = case
    oracle.check_grads(
        lambda lib, x: x.sum(dim=dim, keepdim=keepdim),
        op=f"x.sum(dim={dim}, keepdim={keepdim}) with x of shape {x.shape}", x=x,
    )


@given(case=reduction_cases())
def test_mean(oracle, case):
    x, dim, keepdim = case
    oracle.check_grads(
        lambda lib, x: x.mean(dim=dim, keepdim=keepdim),
        op=f"x.mean(dim={dim}, keepdim={keepdim}) with x of shape {x.shape}", x=x,
    )


REDUCTION_CASES = [
    ((2, 3, 4), None, False),
    ((2, 3, 4), None, True),
    ((2, 3, 4), 1, False),
    ((2, 3, 4), -1, True),
    ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), (-1, 0), True),
    ((2, 3, 4), (2, -2, 0), False),
    ((3, 3), 1, False),  # square: a gradient broadcast along the wrong axis still fits
    ((2, 3, 4, 5), (1, -1), False),
    ((), 0, True),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, dim, keepdim", REDUCTION_CASES, ids=[f"{s}-dim={d}-keepdim={k}" for s, d, k in REDUCTION_CASES])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_reductions(oracle, reduction, shape, dim, keepdim, dtype):
    x = values(shape, dtype)
    note = "without keepdim, put a 1 back where each reduced axis was before broadcasting grad" if not keepdim else (
        "every element that went into an output element gets that element's gradient")
    with hint(note):
        oracle.check_grads(
            lambda lib, x: getattr(x, reduction)(dim=dim, keepdim=keepdim),
            op=f"x.{reduction}(dim={dim}, keepdim={keepdim}) with x of shape {shape}", x=x,
        )


def test_a_reduction_inside_a_computation(oracle):
    """A softmax written by hand: the reduced gradient must broadcast back correctly."""
    x = values((3, 4))

    def softmax(lib, x):
        e = (x - x.max(dim=1, keepdim=True).values).exp()
        return e / e.sum(dim=-1, keepdim=True) + x.mean(dim=0)

    oracle.check_grads(softmax, op="e / e.sum(dim=-1, keepdim=True) + x.mean(dim=0)", x=x)


@st.composite
def distinct_values(draw, min_dims=0):
    """An array without ties (ties have their own tests)."""
    shape = draw(array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=4))
    return draw_array(draw, shape)


@given(x=distinct_values())
def test_max_of_everything(oracle, x):
    oracle.check_grads(lambda lib, x: x.max(), op=f"x.max() with x of shape {x.shape}", x=x)


def test_max_of_everything_shares_ties_evenly(oracle):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 3.0, -1.0]])
    with hint("torch splits the gradient of x.max() evenly between the elements tied for the max (here 3 of them get 1/3 each)"):
        oracle.check_grads(lambda lib, x: x.max() * 2.0, op="x.max() * 2 with a three-way tie", x=x)


def test_max_of_everything_with_a_nan_sends_the_gradient_to_the_nans(oracle):
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 3.0, -1.0]])
    with hint("a nan makes x.max() nan, and nan == nan is False: torch shares the gradient between the nan elements (x != x)"):
        oracle.check_grads(lambda lib, x: x.max() * 2.0, op="x.max() * 2 of an x with two nans", x=x)


def test_max_gives_zero_off_the_winners_even_for_an_infinite_gradient(oracle):
    """log(max) at a max of 0 sends an infinite gradient back: the winners get it, the others
    0 (not inf * 0 = nan)."""
    x = np.array([[0.0, -1.0, -2.0], [-3.0, 0.0, -1.0]])
    with hint("select the winners' gradient (where) rather than multiply by a mask: inf * 0 is nan, torch gives 0 off the winners"):
        oracle.check_grads(lambda lib, x: x.max().log(), op="x.max().log() with a max of 0 (an infinite gradient)", x=x)
        oracle.check_grads(lambda lib, x: x.max(dim=1).values.log().sum(),
                           op="x.max(dim=1).values.log().sum() with maxima of 0 (infinite gradients)", x=x)


def test_the_gradient_of_a_sum_cannot_be_changed_in_place(oracle):
    """sum's gradient is grad expanded to x's shape: every element is the one incoming value, so
    torch refuses to change it in place (an expand, not a copy made by multiplying by ones)."""

    def grad_changed_in_place(lib, x):
        g, = lib.autograd.grad(x.sum(), [x])
        return g.add_(1)

    with hint("sum_backward returns grad.expand(shape): the view that repeats one value, as torch's"):
        oracle.compare(grad_changed_in_place, error_phrase="more than one element of the written-to tensor",
                       x=np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))


@st.composite
def max_along_dim_cases(draw):
    x = draw(distinct_values(min_dims=1))
    return x, draw(st.integers(-x.ndim, x.ndim - 1)), draw(st.booleans())


@given(case=max_along_dim_cases())
def test_max_along_a_dim(oracle, case):
    x, dim, keepdim = case
    oracle.check_grads(
        lambda lib, x: x.max(dim=dim, keepdim=keepdim).values,
        op=f"x.max(dim={dim}, keepdim={keepdim}).values with x of shape {x.shape}", x=x,
    )


def test_max_along_a_dim_with_ties_sends_the_gradient_to_the_index_it_returned(oracle):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    with hint("with a dim, max returns one index per row (the first of tied elements); only that element gets the gradient: use ctx.indices"):
        oracle.check_grads(lambda lib, x: x.max(dim=1)[0], op="x.max(dim=1).values with ties in each row", x=x)


# --- reshape, view, transpose -------------------------------------------------------------------

@st.composite
def reshape_cases(draw):
    shape = draw(array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    n = math.prod(shape)
    targets = [(n,), (-1,), (1, n), (n, 1, 1), tuple(reversed(shape)), shape + (1,), (1,) + shape]
    if len(shape) >= 2:
        targets += [(shape[0], -1), (-1, shape[-1])]
    if n == 1:
        targets.append(())
    x = draw_array(draw, shape)
    return x, draw(st.sampled_from(targets)), draw(st.sampled_from(["reshape", "view"]))


@given(case=reshape_cases())
def test_reshape_and_view(oracle, case):
    x, target, method = case
    oracle.check_grads(
        lambda lib, x: getattr(x, method)(target) * 2.0,
        op=f"x.{method}({target}) with x of shape {x.shape}", x=x,
    )


@st.composite
def transpose_cases(draw):
    shape = draw(array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    x = draw_array(draw, shape)
    dims = st.integers(-len(shape), len(shape) - 1)
    return x, draw(dims), draw(dims)


@given(case=transpose_cases())
def test_transpose(oracle, case):
    x, dim0, dim1 = case
    oracle.check_grads(
        lambda lib, x: x.transpose(dim0, dim1) * 2.0,
        op=f"x.transpose({dim0}, {dim1}) with x of shape {x.shape}", x=x,
    )


def test_T_of_a_matrix(oracle):
    oracle.check_grads(lambda lib, x: x.T * 2.0, op="x.T with x of shape (2, 3)", x=values((2, 3)))


def test_shape_operations_chained(oracle):
    x = values((2, 3, 4))
    oracle.check_grads(
        lambda lib, x: x.transpose(0, 2).reshape(4, 6).T.view(2, 3, 4) * x,
        op="x.transpose(0, 2).reshape(4, 6).T.view(2, 3, 4) * x", x=x,
    )


# --- matmul ---------------------------------------------------------------------------------------

MATMUL_CASES = {
    "1-D @ 1-D (a dot product)": ((3,), (3,)),
    "1-D @ 2-D (a row times a matrix)": ((3,), (3, 4)),
    "2-D @ 1-D (a matrix times a column)": ((2, 3), (3,)),
    "2-D @ 2-D": ((2, 3), (3, 4)),
    "3-D @ 3-D (a batch)": ((5, 2, 3), (5, 3, 4)),
    "3-D @ 2-D (b shared by the batch)": ((5, 2, 3), (3, 4)),
    "2-D @ 3-D (a shared by the batch)": ((2, 3), (5, 3, 4)),
    "4-D @ 3-D (batch dimensions broadcast)": ((2, 1, 2, 3), (5, 3, 4)),
    "1-D @ 3-D": ((3,), (5, 3, 4)),
    "3-D @ 1-D": ((5, 2, 3), (3,)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", list(MATMUL_CASES))
def test_matmul(oracle, case, dtype):
    shape_a, shape_b = MATMUL_CASES[case]
    a, b = values(shape_a, dtype, seed=1), values(shape_b, dtype, seed=2)
    oracle.check_grads(lambda lib, a, b: a @ b, op=f"a @ b, {case}: a {shape_a}, b {shape_b}", a=a, b=b)


@given(shapes=mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=2, max_side=3), dtype=DTYPES)
def test_matmul_random_shapes(oracle, shapes, dtype):
    shape_a, shape_b = shapes.input_shapes
    a, b = values(shape_a, dtype, seed=1), values(shape_b, dtype, seed=2)
    oracle.check_grads(lambda lib, a, b: a @ b, op=f"a @ b with a {shape_a} and b {shape_b}", a=a, b=b)


def test_matmul_with_a_constant_operand(oracle):
    x, w = values((4, 3), seed=1), values((3, 2), seed=2)
    oracle.check_grads(lambda lib, x, w: (x @ w).sigmoid(), op="sigmoid(x @ w) with a constant x", x=Constant(x), w=w)
    oracle.check_grads(lambda lib, x, w: (x @ w).sigmoid(), op="sigmoid(x @ w) with a constant w", x=x, w=Constant(w))


# --- indexing ---------------------------------------------------------------------------------------

INDEX_CASES = {
    "x[1]": lambda lib, x: x[1],
    "x[-1]": lambda lib, x: x[-1],
    "x[1, -1]": lambda lib, x: x[1, -1],
    "x[1:3]": lambda lib, x: x[1:3],
    "x[:, ::2]": lambda lib, x: x[:, ::2],
    "x[-3:-1, 1:]": lambda lib, x: x[-3:-1, 1:],
    "x[..., 0]": lambda lib, x: x[..., 0],
    "x[[0, 2, 0, 0]]": lambda lib, x: x[[0, 2, 0, 0]],
    "x[tensor([0, 2, 0, 0])]": lambda lib, x: x[lib.tensor([0, 2, 0, 0])],
    "x[tensor([-1, 0, -1])]": lambda lib, x: x[lib.tensor([-1, 0, -1])],
    "x[tensor([[0, 1], [1, 1]])]": lambda lib, x: x[lib.tensor([[0, 1], [1, 1]])],
    "x[i, j] with a repeated pair": lambda lib, x: x[lib.tensor([0, 3, 0]), lib.tensor([1, 2, 1])],
    "x[i, 1:]": lambda lib, x: x[lib.tensor([2, 2, 0]), 1:],
    "x[arange(4), y] (cross-entropy's pick)": lambda lib, x: x[lib.arange(4), lib.tensor([2, 0, 2, 1])],
}


REPEATS = {"x[[0, 2, 0, 0]]", "x[tensor([0, 2, 0, 0])]", "x[tensor([-1, 0, -1])]", "x[tensor([[0, 1], [1, 1]])]",
           "x[i, j] with a repeated pair", "x[i, 1:]"}


@pytest.mark.parametrize("case", list(INDEX_CASES))
def test_indexing(oracle, case):
    note = "this index repeats: the gradients of an element read twice add up" if case in REPEATS else (
        "put grad back where the elements were read, zeros elsewhere")
    with hint(note):
        oracle.check_grads(INDEX_CASES[case], op=f"{case} with x of shape (4, 3)", x=values((4, 3)))


def test_repeated_indices_accumulate(ag):
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[ag.tensor([0, 0, 2, 0])].sum().backward()
    got = x.grad.numpy().tolist()
    assert got == [3.0, 0.0, 1.0], (
        f"x[tensor([0, 0, 2, 0])].sum(): x[0] was read 3 times, so its gradient is 1 + 1 + 1 = 3. "
        f"Expected [3.0, 0.0, 1.0], got {got}."
        + (" Writing `zeros[index] = grad` keeps one gradient per position: add them up instead "
           "(t.index_put(index, values, accumulate=True))." if got == [1.0, 0.0, 1.0] else "")
    )


def test_an_embedding_lookup_grows_linearly(ag, counted_growth):
    """Reading n rows of an (n, 4) table, rows repeated: 8x the rows may cost about 8x the
    work, not 64x (a zeros table per row read, a one-hot matrix of reads by rows). The work
    is counted, not timed: lines of Python and the memory they allocate."""
    ag.tensor([1.0, 2.0], requires_grad=True)[ag.tensor([0])].sum().backward()  # a stub stops here

    def make(n):
        table = ag.tensor(np.linspace(-1.0, 1.0, 4 * n).reshape(n, 4), requires_grad=True)
        rows = ag.tensor((np.arange(n) * 7) % n // 2)  # every other row, most read twice
        loss = (table[rows] * 2.0).sum()
        return lambda: ag.autograd.grad(loss, table, retain_graph=True)

    counted_growth(make, 64, what="rows", graph="an embedding lookup", memory=True)


def _slice_text(s):
    ends = "" if s.start is None else str(s.start), "" if s.stop is None else str(s.stop)
    return ":".join(ends) + ("" if s.step is None else f":{s.step}")


@st.composite
def index_cases(draw):
    """An index made of ints, slices (step > 0, as torch allows) and int arrays with repeats,
    returned as a function of lib (index arrays become lib tensors)."""
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    length = draw(st.integers(1, 5))  # every index array has this length, so they broadcast
    parts, text = [], []
    for size in shape[: draw(st.integers(1, len(shape)))]:
        kind = draw(st.sampled_from(["int", "slice", "array"]))
        if kind == "int":
            i = draw(st.integers(-size, size - 1))
            parts.append(i)
            text.append(str(i))
        elif kind == "slice":
            ends = st.none() | st.integers(-size - 1, size + 1)
            s = slice(draw(ends), draw(ends), draw(st.none() | st.integers(1, 3)))
            parts.append(s)
            text.append(_slice_text(s))
        else:
            i = np.array(draw(st.lists(st.integers(-size, size - 1), min_size=length, max_size=length)))
            parts.append(i)
            text.append(f"tensor({i.tolist()})")
    x = draw_array(draw, shape)

    def index(lib):
        return tuple(lib.tensor(p) if isinstance(p, np.ndarray) else p for p in parts)

    return x, index, f"x[{', '.join(text)}]"


@given(case=index_cases())
def test_indexing_random(oracle, case):
    x, index, text = case
    oracle.check_grads(lambda lib, x: x[index(lib)] * 2.0, op=f"{text} with x of shape {x.shape}", x=x)


# --- everything together: float32 stays float32, rules made of tensor operations ----------------

def test_float32_gradients_stay_float32(oracle):
    x = values((4, 3), np.float32, seed=1)
    w = values((2, 3, 5), np.float32, seed=2)
    b = values((5,), np.float32, seed=3)

    def net(lib, x, w, b):
        h = (x[lib.tensor([0, 2, 2])] @ w + b).sigmoid()  # (2, 3, 5)
        top = h.max(dim=-1, keepdim=True).values + h.max()
        return (h.transpose(0, 1).reshape(3, 10) * top.reshape(6).mean()).mean(dim=(0, -1)).sum()

    oracle.check_grads(net, op="a small network through every rule, in float32", x=x, w=w, b=b)


SECOND_ORDER = {
    "unbroadcast": lambda lib, x: ((x * x.sum(dim=0)) ** 2).sum(),
    "sum": lambda lib, x: (x.sum(dim=1) ** 3).sum(),
    "mean": lambda lib, x: (x.mean(dim=0, keepdim=True) ** 3).sum(),
    "max": lambda lib, x: (x.max(dim=1).values ** 3).sum() + x.max() ** 3,
    "reshape": lambda lib, x: (x.reshape(3, 2) ** 3).sum(),
    "transpose": lambda lib, x: (x.transpose(0, 1) ** 3).sum(),
    "matmul": lambda lib, x: ((x @ x.T) ** 2).sum(),
    "getitem": lambda lib, x: (x[lib.tensor([0, 0, 1]), 1:] ** 3).sum(),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives(oracle, name):
    """d/dx of (d/dx f(x)).sum(): the backward of your backward."""
    f = SECOND_ORDER[name]

    def second(lib, x):
        (first,) = lib.autograd.grad(f(lib, x), x, create_graph=True)
        assert first.grad_fn is not None, (
            "the gradient has no grad_fn with create_graph=True: write the rule with tensor "
            "operations only (no numpy, no .item() on gradients, no .data or .detach())"
        )
        return first

    x = np.array([[0.7, 1.3, 2.1], [-0.4, 0.9, 0.2]])
    oracle.check_grads(second, op=f"second derivative through {name}", x=x,
                       result_name="the first derivative (what autograd.grad returned)")


# --- every piece in the middle of a graph, with batches, and on the GPU (issue 14) --------------

def check_on(device, oracle, ag, fn, op, result_name="the result (forward)", **inputs):
    """oracle.check_grads on the CPU; on the (simulated) GPU, the same check against torch's
    CPU answer, with every tensor the engine hands back still on the GPU."""
    __tracebackhide__ = True
    if device == "cpu":
        oracle.check_grads(fn, op=op, result_name=result_name, **inputs)
    else:
        check_grads_on_gpu(ag, fn, op=op, result_name=result_name, **inputs)


DEVICES = ["cpu", "cuda"]

# (the piece, its place in a graph of x and w, x's shape, w's shape): each piece takes inputs
# made from x and w and feeds a square, so the gradient it receives depends on x and w.
IN_THE_MIDDLE = {
    "unbroadcast, leading and size-1 dimensions": (lambda lib, x, w: x * w, (2, 1, 3), (4, 1)),
    "sum with keepdim": (lambda lib, x, w: x.sum(dim=(0, 2), keepdim=True) * w, (2, 3, 4), (3, 1)),
    "sum of everything": (lambda lib, x, w: x.sum() * w, (2, 3), (3,)),
    "mean along a negative dim": (lambda lib, x, w: x.mean(dim=-1) * w, (2, 3, 4), (3,)),
    "max along a dim": (lambda lib, x, w: (x * w).max(dim=1, keepdim=True).values, (2, 3, 4), (4,)),
    "max of everything": (lambda lib, x, w: (x * w).max(), (2, 3), (3,)),
    "reshape": (lambda lib, x, w: (x * w).reshape(4, 3), (2, 2, 3), (3,)),
    "transpose of a batch": (lambda lib, x, w: (x * w).transpose(-1, 0), (2, 2, 3), (3,)),
    "a batch @ a shared matrix": (lambda lib, x, w: x @ w, (2, 2, 3), (3, 4)),
    "batch dimensions broadcast": (lambda lib, x, w: x @ w, (2, 1, 2, 3), (3, 3, 2)),
    "1-D @ a batch": (lambda lib, x, w: x @ w, (3,), (2, 3, 4)),
    "a batch @ 1-D": (lambda lib, x, w: x @ w, (2, 2, 3), (3,)),
    "1-D @ 1-D": (lambda lib, x, w: x @ w, (3,), (3,)),
    "indexing that repeats": (lambda lib, x, w: (x * w)[lib.tensor([1, 0, 1]), 1:], (2, 3), (3,)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(IN_THE_MIDDLE))
def test_second_derivatives_in_the_middle_of_a_graph(oracle, ag, name, device):
    """The piece's incoming gradient depends on the inputs: a piece that leaves `grad` (or part
    of its result) out of the recorded graph gives a wrong second derivative here."""
    f, shape_x, shape_w = IN_THE_MIDDLE[name]

    def second(lib, x, w):
        middle = f(lib, x, w)
        grad_x, grad_w = lib.autograd.grad((middle * middle).sum(), (x, w), create_graph=True)
        assert grad_x.grad_fn is not None and grad_w.grad_fn is not None, (
            "a gradient has no grad_fn with create_graph=True: write the piece with tensor "
            "operations only (no numpy on gradients, no .data or .detach())"
        )
        return (grad_x * grad_x).sum() + (grad_w * 0.5).sum()

    x, w = values(shape_x, seed=1), values(shape_w, seed=2)
    check_on(device, oracle, ag, second, op=f"second derivative through {name}: x {shape_x}, w {shape_w}", x=x, w=w,
             result_name="the first derivative (what autograd.grad returned)")


@pytest.mark.parametrize("case", list(MATMUL_CASES))
def test_matmul_on_the_gpu(ag, case):
    shape_a, shape_b = MATMUL_CASES[case]
    a, b = values(shape_a, np.float32, seed=1), values(shape_b, np.float32, seed=2)
    check_grads_on_gpu(ag, lambda lib, a, b: a @ b, op=f"a @ b, {case}: a {shape_a}, b {shape_b}", a=a, b=b)


@pytest.mark.parametrize("case", list(INDEX_CASES))
def test_indexing_on_the_gpu(ag, case):
    def index(lib, x):  # index tensors made on the CPU, as the cases make them (torch allows it)
        return INDEX_CASES[case](lib, x)

    check_grads_on_gpu(ag, index, op=f"{case} with x of shape (4, 3)", x=values((4, 3)))


@pytest.mark.parametrize("shape, dim, keepdim", REDUCTION_CASES, ids=[f"{s}-dim={d}-keepdim={k}" for s, d, k in REDUCTION_CASES])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_reductions_on_the_gpu(ag, reduction, shape, dim, keepdim):
    check_grads_on_gpu(
        ag, lambda lib, x: getattr(x, reduction)(dim=dim, keepdim=keepdim),
        op=f"x.{reduction}(dim={dim}, keepdim={keepdim}) with x of shape {shape}", x=values(shape),
    )


STRETCHED = [(g, s) for g, s in UNBROADCAST_CASES if g != s]  # (an equal shape calls no piece of this kata)


@pytest.mark.parametrize("case", STRETCHED, ids=[f"{g}->{s}" for g, s in STRETCHED])
def test_broadcasting_on_the_gpu(ag, case):
    grad_shape, shape = case
    check_grads_on_gpu(ag, lambda lib, a, b: a * b, op=f"a * b with a {grad_shape} and b {shape}",
                       a=values(grad_shape, seed=1), b=values(shape, seed=2))


def test_max_on_the_gpu(ag):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 3.0, -1.0]])
    check_grads_on_gpu(ag, lambda lib, x: x.max() * 2.0 + x.max(dim=1).values * x.max(dim=0, keepdim=True).values.sum(),
                       op="x.max() and x.max(dim) with ties", x=x)


def test_a_small_network_on_the_gpu(ag):
    x = values((4, 3), np.float32, seed=1)
    w = values((2, 3, 5), np.float32, seed=2)
    b = values((5,), np.float32, seed=3)

    def net(lib, x, w, b):
        h = (x[lib.tensor([0, 2, 2])] @ w + b).sigmoid()  # (2, 3, 5)
        top = h.max(dim=-1, keepdim=True).values + h.max()
        return (h.transpose(0, 1).reshape(3, 10) * top.reshape(6).mean()).mean(dim=(0, -1)).sum()

    check_grads_on_gpu(ag, net, op="a small network through every piece, float32", x=x, w=w, b=b)


# --- random programs (runs last, once every test above passes) ---------------------------------

def test_random_programs_agree_with_torch(fuzz):
    """Random programs drawn for your shape rules (broadcasting against size-1, missing and
    empty dimensions, reductions over several dims and ties, views and copies whose gradients
    arrive non-contiguous, matmul's 1-D and batched cases, indexes that repeat, gradients
    changed in place afterwards), on your engine and on torch. A failure shows the shortest
    program that still differs."""
    fuzz.check()
