"""Graph objects: the nodes a backward pass walks (torch's `grad_fn`s).

A `Node` is created by an operation when it records a graph. It is also the operation's `ctx`:
the forward stores what the backward rule needs on it (`ctx.save_for_backward(...)`,
`ctx.dim = ...`), and the rule reads it back (`ctx.saved_tensors`). `next_functions` has one
`(node, 0)` pair per input: the input's own grad_fn, its `AccumulateGrad` node when it is a
leaf that requires grad, or None for a constant.

Calling a node runs the active backward rule (looked up through the seam, so a learner's rule
is used where one is plugged in) and checks what it returned, with torch's words.
"""
import itertools
import sys

import numpy as np

from .grad_mode import GradMode
from .pieces import active


class _Stats:
    """Counters the kit reads in tests and benchmarks (counts are not noisy like time)."""

    __slots__ = ("node_calls",)

    def __init__(self):
        self.node_calls = 0  # (on an instance: adding to a class's attribute costs 60 ns a node)


Stats = _Stats()


class NodeKind:
    """What every node of one operation shares: torch's name for it ("MulBackward0"), the
    backward rule it runs (looked up in the seam by name: "mul_backward"), whether the
    engine sums the rule's gradients down to the inputs' shapes (binary elementwise rules
    return them in the broadcast shape; the `unbroadcast` piece reduces them), and whether
    the engine unpacks the saved tensors before the rule runs (`unpack_first`: for rules that
    read what they need from ctx attributes, below)."""

    __slots__ = ("name", "rule", "reduce_broadcast", "unpack_first")

    def __init__(self, name, rule, reduce_broadcast=False, unpack_first=False):
        self.name = name
        self.rule = rule
        self.reduce_broadcast = reduce_broadcast
        self.unpack_first = unpack_first

    def __repr__(self):
        return f"NodeKind({self.name!r}, {self.rule!r})"


