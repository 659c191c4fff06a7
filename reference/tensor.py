"""The Tensor: a numpy array plus what autograd needs to know about it.

- `grad_fn`: the node that produced it (None for a leaf),
- `requires_grad`: whether gradients flow to it,
- `grad`: for a leaf, the sum of the gradients of every backward pass so far,
- a version counter bumped by in-place operations, so that a saved tensor that was
  changed after it was saved is detected instead of giving a silently wrong gradient.

Operations live in `ops`; the methods here only forward to them.
"""
import warnings
import weakref

import numpy as np

from .device_record import DeviceRecord
from .grad_mode import GradMode
from .pieces import NotInThisEdition, active

CPU = DeviceRecord("cpu")
_ARRAY = np.ndarray
_devices = {("cpu", None): CPU}


def canonical_device(spec):
    """The engine's Device for what a user wrote ("cuda:1", a Device of any class).

    The active Device piece parses it (its errors are the user's errors), and "cuda" means
    cuda:0. The result is the engine's own object, one per device, so that operations compare
    devices with `is` (fast). Never the piece's object: a correct learner `__eq__` may only
    know its own class, and a learner's Device must not outlive its test in this table."""
    parsed = active.Device(str(spec))
    # torch puts a tensor for "cpu:1" on the CPU (one host), one for "cuda" on cuda:0
    key = ("cpu", None) if parsed.type == "cpu" else ("cuda", parsed.index or 0)
    if key not in _devices:
        _devices[key] = DeviceRecord(*key)
    return _devices[key]


# How torch names a dtype in the message for a .grad of the wrong dtype: the gradient's as
# C++ spells its type, the tensor's as torch's scalar type.
_GRAD_DTYPE_NAMES = {
    "float64": ("double", "Double"),
    "float32": ("float", "Float"),
    "float16": ("c10::Half", "Half"),
    "int64": ("long int", "Long"),
    "int32": ("int", "Int"),
    "bool": ("bool", "Bool"),
}


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)


