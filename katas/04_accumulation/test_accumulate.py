"""Kata 04 tests: gradients summed within a pass (merge_grads) and across passes (accumulate_grad).

Most tests run one scenario on torch and on the engine (the oracle) and compare what they
observe: gradient values, and facts such as whether `x.grad is` the tensor of the 1st pass.
"""
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.grading.oracle import Constant

X = np.array([0.5, -1.25, 2.0])
W = np.array([[0.3, -0.7, 1.1], [0.9, 0.2, -0.4]])


def agree(oracle, scenario, why, **inputs):
    """oracle.compare on a scenario that returns {label: what it observed}; a mismatch names
    the label and adds `why`, what the contract asks for."""
    __tracebackhide__ = True
    return oracle.compare(scenario, why=why, **inputs)


def backward(loss, *args, **kwargs):
    """loss.backward(...) without torch's warning about create_graph and .grad (a reference
    cycle): the scenarios compare warnings, and the engine does not give that one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        loss.backward(*args, **kwargs)


def values(t):
    return np.array(t.detach().numpy(), copy=True)


# --- within one pass: merge_grads ------------------------------------------------------------

def test_a_value_multiplied_by_itself(oracle):
    oracle.check_grads(lambda lib, x: x * x, op="y = x * x (x's node gets x * grad twice)", x=X)


def test_a_value_added_to_itself(oracle):
    oracle.check_grads(lambda lib, x: x + x, op="y = x + x (x's node gets grad twice)", x=X)


def test_two_negative_zeros_merge_to_a_negative_zero(oracle):
    """-0.0 + -0.0 is -0.0, in torch's merge as in IEEE arithmetic; 1 / x.grad shows the sign."""

    def merged(lib):
        h = lib.tensor([1.0, -2.0], requires_grad=True) * 1.0  # no leaf: what reaches h is the merge's
        (grad,) = lib.autograd.grad((h * -0.0 + h * -0.0).sum(), [h])
        return 1 / grad

    oracle.compare(merged, what="1 / (h's gradient) after two -0.0 gradients merged",
                   why="the merge is the plain sum: a sum started from 0 (Python's sum()) gives 0.0 for -0.0 + -0.0")


def test_a_diamond(oracle):
    def diamond(lib, x):
        h = x.tanh()  # h feeds two branches that meet again
        return h * 2 + h.exp()

    oracle.check_grads(diamond, op="h = tanh(x); y = h * 2 + exp(h)", x=X)


def test_a_wide_fan_in(oracle):
    def fan_in(lib, x, w):
        total = x * w[0]
        for i in range(1, 40):
            total = total + (x * w[i % 6]).sigmoid()
        return total

    oracle.check_grads(fan_in, op="x used by 40 operations, summed", x=X, w=np.linspace(-1.5, 1.5, 6))


SHARED = {
    "(p + q) + p * 2 + q * 3": lambda lib, p, q: (p + q) + p * 2 + q * 3,
    "q * 3 + p * 2 + (p + q)": lambda lib, p, q: q * 3 + p * 2 + (p + q),
}


@pytest.mark.parametrize("expression", list(SHARED))
def test_one_gradient_sent_to_two_inputs(oracle, expression):
    """`p + q` sends one gradient tensor to p and to q, and each of them has a second path.
    Summing into a buffer in place (existing.add_(...) or incoming.add_(...)) would change the
    other leaf's gradient too: one of these two orders shows it."""
    oracle.check_grads(SHARED[expression], op=expression, p=X, q=X[::-1].copy())


def test_float32_gradients_stay_float32(oracle):
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    oracle.check_grads(lambda lib, x: x * x.exp() + x.sigmoid() * x,
                       op="x * exp(x) + sigmoid(x) * x (float32)", x=x)


@settings(max_examples=20)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.sampled_from("+*")),
                min_size=1, max_size=12))
