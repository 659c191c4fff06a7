"""A differential fuzzer of the public API: small random programs, run on torch and on the
reference engine, must show a user the same things.

A program is a list of `Step`s, each one or two lines of Python against `lib` (torch, or
`import reference as lib`), so a failing program prints as code a person can paste. Steps are
drawn one at a time with hypothesis' `data.draw`, looking at the variables torch holds so far
(their shapes, dtypes, devices), and each step runs at once on both engines. After every step
everything a user can observe of every variable is compared: values, dtype, shape, device,
requires_grad, is_leaf, grad_fn's name, the version counter, `.grad` (its value, and whether it
is the same object as after the step before), results that are not tensors, the error raised
(type and key phrase) and the warnings.

Devices: torch here has no GPU, so its program runs on the CPU and the devices are followed
symbolically: each tensor's device is what torch would give it (the device it was made on,
moved to, or of its operands), moves between different devices run in torch as
`.to("cpu", copy=True)` (torch's ToCopyBackward0 node too), and an operation on two devices
is expected to fail with torch's device error. The reference runs on its simulated GPU with
the real device strings, which is what the printed program shows.
"""
import contextlib
import functools
import io
import re
import warnings

import numpy as np
import torch
from hypothesis import strategies as st

import reference
from reference.device_record import DeviceRecord

SAME_DEVICE_ERROR = ("Expected all tensors to be on the same device, but found at least two "
                     "devices")
NUMPY_OF_CUDA = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                 "tensor to host memory first.")

# torch gives this warning once per process (TORCH_WARN_ONCE): whether a program sees it
# depends on the programs before it, so it is not compared.
ONCE_A_PROCESS = "Using backward() with create_graph=True will create a reference cycle"

SHAPES = [(), (1,), (3,), (2, 3), (3, 1), (1, 3), (2, 1, 3)]
FLOATS = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]
INTS = [-2, -1, 0, 1, 2, 3]
NUMBERS = [2, -1, 0, 3, 0.5, 2.5, -1.5, True, False]


class Nan(float):
    """nan, printed as code that makes it (a program prints its values with repr)."""

    def __repr__(self):
        return "float('nan')"


# Numbers at the edges, drawn now and then: a zero's sign, nan, and magnitudes whose square
# overflows float32 (found: `x * -0.0` gave +0.0, div's gradient -a / (b * b) overflowed,
# x.max() sent a nan's gradient nowhere).
EDGE_FLOATS = [-0.0, Nan("nan"), 1e20, -3e20, 1e-20]
EDGE_NUMBERS = [-0.0, 1e20, 1e-20]
DTYPES = ["float32", "float64", "int64", "bool"]
DEVICES = ["cpu", "cuda", "cuda:0", "cuda:1"]
DEVICE_STRINGS = ["cpu", "cuda", "cuda:0", "cuda:1", "cpu:0", "cuda:", "cuda:01", "cuda:-1",
                  "cuda:x", "gpu", "gpu:0", "gpu:x", "CUDA", "", " cuda", "cuda:1 ", "cuda:0:1"]
UNARY = ["exp", "log", "sigmoid", "tanh", "relu", "sqrt", "abs"]
BINARY = ["+", "-", "*", "/", "**", "@"]
HOOKS = ["lambda g: g * 2", "lambda g: None", "lambda g: g + 1"]

# grad_fn names the README lists as known differences (torch's name -> the reference's).
KNOWN_NAMES = {
    ("RsubBackward1", "SubBackward0"),  # 2 - x
    ("MulBackward0", "DivBackward0"),  # 2 / x: torch records a reciprocal, then a mul
    # matmul is one node named after its kernel; torch chains several for a vector @ a matrix
    # and for batches, and names the result after the last
    ("SqueezeBackward4", "BmmBackward0"),
    ("UnsafeViewBackward0", "BmmBackward0"),
    ("CloneBackward0", "BmmBackward0"),
    ("TransposeBackward0", "BmmBackward0"),
}


def canonical(device):
    """torch's device of a tensor made for `device` ("cuda" -> cuda:0, "cpu:0" -> cpu)."""
    return "cpu" if device.startswith("cpu") else device if ":" in device else device + ":0"


class Step:
    """One step: `code` as the reference runs it and the program prints; `torch_code` as
    torch runs it on the CPU (devices followed in `devices`: variable -> torch's device).
    (Not a dataclass: hypothesis prints a dataclass field by field, this prints its code.)"""

    def __init__(self, code, torch_code=None, devices=None):
        self.code = code
        self.torch_code = code if torch_code is None else torch_code
        self.devices = devices or {}

    def __repr__(self):
        return self.code


class Program(list):
    """The steps so far; prints as a script."""

    def __str__(self):
        lines = ["import torch as lib  # or: import reference as lib (devices: a GPU for torch)"]
        return "\n".join(lines + [step.code for step in self])


# --- running ------------------------------------------------------------------------------------


