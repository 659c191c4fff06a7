"""Blame the right piece: an error that reached a kata test, in one sentence about the
learner's piece that caused it.

An error is often raised far from its cause: inside the engine, checking what a learner's
rule returned; inside a model-solution piece (kata 02's unbroadcast while kata 01 is graded)
fed a gradient of the wrong shape; in a test's own code, using what a learner's piece gave
back. `explain(error)` reads the traceback and says, in this order:

1. a learner's function raised: which one (the innermost of the learner's frames), its line,
   what it was called with, and who called it;
2. the engine refused what a learner's backward rule (or unbroadcast) returned: which rule,
   which input, the shape or dtype it returned and the one it had to;
3. anything else: where it was raised, and what the learner's piece that ran last returned.

Only the learner's own code is called "your"; a model-solution piece is "the engine's".
"""
import inspect
import linecache
import re
import sysconfig
from pathlib import Path

import numpy as np

from .. import manifest
from ..manifest import ROOT
from .shown_source import its_start, without_said

# The engine's methods that check what a node's rule returned, after it returned.
_CHECKS = ("_checked", "_reduced", "_cast", "_as_tuple")
_LIBRARIES = tuple(
    Path(p).resolve() for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]} if p
)

# "piece": (name, what it returned): the learner piece that returned last. Private: it changes
# on every call, and the grader's self-check (guards/tamper.py) notes public values only.
_LAST_RETURN = {}


def last_return():
    """(name, what it returned) of the learner piece that returned last, or None: a new
    object after every call, so a caller can tell whether a piece ran between two reads."""
    return _LAST_RETURN.get("piece")


def forget_returns():
    """A new test: what a piece returned in the last one says nothing about this one. (The
    guard around each learner piece, outcomes.guard, fills _LAST_RETURN: one dict store.)"""
    _LAST_RETURN.clear()


def explain(error, learner_paths=frozenset()):
    """One sentence (a few lines) about the piece behind `error`, or None for an error that
    already is the kit's sentence or a test's own assertion. It never raises itself: an
    explanation that fails leaves the error as it was."""
    try:
        return _explain(error, learner_paths)
    except Exception:  # noqa: BLE001 (whatever the learner's objects do when read)
        return None if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"


def learner_raised(error, learner_paths=frozenset()):
    """"your X raised T: message", with the learner's frames (file, line, source), when the
    learner's own code is in `error`'s traceback; None when it is not. Never raises."""
    try:
        return _learner_raised(error, list(_frames(error, learner_paths)))
    except Exception:  # noqa: BLE001 (whatever the learner's objects do when read)
        return None


def _explain(error, learner_paths):
    frames = list(_frames(error, learner_paths))
    if isinstance(error, AssertionError):  # the kit's mismatch, a test's assert, or the learner's
        return _learner_raised(error, frames)
    return (_learner_raised(error, frames) or _rule_returned(error, frames) or _engine_refused(error)
            or _raised_elsewhere(error, frames))


# --- the traceback, frame by frame ------------------------------------------------------------

class _Frame:
    def __init__(self, tb, learner_paths, plugged):
        self.frame = tb.tb_frame
        self.code = tb.tb_frame.f_code
        self.line = tb.tb_lineno
        self.path = Path(self.code.co_filename).resolve()
        self.kind = _kind_of(self.path, self.code, learner_paths, plugged)
        self.node = _node_of(self.frame)

    @property
    def source(self):
        """The line's statement: a call written over several lines (`raise RuntimeError(` then
        its words) is joined into one, up to a few lines."""
        text = linecache.getline(str(self.path), self.line).strip()
        for following in range(self.line + 1, self.line + 5):
            depth = sum(1 if c in "([{" else -1 if c in ")]}" else 0 for c in text)
            if depth <= 0:
                break
            text = f"{text} {linecache.getline(str(self.path), following).strip()}"
        return re.sub(r"\s+([)\]}])", r"\1", re.sub(r"([(\[{])\s+", r"\1", text))

    @property
    def where(self):
        try:
            shown = self.path.relative_to(manifest.KATAS_DIR.parent)
        except ValueError:
            shown = self.path.name
        return f"{shown}, line {self.line}"


