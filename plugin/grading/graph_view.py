"""Side-by-side views of the engine's graph and torch's, for locating a wrong gradient.

`pair_graphs` walks both graphs from their outputs in step (a constant operand, None in
next_functions, is skipped on both sides so that small differences of structure line up),
`record_gradients` hooks nodes (torch's paired ones; every node of the engine's graph, found
by `graph_nodes`, as the engine runs before torch's graph is there to pair with), and
`locate` finds the first node, in backward order, that received the right gradient but
passed a wrong one on. `draw` prints the graph as a small tree with that node marked.
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


def graph_nodes(root):
    """Every node of the graph under `root` (itself included), once each."""
    found, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(_children(node))
    return found


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
    finite = np.abs(theirs[np.isfinite(theirs)]) if theirs.size else theirs
    scale = max(1.0, float(np.max(finite))) if finite.size else 1.0  # an inf compares as itself
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
                f"that feed it returned the right gradients, so their sum went wrong ({_merger()})"
            )
        torch_node = pairs[i][1]
        if not same_operation(node, torch_node):
            # Different operations at the same place: their outputs mean different things.
            return node, different_shape(node, torch_node)
        for k, mine, expected in _aligned_outputs(node, ours[1], theirs[1]):
            if expected is not None and not _close(mine, expected, rtol, atol):
                return node, (
                    f"{node_name(node)} received the right gradient but returned a wrong one "
                    f"for its input {k} (item {k} of the tuple {_whose(node)} returns){_culprit(node, k)}:\n"
                    f"      received {abbreviate(ours[0])}\n"
                    f"      expected {abbreviate(expected)}\n      got      {abbreviate(mine)}"
                )
    return None, ""


def is_reference(piece_name):
    from reference import pieces

    return getattr(pieces.active, piece_name, None) is pieces.REFERENCE.get(piece_name)


def _merger():
    """Who sums the gradients a node receives, where that is the learner's piece."""
    if not is_reference("merge_grads"):
        return "your merge_grads (accumulate.py)"
    if not is_reference("run_backward"):
        return "your run_backward (backward_pass.py) sums them"
    return "merging"


def _whose(node):
    """"your sigmoid_backward (rules.py)" for a node whose rule is the learner's: the function
    to open; "its rule" where the engine runs the model solution's."""
    from ..manifest import katas

    rule = getattr(getattr(node, "kind", None), "rule", None)
    if not rule or is_reference(rule):
        return "its rule"
    kata = next((k for k in katas() if rule in k.pieces), None)
    return f"your {rule}{f' ({kata.learner_file})' if kata else ''}"


def _culprit(node, k):
    """Who made the node's wrong gradient, where its rule is not the only suspect: the
    engine sums a binary node's gradients to its inputs' shapes with `unbroadcast`, and a
    rule may call another of the learner's pieces (mean_backward calls sum_backward)."""
    kind = getattr(node, "kind", None)
    if kind is None or not kind.reduce_broadcast or is_reference("unbroadcast"):
        called = _learner_pieces_called(getattr(kind, "rule", None))
        return f".\n      It calls your {' and your '.join(called)}, which may be at fault instead" if called else ""
    shape = tuple(node.input_shapes[k])
    if is_reference(kind.rule):
        return (
            f".\n      Its rule {kind.rule} is the reference's here: your unbroadcast (kata 02) "
            f"is at fault, which sums that gradient down to the input's shape {shape}"
        )
    return f" (from your {kind.rule}, or your unbroadcast summing it down to shape {shape})"


def _learner_pieces_called(rule):
    """The learner's pieces (not the reference's) that the learner's `rule` names in its code."""
    from reference import pieces

    if not rule or is_reference(rule):
        return []
    piece = getattr(pieces.active, rule, None)
    names = getattr(getattr(getattr(piece, "__wrapped__", piece), "__code__", None), "co_names", ())
    return [name for name in names if name != rule and name in pieces.REFERENCE and not is_reference(name)]


def _aligned_outputs(node, ours, theirs):
    """(k, our gradient, torch's) for each input both sides have, k counted as in the engine
    rule's returned tuple. A number operand (`3 * x`) is None on one side or both, and
    torch may put it in another slot (x.__rmul__(3) is mul(x, 3))."""
    slots = list(range(len(ours)))
    if len(ours) != len(theirs) or len(ours) == len(node.next_functions):
        slots = [k for k, (child, _) in enumerate(node.next_functions) if child is not None]
        theirs = [g for g in theirs if g is not None]
    return [(k, ours[k], expected) for k, expected in zip(slots, theirs)]


# torch's names for an operation the engine records under another: 2 - x is rsub(x, 2).
ALIASES = {"RsubBackward0": "SubBackward0", "RsubBackward1": "SubBackward0"}


def same_operation(node, torch_node):
    name = node_name(torch_node)
    return node_name(node) == ALIASES.get(name, name)


def first_order_rule(torch_node):
    """`sigmoid_backward` for torch's SigmoidBackwardBackward0 (the derivative of a rule that
    torch computes as one node), else None."""
    name = node_name(torch_node)
    if not name.endswith("BackwardBackward0"):
        return None
    camel = name[: -len("BackwardBackward0")]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel).lstrip("_")
    return f"{snake}_backward"


def different_shape(node, torch_node):
    """Why no node below `node` can be blamed: the two graphs are built differently there."""
    if all(node_name(child) == "AccumulateGrad" for child in _children(node)):
        # Nothing below but leaves: the wrong gradient of the leaf is this node's output.
        return (
            f"{node_name(node)} received the right gradient but returned a wrong one (torch "
            f"records this operation as {node_name(torch_node)}: compare the gradients above)"
        )
    below = sorted({node_name(n) for n in _subgraph(node)} - {"AccumulateGrad"})
    sentence = (
        f"from {node_name(node)} down, your graph is built differently from torch's (torch has "
        f"{node_name(torch_node)} here), so its nodes cannot be compared one by one"
    )
    rule = first_order_rule(torch_node)
    if rule:
        sentence += (
            f".\n      This graph is the derivative of your {rule}: differentiating it runs the "
            f"backward rules of the operations it is made of ({', '.join(below)}). If {rule} "
            "passes its own test, one of those rules is wrong: their own tests say which."
        )
    return sentence


def _subgraph(node):
    seen, stack = {}, [node]
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen[id(n)] = n
            stack.extend(_children(n))
    return list(seen.values())


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
