"""Kata 03, model solution: the order in which a backward pass visits the nodes.

A node may only run once every gradient that flows into it has arrived, that is, after
every node that feeds it. Nodes are numbered in the order they are made (`sequence_nr`, as
torch numbers them), and an operation's inputs exist before it: so the nodes sorted newest
first are in a valid order, each before the nodes it feeds. It is also torch's order: its
engine runs, of the nodes ready to run, the one made last (a priority queue on the numbers).
A leaf's AccumulateGrad, which torch numbers last of all, runs as soon as its last gradient
has arrived: right after the oldest of the nodes that feed it. The walk keeps its own stack
instead of recursing: a 100,000-deep chain would overflow Python's call stack.
"""
import operator

from ..graph import AccumulateGrad

__all__ = ["topological_order"]

_SEQUENCE_NR = operator.attrgetter("sequence_nr")


def topological_order(roots):
    """Every node reachable from `roots` once, each before the nodes in its next_functions."""
    roots = [root for root in roots if root is not None]
    operations, last_feeder = _walk(roots)
    order = []
    for root in roots:
        if last_feeder.get(root, 0) is None:  # a leaf's node that only the pass itself feeds
            del last_feeder[root]
            order.append(root)
    feeders = set(last_feeder.values())
    for node in sorted(operations, key=_SEQUENCE_NR, reverse=True):  # newest first
        order.append(node)
        if node in feeders:  # the last gradient of one of its leaves comes from here
            for child, _ in node.next_functions:
                if last_feeder.get(child) is node:
                    del last_feeder[child]
                    order.append(child)
    return order


def _walk(roots):
    """The operations' nodes reachable from `roots`, and for each leaf's node reached, the
    oldest node that feeds it (None when only the pass feeds it: a root)."""
    operations = []
    last_feeder = {}
    seen = set()
    stack = []
    for root in roots:
        if type(root) is AccumulateGrad:
            last_feeder[root] = None
        elif root not in seen:
            seen.add(root)
            stack.append(root)
    while stack:
        node = stack.pop()
        operations.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            if type(child) is AccumulateGrad:
                feeder = last_feeder.get(child)
                if feeder is None or node.sequence_nr < feeder.sequence_nr:
                    last_feeder[child] = node
            elif child not in seen:
                seen.add(child)
                stack.append(child)
    return operations, last_feeder
