"""Kata 01: backward rules of the elementwise operations.

Read README.md first. Run this kata alone with:  pytest --kata 1

Each rule receives
    ctx   the operation's node: `ctx.saved_tensors` is what the forward saved (listed in
          each docstring), `ctx.needs_input_grad[i]` says whether input i wants a gradient;
    grad  the gradient of the loss with respect to the operation's output (a Tensor);
and returns a tuple with one gradient per input (a Tensor, or None for an input that needs
none). Use tensor operations (+ - * / ** .exp() .log() comparisons), never numpy: the engine
records them when create_graph=True, which is how second derivatives work, and they keep each
gradient on its tensor's device (the tests also run on a simulated GPU).

For a + b and the other binary operations, return gradients in the output's shape: the
engine sums them down to each input's shape itself (that is kata 02).
"""
from plugin import engine as ag  # noqa: F401  (the engine's public API, if you need it)


def add_backward(ctx, grad):
    """out = a + b. Saved: nothing. Return (grad_a, grad_b)."""
    raise NotImplementedError("add_backward: see katas/01_elementwise_rules/README.md")


def sub_backward(ctx, grad):
    """out = a - b. Saved: nothing. Return (grad_a, grad_b)."""
    raise NotImplementedError("sub_backward: see katas/01_elementwise_rules/README.md")


def mul_backward(ctx, grad):
    """out = a * b. Saved: a, b. Return (grad_a, grad_b)."""
    raise NotImplementedError("mul_backward: see katas/01_elementwise_rules/README.md")


def div_backward(ctx, grad):
    """out = a / b. Saved: a, b. Return (grad_a, grad_b)."""
    raise NotImplementedError("div_backward: see katas/01_elementwise_rules/README.md")


def neg_backward(ctx, grad):
    """out = -x. Saved: (nothing). Return (grad_x,)."""
    raise NotImplementedError("neg_backward: see katas/01_elementwise_rules/README.md")


def pow_backward(ctx, grad):
    """out = base ** exponent. Saved: base, exponent, out. Return (grad_base, grad_exponent)."""
    raise NotImplementedError("pow_backward: see katas/01_elementwise_rules/README.md")


def exp_backward(ctx, grad):
    """out = exp(x). Saved: out. Return (grad_x,)."""
    raise NotImplementedError("exp_backward: see katas/01_elementwise_rules/README.md")


def log_backward(ctx, grad):
    """out = log(x). Saved: x. Return (grad_x,)."""
    raise NotImplementedError("log_backward: see katas/01_elementwise_rules/README.md")


def sigmoid_backward(ctx, grad):
    """out = sigmoid(x). Saved: out. Return (grad_x,)."""
    raise NotImplementedError("sigmoid_backward: see katas/01_elementwise_rules/README.md")


def tanh_backward(ctx, grad):
    """out = tanh(x). Saved: out. Return (grad_x,)."""
    raise NotImplementedError("tanh_backward: see katas/01_elementwise_rules/README.md")


def relu_backward(ctx, grad):
    """out = relu(x). Saved: out. Return (grad_x,)."""
    raise NotImplementedError("relu_backward: see katas/01_elementwise_rules/README.md")
