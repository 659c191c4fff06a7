"""Kata 05 tests: make_root_grads, graded directly and through backward() against torch."""
import numpy as np
import pytest
# torch: imported in the tests, after your code ran (a kata not started never waits for it)
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays


def piece(ag):
    return ag.pieces.active.make_root_grads


def seeds_for(ag, outputs, grad_outputs, what):
    """Call make_root_grads where torch raises nothing; an error becomes a clear failure."""
    __tracebackhide__ = True
    try:
        seeds = piece(ag)(outputs, grad_outputs)
    except RuntimeError as error:
        raise AssertionError(
            f"make_root_grads{_shapes(outputs, grad_outputs)} raised RuntimeError: {error}\n"
            f"  but torch seeds this without error: {what}"
        ) from error
    assert isinstance(seeds, (list, tuple)), f"make_root_grads must return a list, not {type(seeds).__name__}"
    assert len(seeds) == len(outputs), f"{len(outputs)} outputs, so {len(outputs)} seeds; got {len(seeds)}"
    return seeds


def _shapes(outputs, grad_outputs):
    def describe(t):
        return "None" if t is None else f"<shape {tuple(t.shape)}{'' if t.requires_grad else ', no grad'}>"

    grads = "None" if grad_outputs is None else f"[{', '.join(map(describe, grad_outputs))}]"
    return f"(outputs=({', '.join(map(describe, outputs))},), grad_outputs={grads})"


def array(*values):
    return np.array(values, dtype=np.float64)


def same_error_as_torch(oracle, ag, fn):
    """fn(lib) must raise on the engine what it raises on torch: the same type and torch's
    exact words (a learner searching the web for the message finds torch's answers)."""
    __tracebackhide__ = True
    oracle.compare(fn)  # the type and torch's key phrase, with both messages on a mismatch
    import torch
    theirs, mine = _raised(torch, fn), _raised(ag, fn)
    assert str(mine) == str(theirs), (
        "the right error, but not torch's exact words:\n"
        f"  torch: {theirs}\n"
        f"  yours: {mine}"
    )


def _raised(lib, fn):
    __tracebackhide__ = True
    try:
        fn(lib)
    except (RuntimeError, TypeError) as error:  # of the same type on both: oracle.compare checked
        return error
    raise AssertionError(f"{lib.__name__} raised nothing")  # oracle.compare checked this already


# --- the piece itself --------------------------------------------------------------------------

ONE_ELEMENT = [(), (1,), (1, 1)]


