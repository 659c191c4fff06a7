"""Growth by counting work, not time: the steps a piece takes on a graph and on one 8 times
bigger, against the reference piece's on the same graphs.

A time grows with whatever else the machine does; a count does not. So the graphs can be
small (hundreds of nodes: milliseconds) and of every shape, wide and residual as well as
deep, and the verdict is the same on a busy machine as on an idle one. The steps counted:

- every line of Python that runs during the call (the learner's and the engine's code it
  calls): a search per node written as a loop, a walk repeated per root;
- every comparison of two nodes: `node in a_list`, `a_list.index(node)`, `a_list.remove(node)`
  compare in C, where no line runs, so nodes get a Python `__eq__` while counting (the
  same answers: two nodes are equal when they are the same node);
- every element a list moves when an item goes in or out anywhere but at its end
  (`queue.pop(0)`, `order.insert(0, node)`): a C move that no line shows, seen through the
  profiler's view of list method calls.

A linear piece takes about 8 times the steps on the bigger graph, as the reference does; a
quadratic one about 64 times. Where the work is numpy's (an identity matrix built for each
row, a zeros table for each index), the steps do not show it: `memory=True` also adds up
the bytes each C call allocates at its peak (tracemalloc, which numpy reports to).
"""
import contextlib
import functools
import sys
import tracemalloc

import numpy as np

import pytest

from reference import pieces as seam
from reference.graph import Node

from ..guards import cycle_collector, time_limit, tripwire
from .speed import report_verdict

# A count has no noise: linear code grows like the reference's (about 1x relative), quadratic
# code about `factor` times faster, n log n about 1.5x (factor 8, a few hundred nodes).
COUNTED_GROWTH_LIMIT = 2.0


class Work:
    """What one call did: lines of Python, node comparisons, list items moved, and (when
    `memory`) the bytes its C calls allocated."""

    def __init__(self, memory=False):
        self.memory = memory
        self.lines = 0
        self.comparisons = 0
        self.shifted = 0
        self.allocated = 0
        self._calls = []  # per C call running: (list, its length, last item, the one before) or None
        self._start = None  # memory: what was held when the C call running now began

    @property
    def total(self):
        return self.lines + self.comparisons + self.shifted

    def _trace(self, frame, event, arg):
        # The global tracer: each new Python frame gets the line counter, but the node
        # comparisons (counted by themselves).
        return None if frame.f_code is _node_eq.__code__ else self._line

    def _line(self, frame, event, arg):
        if event == "line":
            self.lines += 1
        return self._line

    def _profile(self, frame, event, arg):
        if self._start is not None:  # a C call ends, or calls back into Python
            self.allocated += max(tracemalloc.get_traced_memory()[1] - self._start, 0)
            self._start = None
        if event == "c_call":
            items = getattr(arg, "__self__", None)
            if type(items) is list and arg.__name__ in ("pop", "insert"):
                self._calls.append((items, len(items), items[-1] if items else None,
                                    items[-2] if len(items) > 1 else None))
            else:
                self._calls.append(None)
            if self.memory:  # last: the profiler's own allocations above come before the peak is reset
                self._start = tracemalloc.get_traced_memory()[0]
                tracemalloc.reset_peak()
        elif event in ("c_return", "c_exception") and self._calls:
            call = self._calls.pop()
            if call is not None and event == "c_return":
                self.shifted += _moved(arg.__name__, *call)


def _moved(method, items, before, last, second_last):
    """The elements `pop` or `insert` moved: none at the end of the list, else (about) all of
    them. Told from the ends of the list: after pop() the item before the last is last, after
    insert(len, x) the last item is the one before it. (Equal items at the end read as a
    move at the end: counted as none.)"""
    if method == "pop" and len(items) == before - 1 and before > 1:
        return 0 if items[-1] is second_last else len(items)
    if method == "insert" and len(items) == before + 1 and before > 0:
        return 0 if items[-2] is last else before
    return 0


def _node_eq(self, other):
    _counting.comparisons += 1
    return self is other


_counting = None  # the Work being counted now


def count_work(workload, memory=False):
    """The Work of one call of workload(); with `memory`, the bytes its C calls allocated too."""
    global _counting
    work = Work(memory)
    previous_trace, previous_profile = sys.gettrace(), sys.getprofile()
    start_tracing = memory and not tracemalloc.is_tracing()
    _counting = work
    Node.__eq__ = _node_eq
    try:
        with cycle_collector.paused(), (_numpy_weighed() if memory else contextlib.nullcontext()):
            if start_tracing:
                tracemalloc.start()
            sys.setprofile(work._profile)
            sys.settrace(work._trace)
            try:
                workload()
            finally:
                sys.settrace(previous_trace)
                sys.setprofile(previous_profile)
    finally:
        if start_tracing:
            tracemalloc.stop()
        del Node.__eq__
        _counting = None
    return work


@contextlib.contextmanager
def _numpy_weighed():
    """numpy's functions written in C behind a dispatcher (np.concatenate, np.dot, np.where):
    the profiler reports no call of them, so while memory is weighed each is a function that
    weighs what it allocates (rows appended with np.concatenate: cubic bytes for a Jacobian)."""
    originals = _numpy_dispatchers()
    for name, dispatcher in originals.items():
        setattr(np, name, _weighing(dispatcher))
    try:
        yield
    finally:
        for name, dispatcher in originals.items():
            setattr(np, name, dispatcher)


@functools.lru_cache(maxsize=1)
def _numpy_dispatchers():
    """{name: dispatcher} of numpy's C functions behind a dispatcher, found once per process
    (numpy's namespace does not change; each count of a piece's work would rescan it)."""
    return {name: f for name, f in vars(np).items() if type(f).__name__ == "_ArrayFunctionDispatcher"
            and type(getattr(f, "_implementation", None)).__name__ == "builtin_function_or_method"}


