"""Kata 03: the order of a backward pass.

Read README.md first. Run this kata alone with:  pytest --kata 3

The engine calls your function with the nodes a backward pass starts from. A node is a
`grad_fn` (like torch's): `node.next_functions` is a tuple of `(child, 0)` pairs, one per
input of the operation, where `child` is another node or None (an input that needs no
gradient). The graph has no cycles, but a node can be reached along many paths.
"""
from plugin import engine as ag  # noqa: F401  (the engine's public API, if you need it)


def topological_order(roots):
    """Return every node reachable from `roots` exactly once, as a list in which each node
    comes before all the nodes in its `next_functions` (the nodes it sends gradients to).

    - `roots` is a list of nodes; it may hold None (skip it) and the same node twice.
    - Nodes that cannot be reached from `roots` must not appear.
    - Any order that satisfies the rule is accepted.
    - It must work on a chain 100,000 nodes deep (no recursion: Python stops at ~1,000
      nested calls) and take time proportional to the number of nodes and edges.
    """
    raise NotImplementedError("topological_order: see katas/03_toposort/README.md")
