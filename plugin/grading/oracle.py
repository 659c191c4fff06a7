"""The oracle: the same test code run on torch and on the engine, the results compared.

The engine runs first, on the inputs as given (float32 stays float32): a test that reaches a
learner's stub stops there, a to-do, before torch is needed (a run whose tests all stop at a
stub, a fresh clone's, never imports it: a second of start-up, in each pytest-xdist worker).
Then torch runs, in float64; each side has its own copies of the inputs, so nothing a
learner's code does to them can change torch's answer.

- `check_grads(fn, **inputs)`: fn(lib, **tensors) builds an output; both sides run a
  backward from it; the output, and every input's gradient (None-ness, shape, dtype,
  values) are compared. On a wrong gradient the message names the input, shows both values,
  and locates the first node in backward order whose gradients part from torch's, with a
  drawing of the graph around it.
- `compare(fn, **inputs)`: fn(lib, **tensors) returns anything (tensors, numbers, None,
  tuples, {label: value} dicts whose labels name a mismatch) or raises; both sides must
  return equal things, raise the same error (torch's phrase), and warn alike.

Once the engine's side has run, learner code has nothing more to do in a comparison: the
oracle removes any profile or trace function it installed (guards/tracers.py: one caught the
comparison and rewrote the engine's values), and compares its own copies of the engine's
results, taken then, not the engine's objects. Its tolerances cannot be changed in place.
"""
import os
import types
import warnings
from pathlib import Path

import numpy as np

from reference import pieces as seam

from ..guards import time_limit, tracers, tripwire
from ..manifest import learner_file_paths
from . import blame, graph_picture, graph_view


def torch_module():
    """torch, imported where the oracle first needs it (see above), not with this module."""
    import torch

    return torch


class KataMismatch(AssertionError):
    """The engine's answer differs from torch's."""


class Constant:
    """Wrap an input that must not require grad: oracle.check_grads(fn, x=..., w=Constant(...))."""

    def __init__(self, value):
        self.value = value


SECOND_TIME = "backward through the graph a second time"
TOLERANCES = types.MappingProxyType({np.dtype(np.float32): (1e-4, 1e-5), np.dtype(np.float64): (1e-7, 1e-10)})


def _tolerance(dtype):
    return TOLERANCES.get(np.dtype(dtype), (1e-4, 1e-5))


def _unwrap(value):
    return value.value if isinstance(value, Constant) else value


def _wants_grad(value):
    array = np.asarray(_unwrap(value))
    return not isinstance(value, Constant) and array.dtype.kind == "f"


def _make_inputs(lib, inputs, float64):
    tensors = {}
    for name, value in inputs.items():
        array = np.array(_unwrap(value), copy=True)
        if array.dtype.kind == "f" and float64:
            array = array.astype(np.float64)
        tensors[name] = lib.tensor(array, requires_grad=_wants_grad(value))
    return tensors


def _numpy(t):
    # A copy, of torch's tensors too: knowing which is which would take importing torch.
    return np.array(t.detach().cpu().numpy())


def _seed_for(shape):
    # The same seed for the same shape, every run: a grade must not depend on luck.
    rng = np.random.default_rng(len(shape) * 1000 + int(np.prod(shape, dtype=np.int64)))
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


FORWARD = "the result (forward)"  # what check_grads compares first, unless a test names it


