"""Operations: each computes its result with numpy and, while a graph is being recorded,
creates the node that will carry the gradient back.

An operation names its node as torch does ("MulBackward0") and the backward rule that node
runs ("mul_backward"). The rules are kata pieces: they live in rules.py, shapes.py, ... and
are looked up through the seam (pieces.active) when the backward runs, never imported here.
"""
import builtins
import math

import numpy as np

from .creation import laid_out_as_torch
from .grad_mode import GradMode
from .graph import Node, NodeKind
from .pieces import active
from .tensor import Tensor, canonical_device
from .torch_version import BOOL_REFUSED

DEFAULT_FLOAT = np.dtype(np.float32)


def record(kind, data, inputs):
    """Wrap `data` as the output of an operation on `inputs`.

    Returns (output, node); node is None when no graph is recorded (grad mode off, or no
    input requires grad): then the operation has nothing to save.
    """
    if GradMode.enabled:
        for t in inputs:
            if t._requires_grad:
                node = Node(kind, inputs)
                return Tensor(data, True, node, inputs[0]._device), node
    return Tensor(data, False, None, inputs[0]._device), None


_constants = {}  # (number, dtype, device) -> its tensor: `y * 0.5` in a loop makes it once


def constant(value, like):
    """A Python number or array used as an operand: a tensor that never requires grad.

    A float scalar takes the tensor's float dtype (x * 0.5 stays float32, as in torch); a
    float scalar with an integer tensor gives the default float dtype.
    """
    if type(value) is Tensor:
        return value
    if type(value) in (float, int) and value != 0:
        # (Zeros are made each time: -0.0 == 0.0 as dictionary keys, so `x * -0.0` would get
        # the cached +0.0, and the signs of its zeros would be wrong.)
        # The device by id: hashing a Device runs Python code. Safe: the cached tensor holds
        # its device, so no other object can take that id while the entry lives.
        key = (value, type(value), like._data.dtype, id(like._device))
        cached = _constants.get(key)
        if cached is None:
            if len(_constants) > 4096:
                _constants.clear()
            cached = _make_constant(value, like)
            if like._device.type == "cpu":  # a cached GPU constant would look like a leak
                _constants[key] = cached
        return cached
    return _make_constant(value, like)


def _make_constant(value, like):
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        array = np.asarray(value)
        if array.dtype == np.float64 and not isinstance(value, np.ndarray):
            array = array.astype(DEFAULT_FLOAT)
        if like._device.type != "cpu" and array.ndim:
            # Host data next to a GPU tensor: torch refuses, it never copies implicitly.
            active.check_same_device("constant", like, Tensor(array))
    else:
        kind = like._data.dtype.kind
        if isinstance(value, float) and kind not in "fc":
            dtype = DEFAULT_FLOAT
        elif kind == "b" and not isinstance(value, (bool, np.bool_)):
            dtype = np.dtype(np.int64)  # bool tensor + 2: torch gives int64 (a number's own type)
        else:
            dtype = like._data.dtype
        if like._device.type != "cpu":
            # A number travels to the GPU as a kernel argument: made there, no transfer.
            return Tensor(active.array_module(like._device).full((), value, dtype), device=like._device)
        array = np.asarray(value, dtype=dtype)
    if like._device.type != "cpu":  # a 0-d array counts as a number, as in torch
        array = active.array_module(like._device).full((), array.item(), array.dtype)
    return Tensor(array, device=like._device)


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote(a, b):
    """torch's promotion of two dtypes: the higher category wins (bool < integer < float),
    the wider within one (numpy would give float64 for float32 and int64)."""
    if a is None or b is None or a == b:
        return a if b is None else b
    ka, kb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ka != kb:
        return a if ka > kb else b
    return np.promote_types(a, b)


def result_dtype(a, b):
    """torch's result dtype of an operation on tensors a and b. Dimensioned tensors decide,
    unless a 0-d one (a number, or a 0-d tensor) is of a higher category: float32 * 0-d
    float64 stays float32, int64 * 2.5 gives float32, bool * 0-d int64 gives int64."""
    sized = promote(a._data.dtype if a._data.ndim else None, b._data.dtype if b._data.ndim else None)
    zero_d = promote(a._data.dtype if not a._data.ndim else None, b._data.dtype if not b._data.ndim else None)
    if sized is None or zero_d is None:
        return sized if zero_d is None else zero_d
    if _CATEGORY[zero_d.kind] > _CATEGORY[sized.kind]:
        return zero_d
    return sized


def binary(ufunc, a, b, integers_to_float=False):
    """ufunc(a, b) on the arrays, computed in torch's result dtype (the default float for a
    true division of integers or bools, when `integers_to_float`)."""
    a_data, b_data = a._data, b._data
    # Almost every operation has operands of one dtype (a number operand takes the tensor's):
    # then there is nothing to promote, and one `is` says so. Comparing dtypes with `!=`
    # costs 50 ns each; the promotion below did three comparisons per operation.
    if a_data.dtype is not b_data.dtype or integers_to_float:
        a_data, b_data = _promoted(a, b, integers_to_float)
    try:
        result = ufunc(a_data, b_data)
    except ValueError:
        try:
            np.broadcast_shapes(a_data.shape, b_data.shape)
        except ValueError:
            raise RuntimeError(broadcast_error(a_data.shape, b_data.shape)) from None
        raise  # not the shapes (arrays on two GPUs, say): the array library's own error
    if result.ndim > 1 and not a_data.flags.c_contiguous and a_data.shape == result.shape:
        return _laid_out_like(result, a_data)
    return result


def _promoted(a, b, integers_to_float):
    """a's and b's arrays in torch's result dtype for a binary operation."""
    a_data, b_data = a._data, b._data
    if a_data.dtype == b_data.dtype:
        dtype = a_data.dtype
    else:
        dtype = result_dtype(a, b)
    if integers_to_float and dtype.kind in "biu":
        dtype = DEFAULT_FLOAT
    if a_data.dtype != dtype:
        a_data = a_data.astype(dtype)
    if b_data.dtype != dtype:
        b_data = b_data.astype(dtype)
    return a_data, b_data