@pytest.mark.parametrize("grad_outputs", [None, [None]], ids=["None", "[None]"])
@pytest.mark.parametrize("shape", ONE_ELEMENT, ids=str)
def test_a_one_element_output_is_seeded_with_one(ag, shape, grad_outputs):
    x = ag.tensor(np.full(shape, 0.5), requires_grad=True)
    y = x * 3
    (seed,) = seeds_for(ag, (y,), grad_outputs, f"an output with one element (shape {shape}) is seeded with 1")
    call = f"make_root_grads{_shapes((y,), grad_outputs)}"
    assert isinstance(seed, ag.Tensor), f"{call} returned [{seed!r}]: a seed must be a Tensor, not {type(seed).__name__}"
    assert tuple(seed.shape) == shape, f"the seed of an output of shape {shape} has shape {tuple(seed.shape)}"
    # detach(): a seed that wrongly requires grad gets its own message below, not numpy()'s error
    assert seed.detach().numpy().tolist() == np.ones(shape).tolist(), f"the implicit seed is 1, got {seed.detach().numpy()}"
    assert not seed.requires_grad and seed.grad_fn is None, (
        "the implicit seed must be a plain constant (no grad_fn, requires_grad False), like "
        "torch's ones_like(output): it is not part of anyone's graph"
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_the_implicit_seed_has_the_output_dtype(ag, dtype):
    x = ag.tensor(np.array([0.5, 1.5], dtype=dtype), requires_grad=True)
    y = (x * x).sum()
    (seed,) = seeds_for(ag, (y,), None, "an output with one element is seeded with 1")
    assert np.dtype(seed.dtype) == np.dtype(dtype), (
        f"your make_root_grads: the output is {np.dtype(dtype)} but its seed is {seed.dtype}: make the ones in the "
        "output's dtype (ag.ones_like(output) or output.new_ones(output.shape)); "
        "np.ones(...) is float64 and ag.ones(...) is float32"
    )
    y.backward()
    assert np.dtype(x.grad.dtype) == np.dtype(dtype), f"x is {np.dtype(dtype)}, its gradient {x.grad.dtype}"


def test_a_given_gradient_is_the_seed(ag):
    x = ag.tensor(array(1.0, 2.0, 3.0), requires_grad=True)
    vector, scalar = x * 2, (x * x).sum()
    g = ag.tensor(array(0.5, -1.0, 0.1))
    seeds = seeds_for(ag, (vector, scalar), (g, None), "output 0 has a gradient of its shape, output 1 one element")
    assert isinstance(seeds[0], ag.Tensor) and np.array_equal(seeds[0].detach().numpy(), g.numpy()), (
        f"output 0 was given the gradient {g.numpy()}: that is its seed, got {seeds[0]!r}"
    )
    assert isinstance(seeds[1], ag.Tensor) and seeds[1].detach().numpy().tolist() == 1.0, (
        f"output 1 (one element) was given None: its seed is 1, got {seeds[1]!r}"
    )


# --- implicit seeds: only one-element outputs --------------------------------------------------

@pytest.mark.parametrize("shape", ONE_ELEMENT, ids=str)
def test_backward_from_a_one_element_output_needs_no_gradient(oracle, shape):
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    oracle.check_grads(
        lambda lib, x: (x.tanh() * x).sum().reshape(shape),
        op=f"(x.tanh() * x).sum().reshape({shape}).backward()",
        x=x,
    )


NOT_ONE_ELEMENT = [(2,), (1, 2), (2, 3), (3, 1, 1), (0,)]


@pytest.mark.parametrize("shape", NOT_ONE_ELEMENT, ids=str)
def test_a_non_scalar_output_needs_a_gradient(oracle, ag, shape):
    """torch: "grad can be implicitly created only for scalar outputs"."""
    data = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)

    def backward_without_gradient(lib):
        x = lib.tensor(data, requires_grad=True)
        (x * 2).backward()

    same_error_as_torch(oracle, ag, backward_without_gradient)


def test_autograd_grad_needs_a_gradient_for_a_non_scalar_output_too(oracle, ag):
    def grad_without_gradient(lib):
        x = lib.tensor(array(1.0, 2.0), requires_grad=True)
        return lib.autograd.grad(x.exp(), x)

    same_error_as_torch(oracle, ag, grad_without_gradient)


# --- a given gradient must have the output's shape ---------------------------------------------

WRONG_SHAPES = {
    "another length": ((2,), (3,)),
    "no broadcasting": ((2,), (1, 2)),
    "the same number of elements": ((2, 3), (3, 2)),
    "a 0-d gradient for a (1,) output": ((1,), ()),
}


@pytest.mark.parametrize("case", list(WRONG_SHAPES))
def test_a_gradient_of_the_wrong_shape(oracle, ag, case):
    """torch: "Mismatch in shape: grad_output[0] has a shape of ... and output[0] has ..."."""
    out_shape, grad_shape = WRONG_SHAPES[case]

    def backward_with_a_wrong_gradient(lib):
        x = lib.tensor(np.full(out_shape, 0.5), requires_grad=True)
        (x * 2).backward(lib.tensor(np.ones(grad_shape)))

    same_error_as_torch(oracle, ag, backward_with_a_wrong_gradient)


def test_a_wrong_shape_names_the_index_of_the_gradient(oracle, ag):
    """torch: "Mismatch in shape: grad_output[1] has a shape of torch.Size([2]) and
    output[1] has a shape of torch.Size([])."."""

    def two_losses(lib):
        x = lib.tensor(array(1.0, 2.0), requires_grad=True)
        l1, l2 = (x * 2).sum(), (x * 3).sum()
        lib.autograd.backward([l1, l2], [None, lib.tensor(array(1.0, 1.0))])

    same_error_as_torch(oracle, ag, two_losses)


