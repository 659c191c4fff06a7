"""`ag.cuda`: which CUDA backend the engine uses, and its counters (like torch.cuda).

Two backends:
- "sim": the simulated GPU of cuda_sim.py (numpy underneath, two devices, CuPy's rules).
  It is always available, so `is_available()` is True with it: a simulated GPU.
- "cupy": CuPy on a real GPU, used when CuPy imports and sees a device.

Chosen by the environment variable AUTOGRAD_KATAS_CUDA: "sim" (the default: the same
grades on every machine), "cupy", or "auto" (CuPy when it works, else the simulation).
`use(name)` switches at run time (the kit's tests run the device kata on both).
"""
import os
import warnings

import numpy as np

from . import cuda_sim

ENV_VAR = "AUTOGRAD_KATAS_CUDA"
BACKENDS = ("sim", "cupy", "auto")

# Transfers are counted on both backends (the CuPy module below counts its own copies).
transfer_stats = cuda_sim.transfers


def cupy_available():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # not installed, no driver, no device
        return False


class CupyModule:
    """cupy for one device, with its copies counted like the simulation's."""

    def __init__(self, index):
        import cupy

        self._cupy = cupy
        self.index = index

    def asarray(self, value, dtype=None):
        cp = self._cupy
        with cp.cuda.Device(self.index):
            if isinstance(value, cp.ndarray):
                if value.device.id != self.index:
                    transfer_stats.record("dtod", value.nbytes)
                    value = value.copy()  # a copy made on this device
                return value if dtype is None else value.astype(dtype)
            host = np.asarray(value, dtype)
            transfer_stats.record("htod", host.nbytes)
            return cp.asarray(host)

    def asnumpy(self, value):
        if isinstance(value, self._cupy.ndarray):
            transfer_stats.record("dtoh", value.nbytes)
            return self._cupy.asnumpy(value)
        return np.asarray(value)

    def __getattr__(self, name):
        return getattr(self._cupy, name)


class _State:
    name = None
    modules = None


def use(name):
    """Select the backend ("sim", "cupy" or "auto"); returns the one now in use."""
    if name not in BACKENDS:
        raise ValueError(f"{ENV_VAR} must be one of {', '.join(BACKENDS)}, not {name!r}")
    if name == "auto":
        name = "cupy" if cupy_available() else "sim"
    if name == "cupy":
        if not cupy_available():
            raise RuntimeError("the cupy CUDA backend needs CuPy and a GPU; neither works here")
        import cupy

        _State.modules = [CupyModule(i) for i in range(cupy.cuda.runtime.getDeviceCount())]
    else:
        _State.modules = cuda_sim.modules
    _State.name = name
    return name


def backend():
    return _State.name


def module(index):
    """The array module of cuda:index."""
    if not 0 <= index < len(_State.modules):
        raise RuntimeError(
            f"CUDA error: invalid device ordinal (cuda:{index}; {len(_State.modules)} devices)"
        )
    return _State.modules[index]


def is_available():
    return True if _State.name == "sim" else cupy_available()


def device_count():
    return len(_State.modules)


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    from .tensor import canonical_device  # (late: the engine imports this module first)

    device = canonical_device(device) if isinstance(device, str) else device
    return device.index or 0


def memory_allocated(device=None):
    """Bytes held by live arrays on the device."""
    index = _index(device)
    if _State.name == "sim":
        return cuda_sim.allocated[index]
    import cupy

    with cupy.cuda.Device(index):
        return cupy.get_default_memory_pool().used_bytes()


def max_memory_allocated(device=None):
    index = _index(device)
    if _State.name == "sim":
        return cuda_sim.peak[index]
    return memory_allocated(index)  # CuPy's pool keeps no peak: the best it offers


def reset_peak_memory_stats(device=None):
    if _State.name == "sim":
        cuda_sim.reset_peak(_index(device))


def synchronize(device=None):
    """Wait for the device's queued work (a real GPU runs asynchronously; the simulation does not)."""
    if _State.name == "cupy":
        import cupy

        with cupy.cuda.Device(_index(device)):
            cupy.cuda.Stream.null.synchronize()


def _use_environment():
    choice = os.environ.get(ENV_VAR, "sim")
    try:
        use(choice)
    except (ValueError, RuntimeError) as error:
        # A bad setting must not stop the engine from importing: say so, simulate.
        warnings.warn(f"{ENV_VAR}={choice}: {error}; using the simulated GPU", RuntimeWarning)
        use("sim")


_use_environment()
