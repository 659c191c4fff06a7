"""The child's side of a supervised run: it hands its results to the supervisor over a pipe
(an inherited file descriptor, `--kata-child-fd N`), as each kata finishes and at the
session's end.

The end record goes at pytest_sessionfinish, before pytest prints its summary and long
before Python runs any atexit handler a learner file registered: what such a handler does
afterwards can change no result, since the supervisor alone writes the report. The records
of the katas that finished let the supervisor keep them when the process dies later; the
test that is running tells it which kata to blame.

Only the process that gathers the results hands them over: under pytest-xdist the
controller (the workers' reports reach it), never a worker.
"""
import os

import pytest

from ..manifest import kata_for_path
from . import records


class HandOver:
    def __init__(self, config, fd):
        self.config = config
        self.fd = fd
        self.planned = None  # slug -> how many tests of the kata this run will run
        self.finished = {}  # slug -> how many of them have finished

    def _grading(self):
        return self.config.pluginmanager.get_plugin("autograd-katas-grading")

    def _send(self, event, **fields):
        if self.fd is None:
            return
        data = records.encode(event, **fields)
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:  # the supervisor is gone: nothing more to tell
            self.fd = None

    def _kata(self, nodeid):
        return kata_for_path(self.config.rootpath / nodeid.split("::")[0])

    def _plan(self, nodeids):
        if self.planned is not None:
            return
        self.planned = {}
        for nodeid in nodeids:
            kata = self._kata(nodeid)
            if kata is not None:
                self.planned[kata.slug] = self.planned.get(kata.slug, 0) + 1
        grading = self._grading()
        hints = {}
        if grading is not None:
            from ..manifest import katas

            hints = {k.slug: grading.hints.count(k) for k in katas()}
        self._send("plan", katas=self.planned, cached=getattr(grading, "cached", {}), hints=hints,
                   grading=bool(self.planned) or bool(getattr(grading, "grading_katas", False)))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        self._plan([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        self._plan(ids)  # every worker collects the same tests: the first says it

    def pytest_runtest_logstart(self, nodeid, location):
        kata = self._kata(nodeid)
        if kata is not None:
            self._send("running", kata=kata.slug, test=nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        """After the grading noted the report: a test's last report (its teardown) says it
        finished, and the last test of a kata that the kata finished."""
        slug = getattr(report, "kata", None)
        grading = self._grading()
        if report.when != "teardown" or slug is None or grading is None:
            return
        result = grading.results.get(slug)
        test = result.tests.get(report.nodeid) if result is not None else None
        if test is not None:
            self._send("tested", kata=slug, test=records.from_test(test))
        self.finished[slug] = self.finished.get(slug, 0) + 1
        if result is not None and self.finished[slug] == (self.planned or {}).get(slug):
            self._send("kata", kata=slug, result=records.from_kata(result), tampered=sorted(grading.tampered))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        grading = self._grading()
        results = {} if grading is None else {slug: records.from_kata(r) for slug, r in grading.results.items()}
        self._send("end", exitstatus=int(session.exitstatus), results=results,
                   run_flags=list(getattr(grading, "run_flags", [])))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config):
        self._send("bye")  # pytest is done: what the process does from here changes nothing
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None


def register(config):
    """Hand the results over when this pytest is a supervised run's child (not a worker)."""
    fd = config.getoption("kata_child_fd", None)
    if fd is None or hasattr(config, "workerinput"):
        return
    config.pluginmanager.register(HandOver(config, fd), "autograd-katas-hand-over")
