"""Python's cycle collector rests while a kata test runs.

A 100,000-node graph is some 700,000 Python objects, and while a test builds one the
collector walks all of them again and again: most of the time of the deep-chain tests goes
there. The engine frees its graphs by reference counting (it makes no cycles), and whatever a
learner's code leaves in cycles is collected once the collector runs again after the test.
So one kata's feedback does not wait on the collector, and a learner's time limit is spent
on their own code.

Once the tests are collected, what is alive then (torch, numpy, hypothesis, pytest, the test
modules: some 200,000 objects that live as long as the process) is moved out of the
collector's sight (`gc.freeze()`): each full collection afterwards (between tests, the timer's,
the five that pytest runs at exit to find unraisable exceptions) walks only what the tests
made, not the libraries again, about 0.1 s each on this machine. Once per process: a pytester
run inside another run leaves the outer process as it was.

torch is not imported by then: the oracle imports it for the first test that reaches torch's
side (a fresh clone's tests, which all stop at a stub, never do). Its 150,000 objects join
the frozen ones after that test, once what the test left has been collected.
"""
import gc
import sys

import pytest


class paused:
    """`with paused():` the cycle collector rests, and is as it was afterwards."""

    def __enter__(self):
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info):
        if self._was_enabled:
            gc.enable()


_frozen = False  # the first run of this process froze what it had collected
_torch_frozen = False  # ... and torch, once a test had imported it


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    global _frozen, _torch_frozen
    if not _frozen:
        _frozen = True
        _torch_frozen = "torch" in sys.modules
        gc.freeze()


def pytest_runtest_logfinish(nodeid, location):
    global _torch_frozen
    if _frozen and not _torch_frozen and "torch" in sys.modules:
        _torch_frozen = True
        gc.collect()  # (once: what the tests left so far is not kept for good)
        gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    from ..state import KATA_KEY  # here: grading imports speed, which imports this module

    if KATA_KEY not in item.stash:
        return (yield)
    with paused():
        return (yield)