def test_random_graphs_with_fan_out(oracle, program):
    """Each step combines two earlier values: fan-out and diamonds appear at random."""

    def build(lib, a, b, c):
        made = [a, b, c]
        for i, j, op in program:
            left, right = made[i % len(made)], made[j % len(made)]
            made.append(left + right if op == "+" else (left * right).tanh())
        return made[-1] + made[len(made) // 2]

    oracle.check_grads(build, op=f"a random graph {program}", a=X, b=X * 0.5, c=-X)


def test_merge_grads_leaves_its_arguments_alone(ag):
    merge = ag.pieces.active.merge_grads
    existing = ag.tensor(np.array([1.0, 2.0, 3.0]))
    incoming = ag.tensor(np.array([10.0, 20.0, 30.0]))
    versions = (existing._version, incoming._version)
    total = merge(existing, incoming)
    assert isinstance(total, ag.Tensor), f"merge_grads must return a Tensor, not {type(total).__name__}"
    np.testing.assert_array_equal(values(existing), [1.0, 2.0, 3.0], err_msg=(
        "merge_grads changed `existing` in place: return a new tensor (existing + incoming)"))
    np.testing.assert_array_equal(values(incoming), [10.0, 20.0, 30.0], err_msg=(
        "merge_grads changed `incoming` in place: return a new tensor (existing + incoming)"))
    assert (existing._version, incoming._version) == versions, (
        "merge_grads used an in-place operation on one of its arguments (its version counter "
        "moved): other code may hold them, so build a new tensor"
    )
    assert total is not existing and total is not incoming, "merge_grads must return a new tensor"
    np.testing.assert_array_equal(values(total), [11.0, 22.0, 33.0],
                                  err_msg="merge_grads must return the sum")
    assert total.dtype == existing.dtype, f"the sum of two {existing.dtype} gradients is {total.dtype}"


def test_the_gradient_you_pass_stays_untouched(oracle):
    def scenario(lib, x, g):
        (x + x).backward(g)  # add's rule sends g itself to x twice
        return {"x.grad": x.grad, "g after backward(g)": g}

    agree(oracle, scenario, "backward(g) must not change g: sum gradients out of place (merge_grads) "
          "and copy the first one into .grad (accumulate_grad)", x=X, g=Constant(np.array([1.0, 0.5, -2.0])))


def test_merging_is_recorded_with_create_graph(oracle):
    def scenario(lib, x):
        y = (x * x.sigmoid()).sum()  # x's node gets two gradients, summed
        (first,) = lib.autograd.grad(y, x, create_graph=True)
        (second,) = lib.autograd.grad(first.sum(), x)
        return {"the first derivative": first, "the second derivative": second}

    agree(oracle, scenario, "with create_graph=True the sum of the two paths must stay differentiable: "
          "use tensor operations (existing + incoming), nothing detached", x=X)


# --- across passes: accumulate_grad ----------------------------------------------------------

def test_three_backward_calls_add_up(oracle):
    def three_passes(lib, w, x):
        y = (w @ x).tanh()
        y.sum().backward(retain_graph=True)  # pass 1
        (y * 2).sum().backward(retain_graph=True)  # pass 2
        return y * 3  # the oracle runs pass 3 from here

    oracle.check_grads(three_passes, op="three backward calls: .grad must hold the sum of all three",
                       w=W, x=X)


def test_three_backward_calls_in_float32(oracle):
    def three_passes(lib, x):
        for _ in range(2):
            x.exp().sum().backward()
        return x.exp()

    oracle.check_grads(three_passes, op="three backward calls on a float32 leaf", x=X.astype(np.float32))


def test_grad_keeps_its_object_across_passes(oracle):
    def scenario(lib, x):
        (x * x).sum().backward()
        first = x.grad
        (x * x).sum().backward()
        second = x.grad is first
        x.exp().sum().backward()
        return {
            "after pass 2, `x.grad is first`": second,
            "after pass 3, `x.grad is first`": x.grad is first,
            "x.grad": x.grad,
        }

    agree(oracle, scenario, "your accumulate_grad: without create_graph, later gradients are added in place "
          "into the same .grad tensor (leaf.grad.add_(grad)); an optimizer may hold that object", x=X)


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_the_first_gradient_is_a_copy(oracle, create_graph):
    def scenario(lib, p, q, g):
        backward(p + q, g, create_graph=create_graph)  # p and q receive the same tensor: g itself
        facts = {"`p.grad is g`": p.grad is g, "`p.grad is q.grad`": p.grad is q.grad}
        p.grad.mul_(10)  # what a user (or an optimizer) may do to one .grad
        return {**facts, "p.grad after p.grad.mul_(10)": p.grad, "q.grad after p.grad.mul_(10)": q.grad,
                "g after p.grad.mul_(10)": g}

    agree(oracle, scenario, "the first gradient must be copied into .grad (ag.empty_like(leaf)"
          ".copy_(grad)) when other code holds it (here g, passed to both p and q; "
          "ag.autograd.graph.pass_owns(grad) is False): otherwise p.grad, q.grad and g are one "
          "tensor, and changing one changes all", p=X, q=X * 2, g=Constant(np.array([1.0, 0.5, -2.0])))


def flat_view(t):
    """t.view(-1), or the first sentence of the error: a view shows how t is laid out."""
    try:
        return t.view(-1)
    except RuntimeError as error:
        return str(error).split(" (")[0]


LAYOUTS = {
    # x is laid out row by row, and its gradient comes back transposed (a view of grad.T)
    "x, gradient through x.T": (lambda lib, x: x, lambda lib, leaf: (leaf.T * 2.0).exp().sum()),
    # x.T made a leaf (laid out column by column), its gradient made row by row by matmul's
    # rule: a tensor only the pass holds, but not laid out like the leaf
    "x.T made a leaf, gradient from matmul": (lambda lib, x: x.detach().T.requires_grad_(),
                                              lambda lib, leaf: (leaf @ lib.ones(2, 2, dtype=leaf.dtype)).tanh().sum()),
}


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("case", list(LAYOUTS))
def test_the_first_gradient_is_laid_out_like_the_leaf(oracle, case, create_graph):
    make_leaf, loss = LAYOUTS[case]

    def scenario(lib, x):
        leaf = make_leaf(lib, x)
        backward(loss(lib, leaf), create_graph=create_graph)
        return {"leaf.stride()": leaf.stride(), "leaf.grad.stride()": leaf.grad.stride(),
                "leaf.grad.view(-1)": flat_view(leaf.grad), "leaf.grad": leaf.grad}

    agree(oracle, scenario, "the first .grad must be laid out like its leaf (the same strides), "
          "so that a view of .grad works where the same view of the leaf does: keep grad only when "
          "grad.stride() == leaf.stride(), else copy it into ag.empty_like(leaf)", x=W)


def test_a_gradient_only_the_pass_holds_becomes_grad_without_a_copy(ag):
    """torch "steals" a gradient that nobody else holds: .grad is the tensor the rule made."""
    made = []
    rule = ag.pieces.active.mul_backward

    def mul_backward(ctx, grad):  # the model rule, noting (weakly) the arrays it returns
        grads = rule(ctx, grad)
        made.extend(weakref.ref(g._data) for g in grads if g is not None)
        return grads

    w = ag.tensor(W, requires_grad=True)
    with ag.pieces.swapped({"mul_backward": mul_backward}):
        (w * 3.0).sum().backward()
    assert w.grad._data is made[0](), (
        "the pass alone held w's gradient (ag.autograd.graph.pass_owns(grad) was True) and it was "
        "laid out like w, yet .grad is a copy of it: keep it as .grad, as torch does (no copy)")
    w.grad = None
    with ag.pieces.swapped({"mul_backward": mul_backward}):
        (w * 3.0).sum().backward(create_graph=True)
    assert w.grad._data is not made[1](), (
        "with create_graph the first gradient must be copied (a recorded copy), even when the pass "
        "alone held it: .grad is the rule's own tensor")


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_a_leaf_used_as_the_root_copies_its_seed(oracle, create_graph):
    def scenario(lib, y, g):
        backward(y, g, create_graph=create_graph)  # a leaf as the root: its seed goes straight to y
        fact = y.grad is g
        y.grad.zero_()
        return {"`y.grad is g`": fact, "g after y.grad.zero_()": g}

    agree(oracle, scenario, "accumulate_grad got the user's own g: store a copy in .grad",
          y=X, g=Constant(np.array([1.0, 0.5, -2.0])))


def test_a_hook_keeps_the_gradient_it_saw(oracle):
    def scenario(lib, x):
        seen = []
        x.register_hook(seen.append)  # keeps the gradient that reaches x
        (x * 3).sum().backward()
        fact = x.grad is seen[0]
        (x * 3).sum().backward()  # in place into x.grad: the hook's tensor must not move
        return {"`x.grad is` the hook's gradient": fact, "the hook's gradient after pass 2": seen[0],
                "x.grad": x.grad}

    agree(oracle, scenario, "the gradient a hook received must not become .grad: copy it first", x=X)


def test_create_graph_accumulates_out_of_place(oracle):
    def scenario(lib, x):
        backward((x ** 3).sum(), create_graph=True)
        first = x.grad
        has_grad_fn = first.grad_fn is not None
        node = first.grad_fn.name().split("::")[-1] if has_grad_fn else None  # torch::autograd::...
        backward((x ** 3).sum(), create_graph=True)
        return {
            "after pass 1, x.grad has a grad_fn": has_grad_fn,
            "after pass 1, x.grad.grad_fn's name": node,
            "after pass 2, `x.grad is` the .grad of pass 1": x.grad is first,
            "after pass 2, x.grad has a grad_fn": x.grad.grad_fn is not None,
            "the .grad of pass 1, after pass 2": first,
            "x.grad": x.grad,
        }

    agree(oracle, scenario, "with create_graph, copy the first gradient keeping its graph "
          "(ag.empty_like(leaf).copy_(grad): a CopyBackwards node), then add out of place (leaf.grad = leaf.grad + grad): the old .grad "
          "keeps its value and the new one is differentiable", x=X)


def test_accumulated_grad_can_be_differentiated(oracle):
    def scenario(lib, x):
        backward((x ** 3).sum(), create_graph=True)
        backward(x.tanh().sum(), create_graph=True)
        (second,) = lib.autograd.grad(x.grad.sum(), x)  # d/dx of (3x^2 + tanh'(x))
        return {"x.grad": x.grad, "the derivative of x.grad.sum()": second}

    agree(oracle, scenario, "x.grad after two create_graph passes must be differentiable: it is "
          "the sum of both gradients, recorded in the graph", x=X)


def test_create_graph_after_a_plain_pass(oracle):
    def scenario(lib, x):
        (x * x).sum().backward()
        plain = x.grad
        backward((x * x).sum(), create_graph=True)
        return {
            "`x.grad is` the .grad of the plain pass": x.grad is plain,
            "the .grad of the plain pass, afterwards": plain,
            "x.grad": x.grad,
            "x.grad.requires_grad": x.grad.requires_grad,
        }

    agree(oracle, scenario, "a create_graph pass adds out of place even into a .grad made by a "
          "plain pass", x=X)


def test_splitting_a_batch(oracle):
    def half_then_half(lib, w, x):
        first, second = x[0], x[1]
        ((w * first).tanh().sum()).backward()  # the first half of the batch
        return (w * second).tanh()  # the oracle runs the second half

    oracle.check_grads(half_then_half, op="a batch of two, one backward per half: w.grad is the "
                       "whole batch's gradient", w=X, x=Constant(W))


# --- zeroing ---------------------------------------------------------------------------------

def test_zeroing_with_zero_(oracle):
    def scenario(lib, x):
        x.exp().sum().backward()
        x.exp().sum().backward()
        held = x.grad
        x.grad.zero_()
        x.exp().sum().backward()
        return {"after zero_() and a pass, `x.grad is` the zeroed tensor": x.grad is held, "x.grad": x.grad}

    agree(oracle, scenario, "after x.grad.zero_(), the next pass adds into that zeroed tensor", x=X)


def test_zeroing_with_none(oracle):
    def scenario(lib, x):
        x.exp().sum().backward()
        held = x.grad
        x.grad = None
        x.exp().sum().backward()
        return {
            "after x.grad = None and a pass, `x.grad is` the old .grad": x.grad is held,
            "the old .grad": held,
            "x.grad": x.grad,
        }

    agree(oracle, scenario, "after x.grad = None, the next pass starts again from a copy of its "
          "gradient (read leaf.grad each time: keep no state of your own)", x=X)


# --- who gets a .grad ------------------------------------------------------------------------

def test_a_non_leaf_grad_stays_none(oracle):
    def scenario(lib, x):
        h = x * 2
        y = (h * h).sum()
        y.backward()
        return {"x.grad": x.grad, "h.grad": h.grad}  # reading h.grad warns, as in torch

    agree(oracle, scenario, "only leaves get a .grad; an intermediate's stays None", x=X)


def test_backward_inputs_accumulates_only_into_them(oracle):
    def scenario(lib, x, w):
        h = x * w
        y = (h * h).sum()
        y.backward(inputs=[h], retain_graph=True)  # a non-leaf named in inputs gets a .grad
        y.backward(inputs=[h, w])
        return {"x.grad": x.grad, "w.grad": w.grad, "h.grad": h.grad}

    agree(oracle, scenario, "backward(inputs=[...]) accumulates into exactly those tensors",
          x=X, w=X[::-1].copy())


# --- a .grad set beforehand, scenarios run twice, the GPU (issue 14) ---------------------------

def test_a_grad_set_by_hand_is_added_into(oracle):
    def scenario(lib, x, g0):
        x.grad = g0  # a .grad that the engine did not make: a user's, or an optimizer's
        (x * x).sum().backward()
        fact = x.grad is g0
        (x * 3).sum().backward()
        return {"after a pass, `x.grad is` the tensor set by hand": fact,
                "after two passes, `x.grad is` it": x.grad is g0, "the tensor set by hand": g0, "x.grad": x.grad}

    agree(oracle, scenario, "a .grad that is already set is added into in place, whoever set it",
          x=X, g0=Constant(np.array([1.0, -1.0, 0.5])))


def test_a_grad_set_by_hand_with_create_graph(oracle):
    def scenario(lib, x, g0):
        x.grad = g0
        backward((x ** 3).sum(), create_graph=True)
        return {"`x.grad is` the tensor set by hand": x.grad is g0, "the tensor set by hand": g0,
                "x.grad": x.grad, "x.grad.requires_grad": x.grad.requires_grad}

    agree(oracle, scenario, "with create_graph, a .grad already set is added to out of place: the "
          "tensor set by hand keeps its value", x=X, g0=Constant(np.array([1.0, -1.0, 0.5])))


def test_the_same_scenario_twice(oracle):
    """A whole training-like sequence, then the same again after x.grad = None: nothing of the
    first round may leak into the second."""

    def scenario(lib, x, w):
        seen = {}
        for number in (1, 2):
            x.grad = w.grad = None
            h = (x * w).tanh()
            loss = (h * h + h).sum()
            loss.backward(retain_graph=True)
            first = x.grad
            loss.backward()
            seen[f"round {number}: `x.grad is` its first value"] = x.grad is first
            seen[f"round {number}: x.grad"] = x.grad
            seen[f"round {number}: w.grad"] = w.grad
        return seen

    agree(oracle, scenario, "each round starts from x.grad = None: copy the first gradient, add the "
          "second into it", x=X, w=X[::-1].copy())


def test_fan_out_and_accumulation_on_the_gpu(ag):
    from plugin.grading.gpu_check import check_grads_on_gpu

    def fan_out(lib, p, q):
        (p * q.exp()).sum().backward(retain_graph=True)  # a first pass into p.grad and q.grad
        h = (p + q).tanh()
        return (p + q) + h * 2 + h.exp() * q

    check_grads_on_gpu(ag, fan_out, op="two passes through a graph with fan-out", p=X, q=X[::-1].copy())


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_grad_stays_on_the_gpu_across_passes(ag, create_graph):
    x = ag.tensor(X, requires_grad=True, device="cuda")
    objects = []
    for _ in range(3):  # yours first: a stub stops the test before torch is imported
        backward((x ** 3 + x).sum(), create_graph=create_graph)  # x twice: a merged, copied first gradient
        objects.append(x.grad)
    import torch

    expected = torch.tensor(X, requires_grad=True)
    for _ in range(3):
        backward((expected ** 3 + expected).sum(), create_graph=create_graph)
    assert str(x.grad.device) == "cuda:0", (
        f"x is on cuda:0 and its .grad on {x.grad.device}: keep the gradient where it is (tensor "
        "operations, grad.clone()), never through numpy")
    np.testing.assert_allclose(x.grad.detach().cpu().numpy(), expected.grad.detach().numpy(), rtol=1e-10,
                               err_msg=f"x.grad on the GPU after three backward passes ({'create_graph' if create_graph else 'plain'})")
    same = [objects[0] is later for later in objects[1:]]
    assert same == [not create_graph] * 2, (
        f"on the GPU as on the CPU, `x.grad is` its first value after each later pass: expected "
        f"{[not create_graph] * 2}, got {same}")
    if create_graph:
        (second,) = ag.autograd.grad(x.grad.sum(), x)
        assert str(second.device) == "cuda:0", f"the second derivative of x (on cuda:0) came back on {second.device}"
        np.testing.assert_allclose(second.cpu().numpy(), 3 * 6 * X, rtol=1e-10,
                                   err_msg="the derivative of x.grad.sum() after three create_graph passes")


# --- random programs (runs last, once every test above passes) ---------------------------------

def test_random_programs_agree_with_torch(fuzz):
    """Random programs for your accumulation (fan-out, several passes, create_graph passes,
    hand-set, zeroed and None gradients, a .grad held under another name or saved by another
    graph, zero and negative-zero gradients, empty tensors, both devices), on your engine and on
    torch. A failure shows the shortest program that still differs."""
    fuzz.check()