def _laid_out_like(result, first):
    """`result` in the layout of `first`, the first operand (a transposed x in x.T + y).

    torch lays an elementwise result out as its first operand that tells an order of the
    dimensions; numpy takes C order where two operands disagree. A later reshape shows the
    difference (a view or a copy), so the result is copied where numpy's layout differs.
    """
    laid_out = np.empty_like(first, dtype=result.dtype)
    if laid_out.strides == result.strides:
        return result
    laid_out[...] = result
    return laid_out


def broadcast_error(a, b):
    """torch's words for shapes that do not broadcast: the first mismatch from the right,
    numbered as a dimension of the result."""
    ndim = builtins.max(len(a), len(b))
    for dim in range(ndim - 1, -1, -1):
        size_a = a[dim - ndim + len(a)] if dim - ndim + len(a) >= 0 else 1
        size_b = b[dim - ndim + len(b)] if dim - ndim + len(b) >= 0 else 1
        if size_a != size_b and 1 not in (size_a, size_b):
            return (f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                    f"at non-singleton dimension {dim}")
    return f"shapes {list(a)} and {list(b)} cannot be broadcast"


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "** or pow()", "matmul": "@"}


def _no_operand(op, a, b):
    """torch's TypeError for None or a string as an operand (numpy would make nan of None)."""
    names = tuple("Tensor" if type(x) is Tensor else type(x).__name__ for x in (a, b))
    if op in _SYMBOLS:
        return f"unsupported operand type(s) for {_SYMBOLS[op]}: '{names[0]}' and '{names[1]}'"
    return f"{op}(): argument 'other' (position 1) must be Tensor, not {names[1]}"


def operands(op, a, b):
    """Both operands as tensors on one device (a number joins the tensor's device)."""
    # (`type() is`, not isinstance: this runs for every operation, and no class derives from Tensor)
    if type(b) is not Tensor:
        if b is None or type(b) is str:
            raise TypeError(_no_operand(op, a, b))
        b = constant(b, a)
    elif type(a) is not Tensor:
        if a is None or type(a) is str:
            raise TypeError(_no_operand(op, a, b))
        a = constant(a, b)
    elif a._device is not b._device:
        active.check_same_device(op, a, b)
    return a, b


# --- elementwise binary: rules in rules.py, gradients reduced by `unbroadcast` ---------------


AddBackward0 = NodeKind("AddBackward0", "add_backward", reduce_broadcast=True)
SubBackward0 = NodeKind("SubBackward0", "sub_backward", reduce_broadcast=True)
MulBackward0 = NodeKind("MulBackward0", "mul_backward", reduce_broadcast=True)
DivBackward0 = NodeKind("DivBackward0", "div_backward", reduce_broadcast=True)
# torch's names: tensor ** number, tensor ** tensor, number ** tensor.
PowBackward0 = NodeKind("PowBackward0", "pow_backward", reduce_broadcast=True)
PowBackward1 = NodeKind("PowBackward1", "pow_backward", reduce_broadcast=True)
PowBackward2 = NodeKind("PowBackward2", "pow_backward", reduce_broadcast=True)
# tensor ** 0 (the number, or -0.0): torch's rule returns zeros made afresh, with no graph
# even under create_graph (x.grad of x ** 0 is then a leaf), not the formula's 0 * x ** -1.
PowBackward0OfZero = NodeKind("PowBackward0", "zero_power_backward")


def add(a, b):
    a, b = operands("add", a, b)
    out, ctx = record(AddBackward0, binary(np.add, a, b), (a, b))
    return out


def _is_bool(value):
    if type(value) is Tensor:
        return value._data.dtype.kind == "b"
    return isinstance(value, (bool, np.bool_))


