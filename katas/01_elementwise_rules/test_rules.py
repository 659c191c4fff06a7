"""Kata 01 tests: each rule's gradients against torch's, on random inputs."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from plugin.grading.gpu_check import check_grads_on_gpu
from plugin.grading.oracle import Constant

SHAPES = array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


def floats(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False, width=64)


def same_shape_arrays(low=-3.0, high=3.0, count=2):
    """`count` float64 arrays of one random shape with values in [low, high]."""
    return SHAPES.flatmap(
        lambda shape: st.tuples(*[arrays(np.float64, shape, elements=floats(low, high)) for _ in range(count)])
    )


def away_from_zero(array, margin=0.2):
    """Shift values near 0 away from it: no division by ~0, no kink of relu or abs."""
    return np.where(np.abs(array) < margin, np.where(array < 0, -margin, margin), array)


# --- binary operations ---------------------------------------------------------------------

@given(same_shape_arrays())
def test_add(oracle, pair):
    a, b = pair
    oracle.check_grads(lambda lib, a, b: a + b, op="a + b", a=a, b=b)


@given(same_shape_arrays())
def test_sub(oracle, pair):
    a, b = pair
    oracle.check_grads(lambda lib, a, b: a - b, op="a - b", a=a, b=b)


@given(same_shape_arrays())
def test_mul(oracle, pair):
    a, b = pair
    oracle.check_grads(lambda lib, a, b: a * b, op="a * b", a=a, b=b)


# b moved away from 0 as it is drawn, so that the drawn pair pytest shows is the call's input
@given(same_shape_arrays().map(lambda pair: (pair[0], away_from_zero(pair[1]))))
def test_div(oracle, pair):
    a, b = pair
    oracle.check_grads(lambda lib, a, b: a / b, op="a / b", a=a, b=b)


def test_div_by_a_large_number(oracle):
    """b * b overflows float32 from |b| = 2e19 on: torch computes -a / b**2 as -(a / b) / b."""
    a, b = np.array([1e20, -3e20, 2.0], np.float32), np.array([1e20, 2e20, -4e19], np.float32)
    oracle.check_grads(lambda lib, a, b: (a / b) * 1e30, op="a / b with a large b", a=a, b=b)


TINY = {  # a small gradient divided by a tiny (subnormal) float32: finite, but 1 / x alone is inf
    "x.log() * 1e-30": (lambda lib, x: x.log() * 1e-30, {"x": np.array([1e-40, 1e-39, 3.0], np.float32)}),
    "(a / b) * 1e-30": (lambda lib, a, b: (a / b) * 1e-30,  # a's gradient only: b's squares b
                        {"a": np.array([1e-40, 2e-10, 3.0], np.float32),
                         "b": Constant(np.array([1e-40, 1e-39, 3.0], np.float32))}),
}


@pytest.mark.parametrize("case", list(TINY))
def test_a_gradient_divided_by_a_tiny_number(oracle, case):
    """torch divides the incoming gradient by x (grad / x), which stays finite where 1 / x
    overflows float32 (x below 3e-39): grad * (1 / x) gives inf there."""
    fn, inputs = TINY[case]
    oracle.check_grads(fn, op=f"{case} at tiny float32 values (divide by x: 1 / x overflows)", **inputs)


@given(same_shape_arrays(0.5, 2.0), floats(-2.0, 3.0).filter(lambda e: e != 0))  # x ** 0 never reaches your rule
def test_pow_with_a_number_exponent(oracle, pair, exponent):
    base = pair[0]
    oracle.check_grads(lambda lib, x: x ** exponent, op=f"x ** {exponent}", x=base)


@given(same_shape_arrays(0.5, 2.0))
def test_pow_with_a_tensor_exponent(oracle, pair):
    base, exponent = pair
    oracle.check_grads(lambda lib, base, exponent: base ** exponent, op="base ** exponent", base=base, exponent=exponent)


def test_pow_of_a_negative_base_with_an_integer_exponent(oracle):
    x = np.array([-2.0, -0.5, 1.5])
    oracle.check_grads(lambda lib, x: x ** 3, op="x ** 3", x=x)


# --- unary operations ----------------------------------------------------------------------

UNARY = {
    "neg": (lambda lib, x: -x, -3.0, 3.0),
    "exp": (lambda lib, x: x.exp(), -3.0, 3.0),
    "log": (lambda lib, x: x.log(), 0.1, 5.0),
    "sigmoid": (lambda lib, x: x.sigmoid(), -6.0, 6.0),
    "tanh": (lambda lib, x: x.tanh(), -3.0, 3.0),
    "relu": (lambda lib, x: x.relu(), -3.0, 3.0),
}


@pytest.mark.parametrize("name", list(UNARY))
@given(data=st.data())
def test_unary(oracle, name, data):
    fn, low, high = UNARY[name]
    drawn = same_shape_arrays(low, high, count=1)
    (x,) = data.draw(drawn.map(lambda xs: (away_from_zero(xs[0]),)) if name == "relu" else drawn)
    oracle.check_grads(fn, op=f"x.{name}()", x=x)


# --- numbers on either side, float32, chains -----------------------------------------------

NUMBER_SIDES = {
    "x + 2": lambda lib, x: x + 2.0,
    "2 + x": lambda lib, x: 2.0 + x,
    "x - 2": lambda lib, x: x - 2.0,
    "2 - x": lambda lib, x: 2.0 - x,
    "x * 3": lambda lib, x: x * 3.0,
    "3 * x": lambda lib, x: 3.0 * x,
    "x / 4": lambda lib, x: x / 4.0,
    "4 / x": lambda lib, x: 4.0 / x,
    "2 ** x": lambda lib, x: 2.0 ** x,
}


@pytest.mark.parametrize("op", list(NUMBER_SIDES))
def test_a_number_on_either_side(oracle, op):
    x = np.array([[0.5, -1.5, 2.0], [1.25, -0.75, 3.0]])
    oracle.check_grads(NUMBER_SIDES[op], op=op, x=x)


def test_float32_gradients_stay_float32(oracle):
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    w = np.array([1.5, 0.25, -0.5], dtype=np.float32)
    oracle.check_grads(lambda lib, x, w: ((x * w).sigmoid() - x / 3).exp(), op="exp(sigmoid(x * w) - x / 3)", x=x, w=w)


def test_a_constant_operand_gets_no_gradient(oracle):
    x = np.array([0.5, -1.0, 2.0])
    oracle.check_grads(lambda lib, x, c: (x * c).tanh(), op="tanh(x * c)", x=x, c=Constant(np.array([2.0, 3.0, 4.0])))


@given(same_shape_arrays(0.2, 2.0, count=3))
def test_chains_of_operations(oracle, triple):
    a, b, c = triple

    def chain(lib, a, b, c):
        h = (a * b - c / b).tanh()
        return (h.exp() + (a ** 2).log() * h.sigmoid() - (-c).relu()) ** 2

    oracle.check_grads(chain, op="a chain of every operation", a=a, b=b, c=c)


# --- second derivatives: rules must be made of tensor operations ---------------------------

SECOND_ORDER = {
    "mul": lambda x: x * x * x,
    "div": lambda x: 1.0 / x,
    "pow": lambda x: x ** 3.5,
    "exp": lambda x: (x * 2).exp(),
    "log": lambda x: x.log() * x,
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
    "neg": lambda x: -(x * x),
    "sub": lambda x: x * x - x * 3,
    "add": lambda x: x * x + x,
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives(oracle, name):
    """d/dx of (d/dx f(x)).sum(): the backward of your backward."""
    f = SECOND_ORDER[name]

    def second(lib, x):
        (first,) = lib.autograd.grad(f(x).sum(), x, create_graph=True)
        assert first.grad_fn is not None, (
            "the gradient has no grad_fn with create_graph=True: write the rule with tensor "
            "operations only (no numpy, no .item(), no .data)"
        )
        return first

    oracle.check_grads(
        second, op=f"second derivative through {name}", x=np.array([0.7, 1.3, 2.1]),
        result_name="the first derivative (what autograd.grad returned)",
    )


# --- torch's dtype promotion meets the rules (issue 18) ---------------------------------------
# The engine picks torch's result dtype (a 0-d float64 does not widen a float32 vector; ints
# and bools divided give float32); each rule's gradient must still have its own input's dtype.

MIXED_DTYPES = {
    "x * y": lambda x, y, i, b: x * y,
    "y / x": lambda x, y, i, b: y / x,
    "x ** y": lambda x, y, i, b: x ** y,
    "y - x": lambda x, y, i, b: y - x,
    "x * i": lambda x, y, i, b: x * i,
    "i / y": lambda x, y, i, b: i / y,
    "b * y + x": lambda x, y, i, b: b * y + x,
    "(i * 2.5 + x) * y": lambda x, y, i, b: (i * 2.5 + x) * y,
}


@pytest.mark.parametrize("op", list(MIXED_DTYPES))
def test_mixed_dtypes_follow_torchs_promotion(ag, op):
    def run(lib):
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)  # float32
        y = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)  # 0-d float64
        i, b = lib.tensor([1, 2, 3]), lib.tensor([True, False, True])
        out = MIXED_DTYPES[op](x, y, i, b)
        out.sum().backward()
        shown = lambda t: None if t is None else (str(t.dtype).replace("torch.", ""), t.detach().numpy())
        return {"out": shown(out), "x.grad": shown(x.grad), "y.grad": shown(y.grad)}

    mine = run(ag)  # yours first: a stub stops the test before torch is imported
    import torch

    theirs = run(torch)
    for what in theirs:
        assert (mine[what] is None) == (theirs[what] is None), f"{op}: {what} is {mine[what]}, torch's {theirs[what]}"
        if theirs[what] is not None:
            assert mine[what][0] == theirs[what][0], f"{op}: {what} has dtype {mine[what][0]}, torch's {theirs[what][0]}"
            np.testing.assert_allclose(mine[what][1], theirs[what][1], rtol=1e-6, err_msg=f"{op}: {what}")


# --- every rule in the middle of a graph, edges the lesson names, the GPU (issue 14) ----------

def check_on(device, oracle, ag, fn, op, result_name="the result (forward)", **inputs):
    """oracle.check_grads on the CPU; on the (simulated) GPU, the same check against torch's
    CPU answer, with every tensor the engine hands back still on the GPU."""
    __tracebackhide__ = True
    if device == "cpu":
        oracle.check_grads(fn, op=op, result_name=result_name, **inputs)
    else:
        check_grads_on_gpu(ag, fn, op=op, result_name=result_name, **inputs)


DEVICES = ["cpu", "cuda"]

# Two broadcast pairs: b shared by the rows of a, and an outer product of a column and a row.
A = np.array([[0.6, 1.3, 1.9], [0.8, 1.1, 1.6]])
B_ROW = np.array([1.7, 0.9, 0.5])
A_COLUMN, B = np.array([[1.4], [0.7]]), np.array([[0.6, 1.3, 1.9]])
OPERANDS = {"a (2, 3), b (3,)": (A, B_ROW), "a (2, 1), b (1, 3)": (A_COLUMN, B)}

# Each rule between other operations: its inputs come from a and b, and its output goes on
# into a square, so the gradient it receives depends on a and b.
IN_THE_MIDDLE = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "neg": lambda a, b: -(a * b),
    "pow": lambda a, b: a ** b,
    "pow with a number exponent": lambda a, b: (a * b) ** 2.5,
    "exp": lambda a, b: (a * b).exp(),
    "log": lambda a, b: (a * b).log(),
    "sigmoid": lambda a, b: (a - b).sigmoid(),
    "tanh": lambda a, b: (a - b).tanh(),
    "relu": lambda a, b: (a - b).relu(),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shapes", list(OPERANDS))
@pytest.mark.parametrize("name", list(IN_THE_MIDDLE))
def test_second_derivatives_in_the_middle_of_a_graph(oracle, ag, name, shapes, device):
    """The rule's incoming gradient depends on the inputs: a rule that leaves `grad` (or part
    of its result) out of the recorded graph gives a wrong second derivative here."""
    f = IN_THE_MIDDLE[name]

    def second(lib, a, b):
        middle = f(a, b)
        grad_a, grad_b = lib.autograd.grad((middle * middle).sum(), (a, b), create_graph=True)
        assert grad_a.grad_fn is not None and grad_b.grad_fn is not None, (
            "a gradient has no grad_fn with create_graph=True: write the rule with tensor "
            "operations only (no numpy, no .item(), no .data, no .detach())"
        )
        return (grad_a * grad_a).sum() + (grad_b * 0.5).sum()

    a, b = OPERANDS[shapes]
    check_on(device, oracle, ag, second, op=f"second derivative through {name}, {shapes}", a=a, b=b,
             result_name="the first derivative (what autograd.grad returned)")


@pytest.mark.parametrize("device", DEVICES)
def test_first_derivatives_of_a_chain_of_every_operation(oracle, ag, device):
    def chain(lib, a, b, c):
        h = (a * b - c / b).tanh()
        return (h.exp() + (a ** 2).log() * h.sigmoid() - (-c).relu() + 2.0 ** h - 3.0 / (b + 4.0)) ** 2

    check_on(device, oracle, ag, chain, op="a chain of every operation, b broadcast",
             a=A, b=B_ROW, c=A - 1.2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", list(NUMBER_SIDES))
def test_a_number_on_either_side_inside_a_graph(oracle, ag, op, device):
    f = NUMBER_SIDES[op]
    check_on(device, oracle, ag, lambda lib, x: f(lib, x * x).tanh(), op=f"tanh({op}) with x * x for x", x=A)


ZERO_BASES = {
    # 0 ** e: e's gradient is out * ln(0) = 0 * -inf = nan by the formula; torch gives 0.
    "base ** exponent": lambda lib, base, exponent: base ** exponent,
    # base's gradient e * 0 ** (e - 1) is 0 for e > 1 and 1 for e = 1: no division by the base.
    "base ** 1": lambda lib, base, exponent: base ** 1.0,
    "base ** 2": lambda lib, base, exponent: base ** 2.0 + exponent,
    "base ** 3, twice differentiated": lambda lib, base, exponent: lib.autograd.grad(
        (base ** 3.0).sum(), base, create_graph=True)[0] * exponent,
    # 0 ** 0 with a tensor exponent (polynomial features, x ** arange(n), at x = 0): the
    # base's gradient 0 * 0 ** -1 = 0 * inf is nan by the formula; torch gives 0.
    "base ** (a zero exponent)": lambda lib, base, exponent: base ** (exponent * 0),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", list(ZERO_BASES))
def test_pow_of_a_zero_base(oracle, ag, op, device):
    """The lesson's corner: `0 ** e` gives torch's gradients (0 for the exponent)."""
    base = np.array([0.0, 2.0, 0.0, 1.5, 0.0])
    exponent = np.array([2.0, 2.0, 3.0, 0.5, 1.0])
    check_on(device, oracle, ag, ZERO_BASES[op], op=f"{op} with zeros in the base", base=base, exponent=exponent)


@pytest.mark.parametrize("device", DEVICES)
def test_relu_at_zero_passes_no_gradient(oracle, ag, device):
    """torch takes relu's gradient at x = 0 as 0: the gradient passes where out > 0 only."""
    x = np.array([0.0, -1.5, 2.0, 0.0])
    check_on(device, oracle, ag, lambda lib, x: x.relu() * 3.0, op="x.relu() with zeros in x", x=x)


