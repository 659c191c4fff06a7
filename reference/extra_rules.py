"""Backward rules of the operations no kata asks for. They go through the seam like the
others, so the whole engine stays differentiable to any order."""
from .creation import zeros
from .ops import where
from .pieces import active

__all__ = [
    "sqrt_backward",
    "zero_power_backward",
    "abs_backward",
    "sign_backward",
    "clone_backward",
    "copy_backward",
    "expand_backward",
    "softmax_backward",
    "log_softmax_backward",
    "index_put_backward",
    "where_backward",
]


def sqrt_backward(ctx, grad):
    # out = sqrt(x): d/dx = 1 / (2 sqrt(x))
    (out,) = ctx.saved_tensors
    return (grad / (2 * out),)


def zero_power_backward(ctx, grad):
    # out = x ** 0 (a number) = 1: flat, so torch returns fresh zeros, outside any graph
    base = ctx.saved_tensors[0]
    return zeros(base.shape, dtype=base.dtype, device=base.device), None


def abs_backward(ctx, grad):
    # out = |x|: the sign of x (0 at 0, as torch)
    (x,) = ctx.saved_tensors
    return (grad * x.sign(),)


def sign_backward(ctx, grad):
    # out = sign(x) is flat (almost) everywhere: a zero gradient, still part of the graph
    return (grad * 0,)


def clone_backward(ctx, grad):
    return (grad,)


def copy_backward(ctx, grad):
    # target.copy_(source): the target's old values are overwritten (zeros for them, as
    # torch), the source's go on as they are (the engine sums a broadcast source back)
    grad_old = grad.new_zeros(grad.shape) if ctx.needs_input_grad[0] else None
    return grad_old, grad


def expand_backward(ctx, grad):
    # out = x.expand(shape): the copies' gradients add up, as for any broadcast
    return (active.unbroadcast(grad, ctx.input_shapes[0]),)


def softmax_backward(ctx, grad):
    # out = softmax(x): d/dx = out * (grad - sum(grad * out)) along dim
    (out,) = ctx.saved_tensors
    return (out * (grad - (grad * out).sum(dim=ctx.dim, keepdim=True)),)


def log_softmax_backward(ctx, grad):
    # out = x - logsumexp(x): d/dx = grad - softmax(x) * sum(grad) along dim
    (out,) = ctx.saved_tensors
    return (grad - out.exp() * grad.sum(dim=ctx.dim, keepdim=True),)


def where_backward(ctx, grad):
    # out = where(condition, a, b): each element came from a or from b, and its gradient goes
    # back to that one; the other gets 0 there
    grad_a = where(ctx.condition, grad, 0.0) if ctx.needs_input_grad[0] else None
    grad_b = where(ctx.condition, 0.0, grad) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b


def index_put_backward(ctx, grad):
    # out = x with values put at index: x's gradient flows where it was not overwritten;
    # the values' gradient is read back from the index.
    grad_x = grad if ctx.accumulate else grad.index_put(ctx.index, 0)
    return grad_x, grad[ctx.index]
