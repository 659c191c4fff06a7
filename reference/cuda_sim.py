"""A simulated CUDA device: numpy arrays that behave like CuPy's where it matters for learning.

Most learners (and CI) have no GPU. This backend lets the device kata run anyway:

- a `DeviceArray` holds a numpy array and the index of the (simulated) GPU it lives on;
- numpy functions and ufuncs work on it (NEP 13/18) and give device arrays back, so the
  engine's `np.*` code serves this backend and CuPy alike;
- implicit conversion to a host array, and mixing with host arrays, raise TypeError as CuPy
  does: the only ways across are `to_device(host, index)` and `.get()`, and both are counted;
- device memory is tracked per device (live bytes and peak), freed when the last array
  using a buffer dies, so "nothing left on the device after `del`" can be tested.

It simulates semantics, not speed: everything runs synchronously on the CPU.
"""
import weakref

import numpy as np

DEVICE_COUNT = 2  # cuda:0 and cuda:1, so that mismatches between GPUs can be tested


class TransferStats:
    """Copies between host and devices: how many, how many bytes, each way."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.counts = {"htod": 0, "dtoh": 0, "dtod": 0}
        self.bytes = {"htod": 0, "dtoh": 0, "dtod": 0}

    def record(self, direction, nbytes):
        self.counts[direction] += 1
        self.bytes[direction] += int(nbytes)

    @property
    def total(self):
        return sum(self.counts.values())

    @property
    def total_bytes(self):
        return sum(self.bytes.values())

    def snapshot(self):
        return {"counts": dict(self.counts), "bytes": dict(self.bytes)}

    def __repr__(self):
        return f"TransferStats(counts={self.counts}, bytes={self.bytes})"


transfers = TransferStats()
allocated = [0] * DEVICE_COUNT  # live bytes per device
peak = [0] * DEVICE_COUNT
_tracked = set()  # id() of the numpy buffers counted as device memory


def _root(array):
    """The array that owns the memory `array` looks at (a view shares its base's buffer)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _track(array, index):
    root = _root(array)
    key = id(root)
    if key in _tracked:
        return
    _tracked.add(key)
    allocated[index] += root.nbytes
    peak[index] = max(peak[index], allocated[index])
    weakref.finalize(root, _free, key, index, root.nbytes)


def _free(key, index, nbytes):
    _tracked.discard(key)
    allocated[index] -= nbytes


def reset_peak(index):
    peak[index] = allocated[index]


def _check_index(index):
    if not 0 <= index < DEVICE_COUNT:
        raise RuntimeError(
            f"CUDA error: invalid device ordinal (cuda:{index}; the simulated backend has "
            f"{DEVICE_COUNT} devices)"
        )


def to_device(host, index):
    """Copy a host array to device `index` (one counted host-to-device transfer)."""
    _check_index(index)
    if isinstance(host, DeviceArray):
        raise TypeError("to_device() takes a host (numpy) array; use copy_to for device arrays")
    array = np.array(host, copy=True)
    transfers.record("htod", array.nbytes)
    return DeviceArray(array, index)


def copy_to(device_array, index):
    """Copy between two devices (one counted device-to-device transfer)."""
    _check_index(index)
    transfers.record("dtod", device_array.nbytes)
    return DeviceArray(device_array._array.copy(order="K"), index)


def _unwrap(value, index):
    """The numpy value inside `value` (recursing into tuples, lists and dicts), refusing host
    arrays and arrays of another device as CuPy does. `index` is a one-item list, the device
    of the first device array seen."""
    if isinstance(value, DeviceArray):
        if index[0] is None:
            index[0] = value.device
        elif value.device != index[0]:
            raise ValueError(
                f"The device where the array resides ({value.device}) is different from the "
                f"current device ({index[0]}). Peer access is unavailable."
            )
        return value._array
    if isinstance(value, np.ndarray):
        raise TypeError(
            f"Unsupported type {type(value)}: a device array cannot be mixed with a host "
            "array; copy one of them explicitly"
        )
    if isinstance(value, (tuple, list)):
        return type(value)(_unwrap(v, index) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, index) for k, v in value.items()}
    return value


def _wrap(value, index):
    if isinstance(value, np.ndarray):
        return DeviceArray(value, index)
    if isinstance(value, np.generic):
        return DeviceArray(np.asarray(value), index)  # CuPy gives 0-d arrays, not scalars
    if isinstance(value, tuple):
        return tuple(_wrap(v, index) for v in value)
    if isinstance(value, list):
        return [_wrap(v, index) for v in value]
    return value


def _unwrap_index(key):
    """An index for [] may hold host integer arrays and lists (CuPy accepts them)."""
    if isinstance(key, DeviceArray):
        return key._array
    if isinstance(key, tuple):
        return tuple(_unwrap_index(k) for k in key)
    return key


