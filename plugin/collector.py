"""Python's cycle collector rests while a kata test runs.

A 100,000-node graph is some 700,000 Python objects, and while a test builds one the
collector walks all of them again and again: most of the time of the deep-chain tests goes
there. The engine frees its graphs by reference counting (it makes no cycles), and whatever a
learner's code leaves in cycles is collected once the collector runs again after the test.
So one kata's feedback does not wait on the collector, and a learner's time limit is spent
on their own code.
"""
import gc

import pytest


class paused:
    """`with paused():` the cycle collector rests, and is as it was afterwards."""

    def __enter__(self):
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info):
        if self._was_enabled:
            gc.enable()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    from .grading import KATA_KEY  # here: grading imports speed, which imports this module

    if KATA_KEY not in item.stash:
        return (yield)
    with paused():
        return (yield)
