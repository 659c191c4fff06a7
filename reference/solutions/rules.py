"""Kata 01, model solution: backward rules of the elementwise operations.

A rule receives `ctx` (the node: what the forward saved on it) and `grad`, the gradient of
the loss with respect to the operation's output. It returns one gradient per input: the
chain rule, `grad` times the local derivative. Rules use tensor operations only, so that
with create_graph=True the engine records them too and can differentiate them again.

Binary rules return gradients in the broadcast (output) shape; the engine sums them back to
each input's shape with `unbroadcast` (kata 02). `ctx.needs_input_grad` says which inputs
want a gradient: skipping the others saves work, as torch's own rules do.
"""

__all__ = [
    "add_backward",
    "sub_backward",
    "mul_backward",
    "div_backward",
    "neg_backward",
    "pow_backward",
    "exp_backward",
    "log_backward",
    "sigmoid_backward",
    "tanh_backward",
    "relu_backward",
]


def add_backward(ctx, grad):
    # out = a + b: d(out)/da = d(out)/db = 1
    return grad, grad


def sub_backward(ctx, grad):
    # out = a - b
    return grad, -grad


def mul_backward(ctx, grad):
    # out = a * b: each input's gradient is grad times the other input
    a, b = ctx.saved_tensors
    grad_a = grad * b if ctx.needs_input_grad[0] else None
    grad_b = grad * a if ctx.needs_input_grad[1] else None
    return grad_a, grad_b


def div_backward(ctx, grad):
    # out = a / b: d/da = 1/b, d/db = -a/b^2, computed as (a / b) / b, as torch does: b * b
    # overflows float32 from |b| = 2e19 on (a / inf = 0 where the gradient is -a/b^2)
    a, b = ctx.saved_tensors
    grad_a = grad / b if ctx.needs_input_grad[0] else None
    grad_b = -grad * (a / b / b) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b


def neg_backward(ctx, grad):
    # out = -x
    return (-grad,)


def pow_backward(ctx, grad):
    # out = base ** exponent: d/dbase = exponent * base^(exponent-1), d/dexponent = out * ln(base)
    base, exponent, out = ctx.saved_tensors
    grad_base = grad_exponent = None
    if ctx.needs_input_grad[0]:
        # Where the exponent is 0, out = 1 whatever the base, so d/dbase = 0; the formula
        # would give 0 * 0 ** -1 = nan at base 0. torch picks 0 there the same way.
        grad_base = (grad * (exponent * base ** (exponent - 1))).where(exponent != 0, 0.0)
    if ctx.needs_input_grad[1]:
        # 0 ** e has no logarithm. For e >= 0 (0 ** e is 0 or 1) torch takes that gradient
        # as 0, picked by a where (so a second derivative through it is nan there, as in
        # torch); for e < 0 it keeps the formula: inf * ln(0) = -inf.
        keep = (base != 0).where(exponent >= 0, True)
        grad_exponent = grad * (out * base.log()).where(keep, 0.0)
    return grad_base, grad_exponent


def exp_backward(ctx, grad):
    # out = e^x is its own derivative: reuse the saved output
    (out,) = ctx.saved_tensors
    return (grad * out,)


def log_backward(ctx, grad):
    # out = ln(x)
    (x,) = ctx.saved_tensors
    return (grad / x,)


def sigmoid_backward(ctx, grad):
    # out = 1 / (1 + e^-x): d/dx = out * (1 - out), from the saved output alone
    (out,) = ctx.saved_tensors
    return (grad * out * (1 - out),)


def tanh_backward(ctx, grad):
    # out = tanh(x): d/dx = 1 - out^2
    (out,) = ctx.saved_tensors
    return (grad * (1 - out * out),)


def relu_backward(ctx, grad):
    # out = max(x, 0): the gradient is blocked where the output is 0 (torch takes 0 at x = 0)
    # and passes elsewhere (a nan output passes it too, as in torch). A selection, not a
    # product: grad * mask gives nan where grad is inf and the mask 0 (log(relu(x)) at x < 0),
    # torch gives 0. The zeros are made from `out` (0 * out) so that `out` stays in the graph:
    # create_graph then gives torch's (zero) second derivative rather than no graph at all;
    # + 0.0 makes them +0.0 where out is -0.0 (relu(-0.0) is -0.0), as torch's zeros are.
    (out,) = ctx.saved_tensors
    return ((0 * out + 0.0).where(out <= 0, grad),)
