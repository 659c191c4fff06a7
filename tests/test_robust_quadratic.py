"""A mistake the lesson itself names never crashes the grader (issue 26, point 1).

Kata 03's lesson warns against a `visited` list. A toposort written that way is quadratic:
the growth check says so, and the 100,000-deep chain would run out of time. Python 3.11
gives a loop's jump back no line number, and the time limit's signal lands there: pytest
could not print that traceback and stopped the whole run with an INTERNALERROR (exit 3, no
table, the other katas never graded). Graded here with pytest's default options (no --tb,
no -x), as a learner runs it.
"""
import dis
import sys
import types

import pytest
from _pytest._code import ExceptionInfo

from kit import VISITED_LIST_TOPOSORT, kata_row, make_checkout, write_learner_file


def test_a_quadratic_toposort_is_graded_with_default_options(pytester):
    make_checkout(pytester, katas=["03_toposort", "04_accumulation"])
    write_learner_file(pytester, "03_toposort", "toposort.py", VISITED_LIST_TOPOSORT)
    result = pytester.runpytest_subprocess("-p", "no:randomly", timeout=600)
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out, out
    assert result.ret == 1, out
    assert kata_row(result, "03_toposort")[1] == "in progress", out
    assert kata_row(result, "04_accumulation")[1] == "not started", out  # graded after it
    assert "looks quadratic" in out or "timed out after" in out, out  # (a very busy machine)
    # The heavy test after the growth check fails at once, with the growth check's sentence.
    assert "not tried again on this heavy test" in out, out


def _looping():
    frame = sys._getframe()
    for index in range(2):
        if index not in ():
            pass
    return frame


def test_a_traceback_entry_without_a_line_is_printed():
    """A time limit that fires on an instruction without a line (a loop's jump back, in
    Python 3.11) leaves such an entry; pytest's traceback could not print it."""
    code = _looping.__code__
    jumps = [i.offset for i in dis.get_instructions(code) if i.opname.startswith("JUMP") and i.positions.lineno is None]
    frame = _looping()
    entry = types.TracebackType(None, frame, jumps[0], -1) if jumps else None
    if entry is None or entry.tb_lineno is not None:
        pytest.skip("this Python gives every instruction of the loop a line")
    error = RuntimeError("interrupted in a loop")
    error.__traceback__ = entry
    excinfo = ExceptionInfo.from_exception(error)
    from plugin.grading.outcomes import give_every_frame_a_line

    give_every_frame_a_line(excinfo)
    text = str(excinfo.getrepr(style="long"))
    assert "if index not in ()" in text or "for index in range(2)" in text, text
