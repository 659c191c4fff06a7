"""Autograd Katas: the pytest plugin that grades a learner's engine against torch.

Registered by the root conftest.py. Its parts, one idea per module:

    manifest.py    the katas (one entry each)
    assembly.py    the engine with a learner's pieces plugged in; `assemble()` for use outside pytest
    engine.py      the one import learner files use: `from plugin import engine as ag`
    oracle.py      run the same code on torch and on the engine, compare, locate the wrong node
    graph_view.py  pairing the two graphs, drawing them
    outcomes.py    stubs are to-dos; one sentence per failure
    results.py     per-kata bookkeeping from test reports
    speed.py       learner vs reference timing, growth-class checks
    collector.py   Python's cycle collector rests while a kata test runs (big graphs, fair limits)
    examples.py    a failing random case costs its own time, not pytest's traceback of it
    table.py       the table at the end of a run
    grading.py     the pytest hooks
    options.py     command-line options
    hints.py       progressive hints, remembered in pytest's cache
    once.py        say it once: the hint and an import error once per kata, pytest-benchmark quiet
    integrity.py   flags: forbidden imports, reaching the reference's pieces, test files changed
    selection.py   partial runs (-k, --deselect, node ids, -x): a kata is done only graded in full
    tripwire.py    run-time check: the reference's own piece never runs from the learner's code
    tamper.py      run-time check: the grader's own functions are the ones it started with
    run_checks.py  carries both checks on each test's report (to pytest-xdist's controller)
    runaway.py     the time limit of a kata test (also under hypothesis), a breaker per piece
    interrupts.py  a KeyboardInterrupt raised by learner code fails its test; Ctrl-C stops the run
    learner_output.py  a learner's printed output: once per kata, cut to a few KB
    patches.py     learner files that patch the engine, numpy or torch: flagged and put back
    report.py      the JSON report of a run (--kata-report)
    workers.py     -n N turned off where fewer than two katas are started (nothing to share out)

    gradescope.py  the report as Gradescope's results.json (--kata-report-format gradescope)

The workshop's tools are in plugin/workshop/: the `katas` command (cli.py) and what it runs
besides pytest (watch, reset, scoreboard, the Gradescope autograder); plugin/watch.py,
reset.py and scoreboard.py only keep `python -m plugin.NAME` working. For the kit's authors:
`python -m plugin.shipped` regenerates plugin/shipped.json and plugin/stubs/.
"""
import pytest

from .assembly import assemble  # noqa: F401
# (the oracle fixture under another name: importing plugin.oracle, the module, sets `oracle` here)
from .fixtures import _kata_engine, ag, growth, oracle_fixture, solution, speed  # noqa: F401
from .options import apply_cuda_option, check_report_path, pytest_addoption  # noqa: F401

HYPOTHESIS_PROFILE = "autograd-katas"
_PREVIOUS_ROOT = pytest.StashKey()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    from .workers import run_serially_if_nothing_to_share

    run_serially_if_nothing_to_share(config)
    # Under pytest-xdist, keep each kata's tests on one worker and in order (speed tests wait
    # for the kata's correctness tests).
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") in ("no", "load"):
        config.option.dist = "loadgroup"
    from .once import quiet_benchmark

    quiet_benchmark(config)


def pytest_configure(config):
    from reference import pieces

    from . import collector, examples, interrupts, patches, runaway, workers
    from .assembly import forget_learner_modules
    from .grading import Grading
    from .run_checks import RunChecks
    from .manifest import use_root
    from .once import ignore_benchmark_warnings

    _rewrite_only_our_asserts(config)
    config.stash[_PREVIOUS_ROOT] = use_root(config.rootpath)
    forget_learner_modules()
    runaway.forget()
    patches.forget()
    pieces.restore_reference()
    apply_cuda_option(config)
    check_report_path(config)
    config.pluginmanager.register(RunChecks(runs_tests=not _xdist_controller(config)), "autograd-katas-run-checks")
    config.pluginmanager.register(Grading(config), "autograd-katas-grading")
    config.pluginmanager.register(runaway, "autograd-katas-runaway")
    config.pluginmanager.register(collector, "autograd-katas-collector")
    config.pluginmanager.register(examples, "autograd-katas-examples")
    config.pluginmanager.register(interrupts, "autograd-katas-interrupts")
    config.pluginmanager.register(workers, "autograd-katas-workers")
    interrupts.install()
    ignore_benchmark_warnings(config)
    if not _xdist_controller(config):  # it runs no test: hypothesis (0.5 s) only in workers
        _load_hypothesis_profile(config)


def _xdist_controller(config):
    """Whether this process is pytest-xdist's controller: it hands the tests to its workers."""
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def _rewrite_only_our_asserts(config):
    """pytest rewrites the asserts of every module of each installed package that registers a
    pytest plugin: hypothesis's 90 modules (imported next, for its profile), pytest-xdist's,
    pytest-benchmark's. Their asserts are not what a learner reads, and where no bytecode is
    written (PYTHONDONTWRITEBYTECODE, a read-only site-packages) that is each module parsed and
    compiled again at every run: half a second of each kata's feedback. The kata test files
    and this plugin stay rewritten."""
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if not isinstance(marked, set):
        return
    ours = __name__.partition(".")[0]
    marked.difference_update({name for name in marked if name.partition(".")[0] != ours})
    getattr(hook, "_marked_for_rewrite_cache", {}).clear()


def pytest_unconfigure(config):
    # A run inside another (the kit's own pytester tests) leaves the outer one as it was.
    from reference import pieces

    from . import interrupts
    from .manifest import use_root

    interrupts.uninstall()
    if _PREVIOUS_ROOT in config.stash:
        use_root(config.stash[_PREVIOUS_ROOT])
    pieces.restore_reference()


def _load_hypothesis_profile(config):
    """No deadline (a learner's first try may be slow), derandomized (the same code always
    gets the same grade), no example database written into the learner's clone."""
    from hypothesis import HealthCheck, Phase, settings

    settings.register_profile(
        HYPOTHESIS_PROFILE,
        deadline=None,
        derandomize=True,
        database=None,
        max_examples=30,
        print_blob=False,
        report_multiple_bugs=False,  # one failure per test: the first is the one to fix
        # No "explain" phase: it is slow and its notes are for library authors.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile(HYPOTHESIS_PROFILE)
    if getattr(config, "cache", None) is not None:
        # Hypothesis keeps a cache of constants; keep it with pytest's, not in the clone's root.
        from hypothesis.configuration import set_hypothesis_home_dir

        set_hypothesis_home_dir(config.cache.mkdir("hypothesis"))