def _frames(error, learner_paths):
    plugged = _plugged_codes()
    tb = error.__traceback__
    while tb is not None:
        yield _Frame(tb, learner_paths, plugged)
        tb = tb.tb_next


def _plugged_codes():
    """The code of every piece plugged into the engine that is not the model solution's."""
    from reference import pieces

    codes = set()
    for name, piece in vars(pieces.active).items():
        if piece is not pieces.REFERENCE.get(name):
            code = getattr(getattr(piece, "__wrapped__", piece), "__code__", None)
            if code is not None:
                codes.add(code)
    return codes


def _kind_of(path, code, learner_paths, plugged):
    """learner (a learner's file, or a piece plugged in from elsewhere, as the kit's own tests
    do), engine (reference/ and the plugin), library, or test (any other code: a kata's tests)."""
    if path in learner_paths or code in plugged:
        return "learner"
    if ROOT / "reference" in path.parents or ROOT / "plugin" in path.parents:
        return "engine"
    if any(folder in path.parents for folder in _LIBRARIES) or not path.exists():
        return "library"
    return "test"


def _node_of(frame):
    node = frame.f_locals.get("self")
    return node if hasattr(node, "kind") and hasattr(node, "next_functions") else None


# --- 1. the learner's code raised ---------------------------------------------------------------

def _learner_raised(error, frames):
    mine = [i for i, f in enumerate(frames) if f.kind == "learner"]
    if not mine:
        return None
    inner = frames[mine[-1]]
    # The piece the engine (or the test) called: the outermost learner frame of that chain.
    entry = mine[-1]
    while entry - 1 >= 0 and frames[entry - 1].kind == "learner":
        entry -= 1
    called = frames[entry]
    name = _piece_name(called.code) or called.code.co_name
    inner_name = name if inner is called else inner.code.co_name
    lines = [f"your {inner_name} raised {_error_words(error)}"]
    # the learner's frames, outermost first (the engine's and the kit's between them left out)
    shown = [frames[i] for i in mine][-5:]
    said = " ".join(str(error).split())  # the learner's lines quote these words: their start is enough
    lines += without_said([f"  at {f.where}, in {f.code.co_name}: {f.source}" for f in shown], said, its_start)
    caller = _caller_node(frames[:entry])
    node = None if caller is None else caller.node
    method = None if caller is None else caller.code.co_name
    if node is not None and method == "__call__" and node.kind.rule == name:
        lines.append(
            f"  it got a gradient of shape {_shape(caller.frame.f_locals.get('grad'))} and had to return "
            f"gradients of shape {' and '.join(str(tuple(s)) for s in node.input_shapes)}"
        )
        return "\n".join(lines)
    arguments = _arguments(called)
    if arguments:  # a method of self alone (unpack()) was called with nothing worth saying
        lines.append(f"  your {name} was called with {arguments}")
    if node is not None and method == "_reduced":
        local = caller.frame.f_locals
        lines.append(f"  by the engine, to sum {node.name()}'s gradient for input {local.get('index')} "
                     f"down to that input's shape {tuple(local.get('shape', ()))}")
    elif node is not None and (node.kind.rule or "accumulate_grad") != name:  # (its own node: said)
        rule = node.kind.rule or "accumulate_grad"
        whose = "the engine's" if _is_reference(rule) else "your"
        lines.append(f"  by {whose} {rule} ({node.name()})")
    return "\n".join(lines)


def _piece_name(code):
    """The engine piece whose implementation is the function of `code` (a learner's function
    may have another name than the piece it was plugged in as)."""
    from reference import pieces

    for name, piece in vars(pieces.active).items():
        function = getattr(piece, "__wrapped__", piece)
        if getattr(function, "__code__", None) is code:
            return name
    return None


def _caller_node(frames):
    """The innermost engine frame that runs a node, among the frames above the learner's."""
    for frame in reversed(frames):
        if frame.node is not None:
            return frame
        if frame.kind in ("test", "learner"):
            return None
    return None


# --- 2. the engine refused what a learner's rule returned -----------------------------------------

