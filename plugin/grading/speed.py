"""Speed against the reference: the same workload on the learner's piece and the reference's.

A kata's speed test takes the `speed` fixture, which parametrizes it over the two solutions.
The learner's run times both, interleaved (learner, reference, reference, learner, ...), so
that whatever else the machine does hits both alike, and records the ratio of their best
times with the spread of the pairwise ratios; the table shows it as a coarse class ("same
speed", "2x slower"). Times are the thread's CPU time, not the wall clock: while another
process holds the core (a busy workshop laptop, a CI runner, a second xdist worker) the wall
clock runs on and this one does not. Every timed call runs on a fresh workload built outside
the timed region, and its result is checked (see Speed). The reference's run feeds pytest-benchmark when its options ask for it
(its table and tooling), and otherwise only checks that the workload runs.

A measured verdict is remembered in pytest's cache under the hash of the files it depends
on (the learner's file, the reference engine, the test file): a piece whose source has not
changed is not timed again (watch mode, `pytest --kata N` after editing another kata).

The `growth` fixture checks a piece's growth class against the reference's (see Growth).
Counts (node runs) are in `reference.graph.Stats`: counts are not noisy.
"""
import contextlib
import gc
import hashlib
import math
import statistics
import time
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from reference import pieces as seam

from ..edition import has_model_solution
from ..guards import cycle_collector, stack_watch, time_limit, tripwire
from ..state import SPEED_CACHE_PREFIX
from .say_once import benchmark_asked

SPEED_KEY = pytest.StashKey()
REFERENCE_DIR = Path(seam.__file__).resolve().parent
# A quadratic piece grows about `factor` (8) times faster than a linear one: 3 is far from both.
RELATIVE_GROWTH_LIMIT = 3
GROWTH_ATTEMPTS = 3  # measurements (best times pooled) before a growth verdict fails
SAMPLE_S = 0.001  # each timed sample lasts at least this long (the thread clock's resolution, noise)


class _CollectorPaused(cycle_collector.paused):
    """Time a workload on its own: Python's cycle collector would add a cost that grows with
    everything else alive in the process (the test graphs), not with the workload."""

    def __enter__(self):
        gc.collect()  # once: a full collection can take long in a big test process
        super().__enter__()


def speed_class(ratio):
    """A ratio as a learner should read it: a shared machine moves single figures by 10-15%,
    so close ratios share a class."""
    if ratio < 0.8:
        return "faster"
    if ratio <= 1.25:
        return "same speed"
    if ratio < 3:
        return "slower"
    return "much slower"


def source_key(kata, test_path):
    """A hash of every file a speed verdict of `kata` depends on: its learner files, the
    reference engine (the other side of the ratio) and the test file (the workload)."""
    from ..manifest import katas

    files = [k.path for k in katas() if k.pieces] if kata.whole_engine else [kata.path]
    files += sorted(REFERENCE_DIR.rglob("*.py")) + [Path(test_path)]
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.name).encode())
        try:
            digest.update(Path(path).read_bytes())
        except OSError:
            digest.update(b"(missing)")
    return digest.hexdigest()


class _Remembered:
    """Verdicts kept in pytest's cache, keyed by test and valid for one source hash."""

    def __init__(self, request, kata):
        self.cache = getattr(request.config, "cache", None)
        self.key = SPEED_CACHE_PREFIX + request.node.nodeid.replace("/", "_")
        self.source = source_key(kata, request.node.path) if kata is not None else None

    def get(self):
        if self.cache is None or self.source is None:
            return None
        entry = self.cache.get(self.key, None)
        if isinstance(entry, dict) and entry.get("source") == self.source:
            return entry.get("verdict")
        return None

    def set(self, verdict):
        if self.cache is not None and self.source is not None:
            self.cache.set(self.key, {"source": self.source, "verdict": verdict})


def _fresh(make, *args):
    """One fresh workload from `make(*args)`: (call, check). `make` builds new objects (a
    graph, inputs) and returns the function of no arguments to time, or (that function, a
    check of its result); it runs outside the timed region, and outside the test's time limit."""
    with time_limit.not_counted():
        made = make(*args)
    return made if isinstance(made, tuple) else (made, None)


def _timed_batch(batch, watched):
    """(the thread's CPU time of the calls of `batch`, their results); `watched`: the learner's
    side, where a look at the call stack is noted (guards/stack_watch.py)."""
    from ..manifest import learner_file_paths

    guard = stack_watch.watching(learner_file_paths()) if watched else contextlib.nullcontext()
    with guard:
        start = time.thread_time()
        results = [call() for call, _ in batch]
        elapsed = time.thread_time() - start
    return elapsed, results


