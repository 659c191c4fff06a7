"""Kata 04: adding gradients up.

Read README.md first. Run this kata alone with:  pytest --kata 4

Two places in an engine add gradients, and you write both:

    merge_grads       WITHIN one backward pass: a value used several times (fan-out) gets one
                      gradient per use, and the engine sums them before the value's node runs.
    accumulate_grad   ACROSS backward passes: each pass adds its gradient into the leaf's
                      `.grad`, which keeps the running sum until someone zeroes it.

Gradients are engine Tensors: use tensor operations (`a + b`, `.copy_()`, `.add_()`), never
numpy. Read and write the leaf's gradient through its public attribute, `leaf.grad` (the
setter checks shape, dtype and device for you).
"""
from plugin import engine as ag  # noqa: F401  (the engine's public API, if you need it)


def merge_grads(existing, incoming):
    """Return the sum of two gradients that reached the same node in one backward pass.

    - `existing` is what the node's buffer holds so far; `incoming` has just arrived. Both are
      Tensors of the same shape and dtype; the result has that shape and dtype.
    - Never change `existing` or `incoming` in place: either one may be held elsewhere (the
      gradient you passed to `backward(gradient=...)`, a hook's argument, the same tensor sent
      to two inputs by `a + b`'s rule). Return a new tensor.
    - When the pass records a graph (create_graph=True), the engine runs this with grad mode
      on, and the sum must be part of that graph: plain tensor operations do this by themselves.
    """
    raise NotImplementedError("merge_grads: see katas/04_accumulation/README.md")


def accumulate_grad(leaf, grad, create_graph):
    """Add `grad` into `leaf.grad`, as torch's AccumulateGrad node does. Return nothing.

    - `leaf` is the tensor (read and assign `leaf.grad`); `grad` is this pass's gradient for
      it, a Tensor of the leaf's shape and dtype. `create_graph` is True when the backward
      pass records a graph (backward(create_graph=True)); grad mode is then on.
    - First gradient (`leaf.grad` is None). `.grad` must never be, or share memory with, a
      tensor that other code holds (`grad` may be the tensor a user passed to backward(), a
      hook's argument, or also the gradient of another leaf), and it must be laid out in
      memory like the leaf (the same `stride()`), so that a view of `.grad` works where the
      same view of the leaf does. So, as torch:
        * keep `grad` itself (no copy) when create_graph is False, the engine says that the
          pass alone holds it (`ag.autograd.graph.pass_owns(grad)`), and it is laid out like
          the leaf (`grad.stride() == leaf.stride()`);
        * otherwise store a COPY laid out like the leaf (`ag.empty_like(leaf)` is, and
          `.copy_(grad)` fills it). With create_graph the copy must stay differentiable
          (keep its grad_fn); without it, it must not be part of any graph.
    - Later gradients, without create_graph: add IN PLACE, so that `leaf.grad` stays the
      same object (an optimizer may hold it).
    - Later gradients, with create_graph: OUT OF PLACE (`leaf.grad` becomes a new tensor, the
      old one keeps its value) and differentiable, so that `.grad` can be differentiated again.
    - Zeroing is the user's business: after `leaf.grad.zero_()` keep adding into that object;
      after `leaf.grad = None` start again from a copy.
    """
    raise NotImplementedError("accumulate_grad: see katas/04_accumulation/README.md")