def test_relus_gradient_differentiated_by_its_output_is_zero(ag):
    """relu's gradient selects: where(out <= 0, zeros, grad). Differentiated again with
    respect to out (create_graph=True), torch gives zeros: the zeros must not change with out."""
    def run(lib):
        x = lib.tensor([-0.0, -1.5, 0.0, 2.0], requires_grad=True)
        out = x.relu()
        (grad_x,) = lib.autograd.grad(out, x, grad_outputs=lib.tensor([1.0, 2.0, 3.0, 4.0]), create_graph=True)
        (grad_out,) = lib.autograd.grad(grad_x.sum(), out, allow_unused=True)
        return None if grad_out is None else grad_out.detach().numpy()

    mine = run(ag)  # yours first: a stub stops the test before torch is imported
    import torch

    theirs = run(torch)
    assert mine is not None and np.array_equal(mine, theirs), (
        f"d(relu's gradient)/d(out) at x = [-0.0, -1.5, 0.0, 2.0] is {mine if mine is None else mine.tolist()}, "
        f"torch's {theirs.tolist()}: the blocked places must hold zeros that do not vary with out (0 * out)"
    )


def test_relus_blocked_gradient_is_a_positive_zero(ag):
    """Where relu blocks the gradient torch writes +0.0, also at x = -0.0 (relu(-0.0) is -0.0,
    and 0 * -0.0 is -0.0): the sign shows as soon as something divides by the gradient."""
    def run(lib):
        x = lib.tensor([-0.0, -1.5, 0.0, 2.0], requires_grad=True)
        x.relu().backward(lib.tensor([1.0, 2.0, 3.0, 4.0]))
        return x.grad.detach().numpy()

    mine = run(ag)  # yours first: a stub stops the test before torch is imported
    import torch

    theirs = run(torch)
    assert np.array_equal(np.signbit(mine), np.signbit(theirs)) and np.array_equal(mine, theirs), (
        f"x.grad of x.relu() at x = [-0.0, -1.5, 0.0, 2.0]: torch {theirs.tolist()}, yours {mine.tolist()} "
        "(signs of the zeros: torch's are +0.0; 0 * out is -0.0 where out is -0.0: add 0.0)"
    )


