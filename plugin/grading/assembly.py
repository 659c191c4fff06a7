"""Engine assembly: the reference engine with some of its pieces replaced by a learner's.

For a test of kata K the learner's pieces of K are plugged in and every other piece stays
the reference's, so any kata can be done first. The capstone plugs in every learner piece.
Swapping goes through the engine's seam (reference.pieces), in one process, without
reloading modules.
"""
import contextlib
import importlib
import importlib.util
import sys

import reference
from reference import pieces as seam

from .. import edition, manifest
from ..guards import interrupts, patches, tripwire
from ..guards.time_limit import RanAway, guard_methods
from ..manifest import ALL_KATAS, find_kata, katas, learner_file_paths
from ..shipped import stubs_left
from . import outcomes
from .arguments import leaving_arguments_alone

SOLUTIONS = ("learner", "reference")


class LearnerFileError(Exception):
    """A learner file that cannot be imported, or lacks a piece the kata needs."""


_loaded = {}  # learner file path -> module, or the LearnerFileError it gave


def forget_learner_modules():
    """Import learner files afresh (a new run, or a new checkout in the kit's own tests)."""
    _loaded.clear()
    manifest.forget_learner_file_paths()


def load_learner_module(kata):
    """Import the learner's file of `kata` (once per process)."""
    if kata.path not in _loaded:
        _loaded[kata.path] = _import(kata)
    result = _loaded[kata.path]
    if isinstance(result, LearnerFileError):
        # A fresh exception each time: raising the stored one again would grow its traceback.
        raise LearnerFileError(*result.args)
    return result


def _import(kata):
    module_name = f"learner_{kata.slug}_{kata.path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, kata.path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    before = patches.snapshot()
    try:
        spec.loader.exec_module(module)
    except RanAway as exc:  # an endless loop at import: one time limit for the kata, not one per test
        del sys.modules[module_name]
        return LearnerFileError(f"katas/{kata.slug}/{kata.learner_file} could not be imported: {exc}")
    except KeyboardInterrupt as exc:
        del sys.modules[module_name]
        if interrupts.pressed():
            raise  # a real Ctrl-C stops the run
        return LearnerFileError(
            f"katas/{kata.slug}/{kata.learner_file} could not be imported: "
            f"{interrupts.as_failure(exc, learner_file_paths())}"
        )
    except (Exception, SystemExit) as exc:  # any error in a learner's file is that kata's failure
        del sys.modules[module_name]
        where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        return LearnerFileError(
            f"katas/{kata.slug}/{kata.learner_file} could not be imported{where}: "
            f"{type(exc).__name__}: {exc}"
        )
    finally:
        # Whatever the file patched outside itself is put back, and flagged.
        changed, stuck = patches.undo(before)
        if changed:
            patches.record(kata, changed, stuck)
    return module


def learner_pieces(kata):
    """{piece name: the learner's implementation} for one kata."""
    module = load_learner_module(kata)
    found = {}
    for name in kata.pieces + kata.functions:
        if not hasattr(module, name):
            raise LearnerFileError(
                f"katas/{kata.slug}/{kata.learner_file} has no `{name}`: the kata's tests "
                "look it up by that name (restore it from the stub if it was renamed)"
            )
        found[name] = getattr(module, name)
    return found


def pieces_for(kata, solution, guarded=True):
    """The replacements for a test of `kata`: none on the reference solution; the kata's own
    learner pieces, or every kata's for the capstone. Guarded functions turn a stub's
    NotImplementedError into a to-do at once (see outcomes.guard)."""
    if solution == "reference" or kata is None:
        return {}
    chosen = [k for k in katas() if k.pieces] if kata.whole_engine else [kata]
    paths = learner_file_paths()
    replacements = {}
    for k in chosen:
        for name, piece in learner_pieces(k).items():
            if name in k.pieces:
                tripwire.note_if_reference(name, piece)
                replacements[name] = _guarded(name, piece, paths) if guarded else piece
    return replacements


def _guarded(name, piece, paths):
    """A learner's function wrapped so that its stub is a to-do (see outcomes.guard). Classes
    (SavedTensors, Device) stay the same objects, as the engine instantiates and type-checks
    them; only their methods get the breaker of a runaway piece (see guards/time_limit.py)."""
    if isinstance(piece, type):
        return guard_methods(piece, paths)
    if callable(piece):
        return outcomes.guard(name, piece, paths)
    return piece


def capstone_blockers(kata, last_status):
    """The katas the capstone (`kata`, whole_engine) needs that are not finished, with why:
    a stub left in the learner's file (always known, in any run), an import of torch or the
    reference (flagged), or "in progress" at its last grading (`last_status(k)`: this run's
    result when that kata already ran in this process, else the one remembered in pytest's
    cache). A kata never graded but without stubs is trusted: its pieces run."""
    from ..guards.integrity import import_flags
    from .results import IN_PROGRESS

    blockers = []
    for k in katas():
        if not k.pieces or k.number >= kata.number:
            continue
        if not k.exists():
            blockers.append((k, "learner file missing"))
        elif not _imports(k):
            blockers.append((k, "does not import"))
        elif stubs_left(k):
            blockers.append((k, "stubs left"))
        elif import_flags(k):
            blockers.append((k, "imports torch or the reference"))
        elif last_status(k) == IN_PROGRESS:
            blockers.append((k, "in progress at the last grading"))
    return blockers


