"""A learner's piece that runs away (loops forever): the time limit of a kata test.

pytest-timeout's own handler fails a test once, with pytest's `Failed`; hypothesis takes
that for an ordinary failure and replays the example to shrink it, with no timer left, so
one endless loop hung the whole run. For kata tests the plugin sets the timer itself
(through pytest-timeout's hooks, so `--kata-timeout` and `@pytest.mark.timeout` still
decide the limit) and raises RanAway: a skip-type outcome, like StubReached, which
hypothesis lets through at once; the grader reports it as the test's failure.

A breaker per piece: the piece that was running when the time ran out is remembered, and
later calls into it in the same run fail at once with the same sentence instead of each
waiting for the time limit again. A kata whose piece ran away, or was found quadratic by a
growth check, fails its heavy tests (marked `heavy`: a 100,000-node graph) at once too, with
that sentence: such a piece would only spend the whole time limit on each of them.
"""
import contextlib
import dis
import functools
import signal
import threading
import time
import types
from pathlib import Path

import pytest
from _pytest.outcomes import Skipped


class RanAway(Skipped):
    """A kata test ran past its time limit. A skip-type outcome, so that hypothesis stops
    at once (it would replay a failing example forever); the grader turns it into a failure."""


# --- the breaker: pieces that ran away in this process ------------------------------------------

TRIPPED = {}  # piece key (its file, its name) -> the sentence its runaway call got
RUNNING = []  # keys of the learner pieces running now, innermost last
SLOW = {}  # kata slug -> the growth verdict that found its piece quadratic


def forget():
    """A new run (or a new checkout in the kit's own tests) starts with no piece tripped."""
    TRIPPED.clear()
    RUNNING.clear()
    SLOW.clear()


def found_slow(kata, sentence):
    """A growth check found `kata`'s piece quadratic: its heavy tests fail at once from now on."""
    SLOW.setdefault(kata.slug, sentence)


def known_slow(kata, learner_paths):
    """The sentence that already condemned `kata`'s pieces in this run (quadratic, or a piece
    of its learner files that ran away; any learner file for the capstone), or None."""
    if kata.slug in SLOW:
        return SLOW[kata.slug]
    files = learner_paths if kata.whole_engine else {kata.path.resolve()}
    return next((sentence for (filename, _), sentence in TRIPPED.items()
                 if filename and Path(filename).resolve() in files), None)