def _rule_returned(error, frames):
    checks = [f for f in frames if f.node is not None and f.code.co_name in _CHECKS]
    if not checks:
        return None
    check = checks[-1]
    node, local = check.node, check.frame.f_locals
    rule = node.kind.rule
    if rule is None:  # AccumulateGrad: it checks nothing a rule returned
        return None
    reduced = next((f for f in checks if f.code.co_name == "_reduced" and f.node is node), None)
    index = local.get("index", len(local.get("checked", ())))
    # what the rule returned, as the engine's check got it
    returned = next((f.frame.f_locals.get("grads") for f in checks if f.node is node and f.code.co_name == "_checked"), None)
    if reduced is not None and not _is_reference("unbroadcast") and _after_unbroadcast(reduced):
        wrong = _not_a_broadcast(returned, reduced.frame.f_locals)
        if wrong is not None:  # unbroadcast got a shape no broadcast makes: the rule's mistake
            return (f"your {rule} returned a gradient of shape {wrong} for input {reduced.frame.f_locals.get('index')} "
                    f"of {node.name()}, whose shape is {tuple(reduced.frame.f_locals.get('shape'))}: neither that shape "
                    f"nor one it broadcasts to (the engine's unbroadcast can only sum broadcast dimensions away)"
                    f"\n  torch's error: {error}")
        return _unbroadcast_returned(error, node, reduced.frame.f_locals)
    if _is_reference(rule):
        return None
    grad = (reduced.frame.f_locals if reduced is not None else local).get("grad")
    shape = tuple(node.input_shapes[index]) if index < len(node.input_shapes) else "?"
    dtype = node.input_dtypes[index] if index < len(node.input_dtypes) else "?"
    if check.code.co_name == "_cast":
        got = f"a {getattr(grad, 'dtype', '?')} gradient for input {index} of {node.name()}, whose gradients are {local.get('grad_dtype')}"
        need = "a rule's gradients keep the dtype of the gradient it received: make new tensors from grad or the saved inputs"
    else:
        got = f"a gradient of shape {_shape(grad)} for input {index} of {node.name()}, whose shape is {shape}"
        need = (
            "a rule returns one gradient per input, in that input's shape"
            + (" (or in the output's: the engine sums it down)" if node.kind.reduce_broadcast else "")
        )
    received = check_received(frames, node)
    lines = [f"your {rule} returned {got}", f"  {need}"]
    if received is not None:
        lines.append(f"  it received a gradient of shape {_shape(received)} and returned {describe(returned)}")
    lines.append(f"  torch's error: {_error_words(error)}" if "returned an invalid gradient" in str(error)
                 else f"  the engine then raised {_error_words(error)}")
    return "\n".join(lines)


def check_received(frames, node):
    for frame in frames:
        if frame.node is node and frame.code.co_name == "__call__":
            return frame.frame.f_locals.get("grad")
    return None


def _not_a_broadcast(returned, local):
    """The shape the rule returned for this input, where no broadcast of the input's shape
    gives it ((3, 1) for a (3,) input), else None."""
    index, shape = local.get("index"), tuple(local.get("shape") or ())
    try:
        grad = returned[index]
        if tuple(np.broadcast_shapes(tuple(grad.shape), shape)) != tuple(grad.shape):
            return tuple(grad.shape)
    except (TypeError, IndexError, ValueError, AttributeError):
        return None
    return None


def _after_unbroadcast(reduced):
    """The error came from _reduced's own shape check, after unbroadcast returned."""
    return "grad" in reduced.frame.f_locals and reduced.frame.f_locals.get("grad") is not None


def _unbroadcast_returned(error, node, local):
    return (
        f"your unbroadcast returned a gradient of shape {_shape(local.get('grad'))} for input "
        f"{local.get('index')} of {node.name()}, whose shape is {tuple(local.get('shape'))}: it must "
        f"sum the gradient down to exactly that shape (kata 02)\n  torch's error: {error}"
    )


def _engine_refused(error):
    """The engine's own check of what a piece returned names the piece ("run_backward
    returned None; ..."): the learner's piece, when it is plugged in."""
    found = re.match(r"(\w+) returned\b", str(error))
    if found and found.group(1) in _piece_names() and not _is_reference(found.group(1)):
        return f"your {error}"
    return None


def _piece_names():
    from reference import pieces

    return pieces.REFERENCE


