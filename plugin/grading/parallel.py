"""Parallel runs (`pytest -n N`): one process where pytest-xdist's workers cannot pay for
themselves.

Under `pytest -n N` a kata's tests all run on one worker, in order (see pytest_cmdline_main
in plugin/__init__.py), so the only work that can run side by side is that of different katas. A
kata not started (its learner file still the shipped stub) has only to-dos, a few
milliseconds. With fewer than two katas started there is nothing to share out, and the
workers only add their cost: two more processes importing pytest, the plugin and hypothesis,
and every test's report shipped to the controller, about a second. Such a run goes serial,
and its header says why. `--kata-keep-workers` keeps the workers, and so does a run of tests
outside the katas folder (the kit's own). Measured on 2 cores: a fresh clone 1.5 s serial,
2.4 s with -n 2; one kata done, 3.4-4.0 s either way; from two katas started on, -n 2 is
about as fast, or faster.
"""
from pathlib import Path

import pytest

from .. import manifest
from ..shipped import file_hash, load_shipped

_SERIAL = pytest.StashKey()


def katas_started(rootpath):
    """How many katas under `rootpath` have a learner file that is not byte for byte the
    shipped stub (missing or unreadable counts as started: the run must report it); None
    when that cannot be told (no katas folder, no shipped manifest)."""
    shipped = load_shipped()
    katas_dir = Path(rootpath) / "katas"
    if shipped is None or not katas_dir.is_dir():
        return None
    started = 0
    for kata in manifest.ALL_KATAS:
        if not (katas_dir / kata.slug).is_dir():
            continue
        stub = (shipped["katas"].get(kata.slug) or {}).get("stub") or {}
        try:
            started += file_hash(katas_dir / kata.slug / kata.learner_file) != stub.get(kata.learner_file)
        except OSError:
            started += 1
    return started


def _grades_only_katas(config):
    """Whether every path the run collects from is in the katas folder (`pytest`, `pytest
    --kata 3`, `pytest katas/03_toposort`), not, say, the kit's own tests."""
    katas_dir = (Path(config.rootpath) / "katas").resolve()
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path != katas_dir and katas_dir not in path.parents:
            return False
    return True


def run_serially_if_nothing_to_share(config):
    """Turn `-n N` off, before pytest-xdist starts its workers, when fewer than two katas are
    started."""
    if not getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        return
    if config.option.kata_keep_workers or not _grades_only_katas(config):
        return
    started = katas_started(config.rootpath)
    if started is None or started >= 2:
        return
    config.stash[_SERIAL] = (config.option.numprocesses, started)
    config.option.numprocesses = 0  # what pytest-xdist reads, whether its hook runs before or after
    config.option.dist = "no"
    config.option.tx = []


def pytest_report_header(config):
    if _SERIAL not in config.stash:
        return None
    workers, started = config.stash[_SERIAL]
    return (f"autograd-katas: one process, not -n {workers}: {'no kata' if not started else 'one kata'} "
            "started yet, and a kata's tests share one worker, so workers would only add their start-up")


# --- a worker that dies --------------------------------------------------------------------------

def crash_sentence(slug, nodeid, worker):
    test = nodeid.split("::", 1)[-1].rsplit("@", 1)[0]
    return (f"crashed: the worker process {worker} died while it ran kata {slug} ({test}); "
            "the kata's other tests were not run, the other katas were graded")


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """pytest-xdist's report of the test a dead worker was running: that kata's failure, with
    a sentence naming it (the grading counts it like any kata test's report)."""
    kata = manifest.kata_for_path(manifest.KATAS_DIR.parent / crashitem.split("::")[0])
    if kata is None:
        return
    worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "?")
    report.kata = kata.slug
    report.kata_message = report.kata_crash = report.longrepr = crash_sentence(kata.slug, crashitem, worker)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Kata runs (--dist loadgroup, set in plugin/__init__.py) get KataScheduling."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return kata_scheduling()(config, log)


def kata_scheduling():
    """pytest-xdist's loadgroup scheduling, where a kata's tests are one unit of work (one
    worker runs them, in order) and a worker that dies costs the kata it was running and
    nothing else:

    - a kata is known by its folder in each test's id (the xdist_group mark alone did not
      group them: the workers read their options before the plugin chose loadgroup, so they
      never added the group to the ids, and each test was a unit of its own);
    - the kata's other tests are not handed to another worker (each would only kill it too);
    - a worker that replaces a dead one gets work once it has collected the tests
      (pytest-xdist 3.8 handed it work before: `KeyError: <WorkerController gw3>`, an
      INTERNALERROR that ended the run with no table).
    """
    from xdist.scheduler import LoadGroupScheduling

    class KataScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid):
            parts = nodeid.split("::")[0].split("/")
            if len(parts) > 2 and parts[0] == manifest.KATAS_DIR.name:
                return "/".join(parts[:2])  # katas/03_toposort
            return super()._split_scope(nodeid)

        def _reschedule(self, node):
            if node in self.registered_collections:
                super()._reschedule(node)

        def remove_node(self, node):
            workload = self.assigned_work.pop(node)
            pending = [nodeid for unit in workload.values() for nodeid, done in unit.items() if not done]
            if not pending:
                return None
            crashed = self._split_scope(pending[0])
            self.workqueue.update({scope: unit for scope, unit in workload.items()
                                   if scope != crashed and not all(unit.values())})
            for other in self.assigned_work:
                self._reschedule(other)
            return pending[0]

    return KataScheduling
