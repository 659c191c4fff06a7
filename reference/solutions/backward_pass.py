"""Kata 06, model solution: the engine loop.

    order = topological_order(root nodes)       every node before the nodes it feeds
    buffers = {root node: seed}
    for node in order:
        grad = buffers.pop(node)                 the sum of everything that reached it
        run the hooks; keep it for retain_grad; capture it if autograd.grad asked for it
                                                 (torch's order: before the hooks when the
                                                 node runs on to another input, else after)
        for each (input node, its gradient) of node(grad):
            buffers[input node] = merge_grads(buffers[input node], gradient)

Each node runs once, with the sum of its incoming gradients: that is what makes one pass
compute every weight's gradient for the price of one.
"""
from ..grad_mode import set_grad_enabled
from ..graph import gradient_node
from ..pieces import active

__all__ = ["run_backward"]


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None):
    """Propagate `root_grads` from the tensors `roots` back through the graph.

    Without `inputs`, every leaf reached gets its gradient accumulated into `.grad`.
    With `inputs` (tensors), nothing is accumulated: the gradients reaching them are
    returned, one per input (None for an input the roots do not depend on), and only the
    nodes on a path from the roots to an input run.
    """
    root_nodes = [gradient_node(t) for t in roots]
    buffers = {}
    for node, grad in zip(root_nodes, root_grads):
        _add_to_buffer(buffers, node, grad)
    order = active.topological_order(root_nodes)

    targets = None if inputs is None else [gradient_node(t) for t in inputs]
    needed = None if targets is None else _nodes_leading_to(order, set(targets))
    captured = {}

    # Rules record a graph of their own only when higher derivatives were asked for.
    with set_grad_enabled(create_graph):
        for node in order:
            grad = buffers.pop(node, None)
            if grad is None:  # nothing reached it (its users were not needed)
                continue
            # With inputs, a node runs only if something below it was asked for. torch captures
            # an input's gradient before the tensor's hooks when its node runs on (the hooks
            # then act on what flows down), and after them when the node stops there.
            goes_on = targets is None or any(child in needed for child, _ in node.next_functions)
            if goes_on and targets is not None and node in needed.targets:
                captured[node] = grad
            if node.pre_hooks or node.retained is not None:
                grad = _run_hooks(node, grad)
            if not goes_on:  # nothing below this node was asked for
                if node in needed.targets:
                    captured[node] = grad
                continue
            grads = node(grad)
            if not retain_graph:
                node.release_saved()
            for (child, _), child_grad in zip(node.next_functions, grads):
                if child is None or child_grad is None:
                    continue
                if needed is not None and child not in needed:
                    continue
                existing = buffers.get(child)
                buffers[child] = child_grad if existing is None else active.merge_grads(existing, child_grad)

    if targets is None:
        return None
    return tuple(captured.get(node) for node in targets)


def _add_to_buffer(buffers, node, grad):
    if node is None:
        return
    existing = buffers.get(node)
    buffers[node] = grad if existing is None else active.merge_grads(existing, grad)


def _run_hooks(node, grad):
    """The tensor's hooks, in registration order, then retain_grad with the final value."""
    if node.pre_hooks:
        for hook in list(node.pre_hooks):
            result = hook(grad)
            if result is not None:
                grad = result
    if node.retained is not None:
        tensor = node.retained()
        if tensor is not None:
            tensor._grad = grad.clone() if tensor._grad is None else tensor._grad + grad
    return grad


class _Needed(set):
    """The nodes from which some target is reachable (the targets included)."""

    targets = frozenset()


def _nodes_leading_to(order, targets):
    needed = _Needed()
    needed.targets = targets
    for node in reversed(order):  # every node after the nodes it feeds
        if node in targets or any(child in needed for child, _ in node.next_functions):
            needed.add(node)
    return needed
