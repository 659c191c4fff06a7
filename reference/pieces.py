"""The seam between the engine and its replaceable pieces.

Every kata piece (a backward rule, the topological sort, gradient accumulation, ...) is called
by the engine through the one object `active`, never imported directly. The plugin swaps
pieces for a learner's with `swapped({...})`; everything else keeps running the reference.
No module is reloaded, so a mix of learner and reference pieces runs in one process.
"""
import contextlib
import importlib
import importlib.util

# The modules that hold each kata's pieces: the model solutions of katas 01-08, and
# `extra_rules`, the backward rules no kata asks for (sqrt, softmax, ...), which go through
# the seam too.
PIECE_MODULES = (
    "solutions.rules",
    "solutions.shapes",
    "extra_rules",
    "solutions.toposort",
    "solutions.accumulate",
    "solutions.seeding",
    "solutions.backward_pass",
    "solutions.saved",
    "solutions.devices",
)


class NotInThisEdition(AttributeError, KeyError):
    """A piece whose model solution this copy of the kit does not hold (a course edition that
    has not released its kata), asked for where no learner's piece stands in for it."""


def _absent(name):
    return NotInThisEdition(
        f"the engine's piece `{name}` has no model solution in this copy of the kit (a course "
        "edition): the grader runs your own (pytest, or plugin.assemble('learner'))"
    )


class ActivePieces:
    """One attribute per piece name: the implementation the engine calls right now."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _absent(name)

    def __repr__(self):
        return f"<active pieces: {', '.join(sorted(vars(self)))}>"


class _Reference(dict):
    """name -> the reference implementation; a name whose model solution is absent says so."""

    def __missing__(self, name):
        raise _absent(name)


active = ActivePieces()

# name -> the reference implementation, filled by load_reference().
REFERENCE = _Reference()
# name -> what runs in place of a piece whose model solution is absent (a course edition):
# the learner's own, set by the plugin (`stand_in`). The engine uses it wherever it would
# have used the reference.
_stand_ins = {}


def load_reference():
    """Read each piece module's __all__ and make the reference pieces active. A course
    edition holds only the model solutions it has released: a module that is not there is
    passed over (its pieces come from the learner, see stand_in)."""
    for module_name in PIECE_MODULES:
        full_name = f"{__package__}.{module_name}"
        if importlib.util.find_spec(full_name) is None:
            continue
        module = importlib.import_module(full_name)
        for name in module.__all__:
            REFERENCE[name] = getattr(module, name)
    restore_reference()


def restore_reference():
    vars(active).clear()
    vars(active).update(REFERENCE)
    vars(active).update(_stand_ins)


def standing_in():
    """{name: what stands in} (see stand_in): empty in the kit itself."""
    return dict(_stand_ins)


def stand_in(pieces):
    """Run `pieces` ({name: implementation}) wherever the engine would run the reference's:
    in a course edition, the learner's own pieces of the katas not released yet. Replaces the
    stand-ins set before; `stand_in({})` forgets them."""
    _stand_ins.clear()
    _stand_ins.update(pieces)
    restore_reference()


@contextlib.contextmanager
def swapped(replacements):
    """Run the engine with some pieces replaced: `with swapped({"mul_backward": mine}): ...`.

    Names that are not pieces are refused, so a typo cannot silently grade the reference.
    """
    unknown = sorted(set(replacements) - set(REFERENCE) - set(_stand_ins))
    if unknown:
        raise KeyError(f"not engine pieces: {', '.join(unknown)}")
    previous = dict(vars(active))
    vars(active).update(replacements)
    try:
        yield active
    finally:
        vars(active).clear()
        vars(active).update(previous)