def test_one_gradient_per_output(oracle, ag):
    """torch: "got 2 tensors and 1 gradients": a list of gradients as long as the outputs."""

    def mismatched_lists(lib):
        x = lib.tensor(array(1.0, 2.0), requires_grad=True)
        l1, l2 = (x * 2).sum(), (x * 3).sum()
        lib.autograd.backward([l1, l2], [lib.tensor(2.0, dtype=lib.float64)])

    same_error_as_torch(oracle, ag, mismatched_lists)


NOT_A_GRADIENT = {
    "a number": lambda lib, x: lib.autograd.backward([(x * 2).sum(), (x * 3).sum()], [lib.tensor(1.0), 2.0]),
    "a list, past the outputs' count": lambda lib, x: lib.autograd.grad([(x * 2).sum()], [x], [[1.0], None]),
}


@pytest.mark.parametrize("case", list(NOT_A_GRADIENT))
def test_a_gradient_that_is_no_tensor(oracle, ag, case):
    """torch: "gradients can be either Tensors or None, but got float" (a TypeError)."""
    same_error_as_torch(oracle, ag, lambda lib: NOT_A_GRADIENT[case](lib, lib.tensor(array(1.0, 2.0), requires_grad=True)))


# --- outputs that do not require grad ----------------------------------------------------------

def leaf(lib):
    return lib.tensor(array(1.0, 2.0), requires_grad=True)


def constant(lib):
    return lib.tensor(array(3.0, 4.0))  # requires_grad=False: no graph behind it


NO_GRAD_CASES = {
    "a constant scalar": lambda lib: lib.tensor(array(5.0)).sum().backward(),
    "a constant given a gradient": lambda lib: constant(lib).backward(lib.tensor(array(1.0, 1.0))),
    # A constant needs no seed, so a constant vector with None is not "implicitly created".
    "output 1 is a constant vector": lambda lib: lib.autograd.backward(
        [(leaf(lib) ** 2).sum(), constant(lib)], [None, None]),
    "autograd.grad of a constant": lambda lib: lib.autograd.grad(constant(lib).sum(), leaf(lib)),
}


@pytest.mark.parametrize("case", list(NO_GRAD_CASES))
def test_an_output_that_does_not_require_grad(oracle, ag, case):
    """torch: "element 1 of tensors does not require grad and does not have a grad_fn"."""
    same_error_as_torch(oracle, ag, NO_GRAD_CASES[case])


ORDER_CASES = {
    # Output 0 needs no grad, but output 1's seed is made (and refused) first.
    "a missing gradient first": lambda lib: lib.autograd.backward(
        [constant(lib), leaf(lib) * 2], [None, None]),
    "a wrong shape first": lambda lib: lib.autograd.backward(
        [lib.tensor(7.0), (leaf(lib) ** 2).sum()], [None, lib.tensor(array(1.0, 1.0))]),
}


@pytest.mark.parametrize("case", list(ORDER_CASES))
def test_seeds_are_checked_before_requires_grad(oracle, ag, case):
    """torch makes every seed first, then checks requires_grad: output 0 needs no grad, yet
    the error is about output 1's seed."""
    same_error_as_torch(oracle, ag, ORDER_CASES[case])


# --- the gradient argument: a vector-Jacobian product ------------------------------------------

def matrix_product(lib):
    x = lib.tensor(np.array([[1.0, -2.0], [0.5, 3.0]]), requires_grad=True)
    w = lib.tensor(np.array([[0.2, -1.0, 4.0], [1.5, 0.3, -0.7]]), requires_grad=True)
    return x, w, (x @ w).tanh()  # a (2, 3) output


GRADIENTS = {
    "ones (the same as .sum())": np.ones((2, 3)),
    "scaled by 0.1": np.full((2, 3), 0.1),
    "scaled by 0.5": np.full((2, 3), 0.5),
    "mask: row 0 only": np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]),
    "mask: columns 0 and 2": np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]),
    "mask: one element": np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    "weights": np.array([[2.0, -1.0, 0.5], [0.0, 3.0, -0.25]]),
}