# case: (f, x, why a product with the mask `out > 0` is not torch's rule)
RELU_SELECTS = {
    "log(relu(x)) with x <= 0": (lambda lib, x: x.relu().log(), np.array([-1.0, 0.0, 2.0]),
                                 "relu_backward must select: `grad * (out > 0)` gives inf * 0 = nan"),
    "relu of nan": (lambda lib, x: x.relu() * 3.0, np.array([np.nan, -1.0, 2.0]),
                    "relu_backward must select: torch passes a nan output's gradient, nan > 0 is False"),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(RELU_SELECTS))
def test_relu_selects_its_gradient(oracle, ag, case, device):
    """relu's gradient is a selection, not a product with the mask `out > 0`: where out is 0,
    log's gradient is inf and inf * 0 is nan (torch gives 0); a nan output passes its gradient
    in torch, and nan > 0 is False."""
    f, x, why = RELU_SELECTS[case]
    check_on(device, oracle, ag, f, x=x, op=f"{case} ({why})")


@pytest.mark.parametrize("device", DEVICES)
def test_float32_stays_float32_in_the_middle_of_a_graph(oracle, ag, device):
    a, b = A.astype(np.float32), B_ROW.astype(np.float32)

    def net(lib, a, b):
        h = (a * b).sigmoid() / (b + 1.0) - (a - b).tanh() * (-a).exp() + a ** b + (a * b).log()
        (grad_a,) = lib.autograd.grad((h * h).sum(), a, create_graph=True)
        return (grad_a * h).relu()

    check_on(device, oracle, ag, net, op="every rule, float32, to second order", a=a, b=b)