class Node:
    """A node of the graph: one recorded operation, with the kind of operation it was.

    (One class for every operation, unlike torch's one class per operation: Python runs
    attribute lookups on objects of a single class markedly faster.)
    """

    __slots__ = (
        "kind",
        "sequence_nr",
        "next_functions",
        "needs_input_grad",
        "input_shapes",
        "input_dtypes",
        "feeds_a_leaf",  # an input is a leaf that requires grad (its edge: an AccumulateGrad)
        "_saved",
        "pre_hooks",
        "post_hooks",
        "retained",
        "__dict__",  # per-operation context (ctx.dim, ctx.keepdim, ...)
        "__weakref__",
    )

    def __init__(self, kind, inputs):
        self.kind = kind
        # Nodes are numbered in the order they are made, as torch numbers them: its engine
        # runs, of the nodes ready to run, the one made last (so does kata 03's model order).
        self.sequence_nr = next(_SEQUENCE)
        # One (node, 0) edge per input, and one bool per input in needs_input_grad (does it
        # want a gradient? a rule may skip the others). Written out for one and two inputs:
        # this runs for every recorded operation.
        if len(inputs) == 1:
            (t,) = inputs
            # gradient_node(t), written out (here and below): a call costs 70 ns.
            node = t.grad_fn
            self.feeds_a_leaf = node is None and t._requires_grad
            if self.feeds_a_leaf:
                node = t._grad_accumulator()
            self.next_functions = (_NO_EDGE if node is None else (node, 0),)
            self.needs_input_grad = _NEEDS_ONE[node is not None]
            self.input_shapes = (t._data.shape,)
            self.input_dtypes = (t._data.dtype,)
        else:
            a, b = inputs
            node_a, node_b = a.grad_fn, b.grad_fn
            self.feeds_a_leaf = False
            if node_a is None and a._requires_grad:
                node_a = a._grad_accumulator()
                self.feeds_a_leaf = True
            if node_b is None and b._requires_grad:
                node_b = b._grad_accumulator()
                self.feeds_a_leaf = True
            self.next_functions = (
                _NO_EDGE if node_a is None else (node_a, 0),
                _NO_EDGE if node_b is None else (node_b, 0),
            )
            self.needs_input_grad = _NEEDS_TWO[node_a is not None][node_b is not None]
            self.input_shapes = (a._data.shape, b._data.shape)
            self.input_dtypes = (a._data.dtype, b._data.dtype)
        self._saved = None
        self.pre_hooks = None  # hooks of the tensor this node produced, in order
        self.post_hooks = None  # hook(grad_inputs, grad_outputs) after the node ran
        self.retained = None  # weak reference to that tensor when it called retain_grad()

    def name(self):
        return self.kind.name

    def _sequence_nr(self):  # torch's spelling
        return self.sequence_nr

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    # --- the ctx side: what the forward leaves for the backward rule ---------------------

    def save_for_backward(self, *tensors):
        saved = active.SavedTensors(self)
        saved.save(*tensors)
        self._saved = saved

    @property
    def saved_tensors(self):
        return () if self._saved is None else self._saved.unpack()

    def release_saved(self):
        """Free the saved tensors (a backward without retain_graph does this after the node runs)."""
        if self._saved is not None:
            self._saved.release()

    def register_prehook(self, hook):
        """Run `hook(grad)` on this node's incoming gradient; its return value, if not None, replaces it."""
        if self.pre_hooks is None:
            self.pre_hooks = []
        return RemovableHandle(self.pre_hooks, hook)

    def register_hook(self, hook):
        """Run `hook(grad_inputs, grad_outputs)` after the node ran (as torch's Node.register_hook)."""
        if self.post_hooks is None:
            self.post_hooks = []
        return RemovableHandle(self.post_hooks, hook)

    # --- the backward side ---------------------------------------------------------------

    def __call__(self, grad):
        """Gradients for this node's inputs, one per entry of next_functions (None where unused)."""
        Stats.node_calls += 1
        # The version counter read directly (the `_version` property, twice, costs 60 ns per
        # node): most gradients never had one (None is version 0).
        box = grad._version_box
        version = 0 if box is None else box[0]
        if self.kind.unpack_first:
            # max(dim) and indexing keep their indices on ctx for the rule (kata 02's
            # ctx.indices, ctx.index) and save them too, as torch does: unpacking them here
            # gives torch's errors for a freed graph or an index changed in place, whatever
            # the rule reads.
            self.saved_tensors
        grads = getattr(active, self.kind.rule)(self, grad)
        box = grad._version_box
        if box is not None and box[0] != version:
            raise RuntimeError(
                f"the backward rule of {self.name()} changed its incoming gradient in place; "
                "other nodes may hold the same tensor, so a rule must build new tensors "
                "(grad * 2, not grad.mul_(2))"
            )
        grads = self._checked(grads, grad)
        if self.post_hooks:
            for hook in self.post_hooks:
                hook(grads, (grad,))
        elif self.feeds_a_leaf:  # (a post hook may keep the gradients it saw)
            _mark_owned(grads, self.next_functions)
        return grads

    def _checked(self, grads, grad_output):
        """The rule's gradients, reduced to the inputs' shapes, or torch's error if they do not fit."""
        if type(grads) is not tuple or len(grads) != len(self.next_functions):
            grads = self._as_tuple(grads)
        # Almost always every gradient fits its input as it is: then the rule's own tuple is
        # the answer, with no new one built (this runs for every node).
        for grad, (child, _), shape, dtype in zip(grads, self.next_functions, self.input_shapes, self.input_dtypes):
            if grad is not None and (
                child is None or type(grad) is not Tensor
                or grad._data.shape != shape or grad._data.dtype is not dtype
            ):
                return self._fitted(grads, grad_output)
        return grads

    def _fitted(self, grads, grad_output):
        """_checked's gradients where one needs a change: None for an input that takes none,
        a broadcast gradient summed down, a mixed-precision one cast, or torch's error."""
        checked = []
        for (child, _), grad, shape, dtype in zip(
            self.next_functions, grads, self.input_shapes, self.input_dtypes
        ):
            if grad is None or child is None:
                checked.append(None)
                continue
            if not isinstance(grad, Tensor):
                _not_a_tensor(grad, self.kind.rule, len(checked))
            if grad._data.shape != shape:
                grad = self._reduced(grad, shape, len(checked))
            if grad._data.dtype is not dtype and grad._data.dtype != dtype:  # (`is`: 50 ns less)
                grad = self._cast(grad, dtype, grad_output._data.dtype, len(checked))
            checked.append(grad)
        return tuple(checked)

    def _as_tuple(self, grads):
        """A rule's result as a tuple of the right length: a lone Tensor or a list is accepted."""
        if isinstance(grads, Tensor) and len(self.next_functions) == 1:
            grads = (grads,)
        elif isinstance(grads, list):
            grads = tuple(grads)
        elif type(grads) is not tuple:
            raise TypeError(
                f"{self.kind.rule} returned {type(grads).__name__}; a backward rule must return "
                f"a tuple with one gradient Tensor (or None) per input of {self.name()}"
            )
        if len(grads) != len(self.next_functions):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {len(self.next_functions)}, got {len(grads)})"
            )
        return grads

    def _reduced(self, grad, shape, index):
        """A gradient in the broadcast shape summed down to its input's shape (binary
        elementwise nodes only); any other shape mismatch is torch's error."""
        if self.kind.reduce_broadcast:
            grad = active.unbroadcast(grad, shape)
            if not isinstance(grad, Tensor):
                _not_a_tensor(grad, "unbroadcast", index)
        if grad._data.shape != shape:
            raise RuntimeError(
                f"Function {self.name()} returned an invalid gradient at index {index} - "
                f"got {list(grad._data.shape)} but expected shape compatible with {list(shape)}"
            )
        return grad

    def _cast(self, grad, dtype, grad_dtype, index):
        if grad._data.dtype != grad_dtype:
            raise RuntimeError(
                f"Function {self.name()} returned an invalid gradient at index {index} - "
                f"expected dtype {dtype} but got {grad._data.dtype}"
            )
        # A mixed-precision operation (float32 * float64 gives float64): the gradient is in
        # the output's dtype and goes back in the input's, as torch casts it.
        return grad.to(dtype=dtype)


