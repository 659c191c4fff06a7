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

CACHE_KEY = "autograd_katas/status"


def status_of(results, cached, kata):
    """A kata's status: from this run when its tests ran, else remembered from the last one."""
    result = results.get(kata.slug)
    return result.status if result is not None and result.tests else cached.get(kata.slug, NOT_STARTED)


@dataclass
class TestResult:
    nodeid: str
    location: tuple  # (path, line) for file order
    outcome: str  # passed, failed, todo, skipped
    message: str = ""
    speed: bool = False


@dataclass
class KataResult:
    slug: str
    tests: dict = field(default_factory=dict)  # nodeid -> TestResult
    speed: dict = field(default_factory=dict)  # "ratio:<test>" -> learner / reference, per speed test
    speed_note: str = ""  # "unchanged since it was timed" when the ratios came from the cache
    growth: str = ""  # a growth-class verdict ("quadratic ...") from a speed test
    flags: list = field(default_factory=list)  # integrity flags: such a kata is not done

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
    def status(self):
        graded = self.graded
        if not graded or all(t.outcome == "todo" for t in graded):
            return NOT_STARTED
        if not self.flags and all(t.outcome == "passed" for t in self.tests.values() if t.outcome != "skipped"):
            return DONE
        return IN_PROGRESS

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
