"""The seam between the engine and its replaceable pieces.

Every kata piece (a backward rule, the topological sort, gradient accumulation, ...) is called
by the engine through the one object `active`, never imported directly. The plugin swaps
pieces for a learner's with `swapped({...})`; everything else keeps running the reference.
No module is reloaded, so a mix of learner and reference pieces runs in one process.
"""
import contextlib
import importlib

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


class ActivePieces:
    """One attribute per piece name: the implementation the engine calls right now."""

    def __repr__(self):
        return f"<active pieces: {', '.join(sorted(vars(self)))}>"


active = ActivePieces()

# name -> the reference implementation, filled by load_reference().
REFERENCE = {}


def load_reference():
    """Read each piece module's __all__ and make the reference pieces active."""
    for module_name in PIECE_MODULES:
        module = importlib.import_module(f"{__package__}.{module_name}")
        for name in module.__all__:
            REFERENCE[name] = getattr(module, name)
    restore_reference()


def restore_reference():
    vars(active).clear()
    vars(active).update(REFERENCE)


@contextlib.contextmanager
def swapped(replacements):
    """Run the engine with some pieces replaced: `with swapped({"mul_backward": mine}): ...`.

    Names that are not pieces are refused, so a typo cannot silently grade the reference.
    """
    unknown = sorted(set(replacements) - set(REFERENCE))
    if unknown:
        raise KeyError(f"not engine pieces: {', '.join(unknown)}")
    previous = dict(vars(active))
    vars(active).update(replacements)
    try:
        yield active
    finally:
        vars(active).clear()
        vars(active).update(previous)