def _check_sub(a, b):
    # torch refuses a bool operand (a Python bool too): it would be a mask's xor, or a mistake.
    # (Each operand checked once: this runs for every subtraction, `1 - out` in the rules too.)
    a_is_bool, b_is_bool = _is_bool(a), _is_bool(b)
    if a_is_bool and b_is_bool:
        raise BOOL_REFUSED(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if a_is_bool or b_is_bool:
        raise BOOL_REFUSED(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def sub(a, b):
    _check_sub(a, b)
    a, b = operands("sub", a, b)
    out, ctx = record(SubBackward0, binary(np.subtract, a, b), (a, b))
    return out


def mul(a, b):
    a, b = operands("mul", a, b)
    out, ctx = record(MulBackward0, binary(np.multiply, a, b), (a, b))
    if ctx:
        ctx.save_for_backward(a, b)
    return out


# torch's name for x.zero_() in a graph; its gradient is mul's by 0 (zeros for x).
ZeroBackward0 = NodeKind("ZeroBackward0", "mul_backward", reduce_broadcast=True)


def zero(a, b):
    """What x.zero_() records: x * 0, named as torch names it."""
    a, b = operands("zero_", a, b)
    out, ctx = record(ZeroBackward0, binary(np.multiply, a, b), (a, b))
    if ctx:
        ctx.save_for_backward(a, b)
    return out


def div(a, b):
    a, b = operands("div", a, b)
    out, ctx = record(DivBackward0, binary(np.true_divide, a, b, integers_to_float=True), (a, b))
    if ctx:
        ctx.save_for_backward(a, b)
    return out


def _integer_power(base, exponent):
    """np.power for integers, with torch's answer to a negative exponent (numpy refuses):
    1 / base ** n truncated, so 0 except for the bases 1 and -1."""
    if base.dtype.kind not in "biu" or not (exponent < 0).any():
        return np.power(base, exponent).astype(base.dtype, copy=False)  # bool ** bool: numpy's int8
    negative = exponent < 0
    result = np.power(base, np.where(negative, -exponent, exponent))
    return np.where(np.logical_and(negative, np.abs(base) != 1), 0, result)


def _reciprocal_sqrt(base, exponent):
    """base ** -0.5 as torch computes it for the number -0.5: 1 / sqrt(base)."""
    return 1 / np.sqrt(base)


def pow(base, exponent):
    kind = (
        PowBackward0 if not isinstance(exponent, Tensor)
        else PowBackward1 if isinstance(base, Tensor)
        else PowBackward2
    )
    if kind is PowBackward0 and type(exponent) is not bool and exponent == 0:  # torch: False is no 0 here
        kind = PowBackward0OfZero
    integers = (isinstance(base, Tensor) and base._data.dtype.kind in "biu"
                and isinstance(exponent, int) and exponent < 0)
    if integers:  # torch refuses a negative number as an integer tensor's exponent
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    no_kernel = isinstance(exponent, Tensor) and _is_bool(exponent) and _is_bool(base)
    base, exponent = operands("pow", base, exponent)
    if no_kernel:  # torch has no bool ** bool tensor kernel; it checks the shapes first
        try:
            np.broadcast_shapes(base._data.shape, exponent._data.shape)
        except ValueError:
            raise RuntimeError(broadcast_error(base._data.shape, exponent._data.shape)) from None
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    power = _integer_power if exponent._data.dtype.kind in "biu" else np.power
    if kind is PowBackward0 and exponent._data == -0.5 and base._data.dtype.kind == "f":
        power = _reciprocal_sqrt  # as torch: -0.0 ** -0.5 is then -inf, -inf ** -0.5 nan
    # (-1.5) ** 1.5 is nan and 0 ** -1 inf, silently in torch; numpy would warn.
    with np.errstate(invalid="ignore", divide="ignore"):
        data = binary(power, base, exponent)
    if kind is PowBackward2 and not data.flags.c_contiguous:
        data = data.copy(order="C")  # torch's number ** tensor is laid out afresh, not like the exponent
    out, ctx = record(kind, data, (base, exponent))
    if ctx:
        if kind is PowBackward0 or kind is PowBackward0OfZero:
            # x ** 2's gradient needs only x, and torch saves only x: changing the result in
            # place before the backward is no error there. The rule still gets `out` (kata
            # 01's layout): a second handle on the result, the same data and node (for second
            # derivatives), with a version counter of its own that nothing changes.
            ctx.save_for_backward(base, exponent, Tensor(out._data, True, ctx, out._device))
        else:
            ctx.save_for_backward(base, exponent, out)
    return out


# --- elementwise unary: rules in rules.py and extra_rules.py ---------------------------------


NegBackward0 = NodeKind("NegBackward0", "neg_backward")
ExpBackward0 = NodeKind("ExpBackward0", "exp_backward")
LogBackward0 = NodeKind("LogBackward0", "log_backward")
SigmoidBackward0 = NodeKind("SigmoidBackward0", "sigmoid_backward")
TanhBackward0 = NodeKind("TanhBackward0", "tanh_backward")
ReluBackward0 = NodeKind("ReluBackward0", "relu_backward")
SqrtBackward0 = NodeKind("SqrtBackward0", "sqrt_backward")
AbsBackward0 = NodeKind("AbsBackward0", "abs_backward")
SignBackward0 = NodeKind("SignBackward0", "sign_backward")
CloneBackward0 = NodeKind("CloneBackward0", "clone_backward")


def torch_name(dtype):
    """How torch's messages name a dtype ("Long" for int64)."""
    return {"bool": "Bool", "int64": "Long", "float32": "Float", "float64": "Double"}.get(dtype.name, dtype.name)


def not_for(dtypes, kernel, x):
    """torch has no kernel for these dtypes (of the kinds in `dtypes`): its NotImplementedError."""
    if x._data.dtype.kind in dtypes:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{torch_name(x._data.dtype)}\'')


def floating(x):
    """x's array as floats: exp, log, ... of an integer or bool tensor give torch's default
    float dtype (numpy would give float64, or float16 for bools)."""
    return x._data if x._data.dtype.kind in "fc" else x._data.astype(DEFAULT_FLOAT)


def neg(x):
    if x._data.dtype.kind == "b":
        raise BOOL_REFUSED(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    out, ctx = record(NegBackward0, -x._data, (x,))
    return out


def exp(x):
    out, ctx = record(ExpBackward0, np.exp(floating(x)), (x,))
    if ctx:
        ctx.save_for_backward(out)
    return out


def log(x):
    with np.errstate(invalid="ignore", divide="ignore"):  # log(-1) nan, log(0) -inf: torch's, silently
        data = np.log(floating(x))
    out, ctx = record(LogBackward0, data, (x,))
    if ctx:
        ctx.save_for_backward(x)
    return out


def sigmoid(x):
    # 1 / (1 + e^-x); e^-x overflows to inf for very negative x, which gives the right 0.
    x_data = floating(x)
    data = np.negative(x_data, out=np.empty_like(x_data))  # an array even when 0-d
    with np.errstate(over="ignore"):
        np.exp(data, out=data)
    data += 1
    np.reciprocal(data, out=data)
    out, ctx = record(SigmoidBackward0, data, (x,))
    if ctx:
        ctx.save_for_backward(out)
    return out


def tanh(x):
    out, ctx = record(TanhBackward0, np.tanh(floating(x)), (x,))
    if ctx:
        ctx.save_for_backward(out)
    return out


def relu(x):
    if x._data.dtype.kind == "b":
        raise BOOL_REFUSED("Boolean inputs not supported for relu")
    # x where it is not below 0, as torch: relu(-0.0) is -0.0 (np.maximum gives 0.0), and nan stays
    out, ctx = record(ReluBackward0, np.where(x._data < 0, x._data.dtype.type(0), x._data), (x,))
    if ctx:
        ctx.save_for_backward(out)
    return out


def sqrt(x):
    out, ctx = record(SqrtBackward0, np.sqrt(floating(x)), (x,))
    if ctx:
        ctx.save_for_backward(out)
    return out


def abs(x):
    not_for("b", "abs_cpu", x)
    out, ctx = record(AbsBackward0, np.abs(x._data), (x,))
    if ctx:
        ctx.save_for_backward(x)
    return out


def sign(x):
    data = x._data
    if data.dtype.kind == "f":  # torch's sign of nan is 0 (numpy's nan), so is abs's gradient there
        data = np.nan_to_num(data, nan=0.0)  # (and inf to the largest float: the same sign)
    out, ctx = record(SignBackward0, np.sign(data), (x,))
    return out


def clone(x):
    # order="K": the copy keeps x's layout (a transposed x gives transposed data), as torch's
    out, ctx = record(CloneBackward0, x._data.copy(order="K"), (x,))
    return out


def compare(ufunc, a, b):
    a, b = operands("comparison", a, b)
    return Tensor(ufunc(a._data, b._data), device=a._device)


WhereBackward0 = NodeKind("WhereBackward0", "where_backward", reduce_broadcast=True)


def where(condition, a, b):
    """a where `condition` (a bool tensor) holds, b elsewhere, the three broadcast together,
    as torch.where. The condition gets no gradient."""
    a, b = operands("where", a, b)
    if not isinstance(condition, Tensor):
        condition = Tensor(np.asarray(condition))
    if condition._device is not a._device:
        active.check_same_device("where", condition, a)
    # With the mask fixed, where is a binary operation of a and b: torch's dtype promotion
    # comes from binary() as for + and *.
    data = binary(lambda a_data, b_data: np.where(condition._data, a_data, b_data), a, b)
    if data.ndim > 1 and condition._data.shape == data.shape:  # torch's first operand: the condition
        data = _laid_out_like(data, condition._data)
    out, ctx = record(WhereBackward0, data, (a, b))
    if ctx:
        ctx.condition = condition
    return out


# --- reductions: rules in shapes.py -----------------------------------------------------------


def normalize_dims(dim, ndim):
    """dim as a sorted tuple of non-negative axes (None: every axis)."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim))  # torch also reads dim=() as "every dimension"
    rank = builtins.max(ndim, 1)
    for d in dims:
        if not -rank <= d < rank:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})"
            )
    if len(dims) == 1:
        return (dims[0] % rank,) if ndim else ()
    axes = sorted([d % rank for d in dims])
    for first, second in zip(axes, axes[1:]):
        if first == second:  # (-1, 0) of a vector names dim 0 twice
            raise RuntimeError(f"dim {first} appears multiple times in the list of dims")
    return tuple(axes) if ndim else ()


# torch's names: the sum of every element, and a sum over given dims.
SumBackward0 = NodeKind("SumBackward0", "sum_backward")
SumBackward1 = NodeKind("SumBackward1", "sum_backward")
MeanBackward0 = NodeKind("MeanBackward0", "mean_backward")
MeanBackward1 = NodeKind("MeanBackward1", "mean_backward")


def _reduced(kind, data, x, dims, keepdim):
    out, ctx = record(kind, data, (x,))
    if ctx:
        ctx.dim = dims
        ctx.keepdim = keepdim
    return out


def _sum(data, dims, keepdim):
    """data summed over dims. A numpy array's .sum() is a Python function that calls
    np.add.reduce: called directly, a small sum costs half. (Other arrays: their own .sum().)"""
    if type(data) is np.ndarray:
        return np.add.reduce(data, axis=dims, keepdims=keepdim)
    return data.sum(axis=dims, keepdims=keepdim)


def sum(x, dim=None, keepdim=False):
    dims = normalize_dims(dim, x._data.ndim)
    data = _sum(x._data, dims, keepdim)
    return _reduced(SumBackward0 if dim is None else SumBackward1, data, x, dims, keepdim)


def mean(x, dim=None, keepdim=False):
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {torch_name(x._data.dtype)}"
        )
    dims = normalize_dims(dim, x._data.ndim)
    count = math.prod([x._data.shape[d] for d in dims])
    # The sum, then one division: what np.mean does, without its Python-level overhead.
    if x._data.dtype == np.float16:  # summed in float32, as np.mean and torch do
        data = (x._data.sum(axis=dims, keepdims=keepdim, dtype=np.float32) / count).astype(np.float16)
    elif count == 0:  # the mean of nothing: nan, silently as in torch (numpy would warn)
        with np.errstate(invalid="ignore"):
            data = _sum(x._data, dims, keepdim) / count
    else:
        data = _sum(x._data, dims, keepdim) / count
    return _reduced(MeanBackward0 if dim is None else MeanBackward1, data, x, dims, keepdim)


class MaxResult(tuple):
    """(values, indices), like torch.return_types.max."""

    __slots__ = ()
    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


MaxBackward0 = NodeKind("MaxBackward0", "max_backward", unpack_first=True)  # max(dim): values, indices
MaxBackward1 = NodeKind("MaxBackward1", "max_backward")  # max(): the largest element
# max(dim) of a 0-d tensor: the element itself, whose gradient passes whole; like torch's, the
# node saves only the indices (so x changed in place afterwards does not fail the backward)
MaxBackward0OfScalar = NodeKind("MaxBackward0", "clone_backward", unpack_first=True)


def max(x, dim=None, keepdim=False):
    if dim is None:
        if x._data.size == 0:
            raise RuntimeError(
                "max(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        # The largest element; torch shares its gradient evenly between ties.
        out, ctx = record(MaxBackward1, x._data.max(), (x,))
        if ctx:
            ctx.dim = None
            ctx.save_for_backward(x, out)
        return out
    if x.ndim == 0:  # torch allows dim 0 (or -1) on a 0-d tensor: the element itself
        normalize_dims(dim, 0)
        out, ctx = record(MaxBackward0OfScalar, x._data.copy(), (x,))
        indices = Tensor(np.zeros((), np.int64, like=x._data), device=x._device)
        if ctx:
            ctx.save_for_backward(indices)
        return MaxResult((out, indices))
    (axis,) = normalize_dims(dim, x.ndim)
    if x._data.shape[axis] == 0:
        raise IndexError(f"max(): Expected reduction dim {axis} to have non-zero size.")
    indices = np.expand_dims(np.argmax(x._data, axis=axis), axis)
    values = np.take_along_axis(x._data, indices, axis)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    indices = Tensor(indices, device=x._device)
    out, ctx = record(MaxBackward0, values, (x,))
    if ctx:
        ctx.dim = axis
        ctx.keepdim = keepdim
        ctx.indices = indices
        ctx.save_for_backward(indices)  # (the rule reads ctx.indices; see NodeKind.unpack_first)
    return MaxResult((out, indices))


# --- shapes: rules in shapes.py -----------------------------------------------------------------


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


# reshape has three outcomes in torch, after the data's layout: a view of contiguous data
# (ViewBackward0), a view of strided data (ReshapeAliasBackward0), or, where no view can
# give the shape (x.T.reshape(-1)), a contiguous copy (CloneBackward0) reshaped without a
# view relation (UnsafeViewBackward0). All are undone by the same rule.
ViewBackward0 = NodeKind("ViewBackward0", "reshape_backward")
ReshapeAliasBackward0 = NodeKind("ReshapeAliasBackward0", "reshape_backward")
UnsafeViewBackward0 = NodeKind("UnsafeViewBackward0", "reshape_backward")
TransposeBackward0 = NodeKind("TransposeBackward0", "transpose_backward")
PermuteBackward0 = NodeKind("PermuteBackward0", "transpose_backward")  # x.T
ExpandBackward0 = NodeKind("ExpandBackward0", "expand_backward")


def reshape(x, shape):
    data = _reshaped(x._data, _shape_arg(shape))
    if x._data.flags.c_contiguous:
        out, ctx = record(ViewBackward0, data, (x,))
        return _view_of(out, x)
    if _shares_data(data, x._data):
        out, ctx = record(ReshapeAliasBackward0, data, (x,))
        return _view_of(out, x)
    # numpy copied (in C order, as torch's clone): the copy in x's shape, then that shape
    # changed. The result is no view of x: an in-place change of one leaves the other alone.
    copied, ctx = record(CloneBackward0, data.reshape(x._data.shape), (x,))
    out, ctx = record(UnsafeViewBackward0, data, (copied,))
    return out


def view(x, shape):
    """reshape that never copies: torch's error where the data's layout allows no view."""
    data = _reshaped(x._data, _shape_arg(shape))
    if not x._data.flags.c_contiguous and not _shares_data(data, x._data):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    out, ctx = record(ViewBackward0, data, (x,))
    return _view_of(out, x)


def _shares_data(data, original):
    # numpy's reshape copies exactly where torch's does (a view needs no copy); an empty
    # array has no memory to share, and torch counts its reshape a view.
    return data.size == 0 or np.may_share_memory(data, original)


def _reshaped(data, shape):
    """numpy's reshape, with torch's errors: numpy takes any negative size for -1."""
    if shape and min(shape) < -1:
        _check_shape(shape, data.size)
    try:
        return data.reshape(shape)
    except ValueError:
        _check_shape(shape, data.size)
        raise


def _check_shape(shape, numel):
    """torch's error for a shape that does not fit numel elements (as torch's infer_size)."""
    size, inferred = 1, None
    for index, n in enumerate(shape):
        if n == -1:
            if inferred is not None:
                raise RuntimeError("only one dimension can be inferred")
            inferred = index
        elif n >= 0:
            size *= n
        else:
            listed = ", ".join(map(str, shape))
            raise RuntimeError(f"invalid shape dimension {n} at index {index} of shape [{listed}]")
    listed = ", ".join(map(str, shape))
    if numel != size and not (inferred is not None and size > 0 and numel % size == 0):
        raise RuntimeError(f"shape '[{listed}]' is invalid for input of size {numel}")
    if inferred is not None and size == 0:
        raise RuntimeError(
            f"cannot reshape tensor of 0 elements into shape [{listed}] because the "
            "unspecified dimension size -1 can be any value and is ambiguous"
        )


def transpose(x, dim0, dim1):
    if x._data.ndim == 0:  # torch accepts dims 0 and -1 of a 0-d tensor: a view of it
        normalize_dims(dim0, 0), normalize_dims(dim1, 0)
        out, ctx = record(TransposeBackward0, x._data[...], (x,))
        if ctx:
            ctx.dim0 = ctx.dim1 = 0
        return _view_of(out, x)
    dim0, dim1 = (normalize_dims(d, x.ndim)[0] for d in (dim0, dim1))
    return _transposed(TransposeBackward0, x, dim0, dim1)


def T(x):
    if x._data.ndim < 2:
        return x
    if x._data.ndim > 2:
        raise RuntimeError("The use of `x.T` on tensors of dimension other than 2 is not supported; use transpose")
    return _transposed(PermuteBackward0, x, 0, 1)


def _transposed(kind, x, dim0, dim1):
    out, ctx = record(kind, x._data.swapaxes(dim0, dim1), (x,))
    if ctx:
        ctx.dim0, ctx.dim1 = dim0, dim1
    return _view_of(out, x)


def expand(x, sizes):
    target = _expanded_shape(x, _shape_arg(sizes))
    if math.prod(target) == x._data.size:  # no element repeated (only dims of size 1 added):
        data = x._data.reshape(target)  # a view that can be written to, as torch's
    else:  # elements repeated: a read-only broadcast view (in place: torch's error)
        data = _broadcast_view(x._data, target)
        if data.size == 0:  # no element at all, so none repeated: writable, as torch's
            data = data.copy()
    out, ctx = record(ExpandBackward0, data, (x,))
    return _view_of(out, x)


# torch's names of a tensor's type, as its expand error prints them
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "int64": "LongTensor",
               "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor"}


def _expanded_shape(x, target):
    """The shape x.expand(*target) gives, checked with torch's words: a new dimension is added
    in front, -1 keeps a dimension's size, and only a dimension of size 1 may grow."""
    shape = x._data.shape
    if not shape and any(size < 0 for size in target):
        # torch expands a 0-d tensor by multiplying the sizes as given, before any check
        raise RuntimeError("numel: integer multiplication overflow")
    if len(target) < len(shape):
        dtype = str(x._data.dtype)
        kind = "CPUBoolType" if dtype == "bool" else (
            f"torch.{'cuda.' if x.is_cuda else ''}{_TYPE_NAMES.get(dtype, dtype)}")
        raise RuntimeError(
            f"expand({kind}{{{list(shape)}}}, size={list(target)}): the number of sizes provided "
            f"({len(target)}) must be greater or equal to the number of dimensions in the tensor ({len(shape)})"
        )
    offset = len(target) - len(shape)
    result = []
    # From the last dimension to the first, as torch checks them: the error names the last
    # dimension that does not fit.
    for i, size in reversed(list(enumerate(target))):
        if i < offset:
            if size < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({size}) isn't allowed in a leading, non-existing dimension {i}")
        else:
            existing = shape[i - offset]
            if size == -1:
                size = existing
            elif size != existing and existing != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({size}) must match the existing size ({existing}) at "
                    f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: {list(shape)}"
                )
        result.append(size)
    if any(size < 0 for size in result):
        raise RuntimeError("numel: integer multiplication overflow")
    return tuple(reversed(result))