def _imports(kata):
    try:
        load_learner_module(kata)
    except LearnerFileError:
        return False
    return True


def blocked_message(blockers):
    """One line: the katas to finish, then why, grouped by reason (a fresh clone has eight
    katas with stubs left; naming each file again would bury the sentence)."""
    numbers = ", ".join(f"{k.number:02d}" for k, _ in blockers)
    by_reason = {}
    for k, reason in blockers:
        by_reason.setdefault(reason, []).append(f"{k.number:02d}")
    why = "; ".join(f"{reason}: {', '.join(ks)}" for reason, ks in by_reason.items())
    return f"the capstone runs on your whole engine: finish katas {numbers} first ({why})"


class KataFunctions:
    """The functions of a kata written on the public API (katas 09 and 10), as attributes:
    `solution.jacobian(f, x)`. The learner's (guarded: a stub is a to-do) or the reference
    solution's (reference/solutions/); `using("reference")` switches for a while (speed)."""

    def __init__(self, kata, solution):
        self._kata = kata
        self._chosen = {"reference": _reference_functions(kata)}
        if solution == "learner":
            paths = learner_file_paths()
            self._chosen["learner"] = {
                name: leaving_arguments_alone(name, _guarded(name, f, paths), name in kata.changes_arguments)
                for name, f in learner_pieces(kata).items() if name in kata.functions
            }
        self._solution = solution

    def __repr__(self):  # shown above a failure among the test's arguments
        kata, solution = self.__dict__.get("_kata"), self.__dict__.get("_solution")
        whose = "your" if solution == "learner" else "the model solution's"
        return f"<{whose} {', '.join(kata.functions) if kata else 'functions'}>"

    def __getattr__(self, name):
        functions = self.__dict__.get("_chosen", {}).get(self.__dict__.get("_solution"), {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"kata {self._kata.slug} has no function {name!r}")

    @contextlib.contextmanager
    def using(self, solution):
        previous, self._solution = self._solution, solution
        try:
            yield self
        finally:
            self._solution = previous


def _reference_functions(kata):
    if not edition.has_model_solution(kata):  # a course edition that has not released it
        return {}
    module = importlib.import_module(f"reference.solutions.{kata.name}")
    return {name: tripwire.original(getattr(module, name)) for name in kata.functions}  # unwired: timed


def stand_ins(guarded=True):
    """{piece name: the learner's own} for the katas whose model solutions this copy of the
    kit does not hold (a course edition, see plugin/edition.py): the engine runs them wherever
    it would run the reference's. A file that does not import stands in with its error."""
    paths = learner_file_paths()
    found = {}
    for k in edition.unreleased():
        if not (k.pieces and k.present()):
            continue
        try:
            pieces = learner_pieces(k)
        except LearnerFileError as exc:
            pieces = {name: _cannot_import(name, k, exc) for name in k.pieces}
        for name in k.pieces:
            found[name] = _guarded(name, pieces[name], paths) if guarded else pieces[name]
    return found


def _cannot_import(name, kata, error):
    def blocked(*args, **kwargs):
        raise outcomes.KataBlocked(f"needs {name} of kata {kata.slug}, and {error}")

    return blocked


def use_stand_ins(guarded=True):
    """Make the learner's pieces of the katas without a model solution the engine's base
    (nothing to do in the kit itself, which holds every model solution)."""
    if edition.is_edition() or seam.standing_in():
        seam.stand_in(stand_ins(guarded))


@contextlib.contextmanager
def engine_for(kata, solution="learner"):
    """Run the engine with the pieces a test of `kata` should use; yields the namespace."""
    use_stand_ins()
    with seam.swapped(pieces_for(kata, solution)):
        yield reference


def assemble(solution="learner", kata=None):
    """The torch-like engine namespace with the chosen solution's pieces active, for use
    outside pytest:

        import plugin
        ag = plugin.assemble("learner")          # every learner piece (like the capstone)
        ag = plugin.assemble("learner", kata=3)  # only kata 03's, reference for the rest
        ag = plugin.assemble("reference")

    The choice stays in force until the next call (the engine has one set of active pieces).
    """
    if solution not in SOLUTIONS:
        raise ValueError(f"solution must be one of {SOLUTIONS}, not {solution!r}")
    if kata is None:
        chosen = next(k for k in ALL_KATAS if k.whole_engine)
    else:
        chosen = find_kata(kata)
        if chosen is None:
            raise ValueError(f"no kata {kata!r}; the katas are: {', '.join(k.slug for k in katas())}")
    # Unguarded: outside pytest a stub should raise its own NotImplementedError.
    replacements = pieces_for(chosen, solution, guarded=False)
    use_stand_ins(guarded=False)
    seam.restore_reference()
    vars(seam.active).update(replacements)
    return reference