def _weighing(dispatcher):
    """The dispatcher's C implementation, called directly: a builtin, which the profiler
    reports and Work._profile weighs like any other C call. (Through the dispatcher, its
    Python helper that finds the arguments to dispatch on would end the weighing early.)"""
    implementation = dispatcher._implementation

    @functools.wraps(dispatcher)
    def weighed(*args, **kwargs):
        return implementation(*args, **kwargs)
    return weighed


def _growth(small, large, memory):
    """{kind: count on the large graph / count on the small one}, for the steps in all, each
    kind of step and the bytes allocated; "large": the large graph's Work."""
    s, l = count_work(small, memory), count_work(large, memory)
    grew = {kind: getattr(l, kind) / max(getattr(s, kind), 1) for kind in (*STEPS, "allocated")}
    return dict(grew, steps=l.total / max(s.total, 1), large=l)


STEPS = {
    "comparisons": "node comparisons made by searching lists (`node in a_list`, `.index`, `.remove`): "
                   "a set or a dict finds a node at once",
    "shifted": "list elements moved by `pop(0)` or `insert(0, ...)`: every element after the "
               "position moves (collections.deque pops from the front at once; or append, and "
               "reverse once at the end)",
    "lines": "lines of Python run: look for a search per node written as a loop, or work repeated "
             "for each node or root",
}
ALLOCATED = ("memory allocated: something the size of the whole input made again for each "
             "element (an identity matrix per row, a zeros tensor per index, a copy of a growing list)")
# Allocators round sizes (dicts and sets grow by steps, numpy pads): a linear piece's bytes
# wobble more than its steps; quadratic allocation still grows about `factor` times faster.
ALLOCATED_GROWTH_LIMIT = 3.0


class CountedGrowth:
    """The `counted_growth` fixture: `counted_growth(make_workload, n, graph="a wide graph")`
    counts the steps of make_workload(n)() and make_workload(8 * n)() on the learner's pieces
    and on the reference's, and fails when the learner's grow more than COUNTED_GROWTH_LIMIT
    times faster than the reference's. `memory=True` weighs the bytes allocated instead, for
    work that is numpy's: there a Python loop over the elements is slow but not a growth
    class (the reference's vectorized code runs the same lines for any size)."""

    def __init__(self, request, kata):
        self.request = request
        self.kata = kata

    def __call__(self, make_workload, n, factor=8, what="nodes", graph="a graph", memory=False,
                 looks="quadratic", reference=None):
        with time_limit.not_counted():  # the kit's own work: building the graphs
            small, large = make_workload(n), make_workload(n * factor)
        small(), large()  # once uncounted: what a first call sets up is not the piece's growth
        mine = _growth(small, large, memory)
        # the reference's side is the kit's own work too: not counted against the test's limit
        with time_limit.not_counted(), (reference() if reference else
                                        seam.swapped(tripwire.unwired(self.kata.pieces))):
            theirs = _growth(small, large, memory)
        kind = "allocated" if memory else "steps"
        if mine[kind] / theirs[kind] <= (ALLOCATED_GROWTH_LIMIT if memory else COUNTED_GROWTH_LIMIT):
            return mine[kind] / theirs[kind]
        if memory:
            grew, counted = ALLOCATED, "the memory allocated"
        else:
            # What grew fastest, of what makes at least a quarter of the steps on the large graph.
            kinds = [k for k in STEPS if getattr(mine["large"], k) * 4 >= mine["large"].total]
            grew, counted = STEPS[max(kinds or STEPS, key=lambda k: mine[k])], "the steps"
        verdict = (f"slow on {graph}: looks {looks} ({factor}x the {what} took {mine[kind]:.0f}x {counted}, "
                   f"counted; the reference's took {theirs[kind]:.0f}x)")
        report_verdict(self.request, verdict)
        pytest.fail(f"{verdict}. What grew: {grew}.", pytrace=False)


# --- graphs of every shape, for the counted checks of the order and the loop -----------------
# Each: (ag, n) -> (outputs, leaves): n blocks of a few nodes on one-element tensors.

def residual_chain(ag, n):
    """n residual blocks, y + tanh(y * 0.5): every value feeds the next block twice."""
    x = ag.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(n):
        y = y + (y * 0.5).tanh()
    return [y.sum()], [x]


def many_roots(ag, n):
    """n outputs taken along one chain: each root is also inside the graph of the next."""
    x = ag.tensor([0.5], requires_grad=True)
    y, outputs = x.tanh(), []
    for _ in range(n):
        y = y * 0.9
        outputs.append(y.sum())
    return outputs, [x]


def wide_sum(ag, n):
    """One value feeding n branches, added up one after another: x's node gets n gradients."""
    x = ag.tensor([0.5], requires_grad=True)
    h = x * 1.0
    for i in range(n):
        h = x * (0.5 + i / n) + h
    return [h.sum()], [x]


def wide_tree(ag, n):
    """One value feeding n branches, summed pairwise: half of the nodes at one depth."""
    x = ag.tensor([0.5], requires_grad=True)
    level = [x * (1 + i / n) for i in range(n)]
    while len(level) > 1:
        level = [a + b for a, b in zip(level[::2], level[1::2])] + level[len(level) - len(level) % 2:]
    return [level[0].sum()], [x]


def many_leaves(ag, n):
    """n leaves, each joining a chain: a pass that captures them all (inputs=)."""
    leaves = [ag.tensor([0.1 * i], requires_grad=True) for i in range(n)]
    h = leaves[0] * 1.0
    for w in leaves[1:]:
        h = h * 0.5 + w.tanh()
    return [h.sum()], leaves
