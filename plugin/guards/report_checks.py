"""Run-time integrity checks, carried on each kata test's report (so that pytest-xdist's
controller, which runs no learner code, hears what its workers found):

- `report.kata_delegated`: the reference pieces the learner's code ran (see tripwire.py);
- `report.kata_tracers`: the profile or trace functions its code installed (see tracers.py);
- `report.kata_tampered`: the grader's own functions found replaced (see tamper.py).

The grading turns them into flags: the first two on the kata, the last on the whole run.
"""
import pytest

from . import tamper, tracers, tripwire
from ..state import KATA_KEY


class RunChecks:
    def __init__(self, runs_tests=True):
        # Before any learner file is imported; in a process that runs no test (pytest-xdist's
        # controller), of the grading modules it imported.
        self.noted = tamper.snapshot(imported_only=not runs_tests)
        self._changed = tamper.changed  # kept here: a learner could replace the module's
        self._take = tripwire.take
        self._restore = tamper.restore
        self._tracers = (tracers.note, tracers.remove_foreign, tracers.take)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        if KATA_KEY in item.stash:
            self._tracers[0]()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        report.kata_delegated = self._take()
        report.kata_tampered = self._changed(self.noted)
        if KATA_KEY in item.stash:
            self._tracers[1]()
            if call.when == "teardown":
                report.kata_tracers = self._tracers[2]()
        return report

    def tampered(self):
        return self._changed(self.noted)

    def pytest_unconfigure(self, config):
        self._restore(self.noted)