_SEQUENCE = itertools.count()  # the next node's number
_NO_EDGE = (None, 0)  # the edge of an input that needs no gradient (a constant), made once
# needs_input_grad for one and for two inputs, made once: a node only picks one.
_NEEDS_ONE = {False: (False,), True: (True,)}
_NEEDS_TWO = {
    False: {False: (False, False), True: (False, True)},
    True: {False: (True, False), True: (True, True)},
}


def _not_a_tensor(grad, producer, index):
    raise TypeError(
        f"{producer} returned a {type(grad).__module__}.{type(grad).__name__} at index "
        f"{index}; gradients must be Tensors, computed with tensor operations (that is "
        "what lets create_graph=True differentiate them again)"
    )


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: running it adds the gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.kind = ACCUMULATE_GRAD
        self.feeds_a_leaf = False
        # torch numbers every AccumulateGrad last of all (UINT64_MAX): a leaf's gradient is
        # stored as soon as it is complete
        self.sequence_nr = sys.maxsize
        self.variable = variable
        self.next_functions = ()
        self.needs_input_grad = ()
        self.input_shapes = (variable._data.shape,)
        self.input_dtypes = (variable._data.dtype,)
        self._saved = None
        self.post_hooks = None
        self.retained = None

    @property
    def pre_hooks(self):
        # A leaf keeps its hooks itself: this node may be dropped and made again later.
        return self.variable._hooks

    def register_prehook(self, hook):
        return self.variable.register_hook(hook)

    def __call__(self, grad):
        Stats.node_calls += 1
        # A leaf that stopped requiring grad after the forward (b.requires_grad_(False))
        # keeps its .grad as it was, as torch's AccumulateGrad does; its hooks have run.
        if self.variable._requires_grad:
            if self.variable._hooks or self.post_hooks:
                disown(grad)  # the leaf's hooks saw it, or a post hook will: they may keep it
            # Grad mode is on during a backward pass exactly when create_graph was asked for.
            active.accumulate_grad(self.variable, grad, GradMode.enabled)
        if self.post_hooks:
            for hook in self.post_hooks:
                hook((), (grad,))
        return ()


ACCUMULATE_GRAD = NodeKind("AccumulateGrad", None)


# --- who holds a gradient: what lets accumulate_grad keep it without a copy -----------------