class Oracle:
    def __init__(self, engine):
        self.ag = engine

    def __repr__(self):  # pytest shows a test's arguments above its failure: words, not an address
        return "<the oracle: runs each check on the engine and on torch>"

    # --- gradients ---------------------------------------------------------------------

    def check_grads(self, fn, op=None, result_name=FORWARD, **inputs):
        """`result_name` says what fn returns where it is not a forward result (a first
        derivative, for a test of second derivatives)."""
        __tracebackhide__ = True
        op = op or getattr(fn, "__name__", "the operation")
        try:
            actual = self._run_backward(self.ag, fn, inputs, float64=False)
        except (KataMismatch, NotImplementedError):
            raise  # the kit's sentence already, or a stub reached (a to-do)
        except Exception as error:
            # An error inside the check's own steps (a first derivative taken there): the
            # piece behind it, under the check's description.
            explained = blame.explain(error, learner_file_paths())
            if explained is None or type(error).__name__ in _NOT_EXPLAINED:
                raise
            raise KataMismatch(f"{op}: {explained}") from None
        try:
            # The engine's backward before torch's forward (a stub is a to-do at once): the
            # gradients of every node of its graph are kept, for pairing with torch's after.
            actual["nodes"] = graph_view.graph_nodes(actual["root"]) if "root" in actual else []
            actual["records"] = self._backward(actual, actual["nodes"], self.ag, op)
            tracers.remove_foreign()  # the learner's code is done: nothing may watch what follows
            actual["grads"] = {name: _frozen(leaf._grad) for name, leaf in actual["tensors"].items()}
            expected = self._run_backward(torch_module(), fn, inputs, float64=True)
            try:
                self._compare_outputs(op, result_name, expected, actual)
            except KataMismatch as mismatch:
                raise KataMismatch(self._what_differs(str(mismatch), op, result_name, fn, inputs, expected,
                                                      actual)) from None
            for name in inputs:
                if _wants_grad(inputs[name]):
                    self._compare_grad(op, name, inputs, expected, actual)
        except KataMismatch as mismatch:
            # The values this call used (a test may have moved them after hypothesis drew them).
            again = KataMismatch(f"{mismatch}\n  inputs of this call: {_describe_inputs(inputs)}")
            again.picture = getattr(mismatch, "picture", None)  # the graph, drawn if asked (graph_picture.py)
            raise again from None

    def _run_backward(self, lib, fn, inputs, float64):
        tensors = _make_inputs(lib, inputs, float64)
        before = blame.last_return()
        out = fn(lib, **tensors)
        run = {"tensors": tensors, "out": out, "value": _numpy(out)}
        run["piece"] = piece_ran_since(before)  # a learner's piece ran inside fn (autograd.grad)
        if out.grad_fn is not None:
            run["root"] = out.grad_fn
        return run

    def _backward(self, run, nodes, lib, op=""):
        """Run the backward pass of `run`; the gradients `nodes` received and passed on."""
        out = run["out"]
        seed = None if out.numel() == 1 else _seed_for(tuple(out.shape))
        if seed is not None:
            if lib is self.ag:  # in the output's dtype: float32 stays float32
                seed = seed.astype(_numpy(out).dtype)
            seed = lib.tensor(seed)
        records, handles = graph_view.record_gradients(nodes)
        try:
            out.backward(seed)
        except Exception as error:
            if lib is not self.ag:  # torch
                raise
            if SECOND_TIME in str(error) and not _raised_by_learner(error):
                # One backward call on a fresh graph: a node met its saved tensors freed, so it
                # ran twice, or they were released before it ran.
                raise KataMismatch(
                    f"{op}: a node found its saved tensors freed in the one backward pass (torch's error: "
                    "\"Trying to backward through the graph a second time\"). Either a node ran a second "
                    "time in one backward pass (a pass runs each node once, with the sum of all the "
                    "gradients that reach it: buffer them, and run the node when its turn in the order "
                    "comes), or its saved tensors were released before it ran (run the node, then release)."
                ) from error
            explained = blame.explain(error, learner_file_paths())
            if explained is None:
                raise
            raise KataMismatch(f"{op}: {explained}") from error
        finally:
            for handle in handles:
                handle.remove()
        return records

    def _what_differs(self, message, op, result_name, fn, inputs, expected, actual):
        """A forward result that differs said as what differs inside it (see said_inside)."""
        def rerun():
            return self._run_backward(self.ag, fn, inputs, float64=False)["value"]

        return said_inside(message, f"{op}: {result_name}", actual.get("piece"), result_name == FORWARD,
                           rerun, expected["value"])

    def _compare_outputs(self, op, result_name, expected, actual):
        __tracebackhide__ = True
        pairs = []
        if "root" in expected and "root" in actual:
            pairs = graph_view.pair_graphs(actual["root"], expected["root"])
        expected["records"] = self._backward(expected, [t for _, t in pairs], torch_module())
        actual["records"] = _records_by_pair(actual["nodes"], actual["records"], pairs)
        actual["pairs"] = pairs
        if actual["value"].shape != expected["value"].shape or not graph_view._close(
            actual["value"].astype(np.float64), expected["value"].astype(np.float64),
            *_tolerance(actual["value"].dtype),
        ):
            raise KataMismatch(
                f"{op}: {result_name} differs from torch's\n"
                f"  expected {graph_view.abbreviate(expected['value'])}\n"
                f"  got      {graph_view.abbreviate(actual['value'])}"
            )

    def _compare_grad(self, op, name, inputs, expected, actual):
        __tracebackhide__ = True
        theirs = expected["tensors"][name].grad
        ours = actual["grads"][name]  # the copy taken when the engine's side ended
        dtype = np.asarray(_unwrap(inputs[name])).dtype
        problem = None
        if (ours is None) != (theirs is None):
            problem = f"the gradient of `{name}` is {'None' if ours is None else 'set'}, torch's is {'None' if theirs is None else 'set'}"
        elif ours is None:
            return
        elif tuple(ours.shape) != tuple(theirs.shape):
            problem = f"the gradient of `{name}` has shape {tuple(ours.shape)}; torch's (and `{name}`'s) is {tuple(theirs.shape)}"
        elif np.dtype(ours.dtype) != dtype:
            problem = f"the gradient of `{name}` is {ours.dtype}, but `{name}` is {dtype} (torch keeps a leaf's dtype)"
        elif not graph_view._close(_numpy(ours).astype(np.float64), _numpy(theirs), *_tolerance(dtype)):
            problem = (
                f"the gradient of `{name}` differs from torch's\n"
                f"  expected {graph_view.abbreviate(_numpy(theirs))}\n"
                f"  got      {graph_view.abbreviate(_numpy(ours))}"
            )
        if problem:
            diagnosis, picture = self._diagnosis(expected, actual, inputs, dtype)
            diagnosis = _said_once(diagnosis, problem)
            mismatch = KataMismatch(f"{op}: {problem}{diagnosis}")
            if picture is not None:
                picture.op, picture.message = op, f"{op}: {problem}{diagnosis}"
            mismatch.picture = picture
            raise mismatch

    def _diagnosis(self, expected, actual, inputs, dtype):
        """The sentence that locates the first wrong node, with the text tree, and what it
        takes to draw both graphs (graph_picture.Mismatch)."""
        pairs = actual.get("pairs")
        if not pairs:
            return "", None
        root = actual["root"]
        topological_order = seam.REFERENCE.get("topological_order")
        if topological_order is None:  # a course edition without kata 03's model solution
            return ""
        order = tripwire.original(topological_order)([root])  # (the kit's own call: no wire to trip)
        node, sentence = graph_view.locate(
            pairs, actual["records"], expected["records"], order, *_tolerance(dtype)
        )
        labels = {id(t): name for name, t in actual["tensors"].items()}
        where = f"\n  where: {sentence}" if node is not None else ""
        picture = graph_picture.Mismatch("", "", root, expected.get("root"), pairs, actual["records"],
                                         expected["records"], node, labels)
        return f"{where}\n  graph (from the output down):\n{graph_view.draw(root, node, labels)}", picture

    # --- behaviour -------------------------------------------------------------------------

    def compare(self, fn, error_phrase=None, what=None, why=None, **inputs):
        """Run fn(lib, **tensors) on both; results, errors and warnings must agree. A value
        that differs is named by `what` (what fn returns; by default the test's scenario, from
        its name) and followed by `why`, what the contract asks for, where given."""
        __tracebackhide__ = True
        # The engine first: a stub reached here ends the test, a to-do, before torch is needed.
        actual = _outcome(self.ag, fn, _make_inputs(self.ag, inputs, float64=False))
        tracers.remove_foreign()  # the learner's code is done: nothing may watch what follows
        frozen = _frozen(actual["value"])
        torch = torch_module()
        expected = _outcome(torch, fn, _make_inputs(torch, inputs, float64=True))
        if expected["error"] is not None or actual["error"] is not None:
            _compare_errors(expected["error"], actual["error"], error_phrase)
        else:
            try:
                _compare_values(expected["value"], frozen, "the result")
            except KataMismatch as mismatch:
                raise KataMismatch(_named(str(mismatch), what, why)) from None
        _compare_warnings(expected["warnings"], actual["warnings"])
        return actual["value"]


