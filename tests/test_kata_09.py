"""Kata 09 (higher_order) through the grading plugin, on a copy of its folder (pytester)."""
from kit import assert_done, assert_stubs_all_todo, kata_row, learner_source, write_learner_file

KATA = "09_higher_order"

# Correct, written differently from reference/solutions/higher_order.py: the rows come from
# one seed tensor reused by index (ag.zeros + in-place fill under no_grad), the Jacobian is
# assembled into a preallocated array, the hvp differentiates the dot product g . v, and the
# penalty's norm goes through ** 0.5 on a flattened view.
ALTERNATIVE = '''
import numpy as np

from plugin import engine as ag


def jacobian(f, x):
    leaf = x.detach().requires_grad_(True)
    out = f(leaf)
    n = out.numel()
    result = np.zeros((n,) + tuple(x.shape), dtype=x.detach().numpy().dtype)
    for i in range(n if out.requires_grad else 0):  # a constant f: its Jacobian is zeros
        onehot = np.zeros(n, dtype=result.dtype)
        onehot[i] = 1
        grads = ag.autograd.grad([out], [leaf], [ag.tensor(onehot.reshape(tuple(out.shape)))],
                                 retain_graph=True, allow_unused=True)
        result[i] = 0 if grads[0] is None else grads[0].numpy()
    return ag.tensor(result.reshape(tuple(out.shape) + tuple(x.shape)))


def hessian_vector_product(f, x, v):
    leaf = x.detach().requires_grad_(True)
    out = f(leaf)
    if not out.requires_grad:  # f is a constant: its Hessian is zero
        return ag.zeros_like(leaf)
    g = ag.autograd.grad(out, leaf, create_graph=True, allow_unused=True)[0]
    if g is None or g.grad_fn is None:  # no x in f, or a constant gradient: the Hessian is zero
        return ag.zeros_like(leaf)
    hv = ag.autograd.grad((g * v).sum(), leaf, allow_unused=True)[0]
    return ag.zeros_like(leaf) if hv is None else hv.detach()


def gradient_penalty(critic, real, fake, alpha):
    mixed = fake + alpha * (real - fake)
    mixed.requires_grad_(True)
    out = critic(mixed)
    g = ag.autograd.grad(out.sum(), mixed, create_graph=True)[0]
    flat = g.reshape(g.shape[0], -1)
    return (((flat ** 2).sum(dim=1) ** 0.5 - 1) ** 2).sum() / g.shape[0]
'''


def test_the_stubs_are_all_todo(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("--kata", "9"), KATA)
    assert outcomes.get("todo", 0) >= 18, outcomes


def test_the_reference_solution_is_done(checkout):
    result = checkout.runpytest("--kata", "9", "--solution", "reference", "-p", "no:randomly")
    assert_done(result, KATA)
    assert "x reference" in result.stdout.str()  # the speed column was measured


def test_a_correct_solution_written_differently_is_done(checkout):
    write_learner_file(checkout, KATA, "higher_order.py", ALTERNATIVE)
    result = checkout.runpytest("--kata", "9", "-p", "no:randomly")
    assert_done(result, KATA)
    assert "compare with the reference solution in reference/solutions/higher_order.py" in result.stdout.str()


def test_the_reference_written_as_a_learner_is_done_and_not_flagged(checkout):
    write_learner_file(checkout, KATA, "higher_order.py", learner_source("higher_order"))
    result = checkout.runpytest("--kata", "9", "-p", "no:randomly", "-k", "not speed")
    assert_done(result, KATA)
    assert "flagged: " not in result.stdout.str()


def test_the_typical_mistakes_are_told_so(checkout):
    """One file, three classic slips: no retain_graph between the rows, no create_graph before
    differentiating the gradient, a penalty computed under no_grad."""
    source = learner_source("higher_order")
    wrong = (source.replace("retain_graph=not last", "retain_graph=False")
             .replace("(g,) = ag.autograd.grad(out, x, create_graph=True, allow_unused=True)",
                      "(g,) = ag.autograd.grad(out, x, allow_unused=True)")
             .replace("    return ((norms - 1) ** 2).mean()",
                      "    with ag.no_grad():\n        return ((norms - 1) ** 2).mean()"))
    assert wrong.count("retain_graph=False") == 1 and "with ag.no_grad()" in wrong
    assert "(g,) = ag.autograd.grad(out, x, allow_unused=True)\n" in wrong
    write_learner_file(checkout, KATA, "higher_order.py", wrong)
    result = checkout.runpytest("--kata", "9", "-v", "-p", "no:randomly")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, KATA)[1] == "in progress"
    assert "pass retain_graph=True to every autograd.grad call but the last" in out
    assert "the first autograd.grad needs create_graph=True" in out
    assert "must carry a graph back to the critic's weights" in out
    # the penalty's value is still right: only its graph is missing
    assert "test_penalty_equals_torchs[vectors (8, 3)] PASSED" in out
