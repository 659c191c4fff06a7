"""Grading in a course edition: the learner's own pieces where a model solution is not released.

A course edition (plugin/edition.py) holds the model solutions of the katas its course has
released only. For the others the engine runs the learner's own pieces wherever it would have
run the reference's (assembly.stand_ins), so a test that reaches such a piece while it is
still a stub is blocked, with a sentence naming the piece; speed, memory and transfer
comparisons with a model solution that is not there give way to the autograder's, which
grades with the full kit.
"""
from pathlib import Path

import pytest

from reference.pieces import NotInThisEdition

from .. import edition
from ..manifest import kata_for_path
from ..state import KATA_KEY
from .outcomes import KataBlocked, StubReached
from .speed import compared_by_the_autograder

@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    if not edition.is_edition():
        return (yield)
    kata = pyfuncitem.stash.get(KATA_KEY, None)
    try:
        return (yield)
    except NotInThisEdition:
        if kata is None:
            raise
        compared_by_the_autograder(pyfuncitem._request, kata, "compared")
    except (Exception, StubReached) as exc:
        sentence = None if isinstance(exc, KataBlocked) else blocked_by(exc, kata)
        if sentence is None:
            raise
        raise KataBlocked(sentence) from exc


def blocked_by(exc, kata):
    """The sentence for a test of `kata` that stopped at the stub of another kata's piece,
    one whose model solution this edition does not hold (the stub's NotImplementedError, or
    what it became: a guard's StubReached, the oracle's mismatch with torch); None for any
    other stop."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        sentence = _stub_of_another_kata(exc, kata)
        if sentence:
            return sentence
        exc = exc.__cause__ or exc.__context__
    return None


def _stub_of_another_kata(exc, kata):
    if not isinstance(exc, NotImplementedError) or exc.__traceback__ is None:
        return None
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    owner = kata_for_path(Path(code.co_filename))
    if owner is None or owner == kata or edition.has_model_solution(owner):
        return None
    piece = getattr(code, "co_qualname", code.co_name)
    return (f"blocked: needs {piece} of kata {owner.slug} (katas/{owner.slug}/{owner.learner_file}), "
            f"which is not written yet: this edition has not released that kata's model solution, "
            f"so the engine runs your own")


def table_note(kata):
    """The table's line for a kata graded in an edition: whose pieces the engine ran where a
    model solution is not released ("" in the kit itself, and for the capstone, which runs
    every learner piece anyway)."""
    if kata.whole_engine:
        return ""
    others = [k for k in edition.unreleased() if k.pieces and k != kata and k.present()]
    if not others:
        return ""
    numbers = ", ".join(f"{k.number:02d}" for k in others)
    return f"graded with your own pieces of katas {numbers} (their model solutions are not released yet)"
