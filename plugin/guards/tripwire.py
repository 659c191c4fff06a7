"""Delegation caught at run time: while a kata is graded on the learner's pieces, the
reference implementation of that kata's own pieces must never run from them.

For the time of a test on the learner's pieces, each reference function of the kata under
test (every piece for the capstone) is replaced, in the seam's table `REFERENCE` and in
`active`, by a wire: a wrapper that runs the reference function and, when the learner's
piece of that name is the active one, notes that the learner's code reached the reference's
own piece (through `ag.pieces.REFERENCE[...]`, or an `active` piece kept from before the
swap). The kit's own tests and its speed checks, which swap the reference pieces in on
purpose, make the wire the active piece, so they trip nothing.

Classes (SavedTensors, Device) are not wired: the engine instantiates and type-checks them.
A learner file is imported during its kata's first test, wires in place, so a reference
piece it keeps at import time is a wire too.
"""
import contextlib
import functools

from reference import pieces as seam

_tripped = []  # piece names the learner's code reached, since the last take()


def take():
    """The piece names reached since the last call (each once, in order), and forget them."""
    names = list(dict.fromkeys(_tripped))
    _tripped.clear()
    return names


def _wire(name, original):
    @functools.wraps(original)
    def wire(*args, **kwargs):
        current = getattr(seam.active, name, None)
        if current is not wire and current is not original:  # the learner's piece is active
            _tripped.append(name)
        return original(*args, **kwargs)

    return wire


_wires = {}  # piece name -> its wire (made once: a learner module may keep one)


@contextlib.contextmanager
def armed(kata, solution):
    """Wire the reference pieces of `kata` (every piece for the capstone) while a test runs
    on the learner's pieces; nothing on the reference solution."""
    if solution != "learner" or kata is None:
        yield
        return
    names = list(seam.REFERENCE) if kata.whole_engine else list(kata.pieces)
    originals = {}
    for name in names:
        original = seam.REFERENCE.get(name)
        if original is None or isinstance(original, type) or not callable(original):
            continue
        wire = _wires.get(name)
        if wire is None or wire.__wrapped__ is not original:
            wire = _wires[name] = _wire(name, original)
        originals[name] = original
        seam.REFERENCE[name] = wire
        if getattr(seam.active, name, None) is original:
            setattr(seam.active, name, wire)
    try:
        yield
    finally:
        for name, original in originals.items():
            seam.REFERENCE[name] = original
            if getattr(seam.active, name, None) is _wires[name]:
                setattr(seam.active, name, original)


def unwired(names):
    """{name: the reference piece itself} for `names`, wired or not: what the speed checks
    time against (a wire would add its own cost to the reference's time)."""
    found = {}
    for name in names:
        piece = seam.REFERENCE[name]
        found[name] = piece.__wrapped__ if _wires.get(name) is piece else piece
    return found


def flag(name):
    """The integrity flag of a kata whose learner code ran the reference's own piece."""
    return f"runs the reference's own {name} (through the engine's pieces)"
