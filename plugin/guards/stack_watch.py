"""Learner code that looks at the call stack while the kit times it: noted.

A piece that recognises the timing harness on the stack (its frames, its function names) can
take a fast path only there, and earn a speed or growth verdict that its real work would
not. While a learner's piece is timed (grading/speed.py), an audit hook notes each look at
the stack that learner code makes: `sys._getframe` (`inspect.currentframe`, `inspect.stack`,
`traceback.extract_stack` go through it), `sys._current_frames`, and the frame of a
traceback, generator or coroutine. Such a verdict is not given; the kata is flagged.

The hook (sys.addaudithook: it cannot be removed) is added once per process, the first time
a piece is timed, and does nothing while nothing is timed. Python's own warnings and logging
look at the stack too: only a look made by a learner file, directly or through `inspect` or
`traceback`, counts.
"""
import contextlib
import sys
from pathlib import Path

_EVENTS = ("sys._getframe", "sys._current_frames")
_FRAMES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back")  # object.__getattr__'s names
_HELPERS = ("inspect.py", "traceback.py")  # stdlib modules that look on the caller's behalf
_state = {"added": False, "watching": False, "inside": False, "learner_paths": frozenset()}
_seen = []


def _hook(event, args):
    if not _state["watching"] or _state["inside"]:
        return
    if event in _EVENTS:
        what = event
    elif event == "object.__getattr__" and len(args) > 1 and args[1] in _FRAMES:
        what = f"the {args[1]} of a frame"
    else:
        return
    _state["inside"] = True  # sys._getframe below raises its own event
    try:
        frame = sys._getframe(1)
        while frame is not None and Path(frame.f_code.co_filename).name in _HELPERS:
            frame = frame.f_back
        if frame is not None and frame.f_code.co_filename.endswith(".py") and \
                Path(frame.f_code.co_filename).resolve() in _state["learner_paths"]:
            _seen.append(what)
    finally:
        _state["inside"] = False


@contextlib.contextmanager
def watching(learner_paths):
    """Note the looks at the stack that learner code makes inside the block."""
    if not _state["added"]:
        sys.addaudithook(_hook)
        _state["added"] = True
    _state["learner_paths"], _state["watching"] = frozenset(learner_paths), True
    try:
        yield
    finally:
        _state["watching"] = False


def take():
    """What learner code looked at while watched (each kind once), and forget it."""
    seen = list(dict.fromkeys(_seen))
    _seen.clear()
    return seen


def flag(seen):
    return (f"looks at the call stack while it is timed ({', '.join(seen)}): its speed is not measured, "
            "since a piece that knows it is timed can behave otherwise")