def _broadcast_view(array, shape):
    """np.broadcast_to(array, shape): a read-only view whose repeated elements share memory.
    Made directly from a contiguous numpy array's memory, with stride 0 where it repeats:
    numpy's own function takes 20 times as long, and every gradient of a sum or a mean
    makes one."""
    lead = len(shape) - array.ndim
    if type(array) is not np.ndarray or not array.flags.c_contiguous or lead < 0:
        return np.broadcast_to(array, shape)  # (its error, too, for shapes that do not fit)
    strides = [0] * lead
    for size, target, stride in zip(array.shape, shape[lead:], array.strides):
        if size == target:
            strides.append(stride)
        elif size == 1:
            strides.append(0)
        else:
            return np.broadcast_to(array, shape)
    view = np.ndarray(shape, array.dtype, array, 0, tuple(strides))
    view.flags.writeable = False
    return view


def _view_of(out, base):
    # Views share data; sharing the version counter makes an in-place change through either
    # one visible to the saved-tensor check.
    out._version_box = base._shared_version()
    out._base = base._base if base._base is not None else base
    return out


# torch's names by the operands' dimensions: vector . vector, matrix @ vector, matrix @
# matrix, and everything batched (or a vector @ a matrix).
MATMUL_KINDS = {
    (1, 1): NodeKind("DotBackward0", "matmul_backward"),
    (2, 1): NodeKind("MvBackward0", "matmul_backward"),
    (2, 2): NodeKind("MmBackward0", "matmul_backward"),
}
BmmBackward0 = NodeKind("BmmBackward0", "matmul_backward")
MmBackward0 = MATMUL_KINDS[2, 2]


