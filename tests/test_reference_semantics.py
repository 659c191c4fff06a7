"""The reference engine against torch, scenario by scenario.

Every scenario is a function of the library (`torch` or `reference`), written once against the
torch-like API. It asserts torch's documented behaviour (errors with torch's words, warnings,
identities) and returns what it observed (values, dtypes, shapes, None-ness, flags). Each test
runs under both libraries (the `lib` fixture): on torch it checks that the scenario itself is
right, on the reference that the engine behaves the same; in both cases the observations are
compared with torch's own (`check_against_torch`).
"""
import warnings

import numpy as np
import pytest
import torch

import reference
from helpers_torch import (  # noqa: F401 - single_threaded_torch is a fixture
    single_threaded_torch,
    LIBS,
    assert_same,
    check_against_torch,
    dtype_name,
    error_of,
    lib_name,
    raises_phrase,
    snap,
    to_numpy,
)

# torch on one thread while these tiny tensors are compared (see helpers_torch)
pytestmark = pytest.mark.usefixtures("single_threaded_torch")

SECOND_TIME = "Trying to backward through the graph a second time"
IMPLICIT = "grad can be implicitly created only for scalar outputs"
MISMATCH = "Mismatch in shape"
NON_LEAF_WARNING = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"
UNUSED = "appears to not have been used in the graph"
INPLACE_SAVED = "modified by an inplace operation"
INPLACE_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
INT_GRAD = "Only Tensors of floating point and complex dtype can require gradients"


@pytest.fixture(params=["torch", "reference"])
def lib(request):
    return LIBS[request.param]


