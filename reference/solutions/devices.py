"""Kata 08, model solution: where tensors live.

A device names where a tensor's array is stored ("cpu", "cuda:0", ...). The engine never
copies between devices on its own: an operation whose operands live apart is an error, and
the only way across is `.to()`, whose gradient travels back the same way.

Device-agnostic code asks `array_module(device)` for the array library (numpy, the
simulated GPU's module, or CuPy) instead of importing numpy by name.
"""
import re

import numpy as np

from .. import cuda

__all__ = ["Device", "array_module", "transfer", "check_same_device", "to_backward"]

DEVICE_TYPES = ("cpu", "cuda")
# torch's grammar of a device string: a name, then maybe ":" and an index written without
# a sign or leading zeros ("cuda:1"; not "cuda:", "cuda:01" or "cuda:-1").
DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")


class Device:
    """A parsed device string, compared and hashed by (type, index) like torch.device."""

    __slots__ = ("type", "index")

    def __init__(self, spec, index=None):
        if isinstance(spec, Device):
            spec, index = spec.type, spec.index if index is None else index
        if not isinstance(spec, str):
            raise TypeError(f"device() received an invalid combination of arguments: {spec!r}")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            # (True is an int to Python, not to torch)
            raise TypeError(
                f"device(): argument 'index' (position 2) must be int, not {type(index).__name__}"
            )
        if not spec:
            raise RuntimeError("Device string must not be empty")
        match = DEVICE_STRING.fullmatch(spec)
        if match is None:  # torch checks the grammar first: "gpu:x" is no device string at all
            raise RuntimeError(f"Invalid device string: '{spec}'")
        kind, number = match.groups()
        if kind not in DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                f"device string: {kind}"  # the type only, as torch: "gpu" for "gpu:1"
            )
        if number is not None:
            if index is not None:
                raise RuntimeError(
                    "type (string) must not include an index because index was passed "
                    f"explicitly: {spec}"
                )
            index = int(number)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = kind
        self.index = index

    def __eq__(self, other):
        # The kit's choice: a device equals the string that names it (torch.device never
        # equals a string). A string that names no device is simply not equal, as in torch.
        if isinstance(other, str):
            try:
                other = Device(other)
            except RuntimeError:
                return False
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


def array_module(device):
    """The array library for a device: numpy on the CPU, the CUDA backend's module for the
    device's GPU (`ag.cuda.module(index)`: the simulation's, or CuPy's)."""
    if device.type == "cpu":
        return np
    return cuda.module(device.index or 0)


def transfer(array, src, dst):
    """Copy `array` from device `src` to device `dst` (the same object when they are equal).

    Every copy goes through a module's `asarray` (to a GPU) or `asnumpy` (to the host):
    that is where the backend counts transfers. Nothing else ever crosses.
    """
    if src == dst:
        return array
    if dst.type == "cpu":
        return array_module(src).asnumpy(array)
    return array_module(dst).asarray(array)


def check_same_device(op, *tensors):
    """Raise torch's error when the tensor operands of `op` live on different devices."""
    devices = [t.device for t in tensors if t is not None]
    for device in devices[1:]:
        if device != devices[0]:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two "
                f"devices, {devices[0]} and {device}!"
            )


def to_backward(ctx, grad):
    # forward: out = x.to(device). The gradient goes back to where x came from.
    return (grad.to(ctx.source_device),)
