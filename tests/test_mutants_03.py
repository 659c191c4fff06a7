"""Kata 03's mutation suite: one plausible mistake per sentence of topological_order's contract
(the stub docstring and the lesson), planted in a correct depth-first search (the lesson's
first answer), in a correct Kahn's algorithm or in the model solution (newest first), and
graded: the kata must not come out done. Correct solutions
written differently must come out done."""
import pytest

from kit import (DEPTH_FIRST_TOPOSORT, PRE_ORDER_TOPOSORT as PRE_ORDER, RECURSIVE_TOPOSORT, VISITED_LIST_TOPOSORT,
                 assert_stubs_all_todo, learner_source)
from mutation import Mutant, assert_caught, assert_correct_is_done
from test_plugin import KAHN

KATA = "03_toposort"
FILE = "toposort.py"
HEADER = "def topological_order(roots):\n"

SOURCE = "\n_VISITED = set()  # (unused: for the mutant that keeps its set between calls)\n\n" + DEPTH_FIRST_TOPOSORT
MODEL = learner_source("toposort")  # newest first, each leaf's AccumulateGrad after its oldest feeder


def replaced_by(solution):
    """A mutant that puts a whole wrong function first (the reference's is renamed away)."""
    return solution.strip("\n") + "\n\n\ndef _unused(roots):\n"


# Breadth-first from the roots: right on trees, wrong when two paths to a node differ in length.
BREADTH_FIRST = '''
from collections import deque


def topological_order(roots):
    order, seen = [], set()
    queue = deque(r for r in roots if r is not None)
    while queue:
        node = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return order
'''

# Depth = the longest path from a root, found by relaxing: a node goes back in the queue each
# time a longer path reaches it. A valid order (sorted by depth), but on a chain of residual
# blocks each node is reached again and again.
RELAXED_DEPTHS = '''
from collections import deque


def topological_order(roots):
    depth = {r: 0 for r in roots if r is not None}
    queue = deque(depth)
    while queue:
        node = queue.popleft()
        for child, _ in node.next_functions:
            if child is not None and depth.get(child, -1) < depth[node] + 1:
                depth[child] = depth[node] + 1
                queue.append(child)  # its own children move down with it
    return sorted(depth, key=depth.get)
'''

# A right order, kept by its roots for the next call (a retain_graph rerun): every graph seen
# stays alive, with the tensors its nodes saved.
CACHED_ORDERS = """
_orders = {}


def topological_order(roots):
    key = tuple(roots)
    if key not in _orders:
        _orders[key] = _sorted(roots)
    return list(_orders[key])
""" + DEPTH_FIRST_TOPOSORT.replace("def topological_order(", "def _sorted(")

MUTANTS = [
    # "roots may hold None (skip it) and the same node twice"
    Mutant("does not skip None roots", "if root is None or root in visited:", "if root in visited:",
           expect="AttributeError"),
    Mutant("lists a repeated root twice", "if root is None or root in visited:", "if root is None:",
           expect="appears twice"),
    # "Children that are None are not nodes: skip them"
    Mutant("does not skip None children", "if child is not None and child not in visited:",
           "if child not in visited:", expect="AttributeError"),
    # "several roots": every one of them is a starting point
    Mutant("starts from the first root only", "for root in roots:", "for root in roots[:1]:",
           expect="missing from the order"),
    # "each node comes before every node in its next_functions"
    Mutant("forgets to reverse the post-order", "    post_order.reverse()\n", "", expect="must come before"),
    Mutant("lists nodes in pre-order", HEADER, replaced_by(PRE_ORDER), expect="must come before"),
    Mutant("walks breadth-first", HEADER, replaced_by(BREADTH_FIRST), expect="must come before"),
    # "return ... a list"
    Mutant("returns an iterator", "    post_order.reverse()\n    return post_order\n", "    return reversed(post_order)\n",
           expect="must return a list"),
    # every call starts afresh (the engine sorts once per backward pass)
    Mutant("keeps its visited set between calls", '    """Every node reachable from `roots` once, each before the nodes in its next_functions."""\n'
           "    visited = set()\n", "    visited = _VISITED  # one set for every call\n", expect="missing from the order"),
    # "a 100,000-deep chain (no recursion)"
    Mutant("recurses", HEADER, replaced_by(RECURSIVE_TOPOSORT), expect="use an explicit stack or queue instead of recursion"),
    # "time proportional to the number of nodes and edges"
    Mutant("keeps the nodes it has seen in a list, as the lesson warns", HEADER, replaced_by(VISITED_LIST_TOPOSORT),
           expect="looks quadratic"),
    Mutant("looks nodes up in a list", "if child is not None and child not in visited:",
           "if child is not None and child not in list(visited):", expect="looks quadratic"),
    # ... on wide and residual graphs too (blind rounds 1 and 2: quadratic only there)
    Mutant("puts each finished node in front instead of reversing once",
           "                post_order.append(node)\n    post_order.reverse()\n", "                post_order.insert(0, node)\n",
           expect="list elements moved by `pop(0)` or `insert(0, ...)`"),
    Mutant("sorts by longest-path depth, found by relaxing", HEADER, replaced_by(RELAXED_DEPTHS),
           expect="slow on a residual chain: looks quadratic"),
    # "keep no state between calls": blind round 2's b11 kept each order for the next call
    Mutant("keeps each order for the next call with the same roots", HEADER, replaced_by(CACHED_ORDERS),
           expect="the graph outlived its last tensor"),
]

