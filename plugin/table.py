"""The feedback table printed at the end of every run."""
from .integrity import advice
from .manifest import katas
from .results import DONE, IN_PROGRESS, NOT_STARTED, status_of
from .speed import speed_class

STATUS_MARKUP = {DONE: {"green": True, "bold": True}, IN_PROGRESS: {"yellow": True}, NOT_STARTED: {}}


def speed_cell(result, why_empty):
    if result is not None and result.growth:
        return result.growth
    ratio = None if result is None else result.ratio
    if ratio is not None:
        note = f"; {result.speed_note}" if result.speed_note else ""
        return f"{ratio:.2f}x reference: {speed_class(ratio)}{note}"
    return f"-  ({why_empty})" if why_empty else "-"


def write_table(tr, results, cached, why_no_speed, verbose):
    """Print the table, the progress line and the next step on terminal reporter `tr`."""
    tr.write_sep("=", "Autograd Katas", bold=True)
    rows = []
    statuses = {}
    for kata in katas():
        result = results.get(kata.slug)
        ran = result is not None and result.tests
        status = status_of(results, cached, kata)
        statuses[kata.slug] = status
        if ran:
            graded = result.graded
            passed = sum(1 for t in graded if t.outcome == "passed")
            tests = f"{passed}/{len(graded)}"
        else:
            tests = "not run"
        speed = speed_cell(result if ran else None, why_no_speed(kata, result) if ran else "")
        rows.append((kata, tests, status, speed, result if ran else None))

    width = max(len(k.slug) for k in katas()) if rows else 10
    tr.write_line(f"  {'kata':<{width}}  {'tests':>7}  {'status':<12} speed")
    for kata, tests, status, speed, result in rows:
        tr.write(f"  {kata.slug:<{width}}  {tests:>7}  ")
        tr.write(f"{status:<12}", **STATUS_MARKUP[status])
        tr.write_line(f" {speed}")
        for line in _notes(kata, status, result, verbose):
            tr.write_line(f"  {'':<{width}}    {line}")

    done = sum(1 for s in statuses.values() if s == DONE)
    tr.write_line("")
    tr.write_line(f"Progress: {done} of {len(rows)} katas done", bold=True)
    unfinished = next((k for k in katas() if statuses.get(k.slug) != DONE), None)
    if unfinished is None:
        tr.write_line("Every kata is done. Well built! Compare your pieces with reference/.", green=True)
    else:
        tr.write_line(
            f"Next: kata {unfinished.slug}: read katas/{unfinished.slug}/README.md, "
            f"then run: pytest --kata {unfinished.number}"
        )


def _notes(kata, status, result, verbose):
    if result is None:
        return
    for flag in result.flags:
        yield f"flagged: {flag}; {advice(flag)}"
    blocked = next((t.message for t in result.ordered() if t.outcome == "todo" and t.message), "")
    if status == NOT_STARTED and blocked:
        yield blocked
    if status == DONE and kata.reference_module:
        yield f"done: compare with the reference solution in {kata.reference_module}"
    failures = [t for t in result.ordered() if t.outcome == "failed"]
    for test in failures[: None if verbose else 1]:
        yield f"first failure: {test.message}" if test is failures[0] else f"also: {test.message}"
    if failures[1:] and not verbose:
        yield f"(+{len(failures) - 1} more failing; -v lists them all)"
