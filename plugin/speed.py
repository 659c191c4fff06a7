"""Speed against the reference: the same workload on the learner's piece and the reference's.

A kata's speed test takes the `speed` fixture, which parametrizes it over the two solutions
(the engine runs with that solution's pieces) and measures `speed(workload)` with
pytest-benchmark, one group per kata; the table shows the ratio of the medians. Where
pytest-benchmark is off (under pytest-xdist it switches itself off), the learner's run
times both solutions itself, interleaved, and reports the ratio directly.

`speed.growth(make, n)` times a workload at n and 8n: a linear piece takes about 8 times as
long, a quadratic one about 64 times. Counts (node runs) are in `reference.graph.Stats`.
"""
import statistics
import time

import pytest

from reference import pieces as seam

SPEED_KEY = pytest.StashKey()
GROWTH_LIMIT = 24  # between 8 (linear) and 64 (quadratic), far from both


def _timed(workload):
    start = time.perf_counter()
    workload()
    return time.perf_counter() - start


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
        with seam.swapped(unguarded):
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
        reference = {name: seam.REFERENCE[name] for name in self.kata.pieces}
        mine, theirs = [], []
        for _ in range(max(rounds, 5)):
            mine.append(_timed(workload))
            with seam.swapped(reference):
                theirs.append(_timed(workload))
        return statistics.median(mine) / statistics.median(theirs)

    def growth(self, make_workload, n, factor=8, what="nodes"):
        """Fail when going from n to factor*n costs far more than factor times as much."""
        small, large = make_workload(n), make_workload(n * factor)
        t_small = min(_timed(small) for _ in range(3))
        t_large = min(_timed(large) for _ in range(3))
        ratio = t_large / max(t_small, 1e-9)
        if ratio > GROWTH_LIMIT:
            verdict = f"slow: looks quadratic ({factor}x the {what} took {ratio:.0f}x the time)"
            self._record(kata_growth=verdict)
            pytest.fail(
                f"{verdict}. A linear-time piece takes about {factor}x as long; look for a "
                "list used as a set (`in` on a list), or work repeated per node."
            )
        return ratio