KAHN_MUTANTS = [
    # Kahn's algorithm: "count, for every reachable node, how many edges point into it"
    Mutant("counts only the first edge into each node",
           "            feeders[child] = feeders.get(child, 0) + 1\n            if child not in seen:\n",
           "            if child not in seen:\n                feeders[child] = feeders.get(child, 0) + 1\n",
           expect="test_several_roots_sharing_a_trunk"),
    # "a root may also be reachable from another root"
    Mutant("takes every root as ready", "ready = deque(r for r in roots if feeders.get(r, 0) == 0)",
           "ready = deque(roots)", expect="test_several_roots"),
    Mutant("keeps repeated roots", "roots = [r for r in dict.fromkeys(roots) if r is not None]",
           "roots = [r for r in roots if r is not None]", expect="appears twice"),
    # "linear time": a list as the queue moves every waiting node at each pop(0) (wide graphs)
    Mutant("uses a list as its queue",
           "    ready = deque(r for r in roots if feeders.get(r, 0) == 0)\n    order = []\n    while ready:\n"
           "        node = ready.popleft()\n",
           "    ready = [r for r in roots if feeders.get(r, 0) == 0]\n    order = []\n    while ready:\n"
           "        node = ready.pop(0)  # first ready, first out\n",
           expect="list elements moved by `pop(0)` or `insert(0, ...)`"),
]

MODEL_MUTANTS = [
    # the model solution's order: "sorted newest first", not oldest first
    Mutant("sorts oldest first", "key=_SEQUENCE_NR, reverse=True", "key=_SEQUENCE_NR",
           expect="must come before"),
    # "a leaf's AccumulateGrad goes right after the oldest node that feeds it", not the newest
    Mutant("stores a leaf's gradient after its newest feeder",
           "node.sequence_nr < feeder.sequence_nr", "node.sequence_nr > feeder.sequence_nr",
           expect="must come before"),
    # blind round 3's 03 b14: "every node reachable from roots": a root (a leaf's own node too) is
    Mutant("drops a leaf's node given as a root", "            last_feeder[root] = None\n", "            continue\n",
           expect="reachable nodes missing from the order: ['AccumulateGrad']"),
]

PLANTS = ([(SOURCE, m) for m in MUTANTS] + [(KAHN, m) for m in KAHN_MUTANTS]
          + [(MODEL, m) for m in MODEL_MUTANTS])


def test_the_shipped_stubs_are_all_to_dos(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("-p", "no:randomly"), KATA)
    assert outcomes.get("todo", 0) >= 10, outcomes


@pytest.mark.parametrize("base, mutant", PLANTS, ids=[str(m) for _, m in PLANTS])
def test_a_planted_mistake_is_caught(checkout, base, mutant):
    assert_caught(checkout, KATA, FILE, base, mutant)


# Correct, and written differently: a depth-first search that keeps "entered" and "finished"
# states in one dict and appends to a list reversed once.
TWO_STATES = '''
def topological_order(roots):
    state = {}  # node -> "open" while its children are being listed, "done" after
    finished = []
    for root in roots:
        if root is None or root in state:
            continue
        stack = [root]
        while stack:
            node = stack[-1]
            if node not in state:
                state[node] = "open"
                stack.extend(c for c, _ in reversed(node.next_functions) if c is not None and c not in state)
            else:
                stack.pop()
                if state[node] == "open":
                    state[node] = "done"
                    finished.append(node)
    finished.reverse()
    return finished
'''

VARIANTS = {"Kahn's algorithm (test_plugin)": KAHN, "two states in a dict": TWO_STATES,
            "the lesson's depth-first search": DEPTH_FIRST_TOPOSORT, "the model solution as a learner's file": MODEL}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_correct_solution_written_differently_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, VARIANTS[name])
