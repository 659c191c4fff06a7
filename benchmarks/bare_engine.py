"""A bare eager autograd engine on numpy: the floor of the benchmarks' pure-Python engines.

micrograd's design with numpy arrays: each operation makes one object holding its result,
its inputs and a closure that turns its gradient into its inputs' gradients. Nothing else:
no checks, no saved-tensor versions, no hooks, no graph objects a user can inspect,
gradients as plain numpy arrays, no seam for a learner's pieces. Only what the benchmarks'
MLP step and tiny-op chain use.

It is not a product and not a peer: it tells how much of the reference's time over numpy
by hand is Python's own cost of an eager tape (one object and one call per operation), and
how much is what the reference does on top of it (benchmarks/README.md, issue 28).
"""
import contextlib

import numpy as np

__all__ = ["Tensor", "tensor", "arange", "no_grad"]


class Tensor:
    __slots__ = ("data", "grad", "requires_grad", "_inputs", "_backward")

    def __init__(self, data, requires_grad=False, inputs=(), backward=None):
        self.data = data
        self.grad = None
        self.requires_grad = requires_grad
        self._inputs = inputs  # the tensors this one was computed from
        self._backward = backward  # grad -> one gradient per input (None: a leaf)

    # --- operations: the forward, and the closure that is its backward ------------------

    # (A gradient is computed only for an input that requires grad, as torch's rules do:
    # x @ W1's gradient for the batch x would be a whole extra matmul.)

    def __add__(self, other):
        other = _wrapped(other)
        b = other.data
        return _result(self.data + b, (self, other),
                       lambda g: (g, _summed_to(g, b) if other.requires_grad else None))

    def __sub__(self, other):
        other = _wrapped(other)
        b = other.data
        return _result(self.data - b, (self, other),
                       lambda g: (g, _summed_to(-g, b) if other.requires_grad else None))

    def __mul__(self, other):
        other = _wrapped(other)
        a, b = self.data, other.data
        return _result(a * b, (self, other),
                       lambda g: (g * b, _summed_to(g * a, b) if other.requires_grad else None))

    def __neg__(self):
        return _result(-self.data, (self,), lambda g: (-g,))

    def __matmul__(self, other):
        a, b = self.data, other.data
        return _result(a @ b, (self, other), lambda g: (
            g @ b.T if self.requires_grad else None, a.T @ g if other.requires_grad else None))

    def __getitem__(self, index):
        index = tuple(part.data if isinstance(part, Tensor) else part for part in index)
        shape, dtype = self.data.shape, self.data.dtype

        def backward(g):
            grad = np.zeros(shape, dtype)
            np.add.at(grad, index, g)
            return (grad,)

        return _result(self.data[index], (self,), backward)

    def exp(self):
        out = np.exp(self.data)
        return _result(out, (self,), lambda g: (g * out,))

    def tanh(self):
        out = np.tanh(self.data)
        return _result(out, (self,), lambda g: (g * (1 - out * out),))

    def sigmoid(self):
        out = 1 / (1 + np.exp(-self.data))
        return _result(out, (self,), lambda g: (g * out * (1 - out),))

    def log_softmax(self, dim):
        shifted = self.data - self.data.max(axis=dim, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        return _result(out, (self,), lambda g: (g - np.exp(out) * g.sum(axis=dim, keepdims=True),))

    def sum(self):
        shape = self.data.shape
        return _result(self.data.sum(), (self,), lambda g: (np.broadcast_to(g, shape),))

    def mean(self):
        shape, size = self.data.shape, self.data.size
        return _result(self.data.mean(), (self,), lambda g: (np.broadcast_to(g / size, shape),))

    # --- the backward pass ---------------------------------------------------------------

    def backward(self):
        grads = {self: np.ones_like(self.data)}
        for node in reversed(_topological_order(self)):
            grad = grads.pop(node)
            if node._backward is None:  # a leaf that requires grad
                node.grad = Tensor(grad if node.grad is None else node.grad.data + grad)
                continue
            for parent, parent_grad in zip(node._inputs, node._backward(grad)):
                if parent.requires_grad:
                    grads[parent] = parent_grad if parent not in grads else grads[parent] + parent_grad

    # --- what the workloads read and write -----------------------------------------------

    def sub_(self, other):
        self.data -= other.data
        return self

    def __rmul__(self, number):  # lr * p.grad, where p.grad is a Tensor (the SGD step)
        return Tensor(number * self.data)

    def detach(self):
        return Tensor(self.data)

    def numpy(self):
        return self.data

    def item(self):
        return self.data.item()

    def __float__(self):
        return float(self.data)


def _result(data, inputs, backward):
    """The output of an operation: it records `backward` only when an input requires grad."""
    if _recording and any(t.requires_grad for t in inputs):
        return Tensor(data, True, inputs, backward)
    return Tensor(data)


def _wrapped(value):
    return value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=np.float32))


def _summed_to(grad, data):
    """A broadcast gradient summed back to the shape of `data` (a bias, a scalar)."""
    while grad.ndim > data.ndim:
        grad = grad.sum(axis=0)
    return grad


def _topological_order(root):
    """Every node reachable from `root` that requires grad, each after its inputs (a stack, not
    recursion: any depth)."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
        elif node not in seen:  # (marked when expanded, not when pushed: a DAG's order)
            seen.add(node)
            stack.append((node, True))
            stack.extend((parent, False) for parent in node._inputs
                         if parent.requires_grad and parent not in seen)
    return order


def tensor(data, requires_grad=False):
    return Tensor(np.array(data), requires_grad)


def arange(n):
    return Tensor(np.arange(n))


_recording = True  # False inside no_grad()


@contextlib.contextmanager
def no_grad():
    global _recording
    previous, _recording = _recording, False
    try:
        yield
    finally:
        _recording = previous