class _Frozen:
    """A copy of an engine tensor's value, as the comparison reads it (what a learner's code
    does to the tensor afterwards changes nothing)."""

    grad_fn = None

    def __init__(self, tensor):
        self.array = _numpy(tensor)
        self.shape, self.dtype = tuple(self.array.shape), self.array.dtype
        self.requires_grad = bool(tensor.requires_grad)
        # the name of the node that made it (a graph is a sign of grad mode on), not the node
        self.made_by = tensor.grad_fn.name() if getattr(tensor, "grad_fn", None) is not None else None

    def numpy(self):
        return self.array

    def detach(self):
        return self

    cpu = detach


# Errors that end a test on their own terms (a time limit or a stub reached is no Exception).
_NOT_EXPLAINED = ("RecursionError", "RaisedInterrupt", "LearnerFileError")


def _said_once(diagnosis, problem):
    """The diagnosis without the expected and got lines the problem above it already shows
    (the wrong node's gradient is the leaf's own): it points at them instead."""
    said = {line.strip() for line in problem.splitlines()[1:]}
    lines = diagnosis.split("\n")
    repeated = [line for line in lines if line.strip().startswith(("expected ", "got ")) and line.strip() in said]
    if len(repeated) < 2:
        return diagnosis
    at = lines.index(repeated[0])
    lines = [line for line in lines if line not in repeated]
    lines.insert(at, f"{repeated[0][: len(repeated[0]) - len(repeated[0].lstrip())]}returned: the `got` above, where torch's gives the `expected`")
    return "\n".join(lines)


