"""A kata's fuzz test: random programs on the engine with the learner's pieces and on torch.

Each kata of pieces (01-08) draws its programs from a vocabulary aimed at its pieces
(focus.py). Programs come from a fixed seed per kata, so a learner's file gets the same
verdict every run. Each program runs on torch and on the engine as the test assembled it
(the learner's pieces of the kata, the model solutions for the rest), and everything a user
can see is compared after every step (api.py). A program that parts from torch is run again
on the model solutions alone: where they part from torch the same way, the difference is the
engine's, not the learner's, and the program is passed over. A learner's divergence is then
cut down to the fewest steps that still show it, and each of the kata's pieces is put back to
the model solution's, one at a time, to name the piece at fault.

Katas 09 and 10 (functions on the public API) are compared with torch.autograd.functional
and a torch version of the capstone's functions instead (functional.py).

`AUTOGRAD_KATAS_FUZZ=long` searches afresh, with new seeds, until
`AUTOGRAD_KATAS_FUZZ_MINUTES` (default 5) have passed, and reports the first divergence.
"""
import os
import random
import re
import time

import pytest
import torch  # the fuzz test runs once the kata's other tests passed: torch is loaded by then
import reference
from reference import pieces as seam

from . import focus
from .api import Engine, differences

LONG = "AUTOGRAD_KATAS_FUZZ"
MINUTES = "AUTOGRAD_KATAS_FUZZ_MINUTES"
MIN_STEPS, MAX_STEPS = 4, 12
# Cutting a failing program down: passes over its steps, a count rather than seconds, so
# that a learner sees the same program on a busy machine as on an idle one.
SHRINK_PASSES = 3
HEADER = "import torch as lib  # or: from plugin import engine as lib  (\"cuda\": a GPU for torch)"


def is_long():
    return os.environ.get(LONG) == "long"


class Incomparable(Exception):
    """The program cannot be compared past this step (see _compare_step)."""


class Divergence(Exception):
    """The learner's engine parted from torch (where the model solutions do not)."""

    def __init__(self, program, lines):
        super().__init__("\n".join(lines))
        self.program = list(program)
        self.lines = lines


def first_difference(program):
    """(index of the first step after which the engine and torch differ, the differences),
    or None when they agree all along. Runs on the pieces active now."""
    theirs, mine = _engines()
    for index, step in enumerate(program):
        try:
            found = _compare_step(theirs, mine, step)
        except Incomparable:
            return None
        if found:
            return index, found
    return None


def _engines():
    """torch's run and the learner's engine's, comparing zeros without their signs: the kit's
    own fuzzer holds the reference to torch's -0.0, but a learner's right formula may give
    +0.0 where torch's gives -0.0 (0 - g for -g)."""
    theirs, mine = Engine(torch, symbolic_devices=True), Engine(reference, symbolic_devices=False)
    theirs.zero_signs = mine.zero_signs = False
    return theirs, mine


def _compare_step(theirs, mine, step):
    their_run, my_run = theirs.run(step), mine.run(step)
    their_error = their_run["error"] or ("", "")
    if getattr(step, "lenient", False) and their_error[1] == "unsupported operation" and my_run["error"] is None:
        # A gradient changed in place where torch refuses (its gradient is an expand whose
        # elements share memory) and the learner's engine allows it (a tensor of its own):
        # torch's refusal is how it stores the gradient, not a rule; a learner's refusal where
        # torch allows it (mean's gradient) is a program that breaks, and is compared.
        raise Incomparable
    found = differences(their_run, my_run)
    try:
        return found + differences(theirs.observe(), mine.observe())
    except Exception as error:  # a learner's piece left something that cannot be looked at
        return found + [f"looking at the variables: {type(error).__name__}: {error}"]


def on_model_solutions():
    """The engine with every piece the model solution's (as the seam holds them now)."""
    return seam.swapped(dict(seam.REFERENCE))


def learners_fault(program, found):
    """Whether a difference `found` = (index, lines) is the learner's: the model solutions
    do not show it (they agree with torch up to that step, or differ there in other things;
    the same thing differing in another way is the engine's too: torch's node name there is
    one the engine never gives)."""
    with on_model_solutions():
        theirs = first_difference(program[: found[0] + 1])
    return theirs is None or theirs[0] == found[0] and not _where(found[1]) <= _where(theirs[1])


def _where(lines):
    """What differs, without how: `x.grad.values` of `x.grad.values: torch ..., reference ...`."""
    return {line.split(": torch ")[0] for line in lines}


def run_program(kata_number, program_seed):
    """Draw and run one program step by step: a Divergence at the first step where the
    learner's engine parts from torch and the model solutions do not, else None."""
    theirs, mine = _engines()
    builder = focus.program_builder(kata_number, theirs, program_seed)
    program = []
    for _ in range(builder.integer(MIN_STEPS, MAX_STEPS)):
        step = builder.next_step()
        program.append(step)
        try:
            found = _compare_step(theirs, mine, step)
        except Incomparable:
            return None
        if found:
            if learners_fault(program, (len(program) - 1, found)):
                return Divergence(program, found)
            return None  # the engine's own difference from torch (docs/known-differences.md)
    return None