def _values(t):
    """A tensor's values as a numpy array. torch hands out a "ZeroTensor" for some gradients
    that are known to be zero (an internal shortcut whose values are zeros), and refuses to
    convert it without force."""
    if isinstance(t, torch.Tensor) and t._is_zerotensor():
        return t.detach().cpu().numpy(force=True).copy()
    return t.detach().cpu().numpy().copy()


@functools.lru_cache(maxsize=4096)
def _compiled(code):
    """A step's code compiled once for both engines (and the runs that shrink a program)."""
    return compile(code, "<program>", "exec")


@functools.lru_cache(maxsize=None)
def _dtype_name(dtype):
    """"float32" for torch's and numpy's float32 (str() of a numpy dtype is slow, and asked often)."""
    return str(dtype).replace("torch.", "")


class Engine:
    """One engine's namespace while a program runs, and what it shows after each step."""

    def __init__(self, lib, symbolic_devices):
        self.lib = lib
        self.names = {"lib": lib}
        self.symbolic = symbolic_devices  # torch: devices followed by the steps
        self.devices = {}
        self.last_grad = {}
        self.first_version = {}
        self.gradients = set()  # ids of autograd.grad's results (see observe)
        # The sign of a zero is compared (x * -0.0 is -0.0), until a matmul runs: its kernels
        # sum products in their own order (BLAS: 0.0 + -0.0 is 0.0), and torch's are not numpy's.
        self.zero_signs = True

    def run(self, step):
        code = step.torch_code if self.lib is torch else step.code
        self.zero_signs = self.zero_signs and "@" not in step.code
        self.devices.update(step.devices)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(_compiled(code), self.names)
                error = None
            except Exception as exc:  # what a user sees: compared with the other engine
                error = (type(exc).__name__, key_phrase(str(exc)))
        shown = {(w.category.__name__, key_phrase(str(w.message))) for w in caught
                 if issubclass(w.category, UserWarning) and not str(w.message).startswith(ONCE_A_PROCESS)}
        return {"error": error, "warnings": sorted(shown)}

    def observe(self):
        seen = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # gradients, under any name: autograd.grad's results (t = g.float() is g itself)
            # and .grad tensors (r = x.grad), whose graphs under create_graph are the README's
            tensors = [(n, v) for n, v in self.names.items() if isinstance(v, (torch.Tensor, reference.Tensor))]
            self.gradients = {id(v) for n, v in tensors if n.startswith("g")}
            self.gradients |= {id(v.grad) for _, v in tensors if (v.is_leaf or v.retains_grad) and v.grad is not None}
            for name, value in self.names.items():
                if name != "lib" and not name.startswith("_"):
                    seen[name] = self.show(name, value)
        return seen

    def show(self, name, value):
        if isinstance(value, (torch.Tensor, reference.Tensor)):
            return self.show_tensor(name, value)
        if isinstance(value, (torch.device, reference.device, DeviceRecord)):  # a tensor's device: the engine's record
            return ("device", value.type, value.index, str(value), repr(value))
        if isinstance(value, (tuple, list)):
            return tuple(self.show(f"{name}[{i}]", v) for i, v in enumerate(value))
        if isinstance(value, np.ndarray):
            return ("array", str(value.dtype), value.shape, value)
        if isinstance(value, (bool, int, float, str, type(None))):
            return (type(value).__name__, value)
        return type(value).__name__.replace("RemovableHandle", "handle")

    def values(self, t):
        values = _values(t)
        if not self.zero_signs and values.dtype.kind == "f":
            values += 0.0  # -0.0 + 0.0 is 0.0: every zero the same
        return values

    def device_of(self, name, tensor):
        if self.symbolic:
            return self.devices.get(name, "cpu")
        return str(tensor.device)

    def show_tensor(self, name, t):
        shown = {
            "shape": tuple(t.shape),
            "dtype": _dtype_name(t.dtype),
            "device": self.device_of(name, t),
            "requires_grad": t.requires_grad,
            "is_leaf": t.is_leaf,
            "grad_fn": None if t.grad_fn is None else t.grad_fn.name(),
            # bumps since the variable was first seen: how torch made a tensor (matmul's squeeze_,
            # a .grad summed in place) shows in its first version, which is not the API
            "version": t._version - self.first_version.setdefault(name, t._version),
            "values": self.values(t),
        }
        if id(t) in self.gradients and shown["grad_fn"] is not None:  # autograd.grad's, create_graph
            shown["grad_fn"] = "(a gradient's graph)"  # made of the rule's operations (README)
        if t.is_leaf or t.retains_grad:
            grad = t.grad
            shown["grad"] = None if grad is None else self.show_tensor(name, grad)
            if grad is not None:  # how torch made a .grad shows in its version and, under
                del shown["grad"]["version"]  # create_graph, its grad_fn (CopyBackwards): README
                del shown["grad"]["grad_fn"]
            previous = self.last_grad.get(name)
            shown["grad is the same object"] = grad is not None and grad is previous
            self.last_grad[name] = grad
        return shown


