"""Kata 09: gradients of gradients.

Read README.md first. Run this kata alone with:  pytest --kata 9

Write these three functions with the engine's public API only (`ag.autograd.grad`,
`ag.tensor`, `ag.ones_like`, tensor operations); numpy is allowed for building seeds and
stacking rows. The tests call them with engine tensors and functions built from engine
operations, and compare with torch.autograd.functional and torch.
"""
import numpy as np  # noqa: F401  (seeds and stacking)

from plugin import engine as ag  # noqa: F401


def jacobian(f, x):
    """The Jacobian of `f` at `x`, like `torch.autograd.functional.jacobian(f, x)`.

    - `f`: a function of one engine tensor returning one engine tensor (any shape).
    - `x`: a floating engine tensor (it may or may not require grad).
    - Returns an engine tensor of shape `f(x).shape + x.shape` and x's dtype, that does not
      require grad: entry [i..., j...] is d f(x)[i...] / d x[j...].
    - An `f` that does not use `x` (a constant: its result does not require grad) has a
      Jacobian of zeros, as in torch.
    - Call `f` once and take one vector-Jacobian product per output element
      (`ag.autograd.grad(out, x, grad_outputs=one_hot, retain_graph=True)`): the graph is
      reused, so every call but the last must retain it.
    - Where f's output does not reach x (f built from a weight only), the rows are zeros, as
      torch's (`allow_unused=True` gives None there).
    - Leave the caller's `x` as it was: no `.grad` on it afterwards.
    - If f's output does not depend on x (a constant, or a function of other tensors only),
      the Jacobian is zeros, as torch's, not an error.
    """
    raise NotImplementedError("jacobian: see katas/09_higher_order/README.md")


def hessian_vector_product(f, x, v):
    """H(x) @ v, where H is the Hessian of the scalar function `f` at `x`, without building H.

    - `f`: a function of one engine tensor returning a one-element engine tensor.
    - `x`, `v`: floating engine tensors of the same shape.
    - Returns an engine tensor of x's shape and dtype, that does not require grad: the same
      as `torch.autograd.functional.hvp(f, x, v)[1]`.
    - Differentiate the gradient: the first `ag.autograd.grad` needs `create_graph=True`.
    - If f is linear in x, its gradient does not depend on x (it has no graph, or one that does
      not reach x): the product is zeros, as torch's, not an error. So it is when f does not
      depend on x at all (a constant, or a function of other tensors only).
    """
    raise NotImplementedError("hessian_vector_product: see katas/09_higher_order/README.md")


def gradient_penalty(critic, real, fake, alpha):
    """The WGAN-GP gradient penalty (without its weight, usually 10).

    - `critic`: a function of one engine tensor of real's shape (batch, ...) returning the
      scores, shape (batch,) or (batch, 1); its weights are leaves that require grad.
    - `real`, `fake`: engine tensors of shape (batch, ...) that do not require grad.
    - `alpha`: an engine tensor broadcastable against them, e.g. (batch, 1).
    - Returns a one-element engine tensor: the mean over the batch of
      (||d critic(mixed) / d mixed[b]||_2 - 1) ** 2, where mixed = alpha * real + (1 - alpha) * fake
      and each sample's gradient is flattened before its norm.
    - The penalty is part of the critic's loss: it must carry a graph back to the critic's
      weights (`create_graph=True` on the inner gradient, never under no_grad or detached).
    """
    raise NotImplementedError("gradient_penalty: see katas/09_higher_order/README.md")
