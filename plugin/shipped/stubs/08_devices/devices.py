"""Kata 08: where tensors live, and how they (never implicitly) move.

Read README.md first. Run this kata alone with:  pytest --kata 8

The engine calls your pieces for every device question:
- `Device(spec)` parses what users type (`ag.tensor(..., device="cuda:1")`, `t.to("cpu")`),
- `array_module(device)` gives the array library of a device (device-agnostic code),
- `transfer(array, src, dst)` is the only place where data crosses between devices,
- `check_same_device(op, *tensors)` runs when an operation's operands live apart,
- `to_backward(ctx, grad)` is the backward rule of `.to()` (torch's ToCopyBackward0).

You may use the engine's public API: `ag.cuda.module(index)` is the array module of the GPU
`cuda:index` (the simulated GPU's, or CuPy's on a real one); it has `asarray(array)` (a copy
to that GPU) and `asnumpy(array)` (a copy to the host), the two counted ways across.
"""
import numpy as np  # noqa: F401  (the CPU's array module)

from plugin import engine as ag  # noqa: F401


class Device:
    """A device, like torch.device: `Device("cpu")`, `Device("cuda")`, `Device("cuda:1")`,
    `Device("cuda", 1)`, or `Device(other_device)`.

    - `.type` is "cpu" or "cuda"; `.index` the number after the colon, or None if none was
      given (torch keeps "cuda" and "cuda:0" apart: they are not equal).
    - A type other than cpu or cuda raises RuntimeError with torch's words:
      "Expected one of cpu, cuda device type at start of device string: gpu", which ends
      with the type only ("gpu" for "gpu:1"; only the start and the end matter to the tests:
      torch lists more types).
    - An index that is not a plain number ("cuda:x", "cuda:-1", "cuda:01" with its leading zero,
      or nothing after the colon, "cuda:") raises RuntimeError with torch's words:
      "Invalid device string: 'cuda:x'". torch reads the form before the type: a string
      wrong both ways ("gpu:x") gets this error too. A negative index given next to the type,
      `Device("cuda", -1)`, raises RuntimeError: "Device index must not be negative"; one
      that is no int (True, 1.0, "1") raises TypeError with torch's words: "device():
      argument 'index' (position 2) must be int, not bool" (True is an int to Python, not to
      torch). An index given twice, in the string and next to it (`Device("cuda:0", 1)`),
      raises RuntimeError: "type (string) must not include an index because index was
      passed explicitly: cuda:0".
    - Equal when type and index are equal (and equal to the string that parses to it; a
      string that is not a device, like "gpu", is simply not equal: no error);
      equal devices must have equal hashes (devices are used as dictionary keys).
    - `str()` gives "cpu", "cuda", "cuda:1"; `repr()` gives torch's "device(type='cuda', index=1)"
      or "device(type='cpu')".
    """

    def __init__(self, spec, index=None):
        raise NotImplementedError("Device.__init__: see katas/08_devices/README.md")

    def __eq__(self, other):
        raise NotImplementedError("Device.__eq__: see katas/08_devices/README.md")

    def __hash__(self):
        raise NotImplementedError("Device.__hash__: see katas/08_devices/README.md")

    def __str__(self):
        raise NotImplementedError("Device.__str__: see katas/08_devices/README.md")

    def __repr__(self):
        raise NotImplementedError("Device.__repr__: see katas/08_devices/README.md")


def array_module(device):
    """The array library of `device`: numpy for the CPU, `ag.cuda.module(index)` for a GPU
    ("cuda" without an index means cuda:0)."""
    raise NotImplementedError("array_module: see katas/08_devices/README.md")


def transfer(array, src, dst):
    """Copy `array` (living on device `src`) to device `dst` and return the copy.

    - Same device: return `array` itself (no copy, nothing counted).
    - To the host: the source GPU's module's `asnumpy(array)`.
    - To a GPU (from the host or another GPU): the destination's module's `asarray(array)`.
    Never anything else: those two are where the backend counts transfers.
    """
    raise NotImplementedError("transfer: see katas/08_devices/README.md")


def check_same_device(op, *tensors):
    """Raise RuntimeError with torch's words if the tensors (None entries ignored) do not all
    live on one device:
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    (the first tensor's device, then the first one that differs). `op` names the operation."""
    raise NotImplementedError("check_same_device: see katas/08_devices/README.md")


def to_backward(ctx, grad):
    """The backward rule of `out = x.to(device)`: `grad` lives on out's device; x's gradient
    must live on x's device, `ctx.source_device`. Return a tuple with one gradient."""
    raise NotImplementedError("to_backward: see katas/08_devices/README.md")