def _check_matmul(a, b):
    """torch's errors for matmul, in the words of its 2-D case for every case (torch words
    them after the kernel that runs: dot, mv, mm, bmm). matmul never promotes dtypes; torch
    checks the dtypes first for two vectors, the shapes first otherwise, and before anything
    else batch dimensions that do not broadcast (in a broadcast's words)."""
    if a.ndim > 2 or b.ndim > 2:
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise RuntimeError(broadcast_error(a.shape[:-2], b.shape[:-2])) from None
    if a.ndim == b.ndim == 1:
        _check_matmul_dtypes(a, b)
    rows, inner = (a.shape[-2] if a.ndim > 1 else 1), a.shape[-1]
    if inner != (b.shape[-2] if b.ndim > 1 else b.shape[0]):
        m2 = b.shape[-2:] if b.ndim > 1 else (b.shape[0], 1)
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{inner} and {m2[0]}x{m2[1]})"
        )
    _check_matmul_dtypes(a, b)


def _check_matmul_dtypes(a, b):
    if a.dtype != b.dtype:
        names = {"float64": "double", "float32": "float", "int64": "long int"}
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{names.get(a.dtype.name, a.dtype.name)} != {names.get(b.dtype.name, b.dtype.name)}"
        )


def matmul(a, b):
    a, b = operands("matmul", a, b)
    a_data, b_data = a._data, b._data
    if a_data.ndim == 2 and b_data.ndim == 2 and a_data.shape[1] == b_data.shape[0] and (
        a_data.dtype is b_data.dtype and a_data.dtype.kind in "fc"
    ):
        # The common case, two float matrices that fit (every matmul of an MLP, forward and
        # backward): nothing to refuse, so the checks below are skipped.
        kind = MmBackward0
    else:
        if a_data.ndim == 0 or b_data.ndim == 0:
            raise RuntimeError(
                "both arguments to matmul need to be at least 1D, but they are "
                f"{a_data.ndim}D and {b_data.ndim}D"
            )
        _check_matmul(a_data, b_data)
        not_for("b", "dot", a)
        kind = MATMUL_KINDS.get((a_data.ndim, b_data.ndim), BmmBackward0)
    out, ctx = record(kind, np.matmul(a_data, b_data), (a, b))
    if ctx:
        ctx.save_for_backward(a, b)
    return out