def _check(batch, results):
    """Each timed call's result, checked by the workload's own check (outside the timed region)."""
    for (_, check), result in zip(batch, results):
        if check is not None:
            check(result)


class Speed:
    """The `speed` fixture: `speed(make)`. Each timed call runs on a fresh workload that
    `make()` built outside the timed region (new objects, new data), and its result is
    checked: a piece that keeps an answer from an earlier call has nothing to reuse, and one
    that would hand an earlier answer back fails the check. The learner's side is watched for
    looks at the call stack (a piece that knows it is timed can behave otherwise)."""

    def __init__(self, request, kata, solution):
        self.request = request
        self.kata = kata
        self.solution = solution

    def _record(self, **values):
        self.request.node.stash.setdefault(SPEED_KEY, {}).update(values)

    def __call__(self, make, budget=0.3):
        """Time the learner's piece against the reference's on fresh workloads from make()."""
        if not has_model_solution(self.kata):  # a course edition: nothing to time against
            compared_by_the_autograder(self.request, self.kata)
        remembered = _Remembered(self.request, self.kata)
        if self.solution == "learner":
            verdict = remembered.get()
            if verdict is not None:
                self._show(verdict, note="unchanged since it was timed")
                return
        # Time the learner's own functions, not the stub guards wrapped around them.
        unguarded = {n: p.__wrapped__ for n, p in vars(seam.active).items() if hasattr(p, "__wrapped__")}
        # One BLAS thread for both sides: a multi-threaded matmul on a shared 2-core machine
        # swings by 10x from one run to the next, and that would be read as the learner's doing.
        with seam.swapped(unguarded), threadpool_limits(limits=1, user_api="blas"), _CollectorPaused():
            if self.solution == "reference":
                self._benchmark(make, budget)
                return
            verdict = self.interleaved(make, budget)
            if speed_class(verdict["ratio"]) in ("slower", "much slower") and not self.kata.whole_engine:
                verdict["why"] = self.where_the_time_goes(make)
        _refuse_if_it_looked(self.request)
        remembered.set(verdict)
        self._show(verdict)

    def _show(self, verdict, note=""):
        self._record(kata_speed={f"ratio:{self.request.node.name}": verdict["ratio"]},
                     kata_speed_note=note, kata_speed_why=verdict.get("why", ""))

    def where_the_time_goes(self, make):
        """Which of the kata's pieces costs most more than the reference's on a fresh workload
        from make() each (each piece's own time, summed over the run), and the causes the
        lesson names."""
        names = [n for n in self.kata.pieces if callable(getattr(seam.active, n, None))
                 and not isinstance(getattr(seam.active, n), type)]
        if not names:
            return ""
        mine = _piece_times(_fresh(make)[0], {n: getattr(seam.active, n) for n in names})
        reference = tripwire.unwired(self.kata.pieces)
        theirs = _piece_times(_fresh(make)[0], {n: reference[n] for n in names if n in reference})
        excess = max(names, key=lambda n: mine.get(n, 0.0) - theirs.get(n, 0.0))
        if mine.get(excess, 0.0) <= theirs.get(excess, 0.0):
            return SLOW_CAUSES.get(self.kata.number, "")
        where = (f"your {excess} took {mine[excess] * 1e3:.1f} ms of the workload, the reference's "
                 f"{theirs.get(excess, 0.0) * 1e3:.1f} ms")
        causes = SLOW_CAUSES.get(self.kata.number, "")
        return f"{where}; {causes}" if causes else where

    def _benchmark(self, make, budget):
        """The reference's side: pytest-benchmark's record when it is on, else one run."""
        benchmark = self.request.getfixturevalue("benchmark")
        if getattr(benchmark, "disabled", False) or not benchmark_asked(self.request.config):
            batch = [_fresh(make)]
            _check(batch, _timed_batch(batch, watched=False)[1])
            return
        per_call = min(_timed_batch([_fresh(make)], watched=False)[0] for _ in range(2))
        rounds = int(min(50, max(3, budget / max(per_call, 1e-6))))
        benchmark.group = self.kata.slug
        benchmark.pedantic(lambda call: call(), setup=lambda: ((_fresh(make)[0],), {}), rounds=rounds,
                           iterations=1, warmup_rounds=1)

    def interleaved(self, make, budget):
        """{"ratio", "low", "high"}: the learner's best time over the reference's, both
        timed in alternation, each sample on fresh workloads; low and high are the quartiles
        of the pairwise ratios."""
        # The capstone (whole_engine) swaps every piece; another kata its own.
        reference = tripwire.unwired(seam.REFERENCE if self.kata.whole_engine else self.kata.pieces)
        # A kata of functions (09, 10) swaps its functions too: the test's `solution`.
        functions = None
        if "solution" in self.request.fixturenames:
            functions = self.request.getfixturevalue("solution")

        @contextlib.contextmanager
        def on_reference():
            # The reference's side is the kit's own work: not counted against the test's limit.
            with time_limit.not_counted(), seam.swapped(reference), (
                    functions.using("reference") if functions else contextlib.nullcontext()):
                yield

        with on_reference():
            batch = [_fresh(make)]
            per_call, results = _timed_batch(batch, watched=False)
            _check(batch, results)
        # A sample lasts SAMPLE_S at least (timer and scheduler noise), each call on its own
        # workload: built before the sample, so a sample holds at most MAX_REPEATS of them.
        repeats = min(MAX_REPEATS, max(1, math.ceil(SAMPLE_S / max(per_call, 1e-7))))
        pairs = int(min(MAX_PAIRS, max(MIN_PAIRS, budget / (per_call * repeats))))
        mine, theirs = [], []
        for index in range(pairs):
            # Alternate who goes first: a cache warmed by one side must not favour the other.
            for side in ((0, 1) if index % 2 == 0 else (1, 0)):
                batch = [_fresh(make) for _ in range(repeats)]
                if side == 0:
                    elapsed, results = _timed_batch(batch, watched=True)
                    mine.append(elapsed)
                else:
                    with on_reference():
                        elapsed, results = _timed_batch(batch, watched=False)
                    theirs.append(elapsed)
                _check(batch, results)
        # Best times: another process only ever adds time, so the minimum is what the code
        # costs; the pairwise ratios show how much the machine moved meanwhile.
        pairwise = sorted(m / t for m, t in zip(mine, theirs))
        quartile = len(pairwise) // 4
        return {"ratio": min(mine) / min(theirs), "low": pairwise[quartile], "high": pairwise[-1 - quartile]}