# --- 3. anything else ------------------------------------------------------------------------------

def _raised_elsewhere(error, frames):
    inner = frames[-1] if frames else None
    last = _LAST_RETURN.get("piece")
    lines = [_error_words(error)]
    if inner is not None:
        test = next((f for f in reversed(frames) if f.kind == "test"), None)
        if test is not None and test is inner:
            none = _none_expression(error, test.source)
            lines[0] = f"the test's own code raised {_error_words(error)}"
            if none:
                lines[0] = f"`{none}` is None where the test uses it ({_error_words(error)})"
            lines.append(f"  at {test.where}: {test.source}")
        elif inner.kind == "engine":
            lines[0] = (f"the engine's {inner.code.co_name} ({inner.path.name}, the model's code) raised "
                        f"{_error_words(error)}: look at what your pieces gave it")
            if test is not None:
                lines.append(f"  called by the test at {test.where}: {test.source}")
    if last is not None:
        name, value = last
        lines.append(f"  on what your {name} returned last: {describe(value)}")
    return "\n".join(lines)


def _none_expression(error, source):
    """`x.grad` for "'NoneType' object has no attribute 'detach'" raised by x.grad.detach()."""
    found = re.match(r"'NoneType' object has no attribute '(\w+)'", str(error))
    if not isinstance(error, AttributeError) or not found:
        return None
    before = re.search(r"([\w.\[\]]+)\." + re.escape(found.group(1)) + r"\b", source)
    return before.group(1) if before else None


# --- words ----------------------------------------------------------------------------------------------

def _error_words(error):
    text = str(error).strip()
    key = error.args[0] if isinstance(error, KeyError) and len(error.args) == 1 else None
    if hasattr(key, "next_functions") and hasattr(key, "name"):  # a node: its repr is an address
        text = f"no entry for {key.name()} (a node) in the dict: a node that received no gradient, say, has none"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _is_reference(piece_name):
    """Whether the engine runs the model solution's piece of that name (an AccumulateGrad
    node has no rule name: its piece is accumulate_grad)."""
    from reference import pieces

    piece_name = piece_name or "accumulate_grad"
    return getattr(pieces.active, piece_name, None) is pieces.REFERENCE.get(piece_name)


def _shape(value):
    return tuple(value.shape) if hasattr(value, "shape") else type(value).__name__


class Described(str):
    """A value already put in words: what a piece returned, kept as words when the value
    itself would keep a graph alive (a list of nodes) until the next test."""


def remembered(result):
    """What outcomes.guard keeps of a piece's result: a list in words (the toposort's order
    holds every node of the graph), anything else as it is (a rule's tuple: cheap to keep)."""
    return Described(describe(result)) if type(result) is list else result


def describe(value, depth=0):
    """A value in a few words: None, a tensor's shape and dtype, a tuple's items."""
    if value is None:
        return "None"
    if isinstance(value, Described):
        return str(value)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"a tensor of shape {tuple(value.shape)} ({value.dtype})"
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return repr(value)  # a shape
    if isinstance(value, (tuple, list)) and depth == 0:
        items = ", ".join(describe(v, 1) for v in value[:4]) + (", ..." if len(value) > 4 else "")
        return f"a {type(value).__name__} of {len(value)}: ({items})"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, (int, float, bool, str)):
        return repr(value)
    return f"a {type(value).__name__}"


def _arguments(frame):
    code = frame.code
    count = code.co_argcount + code.co_kwonlyargcount
    names = [n for n in code.co_varnames[:count] if n not in ("self", "ctx")]
    shown = [f"{n}={describe(frame.frame.f_locals.get(n), 1)}" for n in names]
    if code.co_flags & inspect.CO_VARARGS:  # save(*tensors): the star argument's items too
        star = code.co_varnames[count]
        shown.append(f"*{star}={describe(frame.frame.f_locals.get(star))}")
    values = [frame.frame.f_locals.get(n) for n in names]
    same = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))
            if hasattr(values[i], "shape") and values[i] is values[j]]
    if same:  # a shape says nothing of this: x + x sends one tensor twice
        shown.append(f"({same[0][0]} and {same[0][1]} are the same tensor)")
    return ", ".join(shown)

