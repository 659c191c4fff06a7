"""Kata 02 (shapes) through the grading plugin, on a copy of its folder (pytester)."""
from kit import assert_done, assert_stubs_all_todo, kata_row, write_learner_file

KATA = "02_shapes"

# A correct solution written differently from reference/solutions/shapes.py (on the CPU and the GPU): loops in unbroadcast,
# broadcasting by adding zeros, max(dim) and indexing as scatters, matmul's 1-D cases
# restored by hand, and indexing as a scatter-add into the flat positions of the reads.
ALTERNATIVE = '''
import numpy as np

from plugin import engine as ag


def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(dim=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(dim=axis, keepdim=True)
    return grad


def _kept(ctx, grad):
    if not ctx.keepdim:
        for axis in ctx.dim:  # ascending: each 1 goes back where its axis was
            grad = grad.reshape(tuple(grad.shape[:axis]) + (1,) + tuple(grad.shape[axis:]))
    return grad


def _back_to_input_shape(ctx, grad):
    return _kept(ctx, grad) + grad.new_zeros(ctx.input_shapes[0])


def sum_backward(ctx, grad):
    return (_kept(ctx, grad).expand(ctx.input_shapes[0]),)  # a view, as torch's


def mean_backward(ctx, grad):
    count = 1
    for axis in ctx.dim:
        count *= ctx.input_shapes[0][axis]
    return (_back_to_input_shape(ctx, grad) / count,)  # count may be 0 (an empty dim): no Python division


def max_backward(ctx, grad):
    shape = ctx.input_shapes[0]
    if ctx.dim is None:
        x, out = ctx.saved_tensors
        winners = x == out if out.item() == out.item() else x != x  # nan: the nans win
        return ((grad / winners.sum().item()).where(winners, 0.0),)  # select: inf * 0 would be nan
    positions = ctx.indices.cpu().numpy()  # an index, not a gradient: numpy is fine
    if ctx.keepdim:
        positions = positions.squeeze(ctx.dim)
        grad = grad.reshape(positions.shape)
    index = list(np.indices(positions.shape))
    index.insert(ctx.dim, positions)
    return (grad.new_zeros(shape).index_put(tuple(index), grad),)


def reshape_backward(ctx, grad):
    return (grad.reshape(tuple(ctx.input_shapes[0])),)  # not view: the gradient may come non-contiguous


def transpose_backward(ctx, grad):
    return (grad.transpose(ctx.dim1, ctx.dim0),)


def matmul_backward(ctx, grad):
    a, b = ctx.saved_tensors
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    g = grad
    if b.ndim == 1:
        g = g.reshape(tuple(g.shape) + (1,))
    if a.ndim == 1:
        g = g.reshape(tuple(g.shape[:-1]) + (1,) + tuple(g.shape[-1:]))
    grad_a = unbroadcast(g @ b2.mT, a2.shape).reshape(a.shape)
    grad_b = unbroadcast(a2.mT @ g, b2.shape).reshape(b.shape)
    return grad_a, grad_b


def getitem_backward(ctx, grad):
    shape = ctx.input_shapes[0]
    size = int(np.prod(shape))
    # the flat position of each read, from positions made on the gradient's device (an index
    # tensor may live there too)
    read = ag.arange(size, device=grad.device).reshape(shape)[ctx.index].reshape(-1)
    # added up into a flat copy: a matrix of reads (reads x elements) would grow quadratically
    flat = grad.new_zeros((size,)).index_put((read,), grad.reshape(-1), accumulate=True)
    return (flat.reshape(shape),)
'''

# Two typical mistakes, each planted over the correct solution (a later def wins).
ASSIGNING_GETITEM = '''

def getitem_backward(ctx, grad):
    return (grad.new_zeros(ctx.input_shapes[0]).index_put(ctx.index, grad),)  # assigns: repeats lost
'''

AVERAGING_UNBROADCAST = '''

def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.mean(dim=0)  # "b is shared, so average its gradients": wrong, they add up
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.mean(dim=axis, keepdim=True)
    return grad
'''


def test_the_stubs_are_all_todo(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("--kata", "2"), KATA)
    assert outcomes.get("todo", 0) > 50


def test_the_reference_solution_is_done(checkout):
    assert_done(checkout.runpytest("--kata", "2", "--solution", "reference", "-p", "no:randomly"), KATA)


def test_a_correct_solution_written_differently_is_done(checkout):
    write_learner_file(checkout, KATA, "shapes.py", ALTERNATIVE)
    result = checkout.runpytest("--kata", "2")
    assert_done(result, KATA)
    assert "compare with the reference solution in reference/solutions/shapes.py" in result.stdout.str()
    assert "x reference" in result.stdout.str()  # the MLP step was timed


def test_indexing_that_assigns_instead_of_adding_is_told_so(checkout):
    write_learner_file(checkout, KATA, "shapes.py", ALTERNATIVE + ASSIGNING_GETITEM)
    result = checkout.runpytest("--kata", "2", "-k", "repeated or indexing", "-v")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, KATA)[1] == "in progress"
    assert "x[0] was read 3 times, so its gradient is 1 + 1 + 1 = 3" in out
    assert "keeps one gradient per position: add them up instead" in out
    # the oracle's report names the node where the gradients part, and the likely cause
    assert "the gradient of `x` differs from torch's" in out
    assert "IndexBackward0 received the right gradient but returned a wrong one" in out
    assert "this index repeats: the gradients of an element read twice add up" in out


def test_an_unbroadcast_that_averages_is_told_so(checkout):
    write_learner_file(checkout, KATA, "shapes.py", ALTERNATIVE + AVERAGING_UNBROADCAST)
    result = checkout.runpytest("--kata", "2", "-k", "unbroadcast_directly or 0d or broadcast", "-v")
    out = result.stdout.str()
    assert result.ret == 1
    assert "looks like a mean: each value was copied 2 times" in out
    assert "so its gradient is the SUM of the copies' gradients" in out
    assert "each operand's gradient must be summed over the positions broadcasting copied it to" in out