def search(kata_number, count, run_seed, deadline=None):
    """The first Divergence among `count` programs drawn from `run_seed` (or those drawn
    before `deadline`), with the seed of its program; None when there is none."""
    seeds = random.Random(run_seed)
    for _ in range(count):
        program_seed = seeds.getrandbits(32)
        divergence = run_program(kata_number, program_seed)
        if divergence is not None:
            divergence.seed = program_seed
            return divergence
        if deadline is not None and time.monotonic() > deadline:
            break
    return None


def shrink(program, passes=SHRINK_PASSES):
    """The program cut down, one step at a time, while the learner's divergence remains
    (at most `passes` passes over its steps)."""

    def fails(steps):
        found = first_difference(steps)
        return found is not None and learners_fault(steps, found) and found

    found = fails(program)
    if not found:  # the learner's piece does not part from torch the same way every time
        return list(program), None
    steps = list(program[: found[0] + 1])
    changed = True
    while changed and passes > 0:
        changed, passes = False, passes - 1
        for i in reversed(range(len(steps) - 1)):  # the last step shows the difference: kept
            candidate = steps[:i] + steps[i + 1:]
            if fails(candidate):
                steps, changed = candidate, True
    found = fails(steps)
    return (steps, found[1]) if found else (list(program), None)


def pieces_to_blame(kata, program):
    """The kata's pieces each of which, put back to the model solution's, makes the program
    agree with torch."""
    blamed = []
    for name in kata.pieces:
        with seam.swapped({name: seam.REFERENCE[name]}):
            if first_difference(program) is None:
                blamed.append(name)
    return blamed


def said_once(lines):
    """The differences that the ones beside them do not already explain: where one side raised
    and the other did not, the step did not run on one side, so the state it left differs
    too (only the error is said); a key that one side lacks (torch's non-leaf has no .grad)
    follows from another line about the same tensor."""
    errors = [line for line in lines if line.startswith("error:")]
    if errors and re.search(r"^error: torch None,|, reference None$", errors[0]):
        return errors
    explained = {line.split(".", 1)[0] for line in lines if "'(absent)'" not in line}
    return [line for line in lines if "'(absent)'" not in line or line.split(".", 1)[0] not in explained]


def failure_message(kata, program, lines, blamed, where):
    code = "\n".join("    " + line for step in program for line in step.code.splitlines())
    lines = said_once(lines)
    shown = [re.sub(r", reference ", ", yours ", line) for line in lines[:8]]
    if len(lines) > 8:
        shown.append(f"(and {len(lines) - 8} more)")
    if len(blamed) == 1:
        blame = (f"The piece at fault: `{blamed[0]}` (with the model solution's `{blamed[0]}` in its "
                 "place, this program gives torch's answers).")
    elif blamed:
        blame = ("Putting back any one of these model pieces makes it agree: "
                 + ", ".join(f"`{b}`" for b in blamed) + ".")
    else:
        blame = (f"No single piece of kata {kata.slug} explains it alone: more than one of them "
                 "parts from the model solution here.")
    return (
        f"a random program for kata {kata.slug} ({where}) gives a different result from torch "
        "after its last line; the model solutions give torch's:\n\n"
        f"    {HEADER}\n{code}\n\n  after the last line:\n"
        + "\n".join("    " + line for line in shown)
        + f"\n\n{blame}\nPaste the program into a file and run it on both engines to see it for yourself."
    )


def seeds_and_counts(kata):
    """(seed, programs) for each search of the run: the kata's fixed seed, or fresh seeds
    without end in the long mode."""
    if not is_long():
        yield 2500 + kata.number, focus.PROGRAMS[kata.number]
        return
    while True:
        yield random.randrange(2**32), 200


def check_pieces(kata):
    """The fuzz test of a kata of pieces: fails with the shrunk program, both engines'
    results and the piece at fault, at the first divergence that is the learner's."""
    stop = time.monotonic() + 60 * float(os.environ.get(MINUTES, "5"))
    tried = 0
    for run_seed, count in seeds_and_counts(kata):
        divergence = search(kata.number, count, run_seed, stop if is_long() else None)
        tried += count
        if divergence is not None:
            program, lines = shrink(divergence.program)
            lines = lines or divergence.lines
            where = f"program seed {divergence.seed}" + (", the long search" if is_long() else "")
            pytest.fail(failure_message(kata, program, lines, pieces_to_blame(kata, program), where),
                        pytrace=False)
        if not is_long() or time.monotonic() > stop:
            break
    if is_long():
        print(f"\nkata {kata.slug}: {tried} random programs, no divergence")


class KataFuzz:
    """What the `fuzz` fixture gives a kata's fuzz test: `check()` runs the kata's programs
    (katas 01-08) or comparisons (09, 10) on the engine the test assembled."""

    def __init__(self, kata, solution):
        self.kata = kata
        self.solution = solution

    def check(self, functions=None):
        """Katas 01-08: programs on the kata's pieces. Katas 09 and 10: cases of `functions`
        (the test's `solution` fixture)."""
        if self.kata.pieces:
            if self.solution == "reference":
                return  # every piece the model solution's: any difference would be the engine's own
            check_pieces(self.kata)
        else:
            from .functional import check_functions

            check_functions(self.kata, functions)
