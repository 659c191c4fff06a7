"""Kata 04, model solution: adding gradients up.

Within one pass, a node used by several operations (fan-out) receives one gradient per
use: they are summed (`merge_grads`). Across passes, a leaf's `.grad` keeps the running
sum (`accumulate_grad`): that is why gradients "double" when backward runs twice, and why
training loops zero them.
"""
from .. import autograd
from ..creation import empty_like

__all__ = ["merge_grads", "accumulate_grad"]


def merge_grads(existing, incoming):
    """The sum of two gradients for the same node. Out of place: either may be held elsewhere
    (a hook's argument, a user's `gradient=`, another input's gradient)."""
    return existing + incoming


def accumulate_grad(leaf, grad, create_graph):
    """Add `grad` into `leaf.grad`, as torch's AccumulateGrad does.

    The first gradient becomes `.grad` itself when nothing else holds it and it is laid out
    like the leaf (torch "steals" it: no copy); otherwise `.grad` is a copy laid out like the
    leaf, so that `.grad` never aliases a tensor that other code holds, and a view of it works
    where the same view of the leaf does. Later ones are added in place, keeping the same
    `.grad` object, unless the pass records a graph (create_graph): then the sum is out of
    place and differentiable.
    """
    if leaf._grad is None:
        if not create_graph and autograd.graph.pass_owns(grad) and grad.stride() == leaf.stride():
            leaf.grad = grad
        else:
            # The engine runs this with grad mode on exactly when create_graph is asked for,
            # so the copy is recorded (differentiable, CopyBackwards) then.
            leaf.grad = empty_like(leaf).copy_(grad)
    elif create_graph:
        leaf.grad = leaf._grad + grad
    else:
        leaf._grad.add_(grad)
