"""Ctrl-C stops the run; a KeyboardInterrupt raised by a learner's code is that test's failure.

pytest stops the whole session on KeyboardInterrupt, whoever raised it, so a piece that
raised one left every later kata "not run". A real Ctrl-C arrives as SIGINT: the plugin
notes that it came (and lets Python raise KeyboardInterrupt as usual); a KeyboardInterrupt
out of a kata test with no SIGINT behind it was raised by code, and becomes a failure.
"""
import signal
import threading
from pathlib import Path

import pytest

from .time_limit import tb_line


class RaisedInterrupt(Exception):
    """A learner's code raised KeyboardInterrupt (no Ctrl-C was pressed)."""


_state = {"sigint": False, "previous": None, "depth": 0}  # depth: runs inside runs (pytester)


def _on_sigint(signum, frame):
    _state["sigint"] = True
    previous = _state["previous"]
    if callable(previous):
        previous(signum, frame)  # Python's own handler raises KeyboardInterrupt
    else:
        raise KeyboardInterrupt


def install():
    """Notice real Ctrl-Cs from now on (main thread only: where Python delivers signals)."""
    _state["sigint"] = False
    if threading.current_thread() is not threading.main_thread():
        return
    _state["depth"] += 1
    if _state["depth"] > 1:
        return  # a run inside a run (the kit's own tests): the outer one installed it
    previous = signal.getsignal(signal.SIGINT)
    if callable(previous) and previous is not _on_sigint:
        _state["previous"] = previous
        signal.signal(signal.SIGINT, _on_sigint)


def uninstall():
    if threading.current_thread() is not threading.main_thread() or _state["depth"] == 0:
        return
    _state["depth"] -= 1
    if _state["depth"] == 0 and _state["previous"] is not None:
        if signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, _state["previous"])
        _state["previous"] = None


def pressed():
    """True once a real Ctrl-C (SIGINT) arrived in this run."""
    return _state["sigint"]


def as_failure(exc, learner_paths):
    """The exception a KeyboardInterrupt raised by code becomes: the sentence names where."""
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename)
        if path.suffix == ".py" and path.resolve() in learner_paths:
            name = tb.tb_frame.f_code.co_name
            where = f" in {name} (katas/{path.parent.name}/{path.name}, line {tb_line(tb)})"
        tb = tb.tb_next
    return RaisedInterrupt(
        f"raised KeyboardInterrupt{where}: that stops pytest itself, so only Ctrl-C should; "
        "raise an ordinary exception instead"
    )


def _convert(item):
    """Turn a KeyboardInterrupt raised by a kata test's code into its failure."""
    from ..manifest import learner_file_paths
    from ..state import KATA_KEY

    try:
        return (yield)
    except KeyboardInterrupt as exc:
        if pressed() or KATA_KEY not in item.stash:
            raise
        raise as_failure(exc, learner_file_paths()) from exc


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _convert(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _convert(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _convert(item))
