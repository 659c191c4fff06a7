"""What a run found out about each kata, gathered from test reports.

Reports carry everything needed (`report.kata`, `report.kata_todo`, `report.kata_speed`)
as plain attributes, so the same bookkeeping works on pytest-xdist's controller, which only
sees reports that travelled from the workers.
"""
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
    speed: dict = field(default_factory=dict)  # solution -> median seconds, or "ratio"
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
        if "ratio" in self.speed:
            return self.speed["ratio"]
        if "learner" in self.speed and "reference" in self.speed and self.speed["reference"] > 0:
            return self.speed["learner"] / self.speed["reference"]
        return None

    def clean_so_far(self):
        """No correctness test failed or stopped at a stub (speed tests wait for this)."""
        return all(t.outcome in ("passed", "skipped") for t in self.tests.values() if not t.speed)