# What usually makes each kata's piece slower than the reference's (its lesson's "Fast" part).
SLOW_CAUSES = {
    1: "the usual causes: numpy or a Python loop inside a rule, or gradients computed for inputs that need none "
       "(ctx.needs_input_grad)",
    2: "the usual causes: gradients computed for inputs that need none (ctx.needs_input_grad: a matmul "
       "with a constant operand computes one product, not two), or a Python loop over elements or axes",
    3: "the usual cause: a list where a set belongs (`in` on a list), or work repeated per node",
    4: "the usual cause: a copy where none is needed (the first gradient is the only copy)",
    6: "the usual causes: work repeated per node (scanning the order, rebuilding sets), or hooks looked "
       "for on nodes that have none",
    7: "the usual cause: work per saved tensor beyond keeping it and its version",
    8: "the usual cause: a transfer or a copy where none is needed",
}


def _piece_times(workload, pieces):
    """{piece name: the thread's CPU time spent in it} over one run of workload()."""
    totals = dict.fromkeys(pieces, 0.0)

    def timing(name, piece):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return piece(*args, **kwargs)
            finally:
                totals[name] += time.thread_time() - start
        return timed

    with seam.swapped({name: timing(name, piece) for name, piece in pieces.items()}):
        workload()
    return totals


# Pairs of samples: each sample is built afresh (a new graph costs more than sorting it), so
# few, and the best of each side taken.
MIN_PAIRS, MAX_PAIRS = 5, 7
MAX_REPEATS = 16


def compared_by_the_autograder(request, kata, what="timed"):
    """For a speed, memory or transfer test of a kata whose model solution a course edition
    does not hold (plugin/edition.py): the table's speed column says the course's autograder
    does it (it has the full kit), and the test is skipped, not graded."""
    request.node.stash.setdefault(SPEED_KEY, {}).update(kata_growth=f"{what} by the autograder")
    pytest.skip(f"this edition has no model solution of kata {kata.slug} to compare yours with: "
                "the course's autograder, which has it, does")