def _named(message, what, why):
    """A value mismatch said with what was compared: `what`, else the test's scenario (a
    labelled result whose test says why needs no more)."""
    scenario = current_scenario()
    if message.startswith("the result") and (what or scenario):
        message = (what or f"{scenario}: the result") + message[len("the result"):]
    elif what or (scenario and not why):  # a {label: value} result: the label says which value
        message = f"{what or scenario}: {message}"
    return f"{message}\n  {why}" if why else message


def current_scenario():
    """The running test's name in words ("test_hooks_see_x[cpu]" -> "hooks see x (cpu)"), or ""."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    name = current.rsplit("::", 1)[-1].rsplit(" (", 1)[0]
    name, _, case = name.partition("[")
    if not name.startswith("test_"):
        return ""
    words = name[len("test_"):]
    for api in _API_NAMES:  # the engine's own names keep their spelling: autograd.grad, retain_grad
        words = words.replace(api.replace(".", "_"), api.replace("_", "\0"))
    words = words.replace("_", " ").replace("\0", "_")
    return f"{words} ({case.rstrip(']')})" if case else words


# names of the API that a test's name may hold, said as a learner writes them
_API_NAMES = ("autograd.grad", "retain_grad", "requires_grad", "create_graph", "retain_graph", "merge_grads",
              "make_root_grads", "run_backward", "accumulate_grad", "grad_fn", "no_grad")


def _frozen(value):
    """`value` with every engine tensor in it replaced by a copy (tuples, lists, dicts kept)."""
    if isinstance(value, dict):
        return {key: _frozen(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_frozen(item) for item in value) if type(value) in (tuple, list) else value
    if _is_tensor(value) and not isinstance(value, _Frozen):
        return _Frozen(value)
    return value


def _records_by_pair(nodes, records, pairs):
    """The engine's records, kept for each node of its graph (`nodes`, in the order hooked),
    keyed instead by the pair each node is in, as torch's are."""
    hooked = {id(node): index for index, node in enumerate(nodes)}
    return {index: records[hooked[id(ours)]] for index, (ours, _) in enumerate(pairs)
            if hooked.get(id(ours)) in records}


