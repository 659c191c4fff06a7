"""The feedback table printed at the end of every run."""
from ..edition import has_model_solution
from ..guards.integrity import advice
from ..manifest import katas
from .results import DONE, IN_PROGRESS, NOT_STARTED, ran, status_of
from ..guards.partial_runs import missing_file
from . import course
from .speed import speed_class

STATUS_MARKUP = {DONE: {"green": True, "bold": True}, IN_PROGRESS: {"yellow": True}, NOT_STARTED: {}}
MISSING = "file missing"  # the status cell of a kata whose learner file is gone
REMEMBERED = "(remembered from an earlier run)"


def speed_cell(result, why_empty):
    if result is not None and result.growth:
        return result.growth
    ratio = None if result is None else result.ratio
    if ratio is not None:
        note = f"; {result.speed_note}" if result.speed_note else ""
        return f"{ratio:.2f}x reference: {speed_class(ratio)}{note}"
    return f"-  ({why_empty})" if why_empty else "-"


def write_table(tr, results, cached, why_no_speed, verbose, run_flags=()):
    """Print the table, the progress line and the next step on terminal reporter `tr`."""
    tr.write_sep("=", "Autograd Katas", bold=True)
    rows = []
    statuses = {}
    for kata in katas():
        result = results.get(kata.slug)
        status = status_of(results, cached, kata)
        statuses[kata.slug] = status
        if not kata.exists():
            rows.append((kata, "not run", MISSING, "-", None))
            continue
        if ran(result):
            graded = result.graded
            passed = sum(1 for t in graded if t.outcome == "passed")
            tests = f"{passed}/{len(graded)}"
            speed = speed_cell(result, why_no_speed(kata, result))
        else:
            tests = "not run"
            speed = f"-  {REMEMBERED}" if kata.slug in cached else "-"
        if ran(result) and result.crash:  # a supervised run's process died or was stopped here
            status = "timed out" if result.crash.startswith("timed out") else "crashed"
        rows.append((kata, tests, status, speed, result if ran(result) else None))

    width = max(len(k.slug) for k in katas()) if rows else 10
    tr.write_line(f"  {'kata':<{width}}  {'tests':>7}  {'status':<12} speed")
    for kata, tests, status, speed, result in rows:
        tr.write(f"  {kata.slug:<{width}}  {tests:>7}  ")
        tr.write(f"{status:<12}", **STATUS_MARKUP.get(status, {"red": True}))
        tr.write_line(f" {speed}")
        for line in _notes(kata, status, result, verbose):
            tr.write_line(f"  {'':<{width}}    {line}")

    for flag in run_flags:
        tr.write_line(f"This run is flagged: {flag}; no kata counts as done in it.", red=True)
    partial = [k for k, *_, result in rows if result is not None and result.partial]
    if partial:
        tr.write_line(
            "This run graded only part of the tests of " + ", ".join(k.slug for k in partial)
            + ": a kata counts as done only when all its tests pass in one run "
            f"(pytest --kata {partial[0].number}, without -k, -x or test names).", yellow=True)

    done = sum(1 for s in statuses.values() if s == DONE)
    remembered = sum(1 for k, *_, result in rows if result is None and statuses.get(k.slug) == DONE)
    tr.write_line("")
    tr.write_line(f"Progress: {done} of {len(rows)} katas done"
                  + (f" ({remembered} of them remembered from an earlier run; a report counts only what "
                     "its own run graded)" if remembered else ""), bold=True)
    unfinished = next((k for k in katas() if statuses.get(k.slug) != DONE), None)
    if unfinished is None:
        tr.write_line("Every kata is done. Well built! Compare your pieces with the model solutions in reference/solutions/.", green=True)
    elif not unfinished.exists():
        tr.write_line(f"Next: kata {unfinished.slug}: {missing_file(unfinished)}")
    else:
        tr.write_line(
            f"Next: kata {unfinished.slug}: read katas/{unfinished.slug}/README.md, "
            f"then run: pytest --kata {unfinished.number}"
        )


def _notes(kata, status, result, verbose):
    if not kata.exists():
        yield missing_file(kata)
        return
    if result is None:
        return
    if result.partial:
        yield result.partial
    for flag in result.flags:
        yield f"flagged: {flag}; {advice(flag)}"
    blocked = next((t.message for t in result.ordered() if t.outcome == "todo" and t.message), "")
    if blocked:  # the katas (or the piece of one) to finish first
        yield blocked
    note = course.table_note(kata)
    if note:
        yield note
    if status == DONE and kata.reference_module:
        yield (f"done: compare with the reference solution in {kata.reference_module}" if has_model_solution(kata)
               else "done: its model solution comes with a later release of the course")
    failures = [t for t in result.ordered() if t.outcome == "failed"]
    for test in failures[: None if verbose else 1]:
        yield f"first failure: {test.message}" if test is failures[0] else f"also: {test.message}"
    if failures[1:] and not verbose:
        yield f"(+{len(failures) - 1} more failing; -v lists them all)"
