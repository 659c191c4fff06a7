"""Kata 03, model solution: the order in which a backward pass visits the nodes.

A node may only run once every gradient that flows into it has arrived, that is, after
every node that feeds it. A depth-first search lists a node after all the nodes below it
(post-order); reversed, that puts every node before the nodes it feeds. An explicit stack
instead of recursion: a 100,000-deep chain would overflow Python's call stack.
"""

__all__ = ["topological_order"]


def topological_order(roots):
    """Every node reachable from `roots` once, each before the nodes in its next_functions."""
    visited = set()
    post_order = []
    for root in roots:
        if root is None or root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, edges = stack[-1]
            for child, _ in edges:
                if child is not None and child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child.next_functions)))
                    break
            else:  # every child is done: the node is done
                stack.pop()
                post_order.append(node)
    post_order.reverse()
    return post_order
