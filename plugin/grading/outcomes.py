"""What a test's result means for a learner: a to-do, a pass, or a failure with one sentence.

A test that reaches a learner's stub (NotImplementedError raised in a learner file) is not a
failure but a to-do: the learner has not written that piece yet. Anything else a learner's
code raises stays a failure, summed up in one sentence for the kata's row.
"""
import contextlib
import functools
from pathlib import Path

from _pytest.outcomes import Skipped

from ..manifest import ROOT, learner_file_paths
from ..guards.time_limit import RanAway, tb_line, with_lines
# The time limit's run-time state, under private names: guard() reads it once per node, and
# the tamper check takes this module's public values for settings (guards/tamper.py).
from ..guards.time_limit import RUNNING as _RUNNING, TRIPPED as _TRIPPED
from . import blame, shown_source
from .blame import _LAST_RETURN, remembered
from .one_line import one_line, shorten

TODO = "todo"

# Frames in these folders are the kit's machinery, not the learner's or the test's code;
# so are contextlib's (a test's `with hint(...)`, a fixture's `with engine_for(...)`).
_MACHINERY = (ROOT / "reference", ROOT / "plugin")
_CONTEXTLIB = Path(contextlib.__file__).resolve()


class StubReached(Skipped):
    """A learner's stub was called. A skip-type outcome, so that hypothesis stops at once
    instead of shrinking an example that no input can fix."""


class KataBlocked(StubReached):
    """The capstone needs katas that are not finished yet: its tests are to-dos that say which."""


def todo_reason(excinfo):
    """What a to-do report says: which katas to finish first (capstone), or the stub."""
    if excinfo is not None and excinfo.errisinstance(KataBlocked):
        return str(excinfo.value)
    return "reached a stub: not written yet"


def raised_in(exc, paths):
    """True when the innermost frame of exc's traceback is in one of `paths`."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() in paths


def guard(name, piece, learner_paths):
    """Wrap a learner's function so that reaching its stub raises StubReached, and a piece
    that ran away earlier in the run fails at once (see guards/time_limit.py)."""
    key = (getattr(getattr(piece, "__code__", None), "co_filename", ""), name)

    @functools.wraps(piece)
    def guarded(*args, **kwargs):
        # The breaker of time_limit.with_breaker, inlined: a rule runs once per node.
        if key in _TRIPPED:
            raise RanAway(_TRIPPED[key])
        _RUNNING.append(key)
        try:
            result = piece(*args, **kwargs)
            _LAST_RETURN["piece"] = (name, remembered(result))  # one dict store per call
            return result
        except NotImplementedError as exc:
            if raised_in(exc, learner_paths):
                raise StubReached(f"reached the stub of {name}: not written yet") from exc
            raise
        finally:
            _RUNNING.pop()

    return guarded


def reached_stub(excinfo, learner_paths):
    """True when a test stopped at a learner's stub (guarded or not)."""
    if excinfo is None:
        return False
    if excinfo.errisinstance(StubReached):
        return True
    return excinfo.errisinstance(NotImplementedError) and raised_in(excinfo.value, learner_paths)