@pytest.mark.parametrize("name", list(GRADIENTS))
def test_the_gradient_scales_and_masks_like_torch(oracle, name):
    def vector_jacobian_product(lib):
        x, w, out = matrix_product(lib)
        out.backward(lib.tensor(GRADIENTS[name]))
        return x.grad, w.grad

    oracle.compare(vector_jacobian_product)


@pytest.mark.parametrize("scale", [0.1, 0.5, 2.0])
def test_a_gradient_for_a_scalar_scales_it(oracle, scale):
    def scaled(lib):
        x, w, out = matrix_product(lib)
        out.sum().backward(lib.tensor(scale, dtype=lib.float64))
        return x.grad, w.grad

    oracle.compare(scaled)


@given(
    array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3).flatmap(
        lambda shape: st.tuples(
            arrays(np.float64, shape, elements=st.floats(-2, 2, width=64)),
            arrays(np.float64, shape, elements=st.sampled_from([0.0, 0.1, 0.5, 1.0, -1.0, 3.0])),
        )
    )
)
def test_random_gradients_give_torch_vector_jacobian_products(oracle, case):
    data, gradient = case

    def vjp(lib):
        x = lib.tensor(data, requires_grad=True)
        (x.sigmoid() * x).backward(lib.tensor(gradient))
        return x.grad

    oracle.compare(vjp)


# --- several outputs at once -------------------------------------------------------------------

def two_heads(lib):
    x = lib.tensor(array(0.5, -1.0, 2.0), requires_grad=True)
    trunk = x.tanh() * 3
    return x, trunk * x, (trunk ** 2).sum()  # a vector head and a scalar head


def test_several_outputs_in_one_backward(oracle):
    """autograd.backward([l1, l2], [g1, None]): the gradients of both, summed into x.grad."""

    def both(lib):
        x, l1, l2 = two_heads(lib)
        lib.autograd.backward([l1, l2], [lib.tensor(array(1.0, 0.5, 0.1)), None])
        return x.grad

    oracle.compare(both)


def test_several_outputs_in_autograd_grad(oracle):
    def both(lib):
        x, l1, l2 = two_heads(lib)
        return lib.autograd.grad([l2, l1], x, grad_outputs=[None, lib.tensor(array(0.0, 1.0, -2.0))])

    oracle.compare(both)


def test_a_given_gradient_is_used_as_it_is(oracle, ag):
    """With create_graph=True, the gradient computed from a seed v depends on v and can be
    differentiated with respect to it: d/dv (v @ J) = J. (That is how torch computes a
    Jacobian-vector product with two backward passes.)"""
    v = ag.tensor(array(0.5, 0.1, 2.0), requires_grad=True)
    y = ag.tensor(array(1.0, 2.0, 3.0), requires_grad=True) * 3
    (seed,) = seeds_for(ag, (y,), (v,), "the gradient has the output's shape")
    assert isinstance(seed, ag.Tensor) and seed.requires_grad, (
        "the gradient given for output 0 requires grad (it is part of a graph), and its seed "
        "does not: use the given tensor itself as the seed (a new tensor made from its values "
        "loses its graph)"
    )

    def double_backward(lib):
        x = lib.tensor(array(1.0, 2.0, 3.0), requires_grad=True)
        v = lib.tensor(array(0.5, 0.1, 2.0), requires_grad=True)
        (vjp,) = lib.autograd.grad(x * x * x, x, grad_outputs=v, create_graph=True)
        return lib.autograd.grad(vjp, v, grad_outputs=lib.tensor(array(1.0, 1.0, 1.0)))

    oracle.compare(double_backward)


# --- fresh seeds every pass, a gradient of another dtype, the GPU (issue 14) -------------------

