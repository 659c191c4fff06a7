"""Kata 07, model solution: the tensors a node keeps for its backward rule.

The forward of `y = x.sigmoid()` saves y, because the rule needs it. Saved tensors are most
of a graph's memory, so a backward pass without retain_graph releases each node's saved
tensors right after the node runs. A second pass through that node then has nothing to work
with: torch's "Trying to backward through the graph a second time" error. A node that saved
nothing can run any number of times.

A saved tensor may also be changed in place after it was saved; the version counter it
had when saved tells, and unpacking refuses to hand out a changed value.
"""
import weakref

__all__ = ["SavedTensors"]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)

TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
              "int64": "LongTensor"}  # (indices: max(dim) and indexing save them)


class SavedTensors:
    """What one node saved. `owner` is that node."""

    __slots__ = ("_owner", "_tensors", "_versions", "_outputs", "_released")

    def __init__(self, owner):
        # Weak: the node owns this object; a strong reference back would be a cycle.
        self._owner = weakref.ref(owner)
        self._released = False

    def save(self, *tensors):
        owner = self._owner()
        # One plain loop (this runs for most operations of every forward): is each tensor
        # the node's own output, and its version now.
        outputs = []
        versions = []
        for t in tensors:
            outputs.append(t is not None and t.grad_fn is owner)
            versions.append(None if t is None else t._version)
        if True in outputs:
            # The node's own output: keep it detached (sharing data and version), or
            # node -> output -> node would keep both alive.
            tensors = tuple([t.detach() if out else t for t, out in zip(tensors, outputs)])
        self._tensors = tensors
        # Kept as tuples: the cycle collector stops tracking a tuple of numbers, and a big
        # graph holds one pair per node.
        self._versions = tuple(versions)
        self._outputs = tuple(outputs)

    def unpack(self):
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        owner = self._owner()
        unpacked = []
        for t, version, is_output in zip(self._tensors, self._versions, self._outputs):
            if t is not None and t._version != version:
                raise RuntimeError(_modified_message(t, version, owner if is_output else t.grad_fn))
            unpacked.append(reattach(t, owner) if is_output else t)
        return tuple(unpacked)

    def release(self):
        self._tensors = self._versions = self._outputs = None
        self._released = True


from ..graph import reattach  # noqa: E402  (graph.py imports this module's users)


def _operation(node_name):
    """torch's name of the operation behind a node: "Backward" taken out, and an overload
    number kept unless it is 0 (SigmoidBackward0 -> Sigmoid, PowBackward1 -> Pow1)."""
    operation, _, overload = node_name.partition("Backward")
    return operation if overload == "0" else operation + overload


def _modified_message(tensor, saved_version, producer):
    kind = TYPE_NAMES.get(str(tensor.dtype), f"{tensor.dtype} tensor")
    # torch names the operation, not its node: "output 0 of Sigmoid", not SigmoidBackward0.
    origin = "" if producer is None else f", which is output 0 of {_operation(producer.name())},"
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [torch.{kind} {list(tensor.shape)}]{origin} is at version "
        f"{tensor._version}; expected version {saved_version} instead. Hint: the tensor was "
        "changed in place after an operation saved it for its backward; use an out-of-place "
        "operation (y = y * 2 rather than y.mul_(2))."
    )
