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
import importlib.util
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


def forget():
    """A new run (or a new checkout in the kit's own tests): which files are the learner's is
    found afresh."""
    _kinds.clear()


def flag(name):
    """The integrity flag of a kata whose learner code ran the reference's own `name`."""
    return f"runs the reference's own {name}"


# --- which functions a kata wires --------------------------------------------------------------

UNWIRED_CLASSES = ("Device",)  # used by the engine and by learner code of every kata
WIRE_GLOBAL = "__kata_wire__"  # the name the trampolines call, in each solution module


def _solution_modules(kata):
    """The model-solution modules of `kata`, and of every kata of pieces in the checkout for
    the capstone (whose pieces the learner's replace: a kata that is not there keeps the
    reference's, which the engine runs for the learner's code, as it should)."""
    from ..manifest import katas

    chosen = [k for k in katas() if k.pieces] + [kata] if kata.whole_engine else [kata]
    modules = []
    for k in chosen:
        for name in {seam.REFERENCE[p].__module__ for p in k.pieces if p in seam.REFERENCE} or {
                f"reference.solutions.{k.name}"}:
            if importlib.util.find_spec(name) is None:  # a course edition that has not released it
                continue
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

_shadows = {}  # id of a solution module's globals -> the same names, its functions as copies


def _shadow(module_globals):
    """The globals the unwired copies run in: the module's, with each of its wired functions
    replaced by its copy, so that a copy calling a helper calls the helper's copy (the kit's
    own timings must not pay for a wire, nor trip one)."""
    if id(module_globals) not in _shadows:
        _shadows[id(module_globals)] = dict(module_globals)
    return _shadows[id(module_globals)]


class _Wire:
    """One wired function: its original code, an unwired copy (what the trampoline and the
    kit's own timings run), and the trampoline's code."""

    def __init__(self, label, function, key):
        self.label, self.function = label, function
        self.original = function.__code__
        shadow = _shadow(function.__globals__)
        self.copy = types.FunctionType(function.__code__, shadow, function.__name__,
                                       function.__defaults__, function.__closure__)
        if "." not in label:
            shadow[label] = self.copy
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
_kata_functions = {}  # (kata slug, the katas present for the capstone) -> [(label, function)] it wires


def _present():
    from ..manifest import katas

    return tuple(k.slug for k in katas())


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


_PASS, _KIT, _LEARNER, _OTHER = range(4)
_kinds = {}  # a code object's file -> what its frames are, found once


def _kind(filename):
    kind = _kinds.get(filename)
    if kind is None:
        from ..manifest import learner_file_paths

        if filename.startswith(_PLUGIN_DIR):
            kind = _KIT
        elif filename.startswith((_REFERENCE_DIR, "<frozen", *_LIBRARIES)):
            kind = _PASS
        else:
            kind = _LEARNER if Path(filename).resolve() in learner_file_paths() else _OTHER
        _kinds[filename] = kind
    return kind


def _called_by_learner(frame):
    """Whether the code that called a wired function (`frame` and the frames above it) is
    the learner's (see the module's docstring)."""
    while frame is not None:
        kind = _kind(frame.f_code.co_filename)
        if kind == _KIT:  # the kit's own call, unless through its wrapper around a learner piece
            return frame.f_code.co_name in _GUARDS
        if kind != _PASS:
            return kind == _LEARNER
        frame = frame.f_back
    return True  # only the engine and libraries above it: a thread that the learner's code started


@contextlib.contextmanager
def armed(kata, solution):
    """Wire the model solution of `kata` while a test runs on the learner's pieces; nothing on
    the reference solution."""
    if solution != "learner" or kata is None:
        yield
        return
    key = (kata.slug, kata.whole_engine and _present())
    if key not in _kata_functions:
        _kata_functions[key] = [pair for module in _solution_modules(kata) for pair in _functions_of(module)]
    wires = [_wire_for(label, f) for label, f in _kata_functions[key]]
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
    """The unwired copy of a reference function while it is wired, else the function itself;
    for a class with wired methods (SavedTensors), a subclass whose methods are the copies."""
    if inspect.isclass(function):
        return _unwired_class(function) if _armed else function
    wire = _wires.get(id(function))
    return wire.copy if wire is not None and wire.function is function and _armed else function


_classes = {}  # id of a class with wired methods -> (the class, its unwired subclass)


def _unwired_class(cls):
    copies = {name: _wires[id(member)].copy for name, member in vars(cls).items()
              if inspect.isfunction(member) and id(member) in _wires and _wires[id(member)].function is member}
    if not copies:
        return cls
    known = _classes.get(id(cls))
    if known is None or known[0] is not cls:
        known = _classes[id(cls)] = (cls, type(cls.__name__, (cls,), {**copies, "__module__": cls.__module__,
                                                                      "__qualname__": cls.__qualname__}))
    return known[1]


def unwired(names):
    """{name: the reference piece itself} for `names`, wired or not: what the speed checks
    time against (a wire would add its own cost to the reference's time)."""
    return {name: original(seam.REFERENCE[name]) for name in names}
