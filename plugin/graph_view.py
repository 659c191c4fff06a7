"""Side-by-side views of the engine's graph and torch's, for locating a wrong gradient.

`pair_graphs` walks both graphs from their outputs in step (a constant operand, None in
next_functions, is skipped on both sides so that small differences of structure line up),
`record_gradients` hooks every paired node, and `locate` finds the first node, in backward
order, that received the right gradient but passed a wrong one on. `draw` prints the graph
as a small tree with that node marked.
"""
import numpy as np


def node_name(node):
    name = node.name()
    return name.replace("torch::autograd::", "")


def _children(node):
    return [child for child, _ in node.next_functions if child is not None]


def pair_graphs(engine_root, torch_root):
    """[(engine node, torch node)] for nodes that sit at the same place in both graphs."""
    pairs, seen = [], set()
    stack = [(engine_root, torch_root)]
    while stack:
        ours, theirs = stack.pop()
        if ours is None or theirs is None or id(ours) in seen:
            continue
        seen.add(id(ours))
        pairs.append((ours, theirs))
        if node_name(ours) != node_name(theirs):
            continue  # different structure below: stop comparing here
        our_children, their_children = _children(ours), _children(theirs)
        if len(our_children) == len(their_children):
            stack.extend(zip(our_children, their_children))
    return pairs


def _to_numpy(grad):
    if grad is None:
        return None
    if hasattr(grad, "detach"):
        grad = grad.detach()
    if hasattr(grad, "cpu") and not isinstance(grad, np.ndarray):
        grad = grad.cpu()
    return np.array(grad.numpy() if hasattr(grad, "numpy") else grad, dtype=np.float64)


def record_gradients(nodes):
    """Hook each node; returns {index: (incoming gradient, [outgoing gradients])}."""
    records = {}
    handles = []
    for index, node in enumerate(nodes):
        def hook(grad_inputs, grad_outputs, index=index):
            records[index] = (
                _to_numpy(grad_outputs[0]),
                [_to_numpy(g) for g in grad_inputs],
            )

        handles.append(node.register_hook(hook))
    return records, handles


def _close(ours, theirs, rtol, atol):
    if ours is None or theirs is None:
        return ours is None and theirs is None
    if ours.shape != theirs.shape:
        return False
    scale = max(1.0, float(np.max(np.abs(theirs)))) if theirs.size else 1.0
    return bool(np.allclose(ours, theirs, rtol=rtol, atol=atol * scale, equal_nan=True))


def locate(pairs, our_records, their_records, order, rtol, atol):
    """(engine node, sentence) for the first node, in backward order, where gradients part."""
    index_of = {id(ours): i for i, (ours, _) in enumerate(pairs)}
    for node in order:
        i = index_of.get(id(node))
        if i is None:
            continue
        ours, theirs = our_records.get(i), their_records.get(i)
        if theirs is None:
            continue
        if ours is None:
            return node, f"{node_name(node)} never ran, but torch ran it"
        if not _close(ours[0], theirs[0], rtol, atol):
            return node, (
                f"{node_name(node)} received a gradient that differs from torch's: the nodes "
                "that feed it returned the right gradients, so their sum (merging) went wrong"
            )
        our_out, their_out = ours[1], [g for g in theirs[1]]
        # Align on the inputs both sides have (a constant operand is None in ours).
        if len(our_out) != len(their_out):
            our_out = [g for g, (child, _) in zip(our_out, node.next_functions) if child is not None]
            their_out = [g for g in their_out if g is not None]
        for k, (mine, expected) in enumerate(zip(our_out, their_out)):
            if expected is not None and not _close(mine, expected, rtol, atol):
                return node, (
                    f"{node_name(node)} received the right gradient but returned a wrong one "
                    f"for its input {k}:\n      expected {abbreviate(expected)}\n      got      {abbreviate(mine)}"
                )
    return None, ""


def abbreviate(array, limit=12):
    if array is None:
        return "None"
    array = np.asarray(array)
    text = np.array2string(array, precision=5, threshold=limit, edgeitems=3, separator=", ")
    return text.replace("\n", " ") if array.size <= limit else text.replace("\n", " ") + f"  (shape {array.shape})"


def draw(root, marked=None, labels=None, limit=24):
    """The graph below `root` as an indented tree, `marked` flagged with <== here."""
    labels = labels or {}
    lines, seen = [], set()
    stack = [(root, "", "", True)]
    while stack and len(lines) < limit:
        node, prefix, branch, _ = stack.pop()
        label = node_name(node)
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) in labels:
            label += f" ({labels[id(variable)]})"
        if id(node) in seen:
            lines.append(f"{prefix}{branch}{label} (shown above)")
            continue
        seen.add(id(node))
        mark = "   <== here" if node is marked else ""
        lines.append(f"{prefix}{branch}{label}{mark}")
        children = _children(node)
        child_prefix = prefix + ("   " if branch in ("", "└─ ") else "│  ")
        for k in reversed(range(len(children))):
            stack.append((children[k], child_prefix, "└─ " if k == len(children) - 1 else "├─ ", False))
    if stack:
        lines.append("   ...")
    return "\n".join("    " + line for line in lines)