def _raised_by_learner(error):
    """Whether a learner's own code raised `error` itself (a SavedTensors that refuses too
    early), not the engine called from it."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() in learner_file_paths()


def _describe_inputs(inputs):
    parts = []
    for name, value in inputs.items():
        text = graph_view.abbreviate(np.asarray(_unwrap(value)))
        parts.append(f"{name}={text}" + (" (constant)" if isinstance(value, Constant) else ""))
    return ", ".join(parts)


def _outcome(lib, fn, tensors):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, error = fn(lib, **tensors), None
        except (RuntimeError, TypeError, ValueError, IndexError, AttributeError) as exc:
            value, error = None, exc
    kept = [w for w in caught if issubclass(w.category, UserWarning) and not _torch_only(w)]
    return {"value": value, "error": error, "warnings": kept}


def _torch_only(warning):
    # torch warns once per process that backward(create_graph=True) makes a reference cycle
    # (a C++ memory concern); whether it shows depends on what ran before, so it is not compared.
    return "create a reference cycle" in str(warning.message)


def piece_ran_since(before):
    """The learner piece that returned last since blame.last_return() gave `before`, or None."""
    after = blame.last_return()
    return after[0] if after is not None and after is not before else None


def said_inside(message, heading, piece, forward, rerun, expected):
    """`message` ("<heading> differs from torch's ...") of a forward result that a learner's
    piece ran inside (a gradient taken with autograd.grad): said as what differs, once the
    same call with the model solutions' pieces (`rerun()`, its value) gives torch's `expected`:
    the forward operations agree. Else `message` as it is."""
    said = f"{heading} differs from torch's"
    if piece is None or not forward or not message.startswith(said) or not _agrees_with_model_pieces(rerun, expected):
        return message
    inside = ("the gradient taken inside it" if piece.endswith("_backward") or piece in _PASS_PIECES
              else f"what your {piece} computed inside it")
    head = heading[: -len(FORWARD)].rstrip(": ")
    return f"{head}: {inside} differs from torch's (the forward agrees)" + message[len(said):]


def _agrees_with_model_pieces(rerun, expected):
    """Whether `rerun()` with the model solutions' pieces gives `expected` (never raises)."""
    try:
        with time_limit.not_counted(), seam.swapped(tripwire.unwired(list(seam.REFERENCE))):
            value = np.asarray(rerun())
        expected = np.asarray(expected)
        return value.shape == expected.shape and graph_view._close(
            value.astype(np.float64), expected.astype(np.float64), *_tolerance(value.dtype))
    except Exception:  # noqa: BLE001 (a model piece refused, a course edition lacks one: nothing is known)
        return False


# The pieces of a backward pass that are not a node's rule: what they compute is a gradient too.
_PASS_PIECES = ("unbroadcast", "topological_order", "accumulate_grad", "make_root_grads", "run_backward")


def key_phrase(message):
    """The part of an error message that names the error (before its details)."""
    message = str(message).strip()
    head = message.split(":", 1)[0] if ":" in message[:120] else message.split(". ", 1)[0]
    return head.strip()


def _compare_errors(expected, actual, phrase):
    __tracebackhide__ = True
    if expected is None:
        explained = blame.explain(actual, learner_file_paths())
        if isinstance(actual, AttributeError) and "'NoneType'" in str(actual):
            explained += ("\n  (a value the test uses, such as a .grad, is None in the engine but set in "
                          "torch: a gradient never reached it)")
        raise KataMismatch(f"torch runs this without error, but {explained}") from actual
    if actual is None:
        raise KataMismatch(f"torch raises {type(expected).__name__}: {expected}\n  the engine raised nothing")
    if isinstance(actual, NotImplementedError):
        raise actual  # a stub reached (this kata's, or a piece not written yet): a to-do, not a mismatch
    phrase = phrase or key_phrase(expected)
    if type(actual) is not type(expected) and not isinstance(actual, RuntimeError):
        # Not the error torch raises, nor an error of torch's kind: the learner's piece broke.
        raise KataMismatch(
            f"{blame.explain(actual, learner_file_paths())}\n"
            f"  (where torch raises {type(expected).__name__}: {expected})"
        ) from actual
    if type(actual) is not type(expected) or phrase not in str(actual):
        # The kit's sentence first, the learner's error once under it (not chained above it).
        wanted = "" if phrase == str(expected) else f"\n  (expected the phrase: {phrase!r})"  # not torch's words twice
        raise KataMismatch(
            f"torch raises {type(expected).__name__}: {expected}\n"
            f"  {_engine_raised(actual)}{wanted}"
        ) from None


def _engine_raised(error):
    """"the engine raised T: message", or, where the learner's own code raised it, which
    piece raised it, at which line (blame.py)."""
    explained = blame.explain(error, learner_file_paths()) if _raised_by_learner(error) else None
    return explained.replace("\n", "\n  ") if explained else f"the engine raised {type(error).__name__}: {error}"


