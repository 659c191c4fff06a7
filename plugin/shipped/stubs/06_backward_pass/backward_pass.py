"""Kata 06: the backward pass, the engine loop itself.

Read README.md first. Run this kata alone with:  pytest --kata 6

`loss.backward()`, `ag.autograd.backward(...)` and `ag.autograd.grad(...)` all end up here:
they seed the roots (kata 05) and call `run_backward`. Your loop walks the graph with the
active pieces of the other katas:

    ag.gradient_node(tensor)                      the node that receives a tensor's gradient
    ag.pieces.active.topological_order(nodes)    every node before the nodes it feeds (kata 03)
    ag.pieces.active.merge_grads(old, new)        two gradients that reach one node (kata 04)
    ag.set_grad_enabled(mode)                     grad mode, as a context manager

A node (`Node`, torch's grad_fn) gives you:

    node(grad)            runs its backward rule: a tuple with one gradient (or None) per
                          entry of node.next_functions; an AccumulateGrad node adds into .grad
    node.next_functions   ((child node or None, 0), ...)
    node.pre_hooks        None or a list of hook(grad) (the tensor's register_hook)
    node.retained         None or a weak reference to the tensor that called retain_grad()
    node.release_saved()  frees the saved tensors (after the node ran, unless retain_graph)
"""
from plugin import engine as ag  # noqa: F401  (the engine's public API)


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None):
    """Propagate `root_grads` from the tensors `roots` back through the graph.

    - `roots`: the output tensors; `root_grads`: one seed tensor per root (already checked).
      A root's node is `ag.gradient_node(root)`; several roots may share nodes, and two seeds
      reaching one node are merged.
    - Every node runs at most ONCE per call, with the sum of all the gradients that reach it
      (merged with `ag.pieces.active.merge_grads`), in `ag.pieces.active.topological_order`.
    - Before a node runs, its gradient goes through `node.pre_hooks` (when not None) in order;
      a hook returning something other than None replaces the gradient. Then, if
      `node.retained` is not None and `node.retained()` is a tensor, set that tensor's `_grad`
      to the final gradient: a `.clone()` the first time, `old + grad` (not in place) after.
    - Unless `retain_graph`, call `node.release_saved()` after the node ran.
    - The whole loop runs with grad mode set to `create_graph` (`ag.set_grad_enabled`), so
      the rules record a graph of their own only when higher derivatives are asked for.
    - Without `inputs`: run everything reached (AccumulateGrad nodes add into the leaves'
      `.grad`) and return None.
    - With `inputs` (a tuple of tensors, leaves or not): accumulate NOTHING (never run an
      AccumulateGrad node) and return a tuple with, for each input, the gradient that reached
      `ag.gradient_node(input)`, or None if none did. Run only the nodes that lie on a path
      from the roots to one of the inputs. torch's order for an input's node: if it stops
      there (nothing below it was asked for), run its hooks, then capture; if it runs on (an
      input below it was asked for), capture first, then its hooks, then run it.
    """
    raise NotImplementedError("run_backward: see katas/06_backward_pass/README.md")