def give_every_frame_a_line(excinfo):
    """Before pytest prints a failure: every entry of its traceback, and of the exceptions
    chained to it, has a line (a time limit that fires on a loop's jump back leaves an entry
    without one, which pytest's traceback cannot print)."""
    if excinfo is None or excinfo._excinfo is None:
        return
    exc, seen = excinfo.value, set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc.__traceback__ = with_lines(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__
    excinfo._excinfo = (excinfo.type, excinfo.value, excinfo.value.__traceback__)
    excinfo._traceback = None


def _is_machinery(entry):
    if _hypothesis_wrapper(entry):
        return True
    path = Path(str(entry.path)).resolve()
    if any(folder in path.parents for folder in _MACHINERY) or path == _CONTEXTLIB:
        return True
    return "site-packages" in path.parts or "hypothesis" in path.parts


def _hypothesis_wrapper(entry):
    """hypothesis's wrapper around a @given test: its code claims the test's file and first
    line, so pytest would print the decorator a second time above the test's own frame."""
    try:
        return bool(entry.frame.f_globals.get("__hypothesistracebackhide__"))
    except AttributeError:
        return False


def hide_machinery(item):
    """Show a kata test's failures without the engine's and the grader's frames: the
    learner reads the test, their own code and the error (--full-trace shows all)."""
    pytest_filter = item._traceback_filter

    def learner_frames(excinfo):
        traceback = pytest_filter(excinfo)
        kept = traceback.filter(lambda entry: not _is_machinery(entry))
        paths = learner_file_paths()
        if explained(excinfo, paths):  # the sentence says the learner's file, line and source
            kept = kept.filter(lambda entry: Path(str(entry.path)).resolve() not in paths)
        kept = kept.filter(_not_the_line_above(kept))
        return kept if len(kept) else traceback

    item._traceback_filter = learner_frames


def _not_the_line_above(traceback):
    """A frame that shows the line the frame above it shows (a list comprehension's, in the
    test's own line): said once."""
    seen = set()

    def new(entry):
        where = (str(entry.path), entry.lineno)
        fresh = where not in seen
        seen.add(where)
        return fresh

    return new


def verdict(report):
    """One sentence for a failed test report: the first line of its message that says
    something (see one_line.py)."""
    text = str(report.longrepr) if report.longrepr is not None else ""
    # The crash line names the exception that ended the test (not a cause it was raised from).
    crash = getattr(getattr(report.longrepr, "reprcrash", None), "message", "")
    if getattr(report, "kata_message", None):
        message = one_line(report.kata_message)
    elif crash.strip():
        message = one_line(crash)
    else:
        message = _last_error_line(text)
    if "Timeout" in text and "+++++" in text or message.startswith("Timeout"):
        return "timed out: does it loop forever? (the kata's time limit is in the lesson)"
    if "RecursionError" in message:
        return f"recursed too deep (RecursionError): {RECURSION_ADVICE}"
    return message


def explained(excinfo, learner_paths):
    """The sentence about the learner's piece behind an error that is not already the kit's
    own sentence (see blame.py), or None."""
    error = None if excinfo is None else excinfo.value
    if not isinstance(error, Exception) or isinstance(error, RecursionError):
        return None
    if type(error).__name__ in ("KataMismatch", "LearnerFileError"):
        return None
    return blame.explain(error, learner_paths)


def learners_error_under(error, learner_paths):
    """A failure raised because the learner's code raised (a test's `raise ... from error`,
    an error raised while handling it): pytest would print the learner's error first, raw,
    then "The above exception was the direct cause of ...", then the kit's sentence. Instead
    the learner's error goes under the sentence, once: the lines of it the sentence does not
    say yet (which piece, its file and line), and the chain is not shown. True when it did."""
    if not isinstance(error, BaseException):
        return False
    cause = error.__cause__ if error.__cause__ is not None else (
        None if error.__suppress_context__ else error.__context__)
    if cause is None or isinstance(cause, (NotImplementedError, Skipped)):
        return False
    told = blame.learner_raised(cause, learner_paths)
    if told is None:
        return False
    message = str(error)
    head, *where = told.splitlines()
    if f"{type(cause).__name__}: {cause}".strip() in message:  # the sentence names the error: not again
        head, where = "", [line for line in where if line.lstrip().startswith("at ")]
    added = [line for line in ([head] if head else []) + where if line.strip() and line.strip() not in message]
    if added:
        said = " ".join(message.split())
        added = [shown_source.without_said([line], said, placeholder=shown_source.its_start)[0] for line in added]
        reword(error, "\n".join([message.rstrip()] + [f"  {line.strip()}" for line in added]))
    error.__cause__ = None
    error.__suppress_context__ = True
    return True


def without_own_type(error, sentence):
    """The sentence as the error's own message: pytest prints the type before it, so "your
    save raised AttributeError: ..." becomes "in your save: ..." (not the type twice)."""
    said = f" raised {type(error).__name__}: "
    head, newline, rest = sentence.partition("\n")
    if head.startswith("your ") and said in head:
        name, _, words = head.partition(said)
        head = f"in {name}: {words}"
    return head + newline + rest


def reword(error, sentence):
    """Give `error` the kit's sentence for its message (its type and traceback stay), so that
    pytest shows the sentence where it shows the error; an error whose message cannot be
    replaced keeps its own."""
    try:
        error.args = (_Sentence(sentence),)
    except (AttributeError, TypeError):
        pass


class _Sentence(str):
    """A message that prints as itself where Python would quote it: a KeyError shows
    repr(its argument), which would put the sentence in quotes with its newlines as \\n."""

    def __repr__(self):
        return str(self)


RECURSION_ADVICE = "use an explicit stack or queue instead of recursion"


def recursion_failure(excinfo):
    """A RecursionError in a few lines, not a thousand frames: which function of the
    learner's calls itself, where, and what to do instead. None for any other failure."""
    if excinfo is None or not excinfo.errisinstance(RecursionError):
        return None
    counts = {}
    tb = excinfo.value.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        key = (code.co_name, code.co_filename, tb_line(tb))
        counts[key] = counts.get(key, 0) + 1
        tb = tb.tb_next
    (name, filename, line), repeats = max(counts.items(), key=lambda item: item[1])
    try:
        where = Path(filename).resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        where = Path(filename).name
    return (
        f"RecursionError: {excinfo.value}\n"
        f"  {name} ({where}, line {line}) called itself {repeats} times deep: Python stops at "
        "about 1,000 nested calls, and a graph can be 100,000 nodes deep.\n"
        f"  Fix: {RECURSION_ADVICE} (--full-trace shows every frame)."
    )


def _last_error_line(text):
    """The `E   ...` line that names the exception, as pytest prints it."""
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    for line in lines:
        if line:
            return shorten(line)
    stripped = [line.strip() for line in text.splitlines() if line.strip()]
    return shorten(stripped[-1]) if stripped else "failed"


