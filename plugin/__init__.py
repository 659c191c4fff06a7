"""Autograd Katas: the pytest plugin that grades a learner's engine against torch.

Registered by the root conftest.py (`pytest_plugins = ["plugin"]`). This module only wires
the parts together; each folder holds one job, and imports point down this list, never up:

    engine.py    what a learner's file imports: `from plugin import engine as ag`
    workshop/    the `katas` command and what it runs besides pytest (watch, reset,
                 scoreboard, the Gradescope autograder)
    grading/     the pytest hooks that turn a run into a kata table and report: the engine
                 assembled with a learner's pieces, the torch oracle, outcomes, speed, the table
    guards/      what keeps a run alive and honest against learner code: time limits,
                 interrupts, patches put back, integrity flags, tripwires, partial runs
    supervisor/  a supervised run: pytest as a child under hard limits, results handed over
    reports/     the JSON report of a run and its Gradescope form
    shipped/     the kit's shipped stubs and the hashes of its test files, and what
                 regenerates them (`python -m plugin.shipped --update`)
    manifest.py  the katas (one entry each) and where their learner files are
    state.py     the keys under which the parts share what they know of a run
    files.py     writing a file so that a crash never leaves half of one

docs/architecture.md draws the same on one page; a kit test fails on an import that points
up this list or closes a circle.
"""
import pytest

from .grading.assembly import assemble  # noqa: F401
# The fixtures kata tests use (`oracle_fixture` is the fixture named `oracle`).
from .grading.fixtures import _kata_engine, ag, counted_growth, fuzz, growth, oracle_fixture, solution, speed  # noqa: F401
from .grading.options import apply_cuda_option, check_report_path, pytest_addoption  # noqa: F401

HYPOTHESIS_PROFILE = "autograd-katas"
_PREVIOUS_ROOT = pytest.StashKey()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    from .supervisor import run as supervisor

    if supervisor.wanted(config):  # the run's pytest becomes its supervisor; a child grades
        return supervisor.supervise(config)
    from .grading.parallel import run_serially_if_nothing_to_share

    run_serially_if_nothing_to_share(config)
    # Under pytest-xdist, keep each kata's tests on one worker and in order (speed tests wait
    # for the kata's correctness tests).
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") in ("no", "load"):
        config.option.dist = "loadgroup"
    from .grading.say_once import quiet_benchmark

    quiet_benchmark(config)


def pytest_configure(config):
    from reference import pieces

    from .grading import course, parallel, random_cases
    from .grading.assembly import forget_learner_modules
    from .grading.say_once import ignore_benchmark_warnings
    from .grading.session import Grading
    from .guards import cycle_collector, interrupts, patches, time_limit, tripwire
    from .guards.report_checks import RunChecks
    from .manifest import use_root
    from .supervisor import child

    _rewrite_only_our_asserts(config)
    config.addinivalue_line("markers", f"{time_limit.HEAVY}: a kata test on a graph too big for a quadratic piece: "
                            "it fails at once when the kata's piece ran away or was found quadratic earlier in the run")
    config.stash[_PREVIOUS_ROOT] = use_root(config.rootpath)
    forget_learner_modules()
    time_limit.forget()
    tripwire.forget()
    patches.forget()
    pieces.restore_reference()
    apply_cuda_option(config)
    check_report_path(config)
    config.pluginmanager.register(RunChecks(runs_tests=not _xdist_controller(config)), "autograd-katas-report-checks")
    config.pluginmanager.register(Grading(config), "autograd-katas-grading")
    config.pluginmanager.register(time_limit, "autograd-katas-time-limit")
    config.pluginmanager.register(cycle_collector, "autograd-katas-cycle-collector")
    config.pluginmanager.register(random_cases, "autograd-katas-random-cases")
    config.pluginmanager.register(interrupts, "autograd-katas-interrupts")
    config.pluginmanager.register(parallel, "autograd-katas-parallel")
    config.pluginmanager.register(course, "autograd-katas-course")  # a course edition's grading
    child.register(config)  # a supervised run's child hands its results over
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

    from .guards import interrupts
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