# torch words a matmul error after the kernel that runs (dot, mv, mm, bmm); the reference
# words every case as torch's 2-D one (README).
MATMUL_ERRORS = {
    "inconsistent tensor size, expected tensor": "mat1 and mat2 shapes cannot be multiplied",
    "size mismatch, got input": "mat1 and mat2 shapes cannot be multiplied",
    "Expected size for first two dimensions of batch2 tensor": "mat1 and mat2 shapes cannot be multiplied",
    "dot : expected both vectors to have same dtype": "expected m1 and m2 to have the same dtype, but got",
    "addmv input tensors must have the same dtype": "expected m1 and m2 to have the same dtype, but got",
    "expected scalar type": "expected m1 and m2 to have the same dtype, but got",
}


def key_phrase(message):
    """What a user searches for: the first line up to its first colon (details after it,
    like torch's type names and versions, are left out)."""
    line = message.strip().splitlines()[0] if message.strip() else ""
    line = line.split(" (Triggered internally at ")[0]
    for torch_words, reference_words in MATMUL_ERRORS.items():
        if line.startswith(torch_words) or line.startswith(reference_words):
            return reference_words
    if line.startswith("Expected one of ") and " device type at start of device string" in line:
        # torch lists 20 types (README); the end names the type it did not know
        return "Expected one of (the device types) device type at start of device string: " + line.split(": ")[-1]
    if line.startswith(MODIFIED_IN_PLACE):
        return MODIFIED_IN_PLACE + _output_of(line)
    if line.startswith(SAME_DEVICE_ERROR):  # which two devices: torch's CUDA run is simulated here
        return SAME_DEVICE_ERROR
    if line.startswith("expand(torch."):  # torch's CUDA run is simulated here: no torch.cuda. in its type
        line = line.replace("torch.cuda.", "torch.")
    if " not implemented for '" in line:  # torch names its kernel: softmax_kernel_impl, ...
        return "not implemented for '" + line.split(" not implemented for '")[1]
    return line.split(": ")[0].strip()


MODIFIED_IN_PLACE = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _output_of(line):
    """The operation an in-place error names ("which is output 0 of Pow1,"), if any."""
    found = re.search(r"which is output \d+ of (\w+),", line)
    return f" (output of {found.group(1)})" if found else ""


_PLAIN = (str, bool, int, float, type(None))


def differences(theirs, mine, path=""):
    """Where two observations differ, as readable lines (empty when they agree)."""
    if type(theirs) in _PLAIN and type(mine) is type(theirs) and theirs == mine:
        return []  # most of what is compared (names, flags, shapes): equal at once
    if isinstance(theirs, dict) and isinstance(mine, dict):
        out = []
        for key in sorted(set(theirs) | set(mine), key=str):
            if key not in mine or key not in theirs:
                out.append(f"{path}{key}: torch {theirs.get(key, '(absent)')!r}, reference {mine.get(key, '(absent)')!r}")
            else:
                out += differences(theirs[key], mine[key], f"{path}{key}.")
        return out
    if isinstance(theirs, tuple) and isinstance(mine, tuple) and len(theirs) == len(mine):
        return [d for a, b, i in zip(theirs, mine, range(len(mine))) for d in differences(a, b, f"{path}{i}.")]
    if isinstance(theirs, np.ndarray) and isinstance(mine, np.ndarray):
        return [] if same_values(theirs, mine) else [f"{path[:-1]}: torch {theirs!r}, reference {mine!r}"]
    if path.endswith("grad_fn.") and (theirs, mine) in KNOWN_NAMES:
        return []
    if isinstance(theirs, float) and isinstance(mine, float):
        return [] if same_values(np.array(theirs), np.array(mine)) else [f"{path[:-1]}: torch {theirs!r}, reference {mine!r}"]
    return [] if theirs == mine else [f"{path[:-1]}: torch {theirs!r}, reference {mine!r}"]


def same_values(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in "fc":
        return np.array_equal(a, b)
    if a.tobytes() == b.tobytes():  # the same bits (most values): no need to weigh them
        return True
    # float64 values may come from float32 ones (t.double()), where torch's and numpy's exp,
    # tanh, ... may differ in the last bit: so a float32 ulp or so in float64 too.
    rtol, atol = (1e-4, 1e-5) if a.dtype == np.float32 else (1e-5, 1e-6)
    # torch's formula can underflow to 0 / 0 (d/db of 0 / b at a tiny b: -0 * g / (b * b)),
    # where another right formula gives the zero it should: a zero against torch's nan is no
    # difference (a: torch's values, b: the other engine's)
    a = np.where(np.isnan(a) & (b == 0), b, a)
    return (np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True) and np.array_equal(np.isinf(a), np.isinf(b))
            and same_signs_of_zero(a, b))


def same_signs_of_zero(a, b):
    """Where both are 0, the same sign: -0.0 is what a user sees printed (and 1 / -0.0 is -inf)."""
    zeros = (a == 0) & (b == 0)
    return np.array_equal(np.signbit(a[zeros]), np.signbit(b[zeros]))


# --- drawing steps --------------------------------------------------------------------------------


