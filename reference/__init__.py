"""The reference engine: a torch-like reverse-mode autograd on numpy.

    import reference as ag
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4.])

The engine's core is this folder (tensor.py and ops.py: the forward side; graph.py: nodes
and hooks; autograd.py: backward() and grad(); cuda.py and cuda_sim.py: the GPU). The model
solutions of the ten katas are in solutions/, one module each; the engine reaches the pieces
of katas 01-08 only through the seam, `pieces.active`, which is how a learner's replace them.
"""
import numpy as _np

from . import autograd, cuda, pieces
from .creation import (
    arange,
    empty_like,
    full,
    manual_seed,
    ones,
    ones_like,
    rand,
    randn,
    tensor,
    zeros,
    zeros_like,
)
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops import (
    abs,
    exp,
    log,
    log_softmax,
    matmul,
    max,
    mean,
    relu,
    sigmoid,
    softmax,
    sqrt,
    sum,
    tanh,
    where,
)
from .tensor import Tensor

float16 = half = _np.dtype("float16")
float32 = float = _np.dtype("float32")
float64 = double = _np.dtype("float64")
int32 = _np.dtype("int32")
int64 = long = _np.dtype("int64")
bool = _np.dtype("bool")

pieces.load_reference()


def __getattr__(name):
    # `ag.device`, torch.device's counterpart: the active Device piece (kata 08's model
    # solution, or a learner's while it is graded), looked up when used; the core never
    # imports a model solution (a course edition may not hold kata 08's).
    if name == "device":
        return pieces.active.Device
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
