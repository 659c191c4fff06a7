"""A kata test's random cases (hypothesis): a failing case costs the time of the case, not
of its traceback.

While hypothesis shrinks a failure, it keeps a printed traceback of every failing case it
tries (it shows one only if the failure does not come back when replayed), and inside pytest
it prints each with pytest's own failure formatting, which parses the source file of every
frame again: some 25 ms a case, over 10 cases a failing test, most of a learner's wait on a
kata in progress. During a kata test hypothesis does not see the pytest item, so it prints
them with Python's traceback module instead. The cases it tries, the example it shrinks to
and the failure pytest shows are the same.
"""
import contextlib

import pytest


def _unseen_item():
    try:
        from hypothesis.internal.escalation import current_pytest_item
    except ImportError:  # another hypothesis: its default
        return contextlib.nullcontext()
    return current_pytest_item.with_value(None)


@pytest.hookimpl(wrapper=True, trylast=True)  # inside hypothesis's own wrapper, which sets it
def pytest_runtest_call(item):
    from ..state import KATA_KEY

    if KATA_KEY not in item.stash:
        return (yield)
    with _unseen_item():
        return (yield)
