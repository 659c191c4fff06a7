"""What a run concludes once its tests ran: the table, the report, whether the chosen katas
are done. One place for both ways a run ends: in pytest's own process (session.py) and in
the supervisor of a supervised run (plugin/supervisor/), so that both conclude alike.
"""
from ..manifest import katas
from ..reports import json_report
from .hints import load_hints
from .results import DONE, status_of
from .table import write_table


# Test files whose results fill the speed column: time ratios, memory peaks, transfer counts.
SPEED_COLUMN_FILES = ("test_*speed*.py", "test_*memory*.py", "test_*transfers*.py")


def has_speed_test(kata):
    return any(any(kata.folder.glob(pattern)) for pattern in SPEED_COLUMN_FILES)


def why_no_speed(kata, result):
    """Why a kata's speed cell is empty ("" when nothing needs saying)."""
    if result is None:
        return ""
    if not has_speed_test(kata):
        return "no speed test for this kata"
    if not any(t.speed for t in result.tests.values()):
        return "speed tests not run" if result.status == DONE else "measured once the tests pass"
    if not result.clean_so_far():
        return "measured once the tests pass"
    return "not measured in this run"


def show_table(tr, config, results, cached, run_flags, chosen=()):
    """The table; `chosen`: the katas this run was asked for (--kata), which the Next line follows."""
    write_table(tr, results, cached, why_no_speed, verbose=config.getoption("verbose") > 0, run_flags=run_flags,
                chosen=chosen, on_reference=config.getoption("solution") == "reference",
                hinted=bool(config.getoption("hint")))


def chosen_done(chosen, results):
    """--kata-require-done: every kata chosen with --kata (else every kata) is done, from this
    run's results alone."""
    chosen = chosen or katas()
    return bool(chosen) and all(status_of(results, {}, k) == DONE for k in chosen)


def not_done_line(chosen, results):
    """--kata-require-done's last line: why each chosen kata (else every kata) is not done;
    None when all are."""
    undone = [k for k in (chosen or katas()) if status_of(results, {}, k) != DONE]
    if not undone:
        return None
    return "Not done (--kata-require-done): " + "; ".join(_why_not_done(k, results) for k in undone)


def _why_not_done(kata, results):
    result = results.get(kata.slug)
    status = status_of(results, {}, kata)
    if result is None or not result.tests:
        return f"{kata.slug} was not graded in this run"
    if result.flags:
        return f"{kata.slug} is flagged: {result.flags[0]}"
    failed = sum(1 for t in result.graded if t.outcome == "failed")
    todo = sum(1 for t in result.graded if t.outcome == "todo")
    if failed or todo:
        parts = [f"{failed} failed" if failed else "", f"{todo} not written yet" if todo else ""]
        return f"{kata.slug} is {status} ({', '.join(p for p in parts if p)})"
    if result.partial:
        return f"{kata.slug}: {result.partial}"
    return f"{kata.slug} is {status}"


def write_report(config, results, cached, hints_used, run_flags):
    """Build the run's report (--kata-report, in --kata-report-format) and write it: the
    outcome (path, the other learner whose report it replaced, error)."""
    path = config.getoption("kata_report")
    shown = katas()
    # A report counts only what this run graded: a status remembered in pytest's cache (which
    # anyone can edit) is shown as remembered, never as the kata's status.
    data = json_report.build(
        shown,
        statuses={k.slug: status_of(results, {}, k) for k in shown},
        remembered={k.slug: str(cached.get(k.slug, "")) for k in shown if k.exists()},
        results=results,
        hints_used={k.slug: hints_used.get(k.slug, 0) for k in shown},
        hints_total={k.slug: len(load_hints(k)) for k in shown},
        learner=json_report.learner_name(config.getoption("kata_learner"), config.rootpath),
        solution=config.getoption("solution"),
        run_flags=run_flags,
    )
    if config.getoption("kata_report_format") == "gradescope":
        from ..reports import gradescope

        try:
            settings = gradescope.course_settings(config.rootpath)
        except ValueError as error:
            return path, None, f"course settings: {error}"
        data = gradescope.results(data, settings, per_test=config.getoption("kata_report_per_test"))
    try:
        return path, json_report.write(path, data), ""
    except OSError as exc:  # a bad path fails the report, never the grading
        return path, None, f"{type(exc).__name__}: {exc.strerror or exc}"


def show_report(tr, outcome):
    if outcome is None:
        return
    path, replaced, error = outcome
    if error:
        tr.write_line(f"Could not write the report {path}: {error}", red=True)
        return
    tr.write_line(f"Report written to {path}")
    if replaced:
        tr.write_line(f"(it replaced a report of {replaced!r} at that path)", yellow=True)
