"""Profile and trace functions that learner code installs: found, removed, and flagged.

A profile or trace function (`sys.setprofile`, `sys.settrace`, and `threading`'s, for new
threads) sees every call the grader makes, with its arguments, and can change them: a rule
that installed one caught the oracle's comparison and wrote torch's values into the engine's
arrays, and a kata of wrong rules came out done. So the grader notes which functions are
installed when a kata test starts (a debugger's or a coverage tool's stay), and removes any
other as soon as the engine's side of a comparison has run (oracle.py), before torch's side
and the comparison, and again when the test ends; the kata is flagged, naming it.

The functions used here are taken when the plugin is imported, before any learner file is:
a learner file that replaces `sys.getprofile` does not blind the check. A debugger's trace
function (pdb, `breakpoint()` in a piece) and those of hypothesis and coverage tools are left
alone wherever they come from.
"""
import bdb
import sys
import threading
from pathlib import Path

_GET = {"sys.setprofile": sys.getprofile, "sys.settrace": sys.gettrace,
        "threading.setprofile": threading.getprofile, "threading.settrace": threading.gettrace}
_SET = {"sys.setprofile": sys.setprofile, "sys.settrace": sys.settrace,
        "threading.setprofile": threading.setprofile, "threading.settrace": threading.settrace}

_installed = {}  # what was installed when the kata test started (a debugger's, a coverage tool's)
_found = []  # the setters whose functions were removed since the last take()


def note():
    """A kata test starts: the functions installed now are not the learner's."""
    _installed.clear()
    _installed.update({name: get() for name, get in _GET.items()})
    _found.clear()


TOLERATED = ("hypothesis", "coverage", "pydevd", "_pydevd_bundle", "debugpy")


def _tolerated(function):
    """A debugger's trace function, or one of a library that traces on its own."""
    owner = getattr(function, "__self__", None)
    if isinstance(owner, bdb.Bdb):
        return True
    code = getattr(function, "__code__", None) or getattr(getattr(function, "__func__", None), "__code__", None)
    if code is not None:
        return any(part in TOLERATED for part in Path(code.co_filename).parts)
    return type(owner if owner is not None else function).__module__.partition(".")[0] in TOLERATED


def remove_foreign():
    """Remove every profile or trace function installed since the test started; the names of
    their setters ("sys.setprofile")."""
    removed = []
    for name, get in _GET.items():
        current = get()
        if name in _installed and current is not _installed[name] and not _tolerated(current):
            _SET[name](_installed[name])
            removed.append(name)
    _found.extend(removed)
    return removed


def take():
    """The setters whose functions were removed during the test (each once), and forget them."""
    names = list(dict.fromkeys(_found))
    _found.clear()
    _installed.clear()
    return names


def flag(names):
    return (f"installs a profile or trace function while graded ({', '.join(names)}): it could rewrite "
            "what the grader compares; the grader removed it")