class DeviceArray:
    """An array on a simulated GPU: numpy underneath, CuPy's rules on top."""

    __slots__ = ("_array", "device", "__weakref__")

    def __init__(self, array, index):
        self._array = array
        self.device = index
        _track(array, index)

    # --- crossing to the host: explicit only ----------------------------------------------

    def get(self):
        """Copy to the host (one counted device-to-host transfer), like cupy.ndarray.get()."""
        transfers.record("dtoh", self._array.nbytes)
        return self._array.copy(order="K")  # the layout kept, as torch's .to() keeps it

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
            "construct a NumPy array explicitly."
        )

    def item(self):
        transfers.record("dtoh", self._array.itemsize)
        return self._array.item()

    def tolist(self):
        return self.get().tolist()

    # --- numpy protocol: numpy functions run on the device arrays, results stay there -----

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        index = [None]
        if method == "at":  # ufunc.at(array, indices, values): indices may be host arrays
            args = _unwrap(inputs[:1], index) + (_unwrap_index(inputs[1]),)
            args += _unwrap(inputs[2:], index)
        else:
            args = _unwrap(inputs, index)
        out = kwargs.get("out")
        kwargs = _unwrap(kwargs, index)
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result, index[0])

    def __array_function__(self, func, types, args, kwargs):
        index = [None]
        result = func(*_unwrap(args, index), **_unwrap(kwargs, index))
        if func is np.may_share_memory or func is np.shares_memory:
            return result
        # np.zeros(..., like=device_array) passes no array: the result goes where `like` is.
        return _wrap(result, self.device if index[0] is None else index[0])

    # --- the ndarray attributes and methods the engine uses -------------------------------

    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)
    nbytes = property(lambda self: self._array.nbytes)
    itemsize = property(lambda self: self._array.itemsize)
    strides = property(lambda self: self._array.strides)
    flags = property(lambda self: self._array.flags)
    T = property(lambda self: DeviceArray(self._array.T, self.device))
    # A view has a base, as in CuPy: the array that owns the memory, on the same device.
    base = property(lambda self: None if self._array.base is None else DeviceArray(_root(self._array), self.device))

    def __len__(self):
        return len(self._array)

    def __getitem__(self, key):
        return _wrap(self._array[_unwrap_index(key)], self.device)

    def __setitem__(self, key, value):
        value = _unwrap(value, [self.device])
        self._array[_unwrap_index(key)] = value

    def _method(name):
        def method(self, *args, **kwargs):
            index = [self.device]
            result = getattr(self._array, name)(*_unwrap(args, index), **_unwrap(kwargs, index))
            return _wrap(result, self.device)

        method.__name__ = name
        return method

    for _name in ("reshape", "astype", "copy", "sum", "max", "min", "mean", "argmax",
                  "squeeze", "transpose", "swapaxes", "ravel", "view", "all", "any", "prod"):
        locals()[_name] = _method(_name)
    del _name, _method

    def fill(self, value):
        self._array.fill(value)

    def __repr__(self):
        return f"DeviceArray(cuda:{self.device}, shape={self.shape}, dtype={self.dtype})"

    def __bool__(self):
        if self._array.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous.")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        return int(self.item())

    __hash__ = None


def _binary(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def _inplace(ufunc):
    def method(self, other):
        return ufunc(self, other, out=(self,))

    return method


for _name, _ufunc in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("truediv", np.true_divide), ("pow", np.power), ("matmul", np.matmul),
                      ("floordiv", np.floor_divide), ("mod", np.remainder)):
    setattr(DeviceArray, f"__{_name}__", _binary(_ufunc))
    setattr(DeviceArray, f"__r{_name}__", _binary(_ufunc, reflected=True))
    if _name != "matmul":
        setattr(DeviceArray, f"__i{_name}__", _inplace(_ufunc))
for _name, _ufunc in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                      ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)):
    setattr(DeviceArray, f"__{_name}__", _binary(_ufunc))
DeviceArray.__neg__ = lambda self: np.negative(self)
DeviceArray.__abs__ = lambda self: np.absolute(self)
DeviceArray.__invert__ = lambda self: np.invert(self)
del _name, _ufunc


class SimModule:
    """The array module of a simulated device (what `cupy` is for a real GPU): creation
    functions that allocate on the device without a transfer, and `asarray` that copies."""

    def __init__(self, index):
        self.index = index

    def _made(self, array):
        return DeviceArray(array, self.index)

    def zeros(self, shape, dtype=float):
        return self._made(np.zeros(shape, dtype))

    def ones(self, shape, dtype=float):
        return self._made(np.ones(shape, dtype))

    def empty(self, shape, dtype=float):
        return self._made(np.empty(shape, dtype))

    def full(self, shape, fill_value, dtype=None):
        return self._made(np.full(shape, fill_value, dtype))

    def asarray(self, value, dtype=None):
        """To this device: a counted copy from the host or from another device."""
        if isinstance(value, DeviceArray):
            if value.device != self.index:
                value = copy_to(value, self.index)
            return value if dtype is None else value.astype(dtype)
        return to_device(np.asarray(value, dtype), self.index)

    @staticmethod
    def asnumpy(value):
        """To the host: a counted copy (cupy.asnumpy)."""
        return value.get() if isinstance(value, DeviceArray) else np.asarray(value)

    def __getattr__(self, name):
        return getattr(np, name)  # every other function: numpy's, dispatched to device arrays

    def __repr__(self):
        return f"<simulated cuda:{self.index} array module>"


modules = [SimModule(i) for i in range(DEVICE_COUNT)]
