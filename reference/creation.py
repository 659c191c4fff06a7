"""Creating tensors, with torch's defaults: Python floats become float32 (the default
dtype), ints int64; a numpy array keeps its dtype (float64 stays float64)."""
import math

import numpy as np

from .pieces import active
from .torch_version import ARANGE_COUNTS_BEFORE_CASTING
from .tensor import CPU, Tensor, canonical_device

_rng = np.random.default_rng()


def manual_seed(seed):
    """Seed ag.randn and ag.rand (they do not draw the same numbers as torch's)."""
    global _rng
    _rng = np.random.default_rng(seed)


def _place(array, requires_grad, device):
    if requires_grad and array.dtype.kind not in "fc":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    device = CPU if device is None else canonical_device(device)
    if device is not CPU:
        array = active.transfer(array, CPU, device)
    out = Tensor(array, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


def tensor(data, requires_grad=False, dtype=None, device=None):
    if isinstance(data, Tensor):
        data = data.detach().cpu()._data
    array = np.array(data, dtype=_dtype(dtype))
    if dtype is None and array.dtype == np.float64 and not _keeps_float64(data):
        array = array.astype(np.float32)  # Python floats: the default dtype
    return _place(array, requires_grad, device)


def _keeps_float64(data):
    """numpy float64 data (an array, a scalar, or a list of scalars) stays float64, as in
    torch; Python floats take the default dtype."""
    if isinstance(data, (np.ndarray, np.generic)):
        return True
    return isinstance(data, (list, tuple)) and any(isinstance(v, np.float64) for v in data)


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def zeros(*size, requires_grad=False, dtype=None, device=None):
    return _place(np.zeros(_shape(size), dtype=_dtype(dtype) or np.float32), requires_grad, device)


def ones(*size, requires_grad=False, dtype=None, device=None):
    return _place(np.ones(_shape(size), dtype=_dtype(dtype) or np.float32), requires_grad, device)


def full(size, fill_value, requires_grad=False, dtype=None, device=None):
    array = np.full(tuple(size), fill_value, dtype=_dtype(dtype) or np.float32)
    return _place(array, requires_grad, device)


def randn(*size, requires_grad=False, dtype=None, device=None):
    array = _rng.standard_normal(_shape(size)).astype(_dtype(dtype) or np.float32)
    return _place(array, requires_grad, device)


def rand(*size, requires_grad=False, dtype=None, device=None):
    array = _rng.random(_shape(size)).astype(_dtype(dtype) or np.float32)
    return _place(array, requires_grad, device)


def arange(start, end=None, step=1, requires_grad=False, dtype=None, device=None):
    if end is None:
        start, end = 0, start
    if dtype is not None and np.dtype(dtype).kind in "iu":
        array = _integer_arange(start, end, step, np.dtype(dtype))
    else:
        array = np.arange(start, end, step, dtype=_dtype(dtype))
    if dtype is None and array.dtype == np.float64:
        array = array.astype(np.float32)
    return _place(array, requires_grad, device)


def _integer_arange(start, end, step, dtype):
    """torch's arange in an integer dtype, which steps by the step cast to the dtype (0.5 -> 0);
    how many elements it has depends on the torch installed (see torch_version.py)."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if ARANGE_COUNTS_BEFORE_CASTING:  # 2.14: counted from the float arguments
        count = math.ceil((end - start) / step)
    else:  # 2.13: all three cast first
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
        count = math.ceil((end - start) / step)
    return int(start) + np.arange(max(count, 0), dtype=dtype) * dtype.type(int(step))


def zeros_like(t, requires_grad=False, dtype=None, device=None):
    out = zeros(t.shape, requires_grad=requires_grad, dtype=dtype or t.dtype, device=device or t.device)
    return _in_layout_of(t, out)


def ones_like(t, requires_grad=False, dtype=None, device=None):
    out = ones(t.shape, requires_grad=requires_grad, dtype=dtype or t.dtype, device=device or t.device)
    return _in_layout_of(t, out)


def empty_like(t, requires_grad=False, dtype=None, device=None):
    """A tensor of t's shape, laid out in memory like t (so that a view of it works where one
    of t works), whose values are whatever the memory held: fill it, with `copy_`. Made on
    its device directly: no copy from the host."""
    dtype = _dtype(dtype) or t.dtype
    device = t._device if device is None else canonical_device(device)
    if device is t._device:
        array = _empty_laid_out_like(t._data, dtype)
    else:
        array = active.array_module(device).empty(t.shape, dtype)
    if requires_grad and array.dtype.kind not in "fc":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return Tensor(array, requires_grad, device=device)


def _in_layout_of(t, out):
    """torch's *_like keep t's layout (ones_like(x.T) is transposed): a later view can tell."""
    if t._data.ndim > 1 and out._device is t._device and not t._data.flags.c_contiguous:
        laid_out = _empty_laid_out_like(t._data, out._data.dtype)
        laid_out[...] = out._data
        out._data = laid_out
    return out


def _empty_laid_out_like(data, dtype):
    """An empty array of data's shape, laid out as torch's empty_like lays one out. numpy's,
    CuPy's or the simulation's order "K" keeps data's layout; but an expand (a stride of 0)
    is not dense, and torch then sorts the other dimensions by stride, innermost first, and
    leaves the expanded ones where they are (its TensorIterator's order)."""
    if 0 not in data.strides or data.size == 0:
        return np.empty_like(data, dtype=dtype)
    order = _outermost_first(data.shape, data.strides)
    shape = [data.shape[d] for d in order]
    back = tuple(sorted(range(len(order)), key=order.__getitem__))  # (a tuple: a device array takes no host array)
    return np.empty_like(data, dtype=dtype, order="C", shape=shape).transpose(back)


def laid_out_as_torch(data):
    """A copy of data (an expand) in the layout torch's copy of it has (its empty_like's)."""
    copied = _empty_laid_out_like(data, data.dtype)
    copied[...] = data
    return copied


def _outermost_first(shape, strides):
    """The dimensions from outermost to innermost, as torch orders them: an insertion sort,
    innermost first, by stride (then by size), where a dimension of stride 0 never moves
    another."""
    def swap(d0, d1):  # 1: d0 goes inside d1, -1: stays outside, 0: either
        if strides[d0] == 0 or strides[d1] == 0:
            return 0
        if strides[d0] != strides[d1]:
            return 1 if strides[d0] > strides[d1] else -1
        return 1 if shape[d0] > shape[d1] else 0

    perm = list(reversed(range(len(shape))))  # innermost first
    for i in range(1, len(perm)):
        moving = i
        for before in range(i - 1, -1, -1):
            verdict = swap(perm[before], perm[moving])
            if verdict > 0:
                perm[before], perm[moving] = perm[moving], perm[before]
                moving = before
            elif verdict < 0:
                break
    return perm[::-1]
