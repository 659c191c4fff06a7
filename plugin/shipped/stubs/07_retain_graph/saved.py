"""Kata 07: what a node keeps for its backward, and when it lets go.

Read README.md first. Run this kata alone with:  pytest --kata 7

When an operation's forward runs, its node may save tensors for the backward rule
(`y = x.sigmoid()` saves y; `x * w` saves x and w). The engine does this with
`SavedTensors(node)` followed by `.save(*tensors)`; the rule reads them back through
`node.saved_tensors`, which calls `.unpack()`; a backward pass without retain_graph calls
`.release()` on each node's saved tensors right after the node has run.

You may use the engine's public API: `ag.reattach(detached, node)` gives back a tensor that
shares `detached`'s data and version counter and whose grad_fn is `node`.
"""
import weakref  # noqa: F401  (hold the owner weakly)

from plugin import engine as ag  # noqa: F401


class SavedTensors:
    """The tensors one node saved for its backward rule."""

    def __init__(self, owner):
        """`owner` is the node that saves (the node whose rule will unpack the tensors).

        Keep only a weak reference to it (`weakref.ref(owner)`): the node holds this object,
        so a strong reference back would make a cycle that only the garbage collector frees.
        """
        raise NotImplementedError("SavedTensors.__init__: see katas/07_retain_graph/README.md")

    def save(self, *tensors):
        """Keep `tensors` (engine tensors or None) for the backward rule.

        - Remember each tensor's `_version` now, to detect a later in-place change.
        - A tensor whose `grad_fn` is the owner (the node's own output, as sigmoid's y) must
          not be kept as is: the output holds the node, and the node would hold the output.
          Keep `t.detach()` instead (same data, same version counter) and rebuild it with
          `ag.reattach(detached, owner)` when unpacking.
        """
        raise NotImplementedError("SavedTensors.save: see katas/07_retain_graph/README.md")

    def unpack(self):
        """Return the saved tensors as a tuple, in the order they were saved (None stays None).

        - After `release()`, raise RuntimeError with torch's words: "Trying to backward through
          the graph a second time (or directly access saved tensors after they have already
          been freed). Saved intermediate values of the graph are freed when you call
          .backward() or autograd.grad(). Specify retain_graph=True if you need to backward
          through the graph a second time or if you need to access saved tensors after
          calling backward."
        - If a saved tensor's `_version` differs from the one it had when saved, raise
          RuntimeError starting with torch's words: "one of the variables needed for gradient
          computation has been modified by an inplace operation: " followed by the details
          (see README.md for the full message).
        - A saved output comes back as a tensor whose grad_fn is the owner.
        """
        raise NotImplementedError("SavedTensors.unpack: see katas/07_retain_graph/README.md")

    def release(self):
        """Drop every saved tensor, so that their arrays can be freed now; later unpacks fail
        with torch's "Trying to backward through the graph a second time" error."""
        raise NotImplementedError("SavedTensors.release: see katas/07_retain_graph/README.md")
