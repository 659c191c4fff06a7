"""Delegation caught at run time: while a kata is graded on the learner's pieces, the
reference's own implementation of that kata must never run from the learner's code, by any
route.

The functions themselves are wired, not the tables that hold them. For the time of a test on
the learner's pieces, every function of the kata's model solution (reference/solutions/: its
pieces, the helpers they call, the methods of SavedTensors; katas 09 and 10's functions; every
kata's for the capstone) has its code swapped for a trampoline. It is the same function
object, so every road reaches the wire: `ag.pieces.REFERENCE[...]`, `sys.modules[...]`, an
import by a computed name, a reference kept at import time. The trampoline runs the original
code, and notes the function's name when the code that called it is the learner's: the first
frame outside the reference engine, the standard library and installed packages is in a
learner file, or is the grader's wrapper around a learner piece that is the reference
function itself. The engine's own calls (it runs the reference's pieces of the other katas)
and the kit's (the oracle's diagnosis) trip nothing; the speed checks time unwired copies.

A learner piece that is, or extends, the reference's own (`topological_order =
<the reference's>`, `class SavedTensors(<the reference's>)`) is noted when the pieces are
assembled. The class Device is not wired: the engine uses it everywhere, learner code too.
"""
import contextlib
import importlib
import inspect
import sys
import sysconfig
import types
from pathlib import Path

from reference import pieces as seam

_tripped = []  # names the learner's code reached, since the last take()


def take():
    """The names reached since the last call (each once, in order), and forget them."""
    names = list(dict.fromkeys(_tripped))
    _tripped.clear()
    return names


def flag(name):
    """The integrity flag of a kata whose learner code ran the reference's own `name`."""
    return f"runs the reference's own {name}"


# --- which functions a kata wires --------------------------------------------------------------

UNWIRED_CLASSES = ("Device",)  # used by the engine and by learner code of every kata
WIRE_GLOBAL = "__kata_wire__"  # the name the trampolines call, in each solution module


def _solution_modules(kata):
    """The model-solution modules of `kata`, and of every kata of pieces for the capstone."""
    from ..manifest import ALL_KATAS

    chosen = [k for k in ALL_KATAS if k.pieces] + [kata] if kata.whole_engine else [kata]
    modules = []
    for k in chosen:
        for name in {seam.REFERENCE[p].__module__ for p in k.pieces if p in seam.REFERENCE} or {
                f"reference.solutions.{k.name}"}:
            module = importlib.import_module(name)
            if module not in modules:
                modules.append(module)
    return modules


def _functions_of(module):
    """(label, function) for the functions a solution module defines, and the methods of its
    classes (Device's excepted)."""
    found = []
    for name, value in vars(module).items():
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            found.append((name, value))
        elif inspect.isclass(value) and value.__module__ == module.__name__ and name not in UNWIRED_CLASSES:
            found.extend((f"{name}.{attr}", member) for attr, member in vars(value).items()
                         if inspect.isfunction(member))
    return [(label, f) for label, f in found if not f.__code__.co_freevars]  # (no closures: none today)


# --- the wires ------------------------------------------------------------------------------------

class _Wire:
    """One wired function: its original code, an unwired copy (what the trampoline and the
    kit's own timings run), and the trampoline's code."""

    def __init__(self, label, function, key):
        self.label, self.function = label, function
        self.original = function.__code__
        self.copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                                       function.__defaults__, function.__closure__)
        self.copy.__kwdefaults__ = function.__kwdefaults__
        self.copy.__qualname__ = function.__qualname__
        namespace = {}
        exec(compile(f"def trampoline(*args, **kwargs):\n    return {WIRE_GLOBAL}({key}, args, kwargs)\n",
                     self.original.co_filename, "exec"), namespace)
        code = namespace["trampoline"].__code__
        replacements = {"co_name": self.original.co_name, "co_firstlineno": self.original.co_firstlineno}
        if hasattr(code, "co_qualname"):
            replacements["co_qualname"] = self.original.co_qualname
        self.trampoline = code.replace(**replacements)


_wires = {}  # id of a wired function -> its _Wire (made once per function)
_by_key = []  # key -> _Wire
_armed = []  # the _Wires in force now
_kata_functions = {}  # kata slug -> [(label, function)] it wires


def _wire_for(label, function):
    wire = _wires.get(id(function))
    if wire is None or wire.function is not function:
        wire = _wires[id(function)] = _Wire(label, function, len(_by_key))
        _by_key.append(wire)
        function.__globals__[WIRE_GLOBAL] = _through_the_wire
    return wire


def _through_the_wire(key, args, kwargs):
    wire = _by_key[key]
    if _armed and _called_by_learner(sys._getframe(2)):
        _tripped.append(wire.label)
    return wire.copy(*args, **kwargs)


_REFERENCE_DIR = str(Path(seam.__file__).resolve().parent)
_PLUGIN_DIR = str(Path(__file__).resolve().parent.parent)
_LIBRARIES = tuple({sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")})
_GUARDS = ("guarded", "breaker")  # the grader's wrappers around a learner piece (outcomes, time_limit)


def _called_by_learner(frame):
    """Whether the code that called a wired function (`frame` and the frames above it) is
    the learner's (see the module's docstring)."""
    from ..manifest import learner_file_paths

    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_PLUGIN_DIR):  # the kit's own call, unless through a piece's wrapper
            return frame.f_code.co_name in _GUARDS
        if not filename.startswith((_REFERENCE_DIR, "<frozen", *_LIBRARIES)):
            return Path(filename).resolve() in learner_file_paths()
        frame = frame.f_back
    return True  # only the engine and libraries above it: a thread that the learner's code started


@contextlib.contextmanager
def armed(kata, solution):
    """Wire the model solution of `kata` while a test runs on the learner's pieces; nothing on
    the reference solution."""
    if solution != "learner" or kata is None:
        yield
        return
    if kata.slug not in _kata_functions:
        _kata_functions[kata.slug] = [pair for module in _solution_modules(kata) for pair in _functions_of(module)]
    wires = [_wire_for(label, f) for label, f in _kata_functions[kata.slug]]
    for wire in wires:
        wire.function.__code__ = wire.trampoline
    _armed.extend(wires)
    try:
        yield
    finally:
        for wire in wires:
            wire.function.__code__ = wire.original
        if wires:
            del _armed[-len(wires):]


def note_if_reference(name, piece):
    """At assembly: a learner piece that is the reference's own `name`, or extends it."""
    reference = seam.REFERENCE.get(name)
    if reference is None:
        return
    if piece is reference or (inspect.isclass(piece) and inspect.isclass(reference) and issubclass(piece, reference)):
        _tripped.append(name)


def original(function):
    """The unwired copy of a reference function while it is wired, else the function itself."""
    wire = _wires.get(id(function))
    return wire.copy if wire is not None and wire.function is function and _armed else function


def unwired(names):
    """{name: the reference piece itself} for `names`, wired or not: what the speed checks
    time against (a wire would add its own cost to the reference's time)."""
    return {name: original(seam.REFERENCE[name]) for name in names}