# --- random programs (runs last, once every test above passes) ---------------------------------

def test_random_programs_agree_with_torch(fuzz):
    """Random programs drawn for your rules (edge values such as 0, -0.0, inf, nan, 1e30 and
    subnormals; first and second derivatives; changes in place between two backward passes),
    run on your engine and on torch. A failure shows the shortest program that still differs."""
    fuzz.check()


# --- overflow by the order of a product (last: other pow and div tests name their mistakes first) ---

HUGE = {  # a huge incoming gradient times a tiny derivative: finite in float32, in torch's order
    "(x ** 200) * 1e37": (lambda lib, x: (x ** 200.0) * 1e37, {"x": np.array([0.5, 0.6, 0.7], np.float32)}),
    "(a / b) * 1e37": (lambda lib, a, b: (a / b) * 1e37,
                       {"a": np.array([100.0, -300.0, 2.0], np.float32), "b": np.array([1e3, 3e3, -4e2], np.float32)}),
}


@pytest.mark.parametrize("case", list(HUGE))
def test_a_huge_gradient_through_a_tiny_derivative(oracle, case):
    """The derivative is computed first, then multiplied into the gradient, as torch does:
    grad * (exponent * x ** (exponent - 1)), -grad * ((a / b) / b). Multiplied in another
    order, grad * exponent or grad * a overflows float32 to inf before the tiny factor comes
    (and inf * 0 is nan)."""
    fn, inputs = HUGE[case]
    oracle.check_grads(fn, op=f"{case} in float32 (the derivative first, then times grad)", **inputs)
