"""What a run found out about each kata, gathered from test reports.

Reports carry everything needed (`report.kata`, `report.kata_todo`, `report.kata_speed`)
as plain attributes, so the same bookkeeping works on pytest-xdist's controller, which only
sees reports that travelled from the workers.
"""
import math
from dataclasses import dataclass, field

NOT_STARTED = "not started"
IN_PROGRESS = "in progress"
DONE = "done"


def status_of(results, cached, kata):
    """A kata's status: from this run when its tests ran, else remembered from the last one.
    A kata whose learner file is missing is not started, whatever was remembered."""
    if not kata.exists():
        return NOT_STARTED
    result = results.get(kata.slug)
    return result.status if ran(result) else cached.get(kata.slug, NOT_STARTED)


def last_grading(results, cached, kata):
    """What the kata's tests said at its last grading (this run's, else remembered), counting
    a partial run's passes: what the capstone asks ("did a test of it fail?")."""
    result = results.get(kata.slug)
    return result.tested_status if ran(result) else cached.get(kata.slug, NOT_STARTED)


def ran(result):
    """True when some test of the kata ran in this run."""
    return result is not None and bool(result.tests)


@dataclass
class TestResult:
    nodeid: str
    location: tuple  # (path, line) for file order
    outcome: str  # passed, failed, todo, skipped
    message: str = ""
    speed: bool = False
    # pytest printed this failure with its message (--tb's default, long or short) in a process
    # that reached its summary: the table points to it instead of saying it again.
    printed: bool = False


@dataclass
class KataResult:
    slug: str
    tests: dict = field(default_factory=dict)  # nodeid -> TestResult
    speed: dict = field(default_factory=dict)  # "ratio:<test>" -> learner / reference, per speed test
    speed_note: str = ""  # "unchanged since it was timed" when the ratios came from the cache
    speed_why: str = ""  # where the time goes, when the piece is slower than the reference's
    growth: str = ""  # a growth-class verdict ("quadratic ...") from a speed test
    flags: list = field(default_factory=list)  # integrity flags: such a kata is not done
    # Why this run did not grade every shipped test of the kata ("" when it did): set at
    # collection (-k, --deselect, node ids, --lf), else told by `selected` (-x, --maxfail).
    selection: str = ""
    selected: int = 0  # the kata's graded tests (not speed tests) this run meant to run (0: unknown)
    # Set by the supervisor of a supervised run: the sentence saying that the process died or
    # was stopped while it graded this kata ("" when it was not).
    crash: str = ""

    def add(self, result):
        previous = self.tests.get(result.nodeid)
        if previous is None or previous.outcome == "passed":  # teardown errors count too
            self.tests[result.nodeid] = result

    def ordered(self):
        return sorted(self.tests.values(), key=lambda t: (t.location[0], t.location[1] or 0))

    def count(self, outcome, speed=False):
        return sum(1 for t in self.tests.values() if t.outcome == outcome and t.speed == speed)

    @property
    def graded(self):
        """Correctness tests that ran (speed tests are reported in their own column)."""
        return [t for t in self.tests.values() if not t.speed and t.outcome != "skipped"]

    @property
    def tested_status(self):
        """What the tests that ran say, as if they were all the kata's tests."""
        graded = self.graded
        if self.crash:
            return IN_PROGRESS
        if not graded or all(t.outcome == "todo" for t in graded):
            return NOT_STARTED
        if not self.flags and all(t.outcome == "passed" for t in self.tests.values() if t.outcome != "skipped"):
            return DONE
        return IN_PROGRESS

    @property
    def status(self):
        """The kata's status: done only when every graded test of it ran and passed here
        (speed tests only measure: a run without them is not partial)."""
        status = self.tested_status
        return IN_PROGRESS if status == DONE and self.partial else status

    @property
    def partial(self):
        """Why only part of the kata's tests ran ("" when all did, or when its grading crashed:
        the crash says why the rest did not run)."""
        if self.crash:
            return ""
        if self.selection:
            return self.selection
        ran = sum(1 for t in self.tests.values() if not t.speed)
        if self.selected and ran < self.selected:
            return f"the run stopped early: {ran} of its {self.selected} tests ran"
        return ""

    def first_failure(self):
        return next((t for t in self.ordered() if t.outcome == "failed"), None)

    @property
    def ratio(self):
        """The kata's speed ratio: the geometric mean of its speed tests' ratios (a kata with
        a wide and a deep workload is as fast as both together)."""
        ratios = [r for key, r in self.speed.items() if key.startswith("ratio") and r and r > 0]
        if not ratios:
            return None
        return math.exp(sum(math.log(r) for r in ratios) / len(ratios))

    def clean_so_far(self):
        """No correctness test failed or stopped at a stub (speed tests wait for this)."""
        return all(t.outcome in ("passed", "skipped") for t in self.tests.values() if not t.speed)
