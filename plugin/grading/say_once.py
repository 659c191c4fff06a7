"""Say it once: what would repeat under every failure of a kata is shown with its first one.

- The hint a learner is at goes under the kata's first failure only.
- A learner file that does not import fails every test of its kata with the same error: it
  is shown once per kata, one sentence without the kit's frames; the kata's other tests are
  counted, not printed again.
- pytest-benchmark's table and its warnings are for whoever asks for them with a
  `--benchmark-*` option; the kata table already shows the speed.
"""
import contextlib

HINT_SECTION = "Hint (pytest --hint shows the next one)"

# pytest-benchmark's warnings that a learner cannot act on: a speed test that falls back to
# its own timing under pytest-xdist, and the switch itself.
_BENCHMARK_WARNINGS = (
    "ignore:Benchmark fixture was not used:pytest_benchmark.logger.PytestBenchmarkWarning",
    "ignore:Benchmarks are automatically disabled:pytest_benchmark.logger.PytestBenchmarkWarning",
)


def benchmark_asked(config):
    return any(str(arg).startswith("--benchmark") for arg in config.invocation_params.args)


def quiet_benchmark(config):
    """Before pytest-benchmark starts (pytest_cmdline_main): no table at the end, and no
    benchmarks under pytest-xdist (it switches them off itself, with a warning), unless a
    --benchmark-* option was given."""
    if benchmark_asked(config) or not hasattr(config.option, "benchmark_quiet"):
        return
    config.option.benchmark_quiet = True
    if getattr(config.option, "numprocesses", None):
        config.option.benchmark_disable = True


# numpy's floating-point warnings from inside the engine (0 * inf in a rule, the log of a
# negative number): torch computes the same nan or inf silently, and so does the engine.
_ENGINE_NUMPY_WARNINGS = r"ignore::RuntimeWarning:reference\..*"


def ignore_benchmark_warnings(config):
    """In every process (pytest_configure; xdist workers too): no warning that a speed test
    did not use the benchmark fixture where benchmarks are off (it times itself then), and
    none of numpy's about nan or inf inside the engine (torch says nothing there)."""
    config.addinivalue_line("filterwarnings", _ENGINE_NUMPY_WARNINGS)
    if not benchmark_asked(config):
        for line in _BENCHMARK_WARNINGS:
            config.addinivalue_line("filterwarnings", line)


def learner_file_message(excinfo):
    """The one sentence of a learner file that does not import (or lacks a piece), else None."""
    from .assembly import LearnerFileError

    if excinfo is None or not excinfo.errisinstance(LearnerFileError):
        return None
    return str(excinfo.value)


@contextlib.contextmanager
def said_once(stats):
    """While pytest prints the failures: the hint only under each kata's first failure, and
    each kata's import error only once (its other tests are counted, not printed)."""
    hinted, imported, hidden = set(), {}, []
    for report in stats.get("error", []) + stats.get("failed", []):
        slug = getattr(report, "kata", None)
        if slug is None:
            continue
        if any(title == HINT_SECTION for title, _ in report.sections):
            if slug in hinted:
                report.sections[:] = [s for s in report.sections if s[0] != HINT_SECTION]
            hinted.add(slug)
        if getattr(report, "kata_import_error", False):
            if slug in imported:
                hidden.append(report)
            imported.setdefault(slug, []).append(report)
    for reports in imported.values():
        if len(reports) > 1:
            reports[0].longrepr = f"{reports[0].longrepr}\n(the same error stops all {len(reports)} tests of this kata)"
    kept = {key: list(stats[key]) for key in ("error", "failed") if key in stats}
    ids = {id(r) for r in hidden}
    for key, reports in kept.items():
        stats[key] = [r for r in reports if id(r) not in ids]
    try:
        yield
    finally:
        stats.update(kept)  # the counts at the end of the run include them