# --- indexing: rule in shapes.py; its adjoint `index_put` in extra_rules.py ------------------------


def numpy_index(index):
    """An index with tensors replaced by their arrays (numpy does the rest)."""
    if isinstance(index, tuple):
        return tuple([_index_part(i) for i in index])
    if isinstance(index, list):  # ([] would be a float array: numpy refuses it as an index)
        return np.asarray(index) if index else np.array([], dtype=np.intp)
    return _index_part(index)


def _index_part(part):
    if not isinstance(part, Tensor):
        return part
    if _is_integer_scalar(part):  # torch selects with it as with a number (a view)
        return int(part._data)
    return part._data


def _is_integer_scalar(part):
    return isinstance(part, Tensor) and part._data.ndim == 0 and part._data.dtype.kind in "iu"


IndexBackward0 = NodeKind("IndexBackward0", "getitem_backward", unpack_first=True)  # index arrays
SelectBackward0 = NodeKind("SelectBackward0", "getitem_backward")  # with integers only
SliceBackward0 = NodeKind("SliceBackward0", "getitem_backward")  # anything else: slices, ...


def _is_index_array(part):
    """An index part that picks many elements: a list, an integer or bool tensor that is not
    0-d, or an array: numpy's, or a GPU's (the engine's own rules index with the arrays they
    kept, such as index_put's backward on a GPU)."""
    if isinstance(part, Tensor):
        return not _is_integer_scalar(part)
    return isinstance(part, list) or (hasattr(part, "shape") and not isinstance(part, np.generic))