def _compare_warnings(expected, actual):
    __tracebackhide__ = True
    want = [key_phrase(w.message) for w in expected]
    got = [key_phrase(w.message) for w in actual]
    if want != got:
        raise KataMismatch(f"torch warns {want or 'nothing'}; the engine warns {got or 'nothing'}")


def _why_requires_grad(actual):
    """What a tensor that requires grad where torch's does not tells of its making."""
    if not actual.requires_grad:
        return ""
    made_by = getattr(actual, "made_by", None)  # a _Frozen copy's
    if made_by is None and getattr(actual, "grad_fn", None) is not None:
        made_by = actual.grad_fn.name()
    if made_by is not None:
        return (f": grad mode was on (it has a graph: {made_by}), where a backward pass without "
                "create_graph turns it off")
    return ": it is a leaf that requires grad (the tensor itself handed back, not a new one?)"


def _plain(values):
    return all(isinstance(v, (str, int, float, bool)) or v is None for v in values)


def _plain_and_unequal(expected, actual):
    """Two lists of plain values (labels, flags, numbers) that differ: shown whole, not item by item."""
    if not (_plain(expected) and _plain(actual)):
        return False
    return any(not (np.isclose(e, a, rtol=1e-4) if isinstance(e, float) and isinstance(a, (int, float)) else e == a)
               for e, a in zip(expected, actual))


def _listed(values):
    """A list of plain values as it is (['side', 'main']), else its length and items in words."""
    if isinstance(values, (tuple, list)) and _plain(values):
        return repr(values)
    return blame.describe(values)


def _is_tensor(value):  # torch's or the engine's (without importing torch to tell)
    return hasattr(value, "grad_fn") and hasattr(value, "numpy")


def _compare_values(expected, actual, what):
    __tracebackhide__ = True
    if isinstance(expected, dict):  # {label: value}: a mismatch is named by its label
        if not isinstance(actual, dict) or list(actual) != list(expected):
            raise KataMismatch(f"{what}: torch gives {list(expected)}, the engine {actual!r}")
        for key, value in expected.items():
            _compare_values(value, actual[key], key if what == "the result" else f"{what}, {key}")
        return
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected) or _plain_and_unequal(expected, actual):
            raise KataMismatch(f"{what}: torch gives {_listed(expected)}, the engine {_listed(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            _compare_values(e, a, f"{what}[{i}]" if " " not in what else f"{what} (item {i})")  # not "saw[1]"
        return
    if _is_tensor(expected):
        if not _is_tensor(actual):
            raise KataMismatch(f"{what} is {blame.describe(actual)}, torch's is {blame.describe(expected)}")
        e, a = _numpy(expected), _numpy(actual)
        if e.shape != a.shape:
            raise KataMismatch(f"{what}: shape {a.shape}, torch's is {e.shape}")
        if e.dtype.kind != a.dtype.kind:
            raise KataMismatch(f"{what}: dtype {a.dtype}, torch's is {e.dtype}")
        if bool(expected.requires_grad) != bool(actual.requires_grad):
            raise KataMismatch(f"{what}: requires_grad is {actual.requires_grad}, torch's is "
                               f"{expected.requires_grad}{_why_requires_grad(actual)}")
        if e.dtype.kind in "fc" and not graph_view._close(a.astype(np.float64), e.astype(np.float64), *_tolerance(a.dtype)):
            raise KataMismatch(f"{what} differs from torch's\n  expected {graph_view.abbreviate(e)}\n  got      {graph_view.abbreviate(a)}")
        if e.dtype.kind not in "fc" and not np.array_equal(e, a):
            raise KataMismatch(f"{what} differs from torch's: expected {e}, got {a}")
        return
    if expected is None or actual is None:
        if expected is not actual:
            raise KataMismatch(f"{what}: torch gives {expected!r}, the engine {actual!r}")
        return
    if isinstance(expected, float):
        if not np.isclose(expected, actual, rtol=1e-4):
            raise KataMismatch(f"{what}: torch gives {expected!r}, the engine {actual!r}")
        return
    if expected != actual:
        raise KataMismatch(f"{what}: torch gives {expected!r}, the engine {actual!r}")
