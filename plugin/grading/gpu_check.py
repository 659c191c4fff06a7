"""The same scenario on the engine's GPU and on torch's CPU: equal numbers, and the engine's
tensors still on the GPU.

CI and most laptops have no GPU, so "cuda" is the engine's simulated device (see "Devices"
in docs/known-differences.md); torch runs on the CPU. A piece that goes through numpy, or
makes a new tensor without saying where, hands back a CPU tensor, or mixes devices and
fails: both are caught here, with a sentence that says what to do instead.

    check_grads_on_gpu(ag, fn, op="a + b", a=array, b=array, c=Constant(array))

fn(lib, **tensors) builds an output; both sides run a backward from it (no seed for a
one-element output, a fixed seed of its shape otherwise); the output and every input's
gradient are compared (None-ness, device, dtype, values). The engine runs first, forward and
backward, as in the oracle: a test that reaches a learner's stub stops before torch is needed.
"""
import types

import numpy as np

from ..manifest import learner_file_paths
from . import blame, graph_view
from .oracle import FORWARD, Constant, KataMismatch, piece_ran_since, said_inside, torch_module

DEVICE = "cuda"
TOLERANCES = types.MappingProxyType({np.dtype(np.float32): (1e-4, 1e-5), np.dtype(np.float64): (1e-7, 1e-10)})
ADVICE = (
    "on a GPU every tensor a piece returns must stay on its input's device: use tensor "
    "operations, and make new tensors from one you have (grad.new_zeros(shape), "
    "ag.ones_like(t), ag.arange(n, device=grad.device)), never through numpy"
)


def _array(value):
    return np.array(value.value if isinstance(value, Constant) else value, copy=True)


def _wants_grad(value):
    return not isinstance(value, Constant) and _array(value).dtype.kind == "f"


def _seed(shape):
    rng = np.random.default_rng(len(shape) * 1000 + int(np.prod(shape, dtype=np.int64)))
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _on_host(t):
    return np.asarray(t.detach().cpu().numpy())


def _where(t):
    return str(getattr(t, "device", "?"))


def check_grads_on_gpu(ag, fn, op, result_name=FORWARD, **inputs):
    __tracebackhide__ = True
    where = f"{op} on the GPU ({DEVICE})"
    ours = {name: ag.tensor(_array(v), requires_grad=_wants_grad(v), device=DEVICE) for name, v in inputs.items()}
    before = blame.last_return()
    try:
        actual = fn(ag, **ours)
        piece = piece_ran_since(before)
        _on_the_device(f"{where}: {result_name}", actual)
        seed = None if actual.numel() == 1 else _seed(tuple(actual.shape))
        actual.backward(None if seed is None else ag.tensor(seed.astype(_on_host(actual).dtype), device=DEVICE))
    except NotImplementedError:  # a stub: a to-do, not a mistake
        raise
    except Exception as error:
        if isinstance(error, KataMismatch):
            raise
        raise KataMismatch(f"{where}: {_explained(error)}") from None
    torch = torch_module()
    theirs = {name: torch.tensor(_array(v).astype(np.float64) if _array(v).dtype.kind == "f" else _array(v),
                                 requires_grad=_wants_grad(v)) for name, v in inputs.items()}
    expected = fn(torch, **theirs)
    try:
        _same_numbers(f"{where}: {result_name}", _on_host(expected), actual)
    except KataMismatch as mismatch:
        def rerun():
            return _on_host(fn(ag, **{name: ag.tensor(_array(v), requires_grad=_wants_grad(v), device=DEVICE)
                                      for name, v in inputs.items()}))

        raise KataMismatch(said_inside(str(mismatch), f"{where}: {result_name}", piece, result_name == FORWARD,
                                       rerun, _on_host(expected))) from None
    expected.backward(None if seed is None else torch.tensor(seed))
    for name, value in inputs.items():
        if _wants_grad(value):
            _compare_grad(where, name, _array(value).dtype, theirs[name].grad, ours[name].grad)


def _explained(error):
    """The piece behind an error (see blame.py), with the GPU advice where the error is about
    devices: a piece that made a tensor on the CPU."""
    sentence = blame.explain(error, learner_file_paths()) or f"the engine raised {type(error).__name__}: {error}"
    about_devices = any(word in str(error) for word in ("device", "NumPy", "host array", "cuda"))
    return f"{sentence}\n  {ADVICE}" if about_devices else sentence


def _on_the_device(what, actual):
    __tracebackhide__ = True
    if _where(actual) != f"{DEVICE}:0":
        raise KataMismatch(f"{what} is on {_where(actual)}, not on {DEVICE}:0\n  {ADVICE}")


def _same_numbers(what, expected, actual):
    __tracebackhide__ = True
    _on_the_device(what, actual)
    got = _on_host(actual)
    rtol, atol = TOLERANCES.get(got.dtype, (1e-4, 1e-5))
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True):
        raise KataMismatch(f"{what} differs from torch's (on the CPU)\n  expected {graph_view.abbreviate(np.asarray(expected))}\n"
                           f"  got      {graph_view.abbreviate(got)}")


def _compare_grad(where, name, dtype, theirs, ours):
    __tracebackhide__ = True
    if (ours is None) != (theirs is None):
        raise KataMismatch(f"{where}: the gradient of `{name}` is {'None' if ours is None else 'set'}, "
                           f"torch's is {'None' if theirs is None else 'set'}")
    if ours is None:
        return
    if np.dtype(ours.dtype) != dtype:
        raise KataMismatch(f"{where}: the gradient of `{name}` is {ours.dtype}, but `{name}` is {dtype}")
    _same_numbers(f"{where}: the gradient of `{name}`", theirs.detach().numpy(), ours)
