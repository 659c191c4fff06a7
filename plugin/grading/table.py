"""The feedback table printed at the end of every run."""
import re

from ..edition import has_model_solution
from ..guards.integrity import advice
from ..manifest import katas
from .results import DONE, IN_PROGRESS, NOT_STARTED, ran, status_of
from ..guards.partial_runs import missing_file
from . import course
from .speed import speed_class

BLOCKED = "blocked"  # shown for a kata written but waiting for others (the capstone); reported as not started
STATUS_MARKUP = {DONE: {"green": True, "bold": True}, IN_PROGRESS: {"yellow": True}, NOT_STARTED: {}, BLOCKED: {"yellow": True}}
MISSING = "file missing"  # the status cell of a kata whose learner file is gone
REMEMBERED = "(remembered from an earlier run)"
OTHERS_SHOWN = 8  # a kata's other failures listed in one line each (a 50-line terminal holds them)
SHOWN_ABOVE = "shown in full above"
_ADDRESS = re.compile(r" (?:object )?at 0x[0-9a-fA-F]+")  # differs between runs of one mistake


def speed_cell(result, why_empty):
    if result is not None and result.growth:
        return result.growth
    ratio = None if result is None else result.ratio
    if ratio is not None:
        note = f"; {result.speed_note}" if result.speed_note else ""
        return f"{ratio:.2f}x reference: {speed_class(ratio)}{note}"
    return f"-  ({why_empty})" if why_empty else "-"


def write_table(tr, results, cached, why_no_speed, verbose, run_flags=(), chosen=(), on_reference=False, hinted=False):
    """Print the table, the progress line and the next step on terminal reporter `tr`
    (`hinted`: this run shows a hint under the table, so the Next line offers none)."""
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
            if status == NOT_STARTED and _blocked(kata, result):
                status = BLOCKED
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
    if on_reference:
        tr.write_line(f"On the model solutions (--solution reference): {done} of {len(rows)} katas done. "
                      "This run checks the kit itself; your own progress is graded without --solution.",
                      green=done == len(rows), bold=True)
        return
    tr.write_line(f"Progress: {done} of {len(rows)} katas done"
                  + (f" ({remembered} of them remembered from an earlier run; a report counts only what "
                     "its own run graded)" if remembered else ""), bold=True)
    text, markup = next_step(statuses, results, chosen, hinted)
    tr.write_line(text[0], **markup)


def next_step(statuses, results, chosen, hinted=False):
    """The Next line, as (text, markup): what the learner is doing comes first (the kata this
    run graded, the kata being watched), and it says something the run did not just do (no
    "stuck? --hint" above the hint this run shows)."""
    working = next((k for k in chosen if statuses.get(k.slug) != DONE and k.exists()), None)
    if working is not None and ran(results.get(working.slug)):
        if statuses.get(working.slug) == NOT_STARTED:
            return (f"Next: write the pieces of kata {working.slug} (katas/{working.slug}/{working.learner_file}); "
                    "each one you write turns its to-dos into tests",), {}
        first = results[working.slug].first_failure()
        where = "shown in full above the table" if first is not None and first.printed else "its line in the table"
        stuck = "" if hinted else f"; stuck? pytest --kata {working.number} --hint"
        return (f"Next: fix the first failure of kata {working.slug} ({where}), save, and grade again{stuck}",), {}
    after = max((k.number for k in chosen if statuses.get(k.slug) == DONE), default=0)
    ordered = sorted(katas(), key=lambda k: (k.number <= after, k.number))  # the katas after a finished one first
    unfinished = next((k for k in ordered if statuses.get(k.slug) != DONE), None)
    if unfinished is None:
        return ("Every kata is done. Well built! Compare your pieces with the model solutions in reference/solutions/.",), {"green": True}
    if not unfinished.exists():
        return (f"Next: kata {unfinished.slug}: {missing_file(unfinished)}",), {}
    if statuses.get(unfinished.slug) == IN_PROGRESS:
        return (f"Next: kata {unfinished.slug} is in progress: pytest --kata {unfinished.number} shows its first failure",), {}
    return (f"Next: kata {unfinished.slug}: read katas/{unfinished.slug}/README.md, "
            f"then run: pytest --kata {unfinished.number}",), {}


def _blocked(kata, result):
    """A kata whose tests all wait for other katas (the capstone) while its own file is written:
    "blocked", not "not started"."""
    from ..shipped import stubs_left

    todos = [t for t in result.graded if t.outcome == "todo"]
    waiting = todos and len(todos) == len(result.graded) and all(t.message for t in todos)
    return bool(waiting) and not set(kata.functions) <= set(stubs_left(kata))


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
    if blocked:  # the katas (or, in a course edition, the piece of one) to finish first
        yield blocked
    note = course.table_note(kata)
    if note:
        yield note
    if status == DONE and kata.reference_module:
        yield (f"done: compare with the reference solution in {kata.reference_module}" if has_model_solution(kata)
               else "done: its model solution comes with a later release of the course")
    if result.speed_why:
        yield f"where the time goes: {result.speed_why}"
    failures = [t for t in result.ordered() if t.outcome == "failed"]
    # The first failure is shown in full above the table; each other one once, in one line;
    # tests that fail with the same words (one mistake met everywhere) share one line.
    alike = _alike(failures)
    shown = alike if verbose else alike[: 1 + OTHERS_SHOWN]
    for group in shown:
        count = f" ({len(group)} tests)" if len(group) > 1 else ""
        if group[0] is not failures[0]:
            yield f"also{count}: {group[0].message}"
        elif group[0].printed:  # its message is right above the table: point to it, not again
            yield f"first failure{count}: {SHOWN_ABOVE} ({short_name(group[0].nodeid)})"
        else:  # no failure text above (--tb=no, a process that died): the table is the only place
            yield f"first failure{count}: {group[0].message}"
    hidden = sum(len(group) for group in alike[len(shown):])
    if hidden:
        yield f"(+{hidden} more failing; -v shows every failure in full)"


def short_name(nodeid):
    """A test's name without its file: `test_unary[sigmoid]`."""
    return nodeid.split("::")[-1]


def _alike(failures):
    """The failures grouped by their message (objects' addresses aside), in order; a GPU
    test's failure goes with its CPU twin's (the same check, the same mistake)."""
    groups, twins = {}, {}
    for test in failures:
        message = _ADDRESS.sub("", test.message or "")
        raised = _RAISED.search(message)
        if raised:  # a piece of the learner's that raised: the same error, whatever the scenario
            message = raised.group(0)
        on_gpu = bool(_ON_THE_GPU.search(message))
        twin = (_twin_key(message), not on_gpu)  # a key of the other device's side
        key = message if message in groups else twins.get(twin, message)
        groups.setdefault(key, []).append(test)
        twins.setdefault((twin[0], on_gpu), key)
    return list(groups.values())


# "your mul_backward raised ValueError: not enough values to unpack ...": one mistake met by
# every test that calls the piece, whatever each test was checking
_RAISED = re.compile(r"your \w+ raised \w+: [^\n]*")

# What a GPU test adds to its CPU twin's words ("... on the GPU (cuda): ..." and "(on the
# CPU)" for torch's side), and the numbers, which it prints at its own precision.
_ON_THE_GPU = re.compile(r" on the GPU \(\w+\)| \(on the CPU\)")
_NUMBERS = re.compile(r"\((?:expected|torch gives) .*$|\[[^\]]*\]")


def _twin_key(message):
    return " ".join(_NUMBERS.sub("", _ON_THE_GPU.sub("", message)).split()).rstrip(" …")  # a cut line too
