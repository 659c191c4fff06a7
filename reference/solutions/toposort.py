"""Kata 03, model solution: the order in which a backward pass visits the nodes.

A node may only run once every gradient that flows into it has arrived, that is, after
every node that feeds it. Kahn's algorithm: count for each node the gradients it will
receive (one per edge into it); a node whose count falls to zero is ready. Any order that
takes ready nodes one by one is correct. This one takes, of the ready nodes, the one made
last, as torch's engine does (its ready queue is ordered by the nodes' sequence numbers,
with a leaf's AccumulateGrad first of all): so hooks on independent branches run in torch's
order too. An explicit stack instead of recursion: a 100,000-deep chain would overflow
Python's call stack.
"""
import heapq
import itertools

__all__ = ["topological_order"]


def topological_order(roots):
    """Every node reachable from `roots` once, each before the nodes in its next_functions."""
    roots = [root for root in roots if root is not None]
    waiting = _gradients_to_wait_for(roots)
    ready = []  # a heap of (-sequence number, arrival, node): the node made last comes out first
    arrival = itertools.count()  # equal numbers (AccumulateGrad nodes) come out as they arrived
    for root in roots:  # the pass itself sends each root its seed
        waiting[root] -= 1
        if waiting[root] == 0:
            heapq.heappush(ready, (-root.sequence_nr, next(arrival), root))
    order = []
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                waiting[child] -= 1
                if waiting[child] == 0:  # the last gradient it waited for has arrived
                    heapq.heappush(ready, (-child.sequence_nr, next(arrival), child))
    return order


def _gradients_to_wait_for(roots):
    """For every node reachable from `roots`: how many gradients it will receive, one per
    edge into it and one per time it is a root (a walk with an explicit stack)."""
    waiting = {}
    stack = []
    for node in roots:
        if node not in waiting:
            waiting[node] = 0
            stack.append(node)
        waiting[node] += 1
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            if child not in waiting:
                waiting[child] = 0
                stack.append(child)
            waiting[child] += 1
    return waiting
