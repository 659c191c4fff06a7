"""Kata 04 (accumulation), graded by the plugin on a copy of its folder: the stubs are to-dos,
the reference and a differently written solution are done, typical mistakes fail with a reason."""

from kit import assert_done, assert_stubs_all_todo, kata_row, write_learner_file

KATA = "04_accumulation"
FILE = "accumulate.py"

# Correct, and written differently from reference/solutions/accumulate.py: the cases in another
# order, the leaf's layout compared before asking who holds the gradient, `+=` for the in-place
# case, a special case for a gradient merged with itself.
ALTERNATIVE = '''
from plugin import engine as ag


def merge_grads(existing, incoming):
    if existing is incoming:  # AddBackward0 of x + x sends one tensor twice
        return incoming * 2
    return incoming + existing


def accumulate_grad(leaf, grad, create_graph):
    current = leaf.grad
    if current is not None:
        if create_graph:
            leaf.grad = current + grad
        else:
            current += grad  # Tensor.__iadd__ is add_: the same object
    elif leaf.stride() == grad.stride() and not create_graph and ag.autograd.graph.pass_owns(grad):
        leaf.grad = grad
    else:
        leaf.grad = ag.empty_like(leaf).copy_(grad)
'''

# The most common mistakes: .grad that aliases the incoming gradient, and an in-place merge.
ALIASING = '''
def merge_grads(existing, incoming):
    return existing + incoming


def accumulate_grad(leaf, grad, create_graph):
    if leaf.grad is None:
        leaf.grad = grad
    elif create_graph:
        leaf.grad = leaf.grad + grad
    else:
        leaf.grad.add_(grad)
'''

IN_PLACE_MERGE = '''
from plugin import engine as ag


def merge_grads(existing, incoming):
    existing += incoming
    return existing


def accumulate_grad(leaf, grad, create_graph):
    if leaf.grad is None:
        leaf.grad = ag.empty_like(leaf).copy_(grad)
    elif create_graph:
        leaf.grad = leaf.grad + grad
    else:
        leaf.grad.add_(grad)
'''


def test_the_shipped_stubs_are_all_to_dos(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("-p", "no:randomly"), KATA)
    assert outcomes.get("todo", 0) >= 20, outcomes
    # only the two speed tests and the fuzz test are left: they wait for the kata's tests to pass
    assert outcomes.get("skipped", 0) == 3, outcomes


def test_the_reference_solution_is_done(checkout):
    assert_done(checkout.runpytest("--solution", "reference", "-p", "no:randomly"), KATA)


def test_a_correct_solution_written_differently_is_done(checkout):
    write_learner_file(checkout, KATA, FILE, ALTERNATIVE)
    result = checkout.runpytest("-p", "no:randomly")
    assert_done(result, KATA)
    assert "compare with the reference solution in reference/solutions/accumulate.py" in result.stdout.str()
    assert "x reference" in result.stdout.str()  # the speed column has a ratio


def test_a_grad_that_aliases_the_incoming_gradient_fails_with_a_reason(checkout):
    write_learner_file(checkout, KATA, FILE, ALIASING)
    result = checkout.runpytest("-p", "no:randomly", "-k", "copy or hook")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, KATA)[1] == "in progress"
    assert "`p.grad is g`: torch gives False, the engine True" in out
    assert "the first gradient must be copied into .grad" in out
    assert "`x.grad is` the hook's gradient: torch gives False, the engine True" in out  # the hook test's line


def test_an_in_place_merge_fails_with_a_reason(checkout):
    write_learner_file(checkout, KATA, FILE, IN_PLACE_MERGE)
    result = checkout.runpytest("-p", "no:randomly", "-v", "-k", "merge_grads or untouched or two_inputs")
    out = result.stdout.str()
    assert result.ret == 1
    assert "merge_grads changed `existing` in place" in out
    assert "g after backward(g): torch gives" not in out  # a tensor differs: shown with values
    assert "g after backward(g) differs from torch's" in out
    assert "the gradient of `q` differs from torch's" in out  # q's gradient, corrupted through p's buffer
    # where the graph shows a node whose gradient went wrong, its sentence names the piece that
    # sums (the fifth walk: "their sum (merging) went wrong", merge_grads only in the table)
    assert "so their sum went wrong (your merge_grads (accumulate.py))" in out, out