def test_implicit_seeds_are_fresh_every_pass(oracle):
    """A hook on the output may change its gradient in place (here it doubles it): the next
    pass must start again from a new seed of ones, not from the changed one."""

    def twice(lib):
        x = lib.tensor(array(1.0, 2.0, -0.5), requires_grad=True)
        y = (x * x).sum()
        y.register_hook(lambda grad: grad.mul_(2))
        y.backward(retain_graph=True)
        y.backward(retain_graph=True)  # x.grad is already set: the second pass adds into it
        (again,) = lib.autograd.grad(y, x)
        return x.grad, again

    oracle.compare(twice)


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_a_gradient_of_another_dtype_is_cast_to_the_output_dtype(oracle, ag, create_graph):
    """torch casts a given gradient to its output's dtype (and the cast is recorded, so the
    result can still be differentiated with respect to the gradient)."""
    x = ag.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = x * 3
    g = ag.tensor(array(1.0, 0.5))  # float64, for a float32 output
    (seed,) = seeds_for(ag, (y,), (g,), "a float64 gradient for a float32 output (torch casts it)")
    assert np.dtype(seed.dtype) == np.float32, (
        f"your make_root_grads: the output is float32 and its seed {seed.dtype}: cast a given gradient to the output's "
        "dtype (g.to(dtype=output.dtype)), as torch does")
    np.testing.assert_array_equal(seed.detach().numpy(), [1.0, 0.5])

    def cast(lib):
        x = lib.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
        v = lib.tensor(array(1.0, 0.5), requires_grad=create_graph)
        (vjp,) = lib.autograd.grad(x * x, x, grad_outputs=v, create_graph=create_graph)
        seen = [vjp, str(vjp.dtype).replace("torch.", "")]
        if create_graph:
            (d,) = lib.autograd.grad(vjp.sum(), v)
            seen += [d, str(d.dtype).replace("torch.", "")]
        return seen

    oracle.compare(cast)


GPU_SEEDS = {
    "an implicit seed": lambda lib, x: ((x * x).sum(), None),
    "an implicit seed, shape (1, 1)": lambda lib, x: ((x * x).sum().reshape(1, 1), None),
    "a given gradient": lambda lib, x: (x.tanh() * x, lib.tensor(array(0.5, -1.0, 2.0), device=x.device)),
}


@pytest.mark.parametrize("case", list(GPU_SEEDS))
def test_seeds_on_the_gpu(ag, case):
    """An output on the GPU gets its seed on the GPU (torch's ones_like(output)); the pass
    then gives torch's gradients (on the CPU), on the GPU."""
    x = ag.tensor(array(1.0, 2.0, -0.5), requires_grad=True, device="cuda")
    y, g = GPU_SEEDS[case](ag, x)
    (seed,) = seeds_for(ag, (y,), None if g is None else (g,), f"{case} for an output on the GPU")
    assert str(seed.device) == "cuda:0", (
        f"your make_root_grads: the output is on cuda:0 and its seed on {seed.device}: make the ones like the output "
        "(ag.ones_like(output) or output.new_ones(output.shape)), which puts them on its device")
    y.backward(g)
    import torch
    theirs = torch.tensor(array(1.0, 2.0, -0.5), requires_grad=True)
    y_t, g_t = GPU_SEEDS[case](torch, theirs)
    y_t.backward(g_t)
    assert str(x.grad.device) == "cuda:0", f"x is on cuda:0, x.grad on {x.grad.device}"
    np.testing.assert_allclose(x.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-10)


def test_several_one_element_outputs_without_any_gradient(oracle):
    """grad_tensors left out altogether (None): every output gets its implicit seed."""

    def both(lib):
        x, l1, l2 = two_heads(lib)
        lib.autograd.backward([l1.sum(), l2])
        return x.grad, lib.autograd.grad([l2, (l1 * l1).sum()], x)

    oracle.compare(both)


def test_three_hundred_outputs_and_their_gradients(oracle):
    """300 outputs with 300 gradients: the two counts are compared as numbers (== / !=; `is`
    holds for equal numbers only up to 256, the small ints Python keeps one object of)."""

    def many(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        outputs = [x * float(i) for i in range(300)]
        lib.autograd.backward(outputs, [lib.ones(3)] * 300)
        return x.grad

    oracle.compare(many)


# --- random programs (runs last, once every test above passes) ---------------------------------

def test_random_programs_agree_with_torch(fuzz):
    """Random root gradients for your seeding (none, of the output's shape or another shape,
    dtype or device, Python numbers, lists with Nones, too few or too many; 0-d, one-element,
    empty, constant and leaf outputs), on your engine and on torch: the same results and the
    same errors. A failure shows the shortest program that still differs."""
    fuzz.check()