def _index_kind(index):
    """The node of x[index], from the index as given (tensors, lists, numbers, slices)."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(_is_index_array(part) for part in parts):
        return IndexBackward0
    # torch makes one node per part that does something (a full `:` or `...` does nothing);
    # the last one names the result: x[1:, 0] is a SelectBackward0, x[0, 1:] a SliceBackward0.
    for part in reversed(parts):
        if isinstance(part, (int, np.integer, Tensor)):
            return SelectBackward0
        if part is not Ellipsis and part != slice(None):
            return SliceBackward0
    return SliceBackward0


def getitem(x, index):
    if x._data.ndim == 0:
        _check_index_of_0d(index)
    kind = _index_kind(index)
    given = index
    index = numpy_index(index)
    # With a trailing `...`, numpy gives x[0] of a vector as a 0-d view, not a copied scalar:
    # torch's x[0] is a view, which sees later in-place changes of x.
    whole = index if isinstance(index, tuple) else (index,)
    if not any(part is Ellipsis for part in whole):
        whole = (*whole, Ellipsis)
    try:
        data = x._data[whole]
    except IndexError as error:  # numpy's words, told in torch's
        raise IndexError(_torch_index_error(str(error), x._data.ndim)) from None
    out, ctx = record(kind, data, (x,))
    if ctx:
        ctx.index = index
        if kind is IndexBackward0:  # torch saves the index tensors (the rule reads ctx.index)
            ctx.save_for_backward(*_index_tensors(given, index))
    if kind is not IndexBackward0:  # ints and slices give a view (an empty one too); arrays a copy
        _view_of(out, x)
    return out


def _index_tensors(given, index):
    """The index arrays of x[index] as tensors to save: the caller's own tensors (so that
    changing one in place is noticed), new ones for lists and arrays."""
    given = given if isinstance(given, tuple) else (given,)
    index = index if isinstance(index, tuple) else (index,)
    # (A GPU array comes only from the engine's own rules, which never change it: not saved.)
    return [part if isinstance(part, Tensor) else Tensor(np.asarray(array))
            for part, array in zip(given, index)
            if isinstance(part, (Tensor, list, np.ndarray)) and not _is_integer_scalar(part)]


def _check_index_of_0d(index):
    """torch's errors for indexing a 0-d tensor, which has no dimension to index (numpy words
    them all as one)."""
    if type(index) is int:
        if index == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
    if isinstance(index, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if index is not None and index is not Ellipsis and not isinstance(index, bool):
        raise IndexError("too many indices for tensor of dimension 0")


def _torch_index_error(message, ndim):
    if message.startswith("too many indices"):
        return f"too many indices for tensor of dimension {ndim}"
    return message.replace(" for axis ", " for dimension ")


IndexPutBackward0 = NodeKind("IndexPutBackward0", "index_put_backward", reduce_broadcast=True)


def index_put(x, index, values, accumulate=False):
    """A copy of x with values written at index (added, with repeats, when accumulate)."""
    index = numpy_index(index)
    x, values = operands("index_put", x, values)
    data = x._data.copy()
    if accumulate:
        np.add.at(data, index, values._data)
    else:
        data[index] = values._data
    out, ctx = record(IndexPutBackward0, data, (x, values))
    if ctx:
        ctx.index = index
        ctx.accumulate = accumulate
    return out


# --- softmax family: rules in extra_rules.py --------------------------------------------------------


SoftmaxBackward0 = NodeKind("SoftmaxBackward0", "softmax_backward")
LogSoftmaxBackward0 = NodeKind("LogSoftmaxBackward0", "log_softmax_backward")


def _c_order(data):
    # torch's softmax works on (and gives) contiguous data: a later reshape of its result
    # is then a view, also when x was transposed
    return data if data.flags.c_contiguous else data.copy()


def softmax(x, dim):
    normalize_dims(dim, x._data.ndim)  # torch's IndexError for a dim out of range
    if x._data.size == 0 and x._data.dtype.kind in "biu":
        return Tensor(x._data.copy(), device=x._device)  # torch needs no kernel for nothing
    not_for("biu", "softmax_lastdim_kernel_impl", x)
    data = _c_order(x._data)
    shifted = data - data.max(axis=dim, keepdims=True, initial=-np.inf)  # -inf: an empty x has no max
    e = np.exp(shifted)
    out, ctx = record(SoftmaxBackward0, e / e.sum(axis=dim, keepdims=True), (x,))
    if ctx:
        ctx.dim = dim
        ctx.save_for_backward(out)
    return out


def log_softmax(x, dim):
    normalize_dims(dim, x._data.ndim)  # torch's IndexError for a dim out of range
    if x._data.size == 0 and x._data.dtype.kind in "biu":
        return Tensor(x._data.copy(), device=x._device)  # torch needs no kernel for nothing
    not_for("biu", "log_softmax_lastdim_kernel_impl", x)
    data = _c_order(x._data)
    shifted = data - data.max(axis=dim, keepdims=True, initial=-np.inf)  # -inf: an empty x has no max
    data = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    out, ctx = record(LogSoftmaxBackward0, data, (x,))
    if ctx:
        ctx.dim = dim
        ctx.save_for_backward(out)
    return out


# --- devices and dtypes: rule in devices.py ----------------------------------------------------------


ToCopyBackward0 = NodeKind("ToCopyBackward0", "to_backward")


def to(x, device=None, dtype=None):
    target_device = x._device if device is None else canonical_device(device)
    target_dtype = x._data.dtype if dtype is None else np.dtype(dtype)
    if target_device is x._device and target_dtype == x._data.dtype:
        return x
    data = x._data
    if 0 in data.strides and data.size:  # an expand: copied densely, laid out as torch lays it out
        data = laid_out_as_torch(data)
    data = active.transfer(data, x._device, target_device).astype(target_dtype, copy=False)
    out, ctx = record(ToCopyBackward0, data, (x,))
    out._device = target_device
    if ctx:
        ctx.source_device = x._device
        ctx.source_dtype = x._data.dtype
    return out


# --- in place -----------------------------------------------------------------------------------------


CopyBackwards = NodeKind("CopyBackwards", "copy_backward", reduce_broadcast=True)  # torch's name


def copy(old, source):
    """What target.copy_(source) writes: source's values broadcast to target's shape, in its
    dtype and on its device (any cast, as torch's copy_: 1.7 into an int64 tensor is 1).
    Recorded with both as inputs: the overwritten values get no gradient, the source all."""
    if not isinstance(source, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(source).__name__}")
    if source._device is not old._device:
        source = to(source, device=old._device)  # a copy across devices is allowed, and recorded
    shape = old._data.shape
    if not _broadcasts_to(source._data.shape, shape):
        try:
            np.broadcast_shapes(source._data.shape, shape)
        except ValueError:
            raise RuntimeError(broadcast_error(shape, source._data.shape)) from None
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(source._data.shape, shape))}")
    data = np.broadcast_to(source._data, shape).astype(old._data.dtype)
    out, ctx = record(CopyBackwards, data, (old, source))
    return out


def copy_(target, source):
    return inplace(target, copy, source, ufunc=_copy_into)


def _copy_into(target, source, out):
    np.copyto(out, source, casting="unsafe")


def _check_result_shape(target, result):
    if result._data.shape != target._data.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(result._data.shape)}"
        )


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:  # shapes that do not broadcast at all: the operation says so in torch's words
        return False


def _check_cast(target, op, a, b):
    """torch's refusal to write a result into a tensor of a lower category (a float into an
    int tensor, an int into a bool one): x.div_(2) on int64 is an error, not a truncation."""
    if a._data.dtype == b._data.dtype and op is not div:
        return
    if not _broadcasts_to(b._data.shape, a._data.shape):
        return  # torch checks the shape first: the operation raises its error
    dtype = a._data.dtype if a._data.dtype == b._data.dtype else result_dtype(a, b)
    if op is div and dtype.kind in "biu":
        dtype = DEFAULT_FLOAT
    if _CATEGORY[dtype.kind] > _CATEGORY[target._data.dtype.kind]:
        raise RuntimeError(
            f"result type {torch_name(dtype)} can't be cast to the desired output type "
            f"{torch_name(target._data.dtype)}"
        )


def inplace(target, op, other, fill=None, ufunc=None):
    """Write op(target, other) into target's own array and bump its version.

    While a graph is recorded the operation joins it: the old value becomes the operation's
    input and target takes the new node as its grad_fn (torch rebases it the same way).
    Otherwise `ufunc` (np.add for add_) writes straight into the array, like numpy's `+=`.
    """
    recording = GradMode.enabled and (
        target._requires_grad or (isinstance(other, Tensor) and other._requires_grad)
    )
    if recording and target.grad_fn is None and target._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if op is sub:
        _check_sub(target, other)
    # torch's order: the devices, then no two elements sharing memory, then the types
    checked = None if fill is not None or op is copy else operands("inplace", target, other)
    if not getattr(target._data.flags, "writeable", True):  # (CuPy's arrays have no such flag)
        # an expand that repeats elements, like the gradient of a sum from autograd.grad
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    if checked is not None:  # (copy_ casts whatever it gets)
        _check_cast(target, op, *checked)
    if recording:
        if target._base is not None and target._base.is_leaf and target._base._requires_grad:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation."
            )
        if target._base is not None:
            raise RuntimeError(
                "this engine does not record in-place operations on views of tensors that "
                "require grad; use the out-of-place operation (y = y * 2) instead"
            )
        old = Tensor(target._data.copy(), target._requires_grad, target.grad_fn, target._device)
        result = op(old, other)
        _check_result_shape(target, result)  # before the target joins the graph
        target.grad_fn = result.grad_fn
        target._requires_grad = True
        if target._retains_grad:  # as torch: .grad is then the gradient of the new value
            old.grad_fn.retained, target._retains_grad = None, False
            target.retain_grad()  # on the new node
    elif ufunc is not None and fill is None:
        if op is copy and isinstance(other, Tensor) and other._device is not target._device:
            other = to(other, device=target._device)
        _, other = operands("inplace", target, other)
        shape = target._data.shape
        # (The equal-shape test first: np.broadcast_shapes costs microseconds, and an
        # optimizer step `p.sub_(lr * p.grad)` always has equal shapes.)
        if other._data.shape == shape or _broadcasts_to(other._data.shape, shape):
            ufunc(target._data, other._data, out=target._data)  # numpy's "same_kind" casting
            target._bump_version()
            return target
        result = op(target, other)
    else:
        result = None if fill is not None else op(target, other)
    if fill is not None:
        target._data.fill(fill)
    else:
        _check_result_shape(target, result)
        target._data[...] = result._data
    target._bump_version()
    return target