def _refuse_if_it_looked(request):
    """No verdict for a piece that looked at the call stack while it was timed: the kata is
    flagged (the flag travels on the report), and the test fails with the sentence."""
    seen = stack_watch.take()
    if seen:
        request.node.stash.setdefault(SPEED_KEY, {}).update(kata_stack_peek=seen)
        pytest.fail(stack_watch.flag(seen), pytrace=False)


def report_verdict(request, verdict):
    """Show `verdict` in the table's speed column for this test's kata, in place of a time
    ratio: for a count or memory comparison (transfers, peak bytes), exact where time is noise.
    It travels on the report like a growth verdict (under pytest-xdist too)."""
    request.node.stash.setdefault(SPEED_KEY, {}).update(kata_growth=verdict)


class Growth:
    """The `growth` fixture: a growth-class check, graded like a correctness test (a piece
    that is quadratic is wrong for a 100,000-node graph, however right its answers).

    `growth(make, n)`: `make(size)` builds a fresh graph of about `size` nodes and returns the
    call to time (or the call and a check of its result, as for `speed`). Time alone
    misleads: 8x the nodes can cost 20-30x the time in linear code once the graph outgrows
    the CPU caches. So the learner's growth is compared with the reference piece's growth on
    graphs of the same sizes, timed in alternation: a linear piece grows like the reference
    (about 1x), a quadratic one about `factor` times faster. Every timed call runs on a graph
    of its own, built outside the timed region (a piece that keeps its answers has nothing to
    reuse), its result checked. Each growth is taken from best times of the thread's CPU time
    (another process adds none of it), and a verdict of "quadratic" is measured again, up to
    GROWTH_ATTEMPTS times, with the best times pooled, before it fails: a busy machine never
    fails linear code.
    """

    def __init__(self, request, kata):
        self.request = request
        self.kata = kata

    def __call__(self, make, n, factor=8, what="nodes"):
        if not has_model_solution(self.kata):  # a course edition: no reference growth to compare with
            compared_by_the_autograder(self.request, self.kata)
        remembered = _Remembered(self.request, self.kata)
        passed = remembered.get()
        if passed is not None:
            return passed["relative"]
        reference = tripwire.unwired(self.kata.pieces)
        best = {"mine": [math.inf, math.inf], "theirs": [math.inf, math.inf]}
        with _CollectorPaused(), threadpool_limits(limits=1, user_api="blas"):
            for _ in range(GROWTH_ATTEMPTS):
                # Best times pooled over the attempts: each attempt can only bring every
                # figure closer to what the code costs, never further.
                mine, theirs = _interleaved_growth(make, n, factor, reference, best)
                _refuse_if_it_looked(self.request)
                if mine / theirs <= RELATIVE_GROWTH_LIMIT:
                    remembered.set({"relative": mine / theirs})
                    return mine / theirs
        verdict = (
            f"slow: looks quadratic ({factor}x the {what} took {mine:.0f}x the time; "
            f"the reference's took {theirs:.0f}x)"
        )
        report_verdict(self.request, verdict)
        time_limit.found_slow(self.kata, verdict)
        pytest.fail(
            f"{verdict}. Look for a list used as a set (`in` on a list), or work repeated "
            "per node.",
            pytrace=False,
        )


def _interleaved_growth(make, n, factor, reference, best, rounds=3):
    """(the learner's growth, the reference's): time(large) / time(small) for each, from the
    best of `rounds` samples timed in alternation (and of the samples already in `best`, which
    it updates). A sample of the small size times `factor` graphs of their own, one call each,
    so that it lasts as long as one call on the large graph."""

    def sample(side, size, count, slot):
        batch = [_fresh(make, size) for _ in range(count)]
        if side == "mine":
            elapsed, results = _timed_batch(batch, watched=True)
        else:
            with time_limit.not_counted(), seam.swapped(reference):  # the kit's own work
                elapsed, results = _timed_batch(batch, watched=False)
        _check(batch, results)
        best[side][slot] = min(best[side][slot], elapsed / count)

    for _ in range(rounds):
        sample("mine", n, factor, 0)
        sample("mine", n * factor, 1, 1)
        sample("theirs", n, factor, 0)
        sample("theirs", n * factor, 1, 1)
    return tuple(best[side][1] / max(best[side][0], 1e-9) for side in ("mine", "theirs"))


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


def graph_nodes(tensor):
    """The nodes of the graph behind `tensor`."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(child for child, _ in node.next_functions)
    return seen


def nodes_behind(tensor):
    """How many nodes the graph behind `tensor` has: what one pass runs at most."""
    return len(graph_nodes(tensor))