class RunningPass:
    """The backward pass running now: `token` is a new object for each pass (set by
    autograd.backward and autograd.grad), None outside one. A gradient that only the running
    pass holds carries its token (see `_mark_owned`); a token of another pass means nothing."""

    token = None


def pass_owns(grad):
    """Whether the running backward pass alone holds `grad`: a backward rule made it for a
    leaf, and nothing else holds it or its memory (no variable of yours, no hook, no other
    input's gradient, no view of it or of another tensor). accumulate_grad may then keep
    it as the leaf's first .grad without a copy, as torch's AccumulateGrad "steals" it."""
    token = getattr(grad, "_owner_pass", None)
    return token is not None and token is RunningPass.token


def disown(grad):
    """`grad` was shown to code that may keep it (a hook): no longer the pass's alone."""
    if grad is not None and getattr(grad, "_owner_pass", None) is not None:
        grad._owner_pass = None


def _mark_owned(grads, edges):
    """Mark each gradient bound for a leaf (an AccumulateGrad) that nothing but the `grads`
    tuple holds, as a rule's result fresh from an operation is: Python counts the references
    to an object (sys.getrefcount), as torch's engine counts its tensors' owners. A gradient
    a rule passed through (add's grad, grad), sent to two inputs, or viewing other memory
    (a reshape's) is held elsewhere too, and is not marked."""
    token = RunningPass.token
    if token is None:
        return
    most_tensor, most_array, most_tuple = _REFERENCES_OF_A_FRESH_GRADIENT
    if sys.getrefcount(grads) > most_tuple:  # the rule kept the tuple it returned: it holds them all
        return
    for index in range(len(grads)):  # (by index: an iterator would hold the items too)
        grad = grads[index]
        if grad is None or type(edges[index][0]) is not AccumulateGrad:
            continue
        tensor_references, array_references = _references(grad)
        # No other holder of the tensor or of its array, and the array is no view of
        # another array's memory (numpy's and CuPy's views have a base).
        if tensor_references <= most_tensor and array_references <= most_array and grad._data.base is None:
            grad._owner_pass = token


def _references(tensor):
    """How many references point to `tensor` and to its array, as counted from here."""
    return sys.getrefcount(tensor), sys.getrefcount(tensor._data)


def _references_of_a_fresh_gradient():
    """What `_references` counts for a tensor that only one tuple and one variable hold,
    as `_mark_owned` holds each gradient, and what it counts for that tuple, held by one
    variable and passed on (measured once, not assumed: Python versions count the
    references of a call's arguments differently)."""
    grads = (Tensor(np.zeros(1)),)
    grad = grads[0]
    return (*_references(grad), _tuple_references(grads))


def _tuple_references(grads):
    return sys.getrefcount(grads)


def gradient_node(tensor):
    """The node that receives `tensor`'s gradient: its grad_fn, or its AccumulateGrad if it is a
    leaf that requires grad, else None (a constant)."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if tensor._requires_grad:
        return tensor._grad_accumulator()
    return None


class GradientEdge(tuple):
    """(node, output_nr), as returned by torch.autograd.graph.get_gradient_edge."""

    __slots__ = ()

    def __new__(cls, node, output_nr=0):
        return super().__new__(cls, (node, output_nr))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])


def get_gradient_edge(tensor):
    node = gradient_node(tensor)
    if node is None:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require gradients"
        )
    return GradientEdge(node, 0)


def reattach(detached, node):
    """A tensor sharing `detached`'s data and version counter whose grad_fn is `node`.

    Saved outputs use it: a node that kept its own output would keep itself alive (node ->
    output -> node), so it keeps the output detached and reattaches it when unpacked.
    """
    out = Tensor(detached._data, True, node, detached._device)
    out._version_box = detached._shared_version()
    return out


class RemovableHandle:
    """Returned by register_hook; `remove()` takes the hook out again."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook
        hooks.append(hook)

    def remove(self):
        for index, hook in enumerate(self._hooks):
            if hook is self._hook:
                del self._hooks[index]
                return


# Imported last: tensor.py (through ops.py) needs Node defined above.
from .tensor import Tensor  # noqa: E402

_REFERENCES_OF_A_FRESH_GRADIENT = _references_of_a_fresh_gradient()
