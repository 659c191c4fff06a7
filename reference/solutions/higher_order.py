"""Kata 09, model solution: higher-order gradients on the engine's public API.

A gradient computed with create_graph=True is a tensor with a graph of its own: it can be
differentiated again (a Hessian-vector product), or be part of a loss (a gradient penalty).
"""
import numpy as np

import reference as ag


def jacobian(f, x):
    """d f(x) / d x, of shape f(x).shape + x.shape: one vector-Jacobian product per output
    element, all through the one graph that a single call of f built."""
    x = x.detach().requires_grad_()  # differentiate at x's value; the caller's x is untouched
    out = f(x)
    if not out.requires_grad:  # f does not depend on x at all (a constant): no graph to walk
        return ag.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype)
    flat = out.reshape(-1)
    rows = []
    for i in range(flat.numel()):
        seed = np.zeros(flat.shape, dtype=out.dtype)
        seed[i] = 1.0  # picks row i of the Jacobian: the gradient of out[i]
        last = i == flat.numel() - 1
        (row,) = ag.autograd.grad(flat, x, grad_outputs=ag.tensor(seed), retain_graph=not last,
                                  allow_unused=True)
        rows.append(np.zeros(x.shape, dtype=x.dtype) if row is None else row.numpy())
    return ag.tensor(np.stack(rows).reshape(tuple(out.shape) + tuple(x.shape)))


def hessian_vector_product(f, x, v):
    """H(x) @ v for a scalar f, without building H: the gradient of (grad f(x) . v)."""
    x = x.detach().requires_grad_()
    out = f(x)
    if not out.requires_grad:  # f depends on nothing that requires grad (a constant)
        return ag.zeros_like(x)
    # g has a graph: it can be differentiated. allow_unused: f may not depend on x at all
    (g,) = ag.autograd.grad(out, x, create_graph=True, allow_unused=True)
    if g is None or not g.requires_grad:  # no x in f, or a constant gradient (f linear in x)
        return ag.zeros_like(x)
    # allow_unused: g may have a graph that does not reach x (f = (x * w).sum(), w a weight)
    (hv,) = ag.autograd.grad(g, x, grad_outputs=v, allow_unused=True)
    return ag.zeros_like(x) if hv is None else hv.detach()


def gradient_penalty(critic, real, fake, alpha):
    """WGAN-GP: mean over the batch of (||d critic / d interpolate||_2 - 1) ** 2, itself
    differentiable with respect to the critic's parameters."""
    mixed = (alpha * real + (1 - alpha) * fake).detach().requires_grad_()
    scores = critic(mixed)
    (g,) = ag.autograd.grad(scores, mixed, grad_outputs=ag.ones_like(scores), create_graph=True)
    norms = (g * g).reshape(g.shape[0], -1).sum(dim=1).sqrt()
    return ((norms - 1) ** 2).mean()
