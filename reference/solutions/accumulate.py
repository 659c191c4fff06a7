"""Kata 04, model solution: adding gradients up.

Within one pass, a node used by several operations (fan-out) receives one gradient per
use: they are summed (`merge_grads`). Across passes, a leaf's `.grad` keeps the running
sum (`accumulate_grad`): that is why gradients "double" when backward runs twice, and why
training loops zero them.
"""

__all__ = ["merge_grads", "accumulate_grad"]


def merge_grads(existing, incoming):
    """The sum of two gradients for the same node. Out of place: either may be held elsewhere
    (a hook's argument, a user's `gradient=`, another input's gradient)."""
    return existing + incoming


def accumulate_grad(leaf, grad, create_graph):
    """Add `grad` into `leaf.grad`.

    The first gradient is copied, so that `.grad` never aliases a tensor that other code
    holds. Later ones are added in place, keeping the same `.grad` object, unless the pass
    records a graph (create_graph): then the sum is out of place and differentiable.
    """
    if leaf._grad is None:
        # The engine runs this with grad mode on exactly when create_graph is asked for, so
        # the copy is recorded (differentiable) then, and a plain copy otherwise.
        leaf.grad = grad.clone()
    elif create_graph:
        leaf.grad = leaf._grad + grad
    else:
        leaf._grad.add_(grad)