def data(*shape, seed=0, low=-1.0, high=1.0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def node_name(node):
    """A node's name; torch calls the leaf node 'torch::autograd::AccumulateGrad'."""
    return None if node is None else node.name().removeprefix("torch::autograd::")


def reference_xfail(reason):
    """Parametrize `lib` with the reference case marked as a known difference from torch."""
    return pytest.mark.parametrize(
        "lib",
        [LIBS["torch"], pytest.param(LIBS["reference"], marks=pytest.mark.xfail(strict=True, reason=reason))],
        ids=["torch", "reference"],
    )


# --- retain_graph ---------------------------------------------------------------------------------


def scenario_second_backward(lib):
    a = lib.tensor(data(1, 4, seed=1), requires_grad=True)
    b = a**2
    c = b * 2
    d = c.mean()
    e = c.sum()
    d.backward()
    after_d = snap(a.grad)
    with raises_phrase(SECOND_TIME):
        e.backward()
    after_failure = snap(a.grad)
    return {"after_d": after_d, "after_failure": after_failure}


def scenario_retain_graph_everywhere(lib):
    a = lib.tensor(data(1, 4, seed=1), requires_grad=True)
    b = a**2
    c = b * 2
    d = c.mean()
    e = c.sum()
    seen = []
    d.backward(retain_graph=True)
    seen.append(snap(a.grad))
    e.backward(retain_graph=True)
    seen.append(snap(a.grad))
    d.backward(retain_graph=True)
    seen.append(snap(a.grad))
    e.backward()  # the last one may free
    seen.append(snap(a.grad))
    # accumulation: d' = 4a/4 = a, e' = 4a per element; the sum of the four passes
    a_np = to_numpy(a)
    np.testing.assert_allclose(seen[-1].array, 2 * a_np + 2 * 4 * a_np, rtol=1e-6)
    return seen


def test_second_backward_through_freed_graph_fails(lib):
    check_against_torch(scenario_second_backward, lib)


def test_retain_graph_on_every_call_accumulates(lib):
    check_against_torch(scenario_retain_graph_everywhere, lib)


# --- implicit gradient for scalar outputs only ----------------------------------------------------


def scenario_sigmoid_vector_output(lib):
    D = lib.arange(-8, 8, 0.1, requires_grad=True)
    S = D.sigmoid()
    with raises_phrase(IMPLICIT):
        S.backward()
    assert D.grad is None
    S.sum().backward()
    assert dtype_name(D.grad.dtype) == "float32"
    return {"D": snap(D), "S": snap(S), "grad": snap(D.grad)}


def test_vector_output_needs_gradient_argument(lib):
    check_against_torch(scenario_sigmoid_vector_output, lib)


# --- the gradient argument: scaling and masking ------------------------------------------------------


def scenario_gradient_argument(lib):
    x = lib.tensor(data(3, 4, seed=2), requires_grad=True)
    z = (2 * x) ** 3
    seen = {}
    ones = np.ones((3, 4), dtype=np.float32)
    seeds = {
        "0.1": 0.1 * ones,
        "0.5": 0.5 * ones,
        "rows": ones * np.array([[1.0], [0.0], [1.0]], dtype=np.float32),
        "columns": ones * np.array([[0.0, 1.0, 0.0, 1.0]], dtype=np.float32),
    }
    for label, seed in seeds.items():
        if x.grad is not None:
            x.grad.data.zero_()
        z.backward(lib.tensor(seed), retain_graph=True)
        seen[label] = snap(x.grad)
    full = 24 * to_numpy(x) ** 2
    np.testing.assert_allclose(seen["0.1"].array, 0.1 * full, rtol=1e-5)
    np.testing.assert_allclose(seen["rows"].array, seeds["rows"] * full, rtol=1e-5)
    return seen


def test_gradient_argument_scales_and_masks(lib):
    check_against_torch(scenario_gradient_argument, lib)


def scenario_wrong_gradient_shape(lib):
    x = lib.tensor(data(2, 2, seed=3), requires_grad=True)
    y = (x * x).sum()
    with raises_phrase(MISMATCH) as info:
        y.backward(lib.ones(2, 2))
    return {"message": str(info.value), "grad": x.grad}


def test_scalar_output_with_matrix_gradient_fails(lib):
    check_against_torch(scenario_wrong_gradient_shape, lib)


# --- .grad of non-leaves --------------------------------------------------------------------------------


def scenario_non_leaf_grad(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = 2 * x
    z = y**3
    z.sum().backward()
    seen = {}
    for name, t in (("y", y), ("z", z)):
        with pytest.warns(UserWarning) as record:
            value = t.grad
        assert value is None
        messages = [str(w.message) for w in record if issubclass(w.category, UserWarning)]
        assert any(m.startswith(NON_LEAF_WARNING) for m in messages), messages
        # the warning points at the line that read .grad (this file), not the engine's
        seen[name] = (value, [w.filename for w in record if str(w.message).startswith(NON_LEAF_WARNING)][0] == __file__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seen["x"] = snap(x.grad)  # a leaf: no warning
    np.testing.assert_allclose(seen["x"].array, 24 * to_numpy(x) ** 2, rtol=1e-6)
    return seen


def test_non_leaf_grad_is_none_with_warning(lib):
    check_against_torch(scenario_non_leaf_grad, lib)


# --- several losses on a shared trunk ---------------------------------------------------------------------


def _two_head_model(lib):
    x = lib.tensor(data(5, 3, seed=4))
    W = lib.tensor(data(3, 6, seed=5), requires_grad=True)
    A = lib.tensor(data(6, 2, seed=6), requires_grad=True)
    B = lib.tensor(data(6, 1, seed=7), requires_grad=True)

    def losses():
        h = (x @ W).sigmoid()
        return ((h @ A) ** 2).mean(), (h @ B).tanh().sum()

    return (W, A, B), losses


def scenario_two_losses(lib):
    params, losses = _two_head_model(lib)
    l1, l2 = losses()
    l1.backward(retain_graph=True)
    l2.backward()
    sequential = [snap(p.grad) for p in params]
    for p in params:
        p.grad = None
    l1, l2 = losses()
    (l1 + l2).backward()
    summed = [snap(p.grad) for p in params]
    for s, t in zip(sequential, summed):
        np.testing.assert_allclose(s.array, t.array, rtol=1e-5, atol=1e-6)
    for p in params:
        p.grad = None
    l1, l2 = losses()
    l1.backward()
    with raises_phrase(SECOND_TIME):
        l2.backward()
    return {"sequential": sequential, "summed": summed}


def test_two_losses_sequential_equals_summed(lib):
    check_against_torch(scenario_two_losses, lib)


# --- one call for all weights against one call per weight -----------------------------------------------------


def scenario_mlp_grads(lib):
    B, n_in, n_hidden, n_out = 8, 6, 5, 4
    X = lib.tensor(data(B, n_in, seed=10))
    y = lib.tensor(np.random.default_rng(11).integers(0, n_out, size=B))
    W1 = lib.tensor(data(n_in, n_hidden, seed=12), requires_grad=True)
    b1 = lib.tensor(data(n_hidden, seed=13), requires_grad=True)
    W2 = lib.tensor(data(n_hidden, n_out, seed=14), requires_grad=True)
    b2 = lib.tensor(data(n_out, seed=15), requires_grad=True)
    weights = [W1, b1, W2, b2]
    h = (X @ W1 + b1).sigmoid()
    logp = (h @ W2 + b2).log_softmax(dim=1)
    loss = -logp[lib.arange(B), y].mean()
    one_by_one = [lib.autograd.grad(loss, [w], retain_graph=True)[0] for w in weights]
    all_at_once = lib.autograd.grad(loss, weights)
    for single, joint in zip(one_by_one, all_at_once):
        np.testing.assert_allclose(to_numpy(single), to_numpy(joint), rtol=1e-6, atol=1e-7)
    assert all(w.grad is None for w in weights)
    return {"loss": snap(loss), "all": snap(list(all_at_once)), "each": snap(one_by_one)}


def test_all_weights_in_one_call_equals_one_call_per_weight(lib):
    check_against_torch(scenario_mlp_grads, lib)


# --- a graph with nothing saved can be run again ---------------------------------------------------------------


def scenario_nothing_saved(lib):
    x = lib.tensor(data(3, seed=16), requires_grad=True)
    y = (x + 2).sum()
    y.backward()
    y.backward()
    return snap(x.grad)


def test_graph_with_nothing_saved_runs_twice(lib):
    check_against_torch(scenario_nothing_saved, lib)


# --- autograd.grad and unused inputs --------------------------------------------------------------------


def scenario_unused_input(lib):
    x = lib.tensor(data(3, seed=17), requires_grad=True)
    w = lib.tensor(data(3, seed=18), requires_grad=True)
    y = (x * x).sum()
    with raises_phrase(UNUSED) as info:
        lib.autograd.grad(y, [x, w], retain_graph=True)
    gx, gw = lib.autograd.grad(y, [x, w], allow_unused=True)
    assert gw is None
    return {"message": str(info.value), "gx": snap(gx), "gw": gw}


def test_grad_with_unused_input(lib):
    check_against_torch(scenario_unused_input, lib)


# --- create_graph: higher derivatives --------------------------------------------------------------------------


def scenario_create_graph(lib):
    x = lib.tensor([0.5, 1.0, -2.0], requires_grad=True)
    y = (x**3).sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    assert g.grad_fn is not None and g.requires_grad
    (h,) = lib.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_numpy(h), 6 * to_numpy(x), rtol=1e-6)
    return {"g": snap(g), "h": snap(h), "h_requires_grad": h.requires_grad}


def test_create_graph_gives_second_derivative(lib):
    check_against_torch(scenario_create_graph, lib)


# --- in-place operations ---------------------------------------------------------------------------------------


def scenario_inplace_on_saved_output(lib):
    x = lib.tensor(data(2, 3, seed=19), requires_grad=True)
    s = x.sigmoid()
    s.mul_(2)
    with raises_phrase(INPLACE_SAVED) as info:
        s.sum().backward()
    message = str(info.value)
    return {
        "tensor": "[torch.FloatTensor [2, 3]]" in message,
        "versions": "is at version 1; expected version 0 instead" in message,
        "grad": x.grad,
    }


def scenario_inplace_on_leaf(lib):
    x = lib.tensor(data(3, seed=20), requires_grad=True)
    with raises_phrase(INPLACE_LEAF):
        x.add_(1)
    with lib.no_grad():
        x.add_(1)  # allowed outside a graph (optimizer steps)
    return {"x": snap(x), "requires_grad": x.requires_grad, "is_leaf": x.is_leaf}


def test_inplace_change_of_saved_tensor_is_detected(lib):
    check_against_torch(scenario_inplace_on_saved_output, lib)


def scenario_inplace_message(lib):
    messages = []
    x = lib.tensor(data(2, 3, seed=19), requires_grad=True)
    s = x.sigmoid()
    s.mul_(2)  # a saved output changed
    messages.append(error_of(lambda: s.sum().backward()))
    w = lib.tensor(data(3, seed=38), requires_grad=True)
    y = w * 1
    z = y * y
    y.add_(1)  # a saved input changed
    messages.append(error_of(lambda: z.sum().backward()))
    # torch's own words up to its hint (the hint is where an engine may say more)
    return [(kind, message.split(" Hint:")[0]) for kind, message in messages]


def test_inplace_error_message_up_to_the_hint(lib):
    check_against_torch(scenario_inplace_message, lib)


def test_inplace_on_leaf_requiring_grad_fails(lib):
    check_against_torch(scenario_inplace_on_leaf, lib)


# --- accumulation: no aliasing, in place unless create_graph -----------------------------------------------------


def scenario_no_aliasing(lib):
    p = lib.tensor(data(2, 3, seed=21), requires_grad=True)
    q = lib.tensor(data(2, 3, seed=22), requires_grad=True)
    g = lib.tensor(data(2, 3, seed=23))
    g_before = to_numpy(g)
    (p + q).backward(g)
    assert p.grad is not q.grad and p.grad is not g and q.grad is not g
    q_before = to_numpy(q.grad)
    p.grad.mul_(10)
    np.testing.assert_array_equal(to_numpy(q.grad), q_before)
    np.testing.assert_array_equal(to_numpy(g), g_before)
    q.grad.add_(1)
    np.testing.assert_array_equal(to_numpy(g), g_before)
    first = {"p": snap(p.grad), "q": snap(q.grad), "g": snap(g)}

    p_grad, q_grad = p.grad, q.grad
    (p + q).backward(g)
    assert p.grad is p_grad and q.grad is q_grad  # accumulated in place: the same objects
    second = {"p": snap(p.grad), "q": snap(q.grad), "g": snap(g)}

    held = q.grad
    held_value = to_numpy(held)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns about the reference cycle
        (p * q).sum().backward(create_graph=True)
    assert q.grad is not held  # out of place while recording a graph
    np.testing.assert_array_equal(to_numpy(held), held_value)
    third = {"p": snap(p.grad), "q": snap(q.grad), "q_has_grad_fn": q.grad.grad_fn is not None}
    return {"first": first, "second": second, "third": third}


def test_grad_never_aliases_and_accumulates_in_place(lib):
    check_against_torch(scenario_no_aliasing, lib)


def scenario_no_aliasing_with_hooks_and_retain_grad(lib):
    seen = {}
    g = lib.tensor([5.0, 6.0])
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    held = []
    x.register_hook(lambda grad: held.append(grad))
    (x * 3).sum().backward()
    x.grad.add_(100)  # must not reach the gradient the hook kept
    seen["leaf hook's gradient"] = (snap(held[0]), x.grad is held[0])
    y = lib.tensor([1.0, 2.0], requires_grad=True)
    y.backward(g)  # a leaf as the root: its seed is the user's tensor
    y.grad.mul_(0)
    seen["leaf root seed"] = (snap(g), y.grad is g)
    z = lib.tensor([1.0, 2.0], requires_grad=True)
    a = z * 1
    a.retain_grad()
    (a * 1).backward(g)
    a.grad.mul_(0)
    seen["retained grad"] = (snap(g), snap(z.grad))
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    kept = []
    h = w * 2
    h.register_hook(lambda grad: kept.append(grad))
    (h + 0).backward(g)
    w.grad.mul_(0)
    seen["non-leaf hook's gradient"] = snap(kept[0])
    return seen


def test_grad_never_aliases_hook_arguments_seeds_or_retained_grads(lib):
    check_against_torch(scenario_no_aliasing_with_hooks_and_retain_grad, lib)


# --- hooks and retain_grad ------------------------------------------------------------------------------------------


def scenario_hooks(lib):
    x = lib.tensor(data(3, seed=25), requires_grad=True)
    y = x * 2
    y.retain_grad()
    calls = []

    def recorder(name, result):
        def hook(grad):
            calls.append((name, to_numpy(grad).tolist()))
            return result(grad)

        return hook

    h1 = y.register_hook(recorder("first", lambda g: g * 10))
    y.register_hook(recorder("second", lambda g: None))
    y.register_hook(recorder("third", lambda g: g + 1))
    leaf_handle = x.register_hook(recorder("leaf", lambda g: g * 3))
    loss = (y * y).sum()
    loss.backward(retain_graph=True)
    first = {"calls": list(calls), "y.grad": snap(y.grad), "x.grad": snap(x.grad)}
    calls.clear()
    h1.remove()
    leaf_handle.remove()
    loss.backward()
    second = {"calls": list(calls), "y.grad": snap(y.grad), "x.grad": snap(x.grad)}
    assert [name for name, _ in first["calls"]] == ["first", "second", "third", "leaf"]
    return {"first": first, "second": second, "retains_grad": y.retains_grad}


def test_hooks_order_replacement_retain_grad_and_removal(lib):
    check_against_torch(scenario_hooks, lib)


# --- grad mode, detach, .data ------------------------------------------------------------------------------------------


def scenario_grad_mode(lib):
    x = lib.tensor(data(3, seed=26), requires_grad=True)
    seen = {}
    with lib.no_grad():
        y = x * 2
        seen["no_grad"] = (y.requires_grad, y.grad_fn is None, lib.is_grad_enabled())
        with lib.enable_grad():
            z = x * 2
            seen["enable_grad inside"] = (z.requires_grad, z.grad_fn is not None, lib.is_grad_enabled())
        seen["back in no_grad"] = lib.is_grad_enabled()
    seen["after no_grad"] = lib.is_grad_enabled()

    lib.set_grad_enabled(False)
    try:
        y = x * 2
        seen["set_grad_enabled(False) call"] = (y.requires_grad, lib.is_grad_enabled())
    finally:
        lib.set_grad_enabled(True)
    seen["set_grad_enabled(True) call"] = ((x * 2).requires_grad, lib.is_grad_enabled())

    with lib.set_grad_enabled(False):
        y = x * 2
        seen["set_grad_enabled ctx"] = (y.requires_grad, lib.is_grad_enabled())
    seen["after set_grad_enabled ctx"] = lib.is_grad_enabled()

    with lib.autograd.no_grad():
        seen["autograd.no_grad"] = (x * 2).requires_grad
    with lib.autograd.set_grad_enabled(False):
        seen["autograd.set_grad_enabled"] = (x * 2).requires_grad

    @lib.no_grad()
    def decorated():
        return (x * 2).requires_grad

    seen["decorator"] = decorated()
    seen["after decorator"] = lib.is_grad_enabled()

    d = x.detach()
    seen["detach"] = (d.grad_fn is None, d.requires_grad, d.is_leaf)
    d.add_(1)  # shares data with x
    seen["x after detach add_"] = snap(x)
    w = x.data
    seen["data"] = (w.requires_grad, w.grad_fn is None)
    w.mul_(2)
    seen["x after data mul_"] = snap(x)
    # a computation with a detached operand: no gradient flows through it
    v = (x * x.detach()).sum()
    v.backward()
    seen["grad through detach"] = snap(x.grad)
    return seen


def test_grad_mode_detach_and_data(lib):
    try:
        check_against_torch(scenario_grad_mode, lib)
    finally:
        torch.set_grad_enabled(True)
        reference.set_grad_enabled(True)


# --- graph objects ------------------------------------------------------------------------------------------------------


GRAPH_OPS = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "pow": lambda lib, a, b: a**2,
    "neg": lambda lib, a, b: -a,
    "exp": lambda lib, a, b: a.exp(),
    "log": lambda lib, a, b: (a * a + 1).log(),
    "sigmoid": lambda lib, a, b: a.sigmoid(),
    "tanh": lambda lib, a, b: a.tanh(),
    "relu": lambda lib, a, b: a.relu(),
    "sqrt": lambda lib, a, b: (a * a + 1).sqrt(),
    "abs": lambda lib, a, b: a.abs(),
    "sum": lambda lib, a, b: a.sum(),
    "sum(dim)": lambda lib, a, b: a.sum(dim=1),
    "mean": lambda lib, a, b: a.mean(),
    "mean(dim)": lambda lib, a, b: a.mean(dim=0),
    "max": lambda lib, a, b: a.max(),
    "max(dim)": lambda lib, a, b: a.max(dim=1).values,
    "reshape": lambda lib, a, b: a.reshape(6, 1),
    "view": lambda lib, a, b: a.view(-1),
    "transpose": lambda lib, a, b: a.transpose(0, 1),
    "T": lambda lib, a, b: a.T,
    "matmul 2-D": lambda lib, a, b: a @ b.T,
    "softmax": lambda lib, a, b: a.softmax(dim=1),
    "log_softmax": lambda lib, a, b: a.log_softmax(dim=-1),
    "index int": lambda lib, a, b: a[1],
    "index slice": lambda lib, a, b: a[:, 1:],
    "where": lambda lib, a, b: lib.where(a > 0, a, b),
}


def scenario_grad_fn_names(lib):
    a = lib.tensor(data(2, 3, seed=27), requires_grad=True)
    b = lib.tensor(data(2, 3, seed=28, low=0.5, high=1.5), requires_grad=True)
    return {name: node_name(op(lib, a, b).grad_fn) for name, op in GRAPH_OPS.items()}


def test_grad_fn_names(lib):
    check_against_torch(scenario_grad_fn_names, lib)


def scenario_grad_fn_names_explicit_dim_none(lib):
    a = lib.tensor(data(2, 3, seed=27), requires_grad=True)
    return {
        "sum(dim=None)": node_name(a.sum(dim=None).grad_fn),
        "mean(dim=None)": node_name(a.mean(dim=None).grad_fn),
    }


@reference_xfail(
    "x.sum(dim=None) / x.mean(dim=None): torch names the node SumBackward1 / MeanBackward1 "
    "(the dim overload), the reference SumBackward0 / MeanBackward0"
)
def test_grad_fn_names_with_explicit_dim_none(lib):
    check_against_torch(scenario_grad_fn_names_explicit_dim_none, lib)


def scenario_next_functions(lib):
    x = lib.tensor(data(2, 2, seed=29), requires_grad=True)
    w = lib.tensor(data(2, 2, seed=30), requires_grad=True)
    c = lib.tensor(data(2, 2, seed=31))
    z = x * w
    entries = z.grad_fn.next_functions
    assert entries[0][0].variable is x and entries[1][0].variable is w
    with_constant = (x * c).grad_fn.next_functions
    assert with_constant[1][0] is None
    with_scalar = (x * 2).grad_fn.next_functions
    total = (z + c).sum()
    chain = []
    node = total.grad_fn
    while node is not None and node.next_functions:
        chain.append(node_name(node))
        node = node.next_functions[0][0]
    chain.append(node_name(node))
    assert node.variable is x
    return {
        "z": [(node_name(n), i) for n, i in entries],
        "constant": [(node_name(n), i) for n, i in with_constant],
        "scalar": [(node_name(n), i) for n, i in with_scalar],
        "leaf has no grad_fn": x.grad_fn is None,
        "chain": chain,
    }


def test_next_functions_and_accumulate_grad(lib):
    check_against_torch(scenario_next_functions, lib)


# --- max(dim) and integer tensors ---------------------------------------------------------------------------------------


def scenario_max_dim(lib):
    x = lib.tensor(np.random.default_rng(32).permutation(12).reshape(3, 4).astype(np.float32), requires_grad=True)
    result = x.max(dim=1)
    values, indices = result
    assert result.values is result[0] or np.array_equal(to_numpy(result.values), to_numpy(result[0]))
    kept = x.max(dim=0, keepdim=True)
    (values.sum() + 2 * kept.values.sum()).backward()
    return {
        "values": snap(values),
        "indices": snap(indices),
        ".values": snap(result.values),
        ".indices": snap(result.indices),
        "kept": snap(list(kept)),
        "grad": snap(x.grad),
        "negative dim": snap(list(x.max(dim=-1))),
    }


def scenario_integer_requires_grad(lib):
    with raises_phrase(INT_GRAD):
        lib.tensor([1, 2, 3], requires_grad=True)
    with raises_phrase(INT_GRAD):
        lib.arange(5, requires_grad=True)
    t = lib.tensor([1, 2, 3])
    return {"int dtype": dtype_name(t.dtype), "requires_grad": t.requires_grad}


def scenario_integer_requires_grad_method(lib):
    t = lib.tensor([1, 2, 3])
    return {"requires_grad_()": error_of(t.requires_grad_), "requires_grad": t.requires_grad}


def test_max_with_dim_returns_values_and_indices(lib):
    check_against_torch(scenario_max_dim, lib)


def test_integer_tensor_cannot_require_grad(lib):
    check_against_torch(scenario_integer_requires_grad, lib)


def test_integer_tensor_requires_grad_method_message(lib):
    check_against_torch(scenario_integer_requires_grad_method, lib)


# --- backward(inputs=...) and autograd.grad leave other .grad alone --------------------------------------------------------


def scenario_inputs_and_grad(lib):
    x = lib.tensor(data(3, seed=33), requires_grad=True)
    w = lib.tensor(data(3, seed=34), requires_grad=True)
    y = (x * w).sum()
    y.backward(inputs=[x], retain_graph=True)
    first = {"x": snap(x.grad), "w": snap(w.grad)}
    y.backward(inputs=[w], retain_graph=True)
    second = {"x": snap(x.grad), "w": snap(w.grad)}
    x_grad = x.grad
    before = (to_numpy(x.grad), to_numpy(w.grad))
    gx, gw = lib.autograd.grad(y, [x, w])
    assert x.grad is x_grad
    np.testing.assert_array_equal(to_numpy(x.grad), before[0])
    np.testing.assert_array_equal(to_numpy(w.grad), before[1])
    fresh = lib.tensor(data(3, seed=35), requires_grad=True)
    (g,) = lib.autograd.grad((fresh * fresh).sum(), [fresh])
    return {"first": first, "second": second, "grad": snap([gx, gw]), "fresh.grad": fresh.grad, "g": snap(g)}


def test_backward_inputs_and_grad_leave_other_grads_alone(lib):
    check_against_torch(scenario_inputs_and_grad, lib)


# --- creation dtypes (what every gradient's dtype follows) ------------------------------------------------------------


CREATION_CASES = {
    "python float": lambda: 1.5,
    "python int": lambda: 3,
    "list of floats": lambda: [1.0, 2.0],
    "nested list of ints": lambda: [[1, 2], [3, 4]],
    "bool list": lambda: [True, False],
    "float64 array": lambda: np.ones((2, 2)),
    "float32 array": lambda: np.ones(2, dtype=np.float32),
    "0-d float64 array": lambda: np.array(0.25),
    "int32 array": lambda: np.ones(2, dtype=np.int32),
    "numpy float32 scalar": lambda: np.float32(0.25),
    "numpy int64 scalar": lambda: np.int64(3),
}
NUMPY_FLOAT64_CASES = {
    "numpy float64 scalar": lambda: np.float64(0.25),
    "list of numpy float64 scalars": lambda: [np.float64(1.0), np.float64(2.0)],
}


def creation_dtypes(lib, cases):
    seen = {name: dtype_name(lib.tensor(make()).dtype) for name, make in cases.items()}
    seen["arange(5)"] = dtype_name(lib.arange(5).dtype)
    seen["arange(0, 1, 0.25)"] = dtype_name(lib.arange(0, 1, 0.25).dtype)
    seen["zeros"] = dtype_name(lib.zeros(2).dtype)
    seen["ones(dtype=float64)"] = dtype_name(lib.ones(2, dtype=lib.float64).dtype)
    seen["zeros_like(float64)"] = dtype_name(lib.zeros_like(lib.ones(2, dtype=lib.float64)).dtype)
    seen["float32 * python float"] = dtype_name((lib.ones(2) * 2.5).dtype)
    seen["int64 / int64"] = dtype_name((lib.arange(3) / lib.arange(1, 4)).dtype)
    return seen


def test_creation_dtypes(lib):
    check_against_torch(lambda m: creation_dtypes(m, CREATION_CASES), lib)


def test_creation_dtype_of_numpy_float64_scalars(lib):
    check_against_torch(lambda m: {n: dtype_name(m.tensor(f()).dtype) for n, f in NUMPY_FLOAT64_CASES.items()}, lib)


def scenario_int_tensor_with_python_float(lib):
    i = lib.arange(3)
    return {
        "int64 * 2.5": snap(i * 2.5),
        "2.5 + int64": snap(2.5 + i),
        "int64 - 0.5": snap(i - 0.5),
    }


def test_int_tensor_with_python_float_gives_default_float(lib):
    check_against_torch(scenario_int_tensor_with_python_float, lib)


# --- more of the engine's contract: pruning, roots, defaults ---------------------------------------------------------------


def scenario_only_needed_nodes_run(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    calls = []
    a = x * 2
    b = w * 3
    a.register_hook(lambda g: calls.append("a"))
    b.register_hook(lambda g: calls.append("b"))
    y = (a * b).sum()
    lib.autograd.grad(y, [x], retain_graph=True)
    seen = {"autograd.grad": list(calls)}
    calls.clear()
    y.backward(inputs=[x])
    seen["backward(inputs)"] = list(calls)
    seen["w.grad"] = w.grad
    return seen


def scenario_retain_grad_and_hooks_under_autograd_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    a = x * 2
    a.retain_grad()
    x.register_hook(lambda g: calls.append(("x", to_numpy(g).tolist())))
    (g,) = lib.autograd.grad((a * a).sum(), [x])
    return {"a.grad": snap(a.grad), "calls": calls, "g": snap(g), "x.grad": x.grad}


def scenario_retain_graph_defaults_to_create_graph(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x**3).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's reference-cycle warning
        y.backward(create_graph=True)
    y.backward()  # the graph was retained
    return {"x.grad": snap(x.grad)}


def scenario_no_grad_roots(lib):
    c = lib.tensor([1.0, 2.0])
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    phrase = "element 0 of tensors does not require grad and does not have a grad_fn"
    with raises_phrase(phrase):
        c.sum().backward()
    with raises_phrase(phrase):
        lib.autograd.grad(c.sum(), [x])
    with lib.no_grad():
        y = (x * 2).sum()
    with raises_phrase(phrase):
        y.backward()
    return {"x.grad": x.grad}


def scenario_several_roots(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y1 = x * 2
    y2 = (x * x).sum()
    lib.autograd.backward([y1, y2], [lib.tensor([1.0, 0.5]), None])
    seen = {"backward": snap(x.grad)}
    grads = lib.autograd.grad([x * 2, x * 3], [x], [lib.ones(2), lib.tensor([0.0, 1.0])])
    seen["grad"] = snap(list(grads))
    x.grad = None
    (x * x).sum().backward()
    seen["after x.grad = None"] = snap(x.grad)
    x.grad.zero_()
    (x * 3).sum().backward()
    seen["after zero_"] = snap(x.grad)
    return seen


def scenario_max_ties_and_kinks(lib):
    seen = {}
    t = lib.tensor([1.0, 3.0, 3.0], requires_grad=True)
    t.max().backward()
    seen["max() shares between ties"] = snap(t.grad)
    u = lib.tensor([[1.0, 3.0, 3.0]], requires_grad=True)
    r = u.max(dim=1)
    r.values.sum().backward()
    seen["max(dim) picks its index"] = snap([u.grad, r.indices])
    z = lib.tensor([0.0, 1.0, -1.0], requires_grad=True)
    z.relu().sum().backward()
    seen["relu at 0"] = snap(z.grad)
    z.grad = None
    z.abs().sum().backward()
    seen["abs at 0"] = snap(z.grad)
    return seen


def test_only_nodes_leading_to_inputs_run(lib):
    check_against_torch(scenario_only_needed_nodes_run, lib)


def test_retain_grad_and_hooks_under_autograd_grad(lib):
    check_against_torch(scenario_retain_grad_and_hooks_under_autograd_grad, lib)


def test_retain_graph_defaults_to_create_graph(lib):
    check_against_torch(scenario_retain_graph_defaults_to_create_graph, lib)


def test_roots_that_do_not_require_grad(lib):
    check_against_torch(scenario_no_grad_roots, lib)


def test_several_roots_and_zeroing_idioms(lib):
    check_against_torch(scenario_several_roots, lib)


def test_max_ties_and_relu_abs_at_zero(lib):
    check_against_torch(scenario_max_ties_and_kinks, lib)


def scenario_grad_setter_errors(lib):
    """torch's words up to its advice on setting grad_dtype, a torch feature the engine lacks."""

    def first_two_sentences(error):
        kind, message = error
        return kind, ". ".join(message.split(". ")[:2]).rstrip(".")

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    return {
        "wrong size": first_two_sentences(error_of(lambda: setattr(x, "grad", lib.ones(3)))),
        **{
            f"wrong dtype {dtype}": first_two_sentences(
                error_of(lambda: setattr(x, "grad", lib.ones(2, dtype=getattr(lib, dtype))))
            )
            for dtype in ("float64", "float16", "int64")
        },
    }


def test_grad_setter_errors(lib):
    check_against_torch(scenario_grad_setter_errors, lib)


def scenario_pow_zero_exponent_at_zero_base(lib):
    z = lib.tensor([0.0, 2.0], requires_grad=True)
    (z**0.0).sum().backward()
    w = lib.tensor([0.0, 2.0], requires_grad=True)
    e = lib.tensor([0.0, 1.0], requires_grad=True)
    (w**e).sum().backward()
    return {"z ** 0.0": snap(z.grad), "w ** e (base)": snap(w.grad), "w ** e (exponent)": snap(e.grad)}


def test_pow_zero_exponent_at_zero_base(lib):
    """d/dx x ** 0 is 0 also at x = 0, where exponent * x ** (exponent - 1) is 0 * inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        check_against_torch(scenario_pow_zero_exponent_at_zero_base, lib)


# --- type promotion in the graph: gradients come back in each input's dtype ----------------------------------------------


def scenario_zero_dim_float64_operand(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = lib.tensor(np.array(2.0))  # 0-d float64: promotes like a Python number in torch
    w = lib.tensor(np.array(0.5), requires_grad=True)
    y = x * c
    z = (y * w).sum()
    z.backward()
    return {"y": snap(y), "z": snap(z), "x.grad": snap(x.grad), "w.grad": snap(w.grad)}


def scenario_mixed_dtype_gradients(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)  # float32
    y = lib.tensor(np.array([3.0, 4.0]), requires_grad=True)  # float64
    z = (x * y).sum()
    z.backward()
    return {"z": snap(z), "x.grad": snap(x.grad), "y.grad": snap(y.grad)}


def test_zero_dim_float64_operand_promotes_like_torch(lib):
    check_against_torch(scenario_zero_dim_float64_operand, lib)


def test_mixed_dtype_gradients_come_back_in_each_input_dtype(lib):
    check_against_torch(scenario_mixed_dtype_gradients, lib)


# --- gradients have the leaf's shape and dtype --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_shape_and_dtype_follow_the_leaf(lib, dtype):
    def scenario(m):
        x = m.tensor(data(4, 1, seed=36, dtype=np.dtype(dtype)), requires_grad=True)
        b = m.tensor(data(3, seed=37, dtype=np.dtype(dtype)), requires_grad=True)
        y = (x * b + 0.5).sigmoid().sum() * 2.0  # broadcasting (4,1) with (3,)
        y.backward()
        assert tuple(x.grad.shape) == (4, 1) and tuple(b.grad.shape) == (3,)
        assert dtype_name(x.grad.dtype) == dtype and dtype_name(b.grad.dtype) == dtype
        return {"y": snap(y), "x": snap(x.grad), "b": snap(b.grad)}

    check_against_torch(scenario, lib)


def test_library_names_match():
    # guards the helpers: both names used by the fixture are the modules we think they are
    assert lib_name(torch) == "torch" and lib_name(reference) == "reference"
    assert error_of(lambda: None) is None
    assert_same(snap(torch.ones(2)), snap(reference.ones(2)))


# --- the engine's own checks ------------------------------------------------------------------------------------------


def test_a_rule_that_keeps_the_tuple_it_returns_gets_no_aliased_grad():
    # The engine hands a rule's own tuple on when every gradient fits (no new tuple built):
    # a rule that also keeps that tuple holds the gradients, so the first .grad must be a copy.
    from reference.pieces import swapped
    from reference.solutions.rules import mul_backward

    kept = []

    def mul_backward_that_keeps(ctx, grad):
        grads = mul_backward(ctx, grad)
        kept.append(grads)
        return grads

    x = reference.tensor([1.0, 2.0], requires_grad=True)
    with swapped({"mul_backward": mul_backward_that_keeps}):
        (x * 3.0).sum().backward()
    assert x.grad is not kept[0][0]
    kept[0][0].mul_(0)
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
