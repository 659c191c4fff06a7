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
    table.py       the table at the end of a run
    grading.py     the pytest hooks
    options.py     command-line options
    hints.py       progressive hints, remembered in pytest's cache
    integrity.py   flags: forbidden imports, test files changed from the shipped ones
    report.py      the JSON report of a run (--kata-report)

Commands (python -m plugin.NAME): scoreboard (merge reports into a class table), reset
(restore a kata's stub, keeping a backup), watch (grade again on every save), shipped
(regenerate plugin/shipped.json and plugin/stubs/ after changing a kata).
"""
import pytest

from .assembly import assemble  # noqa: F401
from .fixtures import _kata_engine, ag, growth, oracle, solution, speed  # noqa: F401
from .options import apply_cuda_option, pytest_addoption  # noqa: F401

HYPOTHESIS_PROFILE = "autograd-katas"
_PREVIOUS_ROOT = pytest.StashKey()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    # Under pytest-xdist, keep each kata's tests on one worker and in order (speed tests wait
    # for the kata's correctness tests).
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") in ("no", "load"):
        config.option.dist = "loadgroup"
    from .once import quiet_benchmark

    quiet_benchmark(config)


def pytest_configure(config):
    from reference import pieces

    from .assembly import forget_learner_modules
    from .grading import Grading
    from .manifest import use_root
    from .once import ignore_benchmark_warnings

    config.stash[_PREVIOUS_ROOT] = use_root(config.rootpath)
    forget_learner_modules()
    pieces.restore_reference()
    apply_cuda_option(config)
    config.pluginmanager.register(Grading(config), "autograd-katas-grading")
    ignore_benchmark_warnings(config)
    _load_hypothesis_profile(config)


def pytest_unconfigure(config):
    # A run inside another (the kit's own pytester tests) leaves the outer one as it was.
    from reference import pieces

    from .manifest import use_root

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