HEAVY = "heavy"  # the marker of a kata test on a graph too big for a quadratic piece


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A heavy test of a kata already condemned in this run fails at once, with the sentence."""
    from ..manifest import learner_file_paths
    from ..state import KATA_KEY

    kata = pyfuncitem.stash.get(KATA_KEY, None)
    if kata is None or pyfuncitem.get_closest_marker(HEAVY) is None:
        return None
    sentence = known_slow(kata, learner_file_paths())
    if sentence is not None:
        raise RanAway(f"{sentence} (found earlier in this run: not tried again on this heavy test)")
    return None


def with_breaker(function, key):
    """`function` (a learner's piece or method) refusing at once when it ran away before,
    and telling the timer that it runs. Kept cheap: rules run once per node."""

    @functools.wraps(function)
    def breaker(*args, **kwargs):
        if key in TRIPPED:
            raise RanAway(TRIPPED[key])
        RUNNING.append(key)
        try:
            return function(*args, **kwargs)
        finally:
            RUNNING.pop()

    breaker._kata_breaker = True
    return breaker


def guard_methods(cls, learner_paths):
    """The breaker for a learner's class (SavedTensors, Device): each method written in a
    learner file is wrapped in place, once, so that a method that ran away fails at once
    afterwards. The class itself stays the same object (the engine type-checks it)."""
    for name, method in list(vars(cls).items()):
        if not isinstance(method, types.FunctionType) or getattr(method, "_kata_breaker", False):
            continue
        if Path(method.__code__.co_filename).resolve() not in learner_paths:
            continue
        setattr(cls, name, with_breaker(method, (method.__code__.co_filename, f"{cls.__name__}.{name}")))
    return cls


# --- where a frame is ---------------------------------------------------------------------------

def line_of(code, lasti):
    """The source line of the instruction at offset `lasti` of `code`. Python 3.11 gives some
    instructions no line of their own (a loop's jump back: where a timer's signal lands in a
    tight loop); they get the line of the nearest instruction before them."""
    line = None
    for offset, start in dis.findlinestarts(code):
        if offset > lasti:
            break
        if start is not None:
            line = start
    return line if line is not None else code.co_firstlineno


def frame_line(frame):
    """The line a frame is at (never None, see line_of)."""
    return frame.f_lineno if frame.f_lineno is not None else line_of(frame.f_code, frame.f_lasti)


def tb_line(tb):
    """The line of a traceback entry (never None, see line_of)."""
    return tb.tb_lineno if tb.tb_lineno is not None else line_of(tb.tb_frame.f_code, tb.tb_lasti)


def with_lines(tb):
    """`tb` itself when each of its entries has a line, else a copy in which each has one
    (see line_of): pytest cannot print an entry without a line, and stopped the whole run
    with an internal error when the timer fired in a tight loop."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if all(entry.tb_lineno is not None for entry in entries):
        return entries[0] if entries else None
    mended = None
    for entry in reversed(entries):
        mended = types.TracebackType(mended, entry.tb_frame, entry.tb_lasti, tb_line(entry))
    return mended


# --- the timer -------------------------------------------------------------------------------

class _Timer:
    """The time limit of one kata test, by SIGALRM, checked every `tick` once it is due.

    When the limit is reached while the learner's code runs (it is on the stack), the test
    fails at once. Otherwise the engine, torch or hypothesis is busy (a slow machine, not a
    loop): the test gets until twice the limit, and fails as soon as the learner's code
    runs again. Time spent importing a module other than the learner's (torch imports
    parts of itself on first use) is not counted, and no module is interrupted while it
    imports: a half-imported module would break every later test; nor is the time the kit
    spends on its own work inside a test (`not_counted`: the fresh workloads a speed or
    growth check builds, the reference's timed side), though a piece that runs away in it is caught all the same. After
    the first RanAway,
    every tick that finds the learner's code still running raises again, so a bare
    `except:` that swallowed it does not keep the test going."""

    def __init__(self, item, timeout, learner_paths):
        self.item = item
        self.timeout = timeout
        self.learner_paths = learner_paths
        self.sentence = None  # set when the time ran out
        self.tick = min(max(timeout / 4, 0.05), 1.0)
        self.deadline = 0.0  # for code other than the learner's
        self.learner_deadline = 0.0  # for the learner's code
        self.previous = None

    def start(self):
        self.previous = signal.signal(signal.SIGALRM, self._on_alarm)
        self.learner_deadline = time.monotonic() + self.timeout
        self.deadline = self.learner_deadline + self.timeout
        signal.setitimer(signal.ITIMER_REAL, self.timeout, self.tick)
        _CURRENT[:] = [self]

    def stop(self):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous or signal.SIG_DFL)
        _CURRENT[:] = []

    def extend(self, seconds):
        """Push both deadlines back by `seconds` (the kit's own work, not counted)."""
        self.learner_deadline += seconds
        self.deadline += seconds

    def _on_alarm(self, signum, frame):
        if _debugging():
            return
        learner, importing = self._running(frame)
        if importing:
            self.deadline += self.tick
            return
        if self.sentence is None:
            now = time.monotonic()
            if now < self.learner_deadline or (learner is None and now < self.deadline):
                return
            self.sentence = self._trip(learner)
            raise RanAway(self.sentence)
        if learner is not None:
            raise RanAway(self.sentence)

    def _running(self, frame):
        """(the innermost frame of a learner's file, or None; whether another module is
        being imported inside it, or at all when no learner code runs)."""
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename.startswith("<frozen importlib"):
                return None, True
            if filename.endswith(".py") and Path(filename).resolve() in self.learner_paths:
                return frame, False
            frame = frame.f_back
        return None, False

    def _trip(self, frame):
        """The failure sentence; the piece that was running fails at once from now on."""
        where = ""
        if frame is not None:
            path = Path(frame.f_code.co_filename)
            if frame.f_code.co_name == "<module>":  # the file is being imported
                where = f" at line {frame_line(frame)} of the file's top-level code"
            else:
                place = f"katas/{path.parent.name}/{path.name}, line {frame_line(frame)}"
                where = f" in {frame.f_code.co_name} ({place})"
        piece = RUNNING[-1] if RUNNING else None
        sentence = f"timed out after {self.timeout:g} s{where}: does it loop forever?"
        if piece is not None:
            name = piece[-1]
            if frame is not None and frame.f_code.co_name != name.rsplit(".", 1)[-1]:
                sentence = sentence.replace(": does", f", called from {name}: does")
            sentence += f" (later calls to {name} in this run fail at once)"
            TRIPPED[piece] = sentence
        return sentence


_CURRENT = []  # the _Timer of the kata test running now
_NOT_COUNTED = []  # the not_counted blocks open now (they nest)


@contextlib.contextmanager
def not_counted():
    """The kit's own work inside a kata test (a speed or growth check building the fresh graphs
    it times, and timing the reference's side): its time is added to the test's limit
    afterwards, so a busy machine does not fail a linear piece. A learner piece that runs
    away inside it still meets the limit as it stood."""
    began = time.monotonic()
    _NOT_COUNTED.append(began)
    try:
        yield
    finally:
        _NOT_COUNTED.pop()
        if _CURRENT and not _NOT_COUNTED:  # the outermost block counts its time, once
            _CURRENT[0].extend(time.monotonic() - began)


def _debugging():
    """No time limit while someone debugs (as pytest-timeout does)."""
    try:
        from pytest_timeout import is_debugging
    except ImportError:
        return False
    return is_debugging()


def _usable(settings):
    return (
        settings.method == "signal"
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )


_TIMER = pytest.StashKey()


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_set_timer(item, settings):
    """Time kata tests with RanAway; every other test keeps pytest-timeout's own timer."""
    from ..state import KATA_KEY

    if KATA_KEY not in item.stash or not _usable(settings):
        return None
    from ..manifest import learner_file_paths

    timer = _Timer(item, settings.timeout, learner_file_paths())
    item.stash[_TIMER] = timer
    timer.start()
    return True


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_cancel_timer(item):
    timer = item.stash.get(_TIMER, None)
    if timer is None:
        return None
    del item.stash[_TIMER]
    timer.stop()
    return True


def ran_away(excinfo):
    return excinfo is not None and excinfo.errisinstance(RanAway)