class Builder:
    """Draws the next step from what torch's namespace holds now."""

    def __init__(self, engine):
        self.engine = engine
        self.count = 0
        self._draw = None
        self.used = set()  # tensors already an operand: a view of them may exist
        self.viewed = set()  # tensors that are a view, or have one (reshape, index, detach, ...)
        self.aliases = {}  # tensor -> the set of tensors that may share its data (itself included)
        self.saved_needlessly = set()  # operands of * / @ whose partner needs no gradient
        self.moved = False  # a move between devices happened (torch runs it on the CPU: no copy back)
        self.grad_results = set()  # autograd.grad's results: requires_grad_() on one may reach another
        self.shared_grads = set()  # autograd.grad's results that torch's CPU run may share (see grad)
        self.grad_viewed = set()  # tensors a view of whose .grad was taken (grad_view)

    def steps(self):
        """A strategy for the next step (drawn whole, so hypothesis prints it as its code)."""

        @st.composite
        def step(draw):
            self._draw = draw
            return self.next_step()

        return step()

    def draw(self, strategy):
        return self._draw(strategy)

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def new_name(self, prefix="t"):
        self.count += 1
        return f"{prefix}{self.count}"

    def tensors(self, where=lambda name, t: True):
        return [n for n, v in self.engine.names.items() if isinstance(v, torch.Tensor) and where(n, v)]

    def device(self, name):
        return self.engine.devices.get(name, "cpu")

    def next_step(self):
        kinds = ["create"] * 3 + ["binary"] * 4 + ["unary", "reduce", "reshape", "index", "softmax", "convert",
                                                    "sized"]
        if self.tensors():
            kinds += ["move", "move", "backward", "backward", "grad", "hook", "inplace", "no_grad",
                      "detach", "read", "grad_attribute"]
            kinds += ["toggle_requires_grad", "grad_view", "grad_view", "logging_hook", "backward_of_a_sum",
                      "backward_of_a_sum"]
        kinds += ["device_string"]
        step = getattr(self, self.pick(kinds))()
        return step if step is not None else self.create()

    # creation
    def values(self, shape, kind):
        pool = {"float": self.float_pool(), "int": INTS, "bool": [True, False]}[kind]
        flat = self.draw(st.lists(st.sampled_from(pool), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
        return np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]

    def create(self):
        name = self.new_name()
        shape = self.pick(SHAPES)
        dtype = self.pick(DTYPES + [None, None])
        kind = "bool" if dtype == "bool" else "int" if dtype == "int64" else "float"
        if dtype is None:
            kind = self.pick(["float", "int", "bool"])
        args = [repr(self.values(shape, kind))]
        if dtype:
            args.append(f"dtype=lib.{dtype}")
        floating = dtype in ("float32", "float64") or (dtype is None and kind == "float")
        if self.draw(st.booleans()) and (floating or self.draw(st.integers(0, 9)) == 0):
            args.append("requires_grad=True")
        options = args[1:]
        device = self.pick(DEVICES + ["cpu"] * 4 + [None] * 4)
        torch_args = list(args)
        if device:
            args.append(f"device={device!r}")
            torch_args.append("device='cpu'")
        function = self.pick(["tensor"] * 4 + ["ones_like", "zeros_like", "zeros", "ones", "arange"])
        if function in ("zeros", "ones", "arange"):
            if function == "arange":
                shape_args = [self.pick(["3", "1, 4", "0., 2., 0.5", "-1, 2, 2"])]
                keep = [a for a in options if a.startswith("dtype") and "bool" not in a or a.startswith("requires")]
            else:
                shape_args = [", ".join(map(str, shape)) or "()"]
                keep = options
            rest = keep + ([f"device={device!r}"] if device else [])
            torch_rest = keep + (["device='cpu'"] if device else [])
            return Step(f"{name} = lib.{function}({', '.join(shape_args + rest)})",
                        f"{name} = lib.{function}({', '.join(shape_args + torch_rest)})", {name: canonical(device or "cpu")})
        if function != "tensor" and self.tensors():
            like = self.pick(self.tensors())
            rest = ", requires_grad=True" if "requires_grad=True" in args else ""
            return Step(f"{name} = lib.{function}({like}{rest})", devices={name: self.device(like)})
        return Step(f"{name} = lib.tensor({', '.join(args)})", f"{name} = lib.tensor({', '.join(torch_args)})",
                    {name: canonical(device or "cpu")})

    def float_pool(self):
        """The floats a new tensor draws from: the usual ones, now and then with the edges."""
        return FLOATS + EDGE_FLOATS if self.draw(st.integers(0, 3)) == 0 else FLOATS

    # operations
    def operand(self, like=None):
        """A tensor, or a Python number."""
        if self.draw(st.integers(0, 3)) == 0:
            numbers = NUMBERS + EDGE_NUMBERS if self.draw(st.integers(0, 3)) == 0 else NUMBERS
            return repr(self.pick(numbers)), None
        names = self.tensors()
        if like is not None and self.draw(st.integers(0, 4)):
            shape = self.engine.names[like].shape
            fits = self.tensors(lambda n, t: _broadcasts(t.shape, shape) and self.device(n) == self.device(like))
            names = fits or names
        name = self.pick(names)
        return self.maybe_transposed(name, like), name

    def maybe_transposed(self, name, like):
        """`name`, or now and then its transpose (x.T, x.transpose(0, -1)) where it broadcasts
        with `like`: gradients then come back through a transpose, laid out another way."""
        shape = tuple(self.engine.names[name].shape)
        if len(shape) < 2 or self.draw(st.booleans()):
            return name
        flipped = shape[:-2] + shape[-2:][::-1] if len(shape) == 2 else (shape[-1], *shape[1:-1], shape[0])
        if like is not None and not _broadcasts(flipped, self.engine.names[like].shape):
            return name
        return f"{name}.T" if len(shape) == 2 else f"{name}.transpose(0, -1)"

    def result(self, name, expression, tensor_names, outputs=None, view=False):
        """`name = expression`; in torch an error if the tensor operands live apart."""
        outputs = outputs or name
        self.used.update(tensor_names)
        if view:
            self.viewed.update([name, *tensor_names])
            self.alias(name, *tensor_names)
        devices = {self.device(n) for n in tensor_names}
        scalars_on_cpu = [n for n in tensor_names if self.device(n) == "cpu" and self.engine.names[n].ndim == 0]
        if len(devices) > 1 and scalars_on_cpu:
            return None  # torch lets a 0-d CPU tensor join a GPU operation; this engine does not (README)
        code = f"{outputs} = {expression}"
        if len(devices) > 1:
            if any(self.engine.names[n].dtype == torch.bool for n in tensor_names):
                return None  # torch's bool checks (-, **) may come first on a GPU: not simulated here
            return Step(code, f"raise RuntimeError({SAME_DEVICE_ERROR!r})")
        device = devices.pop() if devices else "cpu"
        return Step(code, devices={n.strip(): device for n in outputs.split(",")})

    def alias(self, *names):
        group = set(names).union(*(self.aliases.get(n, ()) for n in names))
        for n in group:
            self.aliases[n] = group

    def binary(self):
        if not self.tensors():
            return None
        left, left_tensor = self.operand()
        right, right_tensor = self.operand(like=left_tensor)
        if left_tensor is None and right_tensor is None:
            right = right_tensor = self.pick(self.tensors())
        op = self.pick(BINARY)
        if op == "@" and (left_tensor is None or right_tensor is None):
            op = "*"
        if op == "**" and left in ("True", "False"):
            left = "2"  # torch's own bug: True ** x under create_graph fails an internal assert
        if op == "**" and right in ("0", "False"):
            # x ** 0 keeps a graph under create_graph (README, an xfail); torch's backward of
            # x ** False is False * x ** -1, nan at 0 (README)
            right = "2"
        if op in ("/", "**") and right_tensor in self.grad_results:
            op = "*"  # a gradient that is 0 in exact arithmetic (softmax's, summed) is rounding
            # noise in one engine and 0.0 in the other: dividing by it turns 1e-8 into inf
        if op == "@" and torch.bool in (self.engine.names[left_tensor].dtype, self.engine.names[right_tensor].dtype):
            op = "*"  # torch's batched matmul says "not implemented for 'Bool'" before its dtype check (README)
        for mine, partner in ((left_tensor, right_tensor), (right_tensor, left_tensor)):
            if mine and op in ("*", "/", "@") and not (partner and self.engine.names[partner].requires_grad):
                self.saved_needlessly.add(mine)
        return self.result(self.new_name(), f"{left} {op} {right}", [n for n in (left_tensor, right_tensor) if n])

    def unary(self):
        if not self.tensors():
            return None
        x = self.pick(self.tensors())
        form = self.pick([f"{x}.{{}}()", f"lib.{{}}({x})"])
        op = self.pick(UNARY + ["neg"])
        expression = f"-{x}" if op == "neg" else form.format(op)
        return self.result(self.new_name(), expression, [x])

    def dim(self, x, extra=0):
        ndim = self.engine.names[x].ndim
        return self.draw(st.integers(-max(ndim, 1) - extra, max(ndim, 1) - 1 + extra))

    def reduce(self):
        if not self.tensors():
            return None
        x = self.pick(self.tensors())
        op = self.pick(["sum", "sum", "mean", "max"])
        keep = ", keepdim=True" if self.draw(st.booleans()) else ""
        choice = self.draw(st.integers(0, 3))
        if choice == 0:
            return self.result(self.new_name(), f"{x}.{op}()", [x])
        if op == "max":
            values, indices = self.new_name(), self.new_name()
            return self.result(values, f"{x}.max(dim={self.dim(x)}{keep})", [x], f"{values}, {indices}")
        if choice == 1:
            dims = sorted({self.dim(x), self.dim(x)})
            return self.result(self.new_name(), f"{x}.{op}(dim={tuple(dims)!r}{keep})", [x])
        return self.result(self.new_name(), f"{x}.{op}(dim={self.dim(x, extra=1)}{keep})", [x])

    def reshape(self):
        if not self.tensors():
            return None
        x = self.pick(self.tensors())
        shape = tuple(self.engine.names[x].shape)
        choices = ["reshape(-1)", "view(-1)", f"reshape({shape[::-1]!r})", "transpose"]
        if len(shape) == 2:  # on other dims torch warns once per process (deprecated): see README
            choices.append("T")
        choice = self.pick(choices)
        if choice == "transpose":
            choice = f"transpose({self.dim(x)}, {self.dim(x)})"
        return self.result(self.new_name(), f"{x}.{choice}", [x], view=True)

    def sized(self):
        """A shape operation given sizes, right or wrong (issue 31): expand, reshape and view
        to a size that fits or does not, -1 where torch allows it or not, too few sizes, a
        dimension out of range; a wrong one must raise torch's error in torch's words."""
        if not self.tensors():
            return None
        x = self.pick(self.tensors())
        shape = list(self.engine.names[x].shape)
        numel = int(np.prod(shape)) if shape else 1
        grown = [n if n != 1 else self.pick([1, 2, 3]) for n in shape]
        wrong = [n + 1 for n in shape] or [2]
        choices = [
            f"expand({[2, *grown]!r})", f"expand({grown!r})", f"expand({wrong!r})", f"expand({[-1] * len(shape) or [3]!r})",
            f"expand({[-1, *shape]!r})", f"expand({shape[1:]!r})", f"expand({[3, *[-1] * len(shape)]!r})",
            f"reshape({[numel + 1]!r})", f"reshape({[-1, -1]!r})", f"view({[-2, *shape[1:]]!r})",
            f"reshape({[0, -1]!r})", f"view({[*shape, 1]!r})",
            f"transpose(0, {len(shape) + 1})", f"sum(dim={len(shape) + 1})", f"max(dim={-len(shape) - 2})",
        ]
        return self.result(self.new_name(), f"{x}.{self.pick(choices)}", [x], view=True)

    def index(self):
        x = self.pick(self.tensors()) if self.tensors() else None
        if x is None or self.engine.names[x].ndim == 0:
            return None
        length = self.engine.names[x].shape[0]
        choices = ["[0]", "[-1]", "[1:]", "[:, 0]", f"[{length}]"]
        named = None
        if self.device(x) == "cpu" and length:  # an index tensor lives on the CPU (torch would accept it on a GPU too)
            positions = self.draw(st.lists(st.integers(0, length - 1), min_size=1, max_size=4))
            mask = self.draw(st.lists(st.booleans(), min_size=length, max_size=length))
            choices += [f"[lib.tensor({positions!r})]", f"[{positions!r}]", f"[lib.tensor({positions[0]})]"]
            # a named index tensor or mask, which later steps may change in place
            named = self.pick([f"lib.tensor({positions!r})", f"lib.tensor({mask!r})", None])
        if named is None:
            return self.result(self.new_name(), f"{x}{self.pick(choices)}", [x], view=True)
        index = self.new_name("i")
        step = self.result(self.new_name(), f"{x}[{index}]", [x], view=True)
        return Step(f"{index} = {named}\n{step.code}", devices={**step.devices, index: "cpu"})

    def softmax(self):
        x = self.pick(self.tensors()) if self.tensors() else None
        if x is None:
            return None
        return self.result(self.new_name(), f"{x}.{self.pick(['softmax', 'log_softmax'])}({self.dim(x)})", [x])

    def convert(self):
        x = self.pick(self.tensors()) if self.tensors() else None
        if x is None:
            return None
        choice = self.pick(["float()", "double()", "to(lib.float64)", "to(lib.float32)", "clone()"])
        return self.result(self.new_name(), f"{x}.{choice}", [x], view=choice != "clone()")  # maybe x itself

    def detach(self):
        x = self.pick(self.tensors())
        return self.result(self.new_name(), f"{x}.{self.pick(['detach()', 'data'])}", [x], view=True)

    def move(self):
        x = self.pick(self.tensors())
        call = self.pick(['to("cuda:1")', 'to("cuda")', 'to("cpu")', "cpu()", "cuda()", "cuda(1)",
                          'to(lib.device("cuda:0"))', 'to("cuda:1", lib.float64)'])
        target = {"cpu()": "cpu", "cuda()": "cuda:0", "cuda(1)": "cuda:1"}.get(call)
        if target is None:
            target = canonical(re.search(r'"([^"]*)"', call).group(1))
        name = self.new_name()
        self.used.add(x)
        dtype = ", lib.float64" if "float64" in call else ""
        copy = ", copy=True" if target != self.device(x) else ""
        self.moved = self.moved or bool(copy)
        if not copy and (not dtype or self.engine.names[x].dtype == torch.float64):  # x itself
            self.viewed.update([name, x])
            self.alias(name, x)
        return Step(f"{name} = {x}.{call}", f'{name} = {x}.to("cpu"{dtype}{copy})', {name: target})

    # autograd
    def backward(self):
        y = self.pick(self.tensors())
        options = []
        if self.draw(st.booleans()):
            options.append(f"{self.pick(['gradient', 'gradient'])}=lib.ones_like({y})")
        if self.draw(st.booleans()):
            options.append(f"retain_graph={self.pick([True, False])}")
        if self.draw(st.integers(0, 3)) == 0:
            options.append("create_graph=True")
        if self.draw(st.booleans()):
            inputs = self.draw(st.lists(st.sampled_from(self.tensors()), min_size=1, max_size=3))
            options.append(f"inputs=[{', '.join(inputs)}]")
        if self.draw(st.booleans()):
            return Step(f"{y}.backward({', '.join(options)})")
        options = [o.replace("gradient=", "grad_tensors=") for o in options]
        return Step(f"lib.autograd.backward({y}{''.join(', ' + o for o in options)})")

    def grad(self):
        y = self.pick(self.tensors())
        inputs = self.draw(st.lists(st.sampled_from(self.tensors()), min_size=1, max_size=3))
        options = []
        if self.draw(st.booleans()):
            options.append(f"grad_outputs=lib.ones_like({y})")
        for flag in ("retain_graph", "create_graph", "allow_unused"):
            if self.draw(st.integers(0, 2)) == 0:
                options.append(f"{flag}=True")
        names = [self.new_name("g") for _ in inputs]
        self.viewed.update(names)  # a gradient may be a view of the seed (a reshape's, an expand's)
        self.grad_results.update(names)  # ... or the seed itself, or another result (torch's sum of a 0-d)
        if self.moved:  # torch, on the CPU, passes a gradient back through a move as it is: one
            self.shared_grads.update(names)  # tensor for x and x.to("cuda:1"), two on real devices
        code = f"{', '.join(names)}, = lib.autograd.grad({y}, [{', '.join(inputs)}]{''.join(', ' + o for o in options)})"
        return Step(code, devices=dict(zip(names, map(self.device, inputs))))

    def hook(self):
        x = self.pick(self.tensors())
        choice = self.draw(st.integers(0, 2))
        if choice == 0:
            return Step(f"{x}.retain_grad()")
        handle = self.new_name("h")
        step = Step(f"{handle} = {x}.register_hook({self.pick(HOOKS)})")
        if choice == 2:
            step = Step(step.code + f"\n{handle}.remove()")
        return step

    def grad_attribute(self):
        x = self.pick(self.tensors())
        name = self.new_name("r")
        choices = [f"{x}.grad = None", f"{name} = {x}.grad"]
        if x not in self.grad_viewed:  # torch regenerates the grad_fn of a view of a base
            choices.append(f"{x}.grad.zero_()")  # changed in place; this engine does not (README)
        if x not in self.grad_results and not self.used & self.aliases.get(x, {x}):  # torch's views follow their base's requires_grad;
            # this engine's do not (README); x may be an alias of a tensor already used (x.float())
            choices.append(f"{x}.requires_grad_()")
        return Step(self.pick(choices), devices={name: self.device(x)})

    def toggle_requires_grad(self):
        """requires_grad_ on a tensor already used (a leaf that stops requiring grad between
        its forward and its backward keeps its .grad as it was, in torch)."""
        # mostly a leaf already in a graph, the case that matters; now and then any tensor
        in_a_graph = self.tensors(lambda n, t: t.is_leaf and t.requires_grad and n in self.used)
        candidates = self.tensors(lambda n, t: t.requires_grad or n not in self.used)
        if in_a_graph and self.draw(st.integers(0, 3)):
            candidates = in_a_graph
        if not candidates:
            return None
        x = self.pick(candidates)
        flag = self.pick(["False", "False", "True"])
        if flag == "True" and (x in self.grad_results or self.used & self.aliases.get(x, {x})):
            return None  # torch's views follow their base's requires_grad; this engine's do not (README)
        return Step(self.pick([f"{x}.requires_grad_({flag})", f"{x}.requires_grad = {flag}"]))

    def grad_view(self):
        """A view of a .grad: .grad is laid out like its leaf, so a view works where the
        same view of the leaf does (the incoming gradient may have come through a transpose)."""
        with warnings.catch_warnings():  # (torch warns when a non-leaf's .grad is read)
            warnings.simplefilter("ignore")
            with_grad = self.tensors(lambda n, t: t.grad is not None)
        x = self.pick(with_grad if with_grad and self.draw(st.integers(0, 3)) else self.tensors())
        if x in with_grad and self.engine.names[x].grad.requires_grad:
            return None  # a view of a .grad with a graph: accumulating into that .grad in place makes
            # torch regenerate the view's grad_fn (AsStridedBackward0); this engine does not (README)
        shape = tuple(self.engine.names[x].shape)
        # (view(...) fails where the layout does not allow it: drawn most)
        views = ["view(-1)", "view(-1)", f"view({shape[::-1]!r})", "reshape(-1)", "transpose(0, -1)", "[0]", "[1:]"]
        if len(shape) == 2:
            views += ["T", "[:, 0]", "T.view(-1)", "T.view(-1)"]
        view = self.pick(views)
        name = self.new_name("r")
        self.grad_viewed.add(x)
        return Step(f"{name} = {x}.grad{'' if view.startswith('[') else '.'}{view}", devices={name: self.device(x)})

    def backward_of_a_sum(self):
        """A backward pass from a tensor that requires grad, through its sum (no seed needed),
        so that gradients reach the leaves (and their .grad) often."""
        candidates = self.tensors(lambda n, t: t.requires_grad)
        if not candidates:
            return None
        y = self.pick(candidates)
        retain = self.pick(["", "retain_graph=True", "create_graph=True"])
        return Step(f"{y}.sum().backward({retain})")

    def logging_hook(self):
        """A hook that writes the tensor's name in a list: the order in which a pass reaches
        the tensors (torch: of the nodes ready, the one made last first)."""
        candidates = self.tensors(lambda n, t: t.requires_grad)
        if not candidates:
            return None
        x = self.pick(candidates)
        code = f"{self.new_name('h')} = {x}.register_hook(lambda g: hook_log.append({x!r}))"
        if "hook_log" not in self.engine.names:
            code = "hook_log = []\n" + code
        return Step(code)

    def inplace(self):
        x = self.pick(self.tensors())
        other, other_tensor = self.operand(like=x)
        grads = self.engine.names[x].requires_grad or (other_tensor and self.engine.names[other_tensor].requires_grad)
        if x in self.viewed and (grads or any(self.engine.names[n].requires_grad for n in self.aliases.get(x, ())
                                              if isinstance(self.engine.names.get(n), torch.Tensor))):
            return None  # torch rewrites the graph of a view and its base; this engine does not (README)
        if x in self.shared_grads:
            return None  # symbolic devices: torch's run may share it with another gradient (see grad)
        if x in self.saved_needlessly:
            return None  # this engine saves both operands of x * 2; torch only what it needs (README)
        if x in self.viewed and other_tensor in self.viewed and other_tensor != x:
            return None  # maybe two views of one array: torch refuses a partial overlap (README)
        if other != other_tensor and other_tensor in self.aliases.get(x, {x}):
            return None  # x.add_(x.T): the same (README)
        op = self.pick(["add_", "sub_", "mul_", "div_", "zero_", "+=", "*="])
        if op == "zero_" and _repeats_elements(self.engine.names[x]):
            return None  # torch fills an expand whose elements repeat; this engine refuses (README)
        code = f"{x}.zero_()" if op == "zero_" else f"{x} {op} {other}" if "=" in op else f"{x}.{op}({other})"
        if self.draw(st.booleans()):
            code = "with lib.no_grad():\n    " + code
        if other_tensor and self.device(other_tensor) != self.device(x) and op != "zero_":
            if self.device(other_tensor) == "cpu" and self.engine.names[other_tensor].ndim == 0:
                return None
            if op == "sub_" and torch.bool in (self.engine.names[x].dtype, self.engine.names[other_tensor].dtype):
                return None  # torch's bool check comes first (on a GPU, not simulated here)
            if self.engine.names[x].requires_grad:
                return None  # so does its check of a leaf that requires grad
            return Step(code, f"raise RuntimeError({SAME_DEVICE_ERROR!r})")
        return Step(code)

    def no_grad(self):
        step = getattr(self, self.pick(["binary", "unary", "reduce"]))()
        if step is None:
            return None
        manager = self.pick(["lib.no_grad()", "lib.set_grad_enabled(False)", "lib.enable_grad()"])
        indent = lambda code: f"with {manager}:\n    " + code.replace("\n", "\n    ")
        return Step(indent(step.code), indent(step.torch_code), step.devices)

    def read(self):
        x = self.pick(self.tensors())
        name = self.new_name("n")
        call = self.pick(["item()", "numpy()", "numel()", "tolist()", "detach().numpy()"])
        code = f"{name} = {x}.{call}"
        if "numpy" in call and self.device(x) != "cpu":
            if call == "numpy()" and self.engine.names[x].requires_grad:
                return None  # which check comes first on a GPU is not known here
            message = NUMPY_OF_CUDA.replace("cuda:0", self.device(x))
            return Step(code, f"raise TypeError({message!r})")
        return Step(code)

    def device_string(self):
        name = self.new_name("d")
        choice = self.draw(st.integers(0, 3))
        if choice == 0:
            return Step(f"{name} = lib.device({self.pick(DEVICE_STRINGS)!r})")
        if choice == 1:
            return Step(f"{name} = lib.device({self.pick(['cuda', 'cpu', 'cuda:0'])!r}, {self.pick([0, 1, -1])})")
        a, b = self.pick(DEVICE_STRINGS[:5]), self.pick(DEVICE_STRINGS[:5])
        if choice == 2:
            return Step(f"{name} = lib.device({a!r}) == lib.device({b!r})")
        # A device never equals a string that is no device (a device string: README)
        return Step(f"{name} = lib.device({a!r}) == {self.pick(['gpu', 'cuda:x', ''])!r}")


def _repeats_elements(t):
    """Whether elements of torch's tensor t share memory (an expand: a stride of 0)."""
    return any(stride == 0 and size > 1 for stride, size in zip(t.stride(), t.shape))


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(tuple(a), tuple(b))
        return True
    except ValueError:
        return False
