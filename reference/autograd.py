"""The entry points of a backward pass: `backward` accumulates into `.grad`, `grad` returns
the gradients instead. Both seed the roots (`make_root_grads`) and run the engine loop
(`run_backward`); the pieces are whatever the seam has active."""
import gc

from . import graph  # noqa: F401  (ag.autograd.graph.get_gradient_edge, as in torch)
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .pieces import active
from .tensor import Tensor


class _running_pass:
    """A backward pass: its own token (graph.RunningPass), which marks the gradients that only
    this pass holds, and Python's cycle collector paused. A pass allocates many short-lived
    objects and makes no cycles, but each allocation burst makes the collector walk every
    object alive, the whole graph included: on a 100,000-node chain that doubles the time.
    (torch's engine, in C++, never meets this.) A hook may run a pass of its own inside."""

    def __enter__(self):
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._outer = graph.RunningPass.token
        graph.RunningPass.token = object()

    def __exit__(self, *exc_info):
        graph.RunningPass.token = self._outer
        if self._was_enabled:
            gc.enable()


def _as_tuple(tensors):
    if isinstance(tensors, Tensor):
        return (tensors,)
    return tuple(tensors)


def _as_grad_tuple(grads):
    if grads is None:
        return None
    if isinstance(grads, Tensor):
        return (grads,)
    return tuple(grads)


def _one_per_input(grads, inputs):
    """What run_backward returned when asked for `inputs`: one gradient (or None) per input,
    as its contract says; anything else is refused here, where the piece can be named."""
    if not isinstance(grads, (tuple, list)) or len(grads) != len(inputs):
        got = f"{len(grads)} gradients" if isinstance(grads, (tuple, list)) else repr(grads) if grads is None else type(grads).__name__
        raise TypeError(
            f"run_backward returned {got}; given inputs, it must return one gradient (or None) "
            f"per input: {len(inputs)} here"
        )
    return grads


def _check_inputs(inputs):
    if not inputs:
        raise RuntimeError("inputs argument to backward() cannot be empty.")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of `tensors` into the `.grad` of the leaves (or of `inputs`)."""
    tensors = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    seeds = active.make_root_grads(tensors, _as_grad_tuple(grad_tensors))
    if inputs is None:
        with _running_pass():
            active.run_backward(tensors, seeds, retain_graph, create_graph)
        return
    with _running_pass():
        _backward_into(_as_tuple(inputs), tensors, seeds, retain_graph, create_graph)


def _backward_into(inputs, tensors, seeds, retain_graph, create_graph):
    """backward(inputs=...): the pass, then each input's gradient accumulated."""
    if not inputs:  # checked after the outputs (seeds above), as torch checks them
        raise RuntimeError("inputs argument to backward() cannot be empty.")
    for t in inputs:
        # As torch: a non-leaf named in inputs retains its gradient from now on (the pass
        # fills its .grad), and a tensor that does not require grad gets retain_grad's error.
        t.retain_grad()
    watch = _NodesRun([t.grad_fn for t in inputs if t.grad_fn is not None])
    try:
        grads = _one_per_input(active.run_backward(tensors, seeds, retain_graph, create_graph, inputs), inputs)
    finally:
        watch.stop()
    _run_input_nodes(inputs, grads, watch.ran, retain_graph, create_graph)
    done = set()
    with set_grad_enabled(create_graph):
        for t, g in zip(inputs, grads):
            if g is not None and t.is_leaf and id(t) not in done:
                done.add(id(t))  # a tensor named twice in inputs gets its gradient once, as in torch
                if t._hooks:
                    graph.disown(g)  # its hooks saw it, and may keep it
                active.accumulate_grad(t, g, create_graph)


class _NodesRun:
    """Which of `nodes` a backward pass runs: a post hook on each notes it."""

    def __init__(self, nodes):
        self.ran = set()
        self._handles = [node.register_hook(self._noting(node)) for node in set(nodes)]

    def _noting(self, node):
        return lambda grad_inputs, grad_outputs: self.ran.add(node)

    def stop(self):
        for handle in self._handles:
            handle.remove()


def _run_input_nodes(inputs, grads, ran, retain_graph, create_graph):
    """Run the grad_fn of each non-leaf input that the pass reached but did not run.

    torch's backward(inputs=...) accumulates by running the inputs' nodes: a leaf's
    AccumulateGrad, and a non-leaf's grad_fn too, whose gradients then go nowhere. The pass
    only captured a non-leaf's gradient where nothing below it was asked for; running its
    node now shows what torch shows: the error of a freed graph (y.backward(inputs=[y]) a
    second time) or of a saved tensor changed in place, the node's hooks, and its saved
    tensors freed without retain_graph. (autograd.grad runs no such node, as torch.)
    """
    for t, g in zip(inputs, grads):
        node = t.grad_fn
        if node is None or g is None or node in ran:
            continue
        ran.add(node)  # once, also for a tensor named twice
        with set_grad_enabled(create_graph):
            node(g)
        if not retain_graph:
            node.release_saved()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """The gradients of `outputs` with respect to `inputs`, returned, never put in `.grad`."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    seeds = active.make_root_grads(outputs, _as_grad_tuple(grad_outputs))
    _check_inputs(inputs)  # after the outputs, as torch checks them
    with _running_pass():
        grads = _one_per_input(active.run_backward(outputs, seeds, retain_graph, create_graph, inputs), inputs)
    if not allow_unused:
        for index, g in enumerate(grads):
            if g is None:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior."
                )
    return tuple(grads)
