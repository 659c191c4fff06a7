"""Say it once: what would repeat under every failure of a kata is shown with its first one.

- The hint a learner is at goes under the kata's first failure only.
- A learner file that does not import fails every test of its kata with the same error: it
  is shown once per kata, one sentence without the kit's frames; the kata's other tests are
  counted, not printed again.
- pytest-benchmark's table and its warnings are for whoever asks for them with a
  `--benchmark-*` option; the kata table already shows the speed.
"""
import contextlib
import re

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


_FIXTURE_ARGUMENT = re.compile(r"^\s+\w+=<[^>]*>,?$")
_HYPOTHESIS_NOTE = ("Falsifying example", "Failing test case")
_DRAW_NOTE = re.compile(r"^Draw \d+(?: \([^)]*\))?: ")  # st.data()'s draws: the inputs again, as hypothesis prints them


def plainer_failure(error):
    """Before a kata test's failure is shown: the kit's sentence once. hypothesis's note of the
    failing case, and its `Draw 1: ...` lines of st.data(), go where the kit's message already
    names the inputs ("inputs of this call"); elsewhere the case loses the fixtures' object
    addresses (`oracle=<... at 0x...>`);
    pytest's explanation of a rewritten assert goes where the assert has words of its own."""
    if error is None:
        return
    message = str(error)
    notes = getattr(error, "__notes__", None)
    if isinstance(notes, list):
        kept = []
        for note in notes:
            hypothesis_case = str(note).startswith(_HYPOTHESIS_NOTE)
            if (hypothesis_case or _DRAW_NOTE.match(str(note))) and "inputs of this call:" in message:
                continue
            if hypothesis_case and "data(...)" not in str(note):
                continue  # its arguments are the test's, which pytest shows above the test's source
            if hypothesis_case:
                note = "\n".join(line for line in str(note).splitlines() if not _FIXTURE_ARGUMENT.match(line))
            kept.append(note)
        notes[:] = kept
    if isinstance(error, AssertionError) and type(error).__name__ == "AssertionError" and len(error.args) == 1:
        words, found, _ = str(error.args[0]).partition("\nassert ")
        if found and words.strip():
            error.args = (words,)


def without_benchmark_header(config, lines):
    """The run's header without pytest-benchmark's line, unless a --benchmark-* option asked."""
    if benchmark_asked(config):
        return lines
    return [line for line in lines if not (isinstance(line, str) and line.startswith("benchmark:"))]


@contextlib.contextmanager
def no_short_summary_of_katas(tr, every_failure):
    """No "short test summary info" of kata failures: the table lists each of them once, in
    one line (a run with other failures keeps pytest's summary). Asked for (-rf), it lists
    every failure, the ones the table shows in one line too (`every_failure`: what said_once
    took out of the stats while the failures print)."""
    reports = [r for key in ("failed", "error") for r in tr.stats.get(key, [])]
    previous = getattr(tr, "reportchars", None)
    asked = any(str(arg).startswith("-r") for arg in tr.config.invocation_params.args)  # -rf: as asked
    if previous is not None and not asked and reports and all(getattr(r, "kata", None) for r in reports):
        tr.reportchars = "".join(c for c in previous if c not in "fE")
    summary = tr.short_test_summary
    if asked:
        def with_every_failure():
            shown = {key: tr.stats.get(key, []) for key in every_failure}
            tr.stats.update(every_failure)
            try:
                summary()
            finally:
                tr.stats.update(shown)

        tr.short_test_summary = with_every_failure
    try:
        yield
    finally:
        if previous is not None:
            tr.reportchars = previous
        if asked:
            del tr.short_test_summary  # pytest's own method again


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
    # A kata's other failures: one line each in the table, not a section of their own here.
    hidden += [r for r in stats.get("failed", []) if getattr(r, "kata_one_line", False)]
    kept = {key: list(stats[key]) for key in ("error", "failed") if key in stats}
    ids = {id(r) for r in hidden}
    for key, reports in kept.items():
        stats[key] = [r for r in reports if id(r) not in ids]
    try:
        yield kept
    finally:
        stats.update(kept)  # the counts at the end of the run include them
