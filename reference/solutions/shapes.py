"""Kata 02, model solution: gradients that change shape.

- `unbroadcast`: an operand that was broadcast was used many times, so its gradient is the
  sum over the copies.
- reductions send the gradient back to every element that took part (sum, mean) or only to
  the winner (max).
- reshape and transpose are undone; matmul's gradients are two more matmuls; indexing
  scatters the gradient back, adding where an index repeats.
"""
import math

import numpy as np

__all__ = [
    "unbroadcast",
    "sum_backward",
    "mean_backward",
    "max_backward",
    "reshape_backward",
    "transpose_backward",
    "matmul_backward",
    "getitem_backward",
]


def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`: over the leading dimensions broadcasting added, and over
    the dimensions where `shape` has 1 and grad has more."""
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    leading = grad.ndim - len(shape)
    stretched = tuple(
        leading + i for i, size in enumerate(shape) if size == 1 and grad.shape[leading + i] != 1
    )
    if not stretched:  # only new leading dimensions (a bias added to a batch): one sum
        return grad.sum(dim=tuple(range(leading)))
    return grad.sum(dim=tuple(range(leading)) + stretched, keepdim=True).reshape(shape)


def _kept_shape(ctx):
    """The reduction's output shape as if keepdim=True (1 in each reduced dimension)."""
    return tuple(1 if i in ctx.dim else n for i, n in enumerate(ctx.input_shapes[0]))


def sum_backward(ctx, grad):
    # out = x.sum(dim): every element of x added into the output, so each gets grad as is
    if not ctx.keepdim and grad.ndim > 0:  # (a 0-d gradient broadcasts to any shape as it is)
        grad = grad.reshape(_kept_shape(ctx))
    return (grad.expand(ctx.input_shapes[0]),)


def mean_backward(ctx, grad):
    # out = x.sum(dim) / count: sum's gradient, divided. Divided after it is expanded, as in
    # torch: the result is then a tensor of its own, not an expand whose elements share memory
    # (a user who changes autograd.grad's result in place would get torch's "unsupported
    # operation" error where torch gives none).
    count = math.prod(ctx.input_shapes[0][d] for d in ctx.dim)
    (expanded,) = sum_backward(ctx, grad)
    return (expanded / count,)


def max_backward(ctx, grad):
    shape = ctx.input_shapes[0]
    if ctx.dim is None:
        # out = x.max(): torch shares the gradient evenly between elements tied for the max.
        # A nan in x makes the max nan, and nan == nan is False: the nan elements (x != x)
        # are then the winners, as torch takes them.
        x, out = ctx.saved_tensors
        winners = x != x if math.isnan(out.item()) else x == out
        # where(), not grad * winners: an infinite grad times a 0 of the mask would be nan
        return ((grad / winners.sum().item()).where(winners, 0.0),)
    # out = x.max(dim): the gradient goes to the element whose index max returned
    from ..creation import arange

    kept = tuple(1 if i == ctx.dim else n for i, n in enumerate(shape))
    if not ctx.keepdim:
        grad = grad.reshape(kept)
    positions = arange(shape[ctx.dim], device=grad.device).reshape([-1 if i == ctx.dim else 1 for i in range(len(shape))])
    winners = positions == ctx.indices.reshape(kept)
    return (grad.where(winners, 0.0),)  # (where, as above: inf * 0 would be nan)


def reshape_backward(ctx, grad):
    # out = x.reshape(...): the same numbers in another shape
    return (grad.reshape(ctx.input_shapes[0]),)


def transpose_backward(ctx, grad):
    # out = x.transpose(d0, d1): swapping the same two dimensions undoes it
    return (grad.transpose(ctx.dim0, ctx.dim1),)


def matmul_backward(ctx, grad):
    # out = a @ b: grad_a = grad @ b^T, grad_b = a^T @ grad.
    # A 1-D operand is treated as a row (a) or a column (b) and the extra dimension of the
    # gradient is put back; batch dimensions that were broadcast are summed away.
    a, b = ctx.saved_tensors
    if a.ndim == 2 and b.ndim == 2:  # the common case, without reshapes
        grad_a = grad @ b.T if ctx.needs_input_grad[0] else None
        grad_b = a.T @ grad if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    grad_shape = a2.shape[:-1] + b2.shape[-1:]
    if b2.ndim > 2 or a2.ndim > 2:
        grad_shape = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]) + grad_shape[-2:]
    grad2 = grad.reshape(grad_shape)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = unbroadcast(grad2 @ b2.transpose(-1, -2), a2.shape).reshape(a.shape)
    if ctx.needs_input_grad[1]:
        grad_b = unbroadcast(a2.transpose(-1, -2) @ grad2, b2.shape).reshape(b.shape)
    return grad_a, grad_b


def getitem_backward(ctx, grad):
    # out = x[index]: put grad back where it was taken, adding up repeated indices
    zeros = grad.new_zeros(ctx.input_shapes[0])
    return (zeros.index_put(ctx.index, grad, accumulate=True),)