class Tensor:
    __slots__ = (
        "_data",
        "_requires_grad",
        "grad_fn",
        "_grad",
        "_version_box",  # [version], shared with detach() and views; None until needed
        "_hooks",  # a leaf's hooks (a non-leaf's live on its grad_fn)
        "_accumulator_ref",  # weak reference to the leaf's AccumulateGrad node
        "_retains_grad",
        "_base",  # the tensor this one is a view of, if any
        "_device",
        "_owner_pass",  # set only on a gradient that one backward pass alone holds (graph.pass_owns)
        "__weakref__",
    )
    # numpy must hand `array * tensor` to Tensor.__rmul__ instead of looping over elements.
    __array_ufunc__ = None

    def __init__(self, data, requires_grad=False, grad_fn=None, device=CPU):
        # numpy gives scalars for 0-d results; keep arrays. (An array's type is tested
        # first: isinstance(data, np.generic) costs 70 ns, and this runs for every tensor.)
        if type(data) is not _ARRAY and isinstance(data, np.generic):
            data = np.asarray(data)
        self._data = data
        self._requires_grad = requires_grad
        self.grad_fn = grad_fn
        self._grad = None
        self._version_box = None  # version 0; made on demand (most tensors never need one)
        self._hooks = None
        self._accumulator_ref = None
        self._retains_grad = False
        self._base = None
        self._device = device

    # --- metadata ------------------------------------------------------------------------

    @property
    def shape(self):
        return self._data.shape

    def size(self, dim=None):
        return self._data.shape if dim is None else self._data.shape[dim]

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    def stride(self, dim=None):
        """How many elements apart neighbours along each dimension are in memory, as torch's:
        (3, 1) for a (2, 3) tensor, (1, 3) for its transpose. Views and copies depend on it."""
        # (each byte stride divided by the element's size, in C: map runs no Python frame)
        strides = tuple(map(self._data.itemsize.__rfloordiv__, self._data.strides))
        return strides if dim is None else strides[dim]

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        # What a user compares with `ag.device("cuda:1")`: an object of the active Device piece,
        # as torch gives a torch.device (a piece's __eq__ may know only its own class). The
        # engine itself compares its own records, `_device`.
        try:
            return active.Device(str(self._device))
        except (NotImplementedError, NotInThisEdition):  # kata 08 not written yet (a stub)
            return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def _version(self):
        box = self._version_box
        return 0 if box is None else box[0]

    def _shared_version(self):
        """The version counter itself, to share with a tensor that shares this one's data."""
        if self._version_box is None:
            self._version_box = [0]
        return self._version_box

    def _bump_version(self):
        self._shared_version()[0] += 1

    # --- requires_grad and .grad ---------------------------------------------------------

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        # torch's attribute words its two refusals apart from requires_grad_()'s
        if flag and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if flag and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(requires_grad) or self.grad_fn is not None
        return self

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            self._check_assigned_grad(value)
        self._grad = value

    def _check_assigned_grad(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
        if value._data.shape != self._data.shape:
            raise RuntimeError(
                f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                "the same size"
            )
        if value._data.dtype != self._data.dtype:
            # torch's words and type names; its advice about setting grad_dtype is left out
            # (a torch feature this engine does not have).
            given, _ = _GRAD_DTYPE_NAMES.get(value.dtype.name, (value.dtype.name,) * 2)
            _, expected = _GRAD_DTYPE_NAMES.get(self.dtype.name, (self.dtype.name,) * 2)
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{given}' to a tensor with "
                f"grad_dtype '{expected}'. The gradient must match the tensor's grad_dtype "
                "(defaults to the tensor's dtype)."
            )
        if value._device is not self._device and value._device != self._device:
            raise RuntimeError("assigned grad has data located on a different device")

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Ask a non-leaf to keep its gradient in .grad (a leaf always does)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn.retained = weakref.ref(self)

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a non-None return replaces it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn.register_prehook(hook)
        if self._hooks is None:
            self._hooks = []
        return RemovableHandle(self._hooks, hook)

    def _grad_accumulator(self):
        """The leaf's AccumulateGrad node, shared by every operation that uses the leaf while
        any of them is alive (held weakly, as torch does, so a leaf does not keep graphs)."""
        node = self._accumulator_ref() if self._accumulator_ref is not None else None
        if node is None:
            node = AccumulateGrad(self)
            self._accumulator_ref = weakref.ref(node)
        return node

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        autograd.backward(self, gradient, retain_graph, create_graph, inputs)

    # --- data access ---------------------------------------------------------------------

    def detach(self):
        """The same data and version counter, cut from the graph."""
        out = Tensor(self._data, False, None, self._device)  # positional: this runs per saved output
        out._version_box = self._shared_version()
        return out

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        # Like torch: shares the data but not the version counter, so changes made through
        # .data are invisible to autograd. That is why .data is only for code outside a graph.
        return Tensor(self._data, device=self._device)

    @data.setter
    def data(self, value):
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    def numpy(self):
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self._device.type != "cpu":
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__

    def __repr__(self):
        data = self._data if self._device.type == "cpu" else self.detach().cpu()._data  # printing copies
        formatter = {"float_kind": _float_format(data)} if data.dtype.kind == "f" else None
        body = np.array2string(
            data, separator=", ", prefix="tensor(", threshold=1000, formatter=formatter
        )
        extras = []
        if self._device.type != "cpu":
            extras.append(f"device='{self._device}'")
        if self._data.dtype not in (np.float32, np.int64, np.bool_):
            extras.append(f"dtype={self._data.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    # --- conversions ---------------------------------------------------------------------

    def to(self, *args, device=None, dtype=None, copy=False):
        for arg in args:
            if isinstance(arg, str) or hasattr(arg, "index"):  # a device of any Device class
                device = arg
            else:
                dtype = arg
        return ops.to(self, device=device, dtype=dtype)

    def cpu(self):
        return ops.to(self, device="cpu")

    def cuda(self, device=None):
        return ops.to(self, device="cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    def float(self):
        return ops.to(self, dtype=np.float32)

    def double(self):
        return ops.to(self, dtype=np.float64)

    def new_zeros(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return Tensor(np.zeros(shape, dtype=self._data.dtype, like=self._data), device=self._device)

    def new_ones(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return Tensor(np.ones(shape, dtype=self._data.dtype, like=self._data), device=self._device)

    def clone(self):
        return ops.clone(self)

    # --- operations (see ops.py) ---------------------------------------------------------

    def __radd__(self, other):
        return ops.add(other, self)

    def __rsub__(self, other):
        return ops.sub(other, self)

    def __rmul__(self, other):
        return ops.mul(other, self)

    def __rtruediv__(self, other):
        return ops.div(other, self)

    def __pow__(self, exponent):
        return ops.pow(self, exponent)

    def __rpow__(self, base):
        return ops.pow(base, self)

    def __rmatmul__(self, other):
        return ops.matmul(other, self)

    # __add__, __sub__, __mul__, __truediv__, __matmul__, __neg__ and __getitem__ are the
    # operations themselves: see the end of this file.

    # Comparisons give bool tensors that are never part of a graph.
    def __gt__(self, other):
        return ops.compare(np.greater, self, other)

    def __ge__(self, other):
        return ops.compare(np.greater_equal, self, other)

    def __lt__(self, other):
        return ops.compare(np.less, self, other)

    def __le__(self, other):
        return ops.compare(np.less_equal, self, other)

    def __eq__(self, other):
        return ops.compare(np.equal, self, other)

    def __ne__(self, other):
        return ops.compare(np.not_equal, self, other)

    def pow(self, exponent):
        return ops.pow(self, exponent)

    def exp(self):
        return ops.exp(self)

    def log(self):
        return ops.log(self)

    def sigmoid(self):
        return ops.sigmoid(self)

    def tanh(self):
        return ops.tanh(self)

    def relu(self):
        return ops.relu(self)

    def sqrt(self):
        return ops.sqrt(self)

    def abs(self):
        return ops.abs(self)

    def where(self, condition, other):
        """self where `condition` holds, `other` elsewhere (torch's Tensor.where)."""
        return ops.where(condition, self, other)

    def sign(self):
        return ops.sign(self)

    def sum(self, dim=None, keepdim=False):
        return ops.sum(self, dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        return ops.mean(self, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        return ops.max(self, dim, keepdim)

    def reshape(self, *shape):
        return ops.reshape(self, shape)

    def view(self, *shape):
        return ops.view(self, shape)

    def expand(self, *sizes):
        return ops.expand(self, sizes)

    def transpose(self, dim0, dim1):
        return ops.transpose(self, dim0, dim1)

    @property
    def T(self):
        return ops.T(self)

    @property
    def mT(self):
        return ops.transpose(self, -2, -1)

    def softmax(self, dim):
        return ops.softmax(self, dim)

    def log_softmax(self, dim):
        return ops.log_softmax(self, dim)

    def index_put(self, indices, values, accumulate=False):
        return ops.index_put(self, indices, values, accumulate)

    # --- in-place operations (bump the version counter) ----------------------------------

    def zero_(self):
        return ops.inplace(self, ops.zero, 0, fill=0)

    def add_(self, other, alpha=1):
        if alpha != 1:
            other = other * alpha
        return ops.inplace(self, ops.add, other, ufunc=np.add)

    def sub_(self, other, alpha=1):
        if alpha != 1:
            other = other * alpha
        return ops.inplace(self, ops.sub, other, ufunc=np.subtract)

    def mul_(self, other):
        return ops.inplace(self, ops.mul, other, ufunc=np.multiply)

    def copy_(self, source):
        return ops.copy_(self, source)

    def div_(self, other):
        return ops.inplace(self, ops.div, other, ufunc=np.true_divide)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_


# Imported last: these modules need the Tensor class defined above.
from . import autograd, ops  # noqa: E402
from .graph import AccumulateGrad, RemovableHandle  # noqa: E402

# The common operators are the operations themselves, with no method call in between: they
# run at every step of every forward and backward pass.
Tensor.__add__ = Tensor.add = ops.add
Tensor.__sub__ = Tensor.sub = ops.sub
Tensor.__mul__ = Tensor.mul = ops.mul
Tensor.__truediv__ = Tensor.div = ops.div
Tensor.__matmul__ = Tensor.matmul = ops.matmul
Tensor.__neg__ = Tensor.neg = ops.neg
Tensor.__getitem__ = ops.getitem


def _float_format(data, precision=4):
    """How torch prints the numbers of a float tensor: one format for all of them, padded to
    one width. Whole numbers print as `2.`; others with 4 decimals, or in scientific notation
    when they span more than 1000x or are tiny or huge: tensor([2.0000, 0.4000, 0.0000])."""
    finite = data[np.isfinite(data)]
    magnitudes = np.abs(finite[finite != 0]).astype(np.float64)
    if magnitudes.size == 0:
        whole, scientific = True, False
    else:
        low, high = magnitudes.min(), magnitudes.max()
        whole = bool(np.all(magnitudes == np.ceil(magnitudes)))
        scientific = high / low > 1000 or high > 1e8 or (not whole and low < 1e-4)

    def text(value):
        if scientific:
            return f"{value:.{precision}e}"
        if whole:
            return f"{value:.0f}" + ("." if np.isfinite(value) else "")
        return f"{value:.{precision}f}"

    shown = finite[finite != 0] if magnitudes.size else finite
    width = max((len(text(v)) for v in shown), default=1)
    return lambda value: text(value).rjust(width)
