"""Which katas a run grades in full: a kata is done only when every graded test of it ran
and passed in that run. Speed tests (the `speed` fixture, files test_*speed*.py) only
measure: a run without them (`-k "not speed"`) still grades the whole kata; the grading
leaves them out of what it compares.

A run may select part of a kata's tests: `-k`, `-m`, `--deselect`, `--lf` (which drops
tests while collecting, so it is recognised by its option), a test file or a node id on the
command line. The grading hooks see every
item a kata's files hold before any plugin deselects one, and the items left after; a kata
with fewer left is partial. A run that stops early (`-x`, `--maxfail`) leaves some selected
tests unrun: results.KataResult.partial tells that from the count.
"""
from pathlib import Path

from ..shipped import graded_files


def why_partial(kata, collected, chosen, args, last_failed_only=False):
    """Why the run grades only part of `kata`'s tests ("" when it grades them all):
    `collected` are the kata's graded items before deselection, `chosen` those that run,
    `args` the paths and node ids of the command line; `last_failed_only` when --lf is in
    force (it drops the tests that passed last time before any hook sees them)."""
    if any(_names_a_test_in(arg, kata) for arg in args):
        return "partial run: only the tests named on the command line"
    if last_failed_only:  # --lf drops the other tests while collecting: no count to compare
        return "partial run: only the tests that failed last time (--lf)"
    files = {Path(item.path).resolve() for item in collected}
    shipped = [path.resolve() for name, path in graded_files(kata).items()
               if name.startswith("test_") and "speed" not in name]  # speed files only measure
    if any(path not in files for path in shipped):
        return "partial run: not every test file of the kata was collected"
    if len(chosen) < len(collected):
        return f"partial run: {len(chosen)} of its {len(collected)} tests selected (-k, -m, --deselect, --lf)"
    return ""


def _names_a_test_in(arg, kata):
    """True for a node id (`path::name`) of a test in the kata's folder."""
    path, _, rest = str(arg).partition("::")
    if not rest:
        return False
    folder = kata.folder.resolve()
    path = Path(path).resolve()
    return path == folder or folder in path.parents


def missing_file(kata):
    """What a kata whose learner file was renamed or deleted says, with the way back."""
    return (f"learner file missing: katas/{kata.slug}/{kata.learner_file} (renamed or deleted?); "
            f"rename yours back, or restore the stub with: {kata.restore_command}")
