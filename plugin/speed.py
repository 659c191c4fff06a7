"""Speed against the reference: the same workload on the learner's piece and the reference's.

A kata's speed test takes the `speed` fixture, which parametrizes it over the two solutions
(the engine runs with that solution's pieces) and measures `speed(workload)` with
pytest-benchmark, one group per kata; the table shows the ratio of the medians. Where
pytest-benchmark is off (under pytest-xdist it switches itself off), the learner's run
times both solutions itself, interleaved, and reports the ratio directly.

The `growth` fixture checks a piece's growth class against the reference's (see Growth).
Counts (node runs) are in `reference.graph.Stats`: counts are not noisy.
"""
import contextlib
import gc
import statistics
import time

import pytest
from threadpoolctl import threadpool_limits

from reference import pieces as seam

from . import tripwire

SPEED_KEY = pytest.StashKey()
# A quadratic piece grows about `factor` (8) times faster than a linear one: 3 is far from both.
RELATIVE_GROWTH_LIMIT = 3


def _timed(workload):
    start = time.perf_counter()
    workload()
    return time.perf_counter() - start


class _CollectorPaused:
    """Time a workload on its own: Python's cycle collector would add a cost that grows with
    everything else alive in the process (the test graphs), not with the workload."""

    def __enter__(self):
        gc.collect()  # once: a full collection can take long in a big test process
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info):
        if self._was_enabled:
            gc.enable()


class Speed:
    def __init__(self, request, kata, solution):
        self.request = request
        self.kata = kata
        self.solution = solution

    def _record(self, **values):
        self.request.node.stash.setdefault(SPEED_KEY, {}).update(values)

    def __call__(self, workload, budget=0.3):
        """Measure workload() (a function of no arguments) on this test's solution."""
        # Time the learner's own functions, not the stub guards wrapped around them.
        unguarded = {n: p.__wrapped__ for n, p in vars(seam.active).items() if hasattr(p, "__wrapped__")}
        # One BLAS thread for both sides: a multi-threaded matmul on a shared 2-core machine
        # swings by 10x from one run to the next, and that would be read as the learner's doing.
        with seam.swapped(unguarded), threadpool_limits(limits=1, user_api="blas"):
            self._measure(workload, budget)

    def _measure(self, workload, budget):
        benchmark = self.request.getfixturevalue("benchmark")
        per_call = min(_timed(workload) for _ in range(2))
        rounds = int(min(50, max(3, budget / max(per_call, 1e-6))))
        if not getattr(benchmark, "disabled", False):
            benchmark.group = self.kata.slug
            benchmark.pedantic(workload, rounds=rounds, iterations=1, warmup_rounds=1)
            self._record(kata_speed={self.solution: benchmark.stats.stats.median})
            return
        if self.solution == "reference":
            workload()  # the learner's run measures both sides
            return
        self._record(kata_speed={"ratio": self.interleaved_ratio(workload, rounds)})

    def interleaved_ratio(self, workload, rounds):
        """median(learner) / median(reference), alternating the two so drift hits both alike."""
        # The capstone (whole_engine) swaps every piece; another kata its own.
        reference = tripwire.unwired(seam.REFERENCE if self.kata.whole_engine else self.kata.pieces)
        # A kata of functions (09, 10) swaps its functions too: the test's `solution`.
        functions = None
        if "solution" in self.request.fixturenames:
            functions = self.request.getfixturevalue("solution")
        mine, theirs = [], []
        for _ in range(max(rounds, 5)):
            mine.append(_timed(workload))
            with seam.swapped(reference), (functions.using("reference") if functions else contextlib.nullcontext()):
                theirs.append(_timed(workload))
        return statistics.median(mine) / statistics.median(theirs)



def report_verdict(request, verdict):
    """Show `verdict` in the table's speed column for this test's kata, in place of a time
    ratio: for a count or memory comparison (transfers, peak bytes), exact where time is noise.
    It travels on the report like a growth verdict (under pytest-xdist too)."""
    request.node.stash.setdefault(SPEED_KEY, {}).update(kata_growth=verdict)


class Growth:
    """The `growth` fixture: a growth-class check, graded like a correctness test (a piece
    that is quadratic is wrong for a 100,000-node graph, however right its answers).

    Time alone misleads: 8x the nodes can cost 20-30x the time in linear code once the
    graph outgrows the CPU caches. So the learner's growth is compared with the reference
    piece's growth on the same graphs: a linear piece grows like the reference (about 1x),
    a quadratic one about `factor` times faster.
    """

    def __init__(self, request, kata):
        self.request = request
        self.kata = kata

    def __call__(self, make_workload, n, factor=8, what="nodes"):
        small, large = make_workload(n), make_workload(n * factor)
        with _CollectorPaused():
            mine = _growth(small, large, factor)
            with seam.swapped(tripwire.unwired(self.kata.pieces)):
                reference = _growth(small, large, factor)
        if mine / reference > RELATIVE_GROWTH_LIMIT:
            verdict = (
                f"slow: looks quadratic ({factor}x the {what} took {mine:.0f}x the time; "
                f"the reference's took {reference:.0f}x)"
            )
            report_verdict(self.request, verdict)
            pytest.fail(
                f"{verdict}. Look for a list used as a set (`in` on a list), or work repeated "
                "per node.",
                pytrace=False,
            )
        return mine / reference


def _growth(small, large, factor):
    """time(large) / time(small), each the best of batches long enough (20 ms) that
    scheduling noise (another xdist worker on the same core) stays small."""
    reps = 1
    while _timed(lambda: [small() for _ in range(reps)]) < 0.02 and reps < 4096:
        reps *= 2
    t_small = min(_timed(lambda: [small() for _ in range(reps)]) for _ in range(3)) / reps
    large_reps = max(1, reps // factor)
    t_large = _timed(lambda: [large() for _ in range(large_reps)]) / large_reps
    if t_large * large_reps < 0.5:  # cheap enough to take the best of two
        t_large = min(t_large, _timed(lambda: [large() for _ in range(large_reps)]) / large_reps)
    return t_large / max(t_small, 1e-9)


class NodeRuns:
    """Counts backward node runs inside a `with` block: `with count_node_runs() as runs: ...`,
    then `runs.count`. For checks where a count says more than a time (one pass for all
    weights against one pass per weight)."""

    def __enter__(self):
        from reference.graph import Stats

        self._stats = Stats
        self._start = Stats.node_calls
        self.count = 0
        return self

    def __exit__(self, *exc_info):
        self.count = self._stats.node_calls - self._start
        return False


def count_node_runs():
    return NodeRuns()
