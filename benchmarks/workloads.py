"""The benchmark workloads, as plain functions shared by `benchmarks/run.py` and the
pytest-benchmark tests (`benchmarks/test_benchmarks.py`).

Each `make_*` function does the setup and returns a zero-argument callable that runs one
repetition of the workload; only that callable is timed.

- `make_mlp_step(library)`: one training step of the classic MLP (784-256-128-10, batch 64,
  float32, sigmoid hidden layers, softmax cross entropy, plain SGD) on "reference", "torch" or
  "numpy" (hand-written forward + backward). All three start from the same float32 weights,
  drawn from one numpy seed, and see the same batch.
- `make_tiny_chain(library)`: 1,000 tiny operations on (4,)-shaped float32 tensors, forward,
  then `sum().backward()`, on "reference" or "torch". Time per operation = time / 1,000.
- `make_deep_chain(depth, library=...)`: a deep chain (100,000 by default) on "reference" or
  "torch": `build()` records it, `backward(root)` runs its backward pass. The target is on
  forward + backward against torch's in the same process, and on how the forward grows.
- `make_scalar_chain(library)`: the teaching engines' own workload, a chain of scalar
  operations `(y * 1.0001 + 0.5).relu()` on "reference", "torch" (both on (1,)-shaped
  tensors) or "micrograd" (its `Value`, when the optional `bench` extra is installed).
- `graph_bytes_per_node(library)`: the memory a recorded chain holds, per node.

The pure-Python peers, MyGrad ("mygrad", a tensor class like torch's) and HIPS autograd
("hips", functional: `grad(f)` of a numpy function), run the MLP step, the tiny chain and the
deep chain too, when the optional `bench` extra is installed (`pip install -e .[bench]`);
`available(library)` says whether a library can be imported.

`configure_threads()` gives torch the same number of threads as numpy's BLAS (see its doc).
"""
import ctypes
import os

import numpy as np

MLP_LIBRARIES = ("numpy", "reference", "torch", "hips", "mygrad", "bare")
TINY_LIBRARIES = ("reference", "torch", "hips", "mygrad", "bare")
CHAIN_LIBRARIES = ("reference", "torch", "hips", "mygrad")  # the deep chain
SCALAR_LIBRARIES = ("reference", "torch", "micrograd")
PEERS = ("hips", "mygrad", "micrograd")  # optional: the `bench` extra
NAMES = {"numpy": "numpy (by hand)", "reference": "reference", "torch": "torch", "hips": "HIPS autograd",
         "mygrad": "MyGrad", "micrograd": "micrograd", "bare": "bare engine"}

BATCH = 64
SIZES = (784, 256, 128, 10)
LEARNING_RATE = 0.1
SEED = 0

TINY_OPS = 1_000  # operations in the tiny chain (a multiple of len(TINY_CYCLE))
DEEP = 100_000  # depth of the deep chain
GROWTH_DEPTHS = (10_000, 100_000, 300_000)  # depths at which the forward's growth is measured
SCALAR_CYCLES = 100  # cycles of 3 scalar ops (micrograd's recursive sort caps the depth)


# --- threads -------------------------------------------------------------------------------


def _openblas_libraries():
    """The OpenBLAS shared libraries loaded in this process (numpy's wheels bundle one)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return []
    libraries = []
    for path in sorted(paths):
        try:
            libraries.append((path, ctypes.CDLL(path)))
        except OSError:
            pass
    return libraries


_OPENBLAS_PREFIXES = ("scipy_openblas_", "openblas_")
_OPENBLAS_SUFFIXES = ("64_", "")


def _openblas_function(library, verb):
    for prefix in _OPENBLAS_PREFIXES:
        for suffix in _OPENBLAS_SUFFIXES:
            function = getattr(library, f"{prefix}{verb}_num_threads{suffix}", None)
            if function is not None:
                return function, f"{prefix}{verb}_num_threads{suffix}"
    return None, None


def numpy_blas_threads():
    """(threads, how it was found) for the BLAS numpy's matmul runs on.

    threadpoolctl when it is installed; otherwise the OpenBLAS that numpy loaded is asked
    directly (numpy's wheels ship scipy-openblas, whose getter is `scipy_openblas_get_num_threads64_`);
    otherwise OPENBLAS_NUM_THREADS / OMP_NUM_THREADS, otherwise os.cpu_count() (OpenBLAS's default).
    """
    import numpy  # noqa: F401  (loads the BLAS)

    try:
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            if info.get("user_api") == "blas" and "numpy" in info.get("filepath", ""):
                return int(info["num_threads"]), f"threadpoolctl ({info.get('internal_api')})"
    except ImportError:
        pass
    for path, library in _openblas_libraries():
        function, name = _openblas_function(library, "get")
        if function is not None:
            return int(function()), f"{os.path.basename(path)}:{name}()"
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(variable, "").isdigit():
            return int(os.environ[variable]), variable
    return os.cpu_count() or 1, "os.cpu_count()"


def set_numpy_blas_threads(threads):
    """Set the thread count of numpy's OpenBLAS (threadpoolctl if installed, else OpenBLAS's
    own setter); False when neither is available."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads, user_api="blas")
        return True
    except ImportError:
        pass
    done = False
    for _, library in _openblas_libraries():
        function, _ = _openblas_function(library, "set")
        if function is not None:
            function(ctypes.c_int(threads))
            done = True
    return done


def configure_threads(threads=None):
    """Give torch's intra-op pool as many threads as numpy's BLAS uses (by default, or
    `threads` for both).

    Fairness: the MLP step is dominated by matmuls, numpy's run on OpenBLAS with its default
    thread count (one per core), torch's on its own pool. Both get the same count, so neither
    side wins by using more cores. On the 2-core reference machine both default to 2 already;
    the call makes it explicit (and holds on machines where they would differ).
    `threads=1` is the steadier choice on a shared machine: a 2-thread matmul waits for its
    slower thread, and when another process holds a core that costs several times the step.
    Returns a dict describing the choice, for the report.
    """
    import torch

    before = torch.get_num_threads()
    if threads is not None and not set_numpy_blas_threads(threads):
        raise RuntimeError("cannot set numpy's BLAS threads (no threadpoolctl, no OpenBLAS setter)")
    blas_threads, source = numpy_blas_threads()
    torch.set_num_threads(blas_threads)
    return {
        "numpy_blas_threads": blas_threads,
        "numpy_blas_threads_from": source,
        "torch_threads_default": before,
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
    }


def _library(name):
    """The module for a library name; a module (any engine with the torch-like API, such as a
    patched copy of the reference) is returned as it is."""
    if not isinstance(name, str):
        return name
    if name == "reference":
        import reference

        return reference
    if name == "torch":
        import torch

        return torch
    if name == "bare":
        from . import bare_engine  # the floor of an eager Python engine (benchmarks/bare_engine.py)

        return bare_engine
    if name == "micrograd":
        import micrograd.engine  # the optional `bench` extra: pip install -e .[bench]

        return micrograd.engine
    if name == "hips":
        import autograd  # HIPS autograd, the optional `bench` extra

        return autograd
    if name == "mygrad":
        import mygrad  # the optional `bench` extra

        return mygrad
    raise ValueError(f"unknown library {name!r}")


def available(library):
    """Whether `library` can be imported here (the peers are an optional extra)."""
    if library in ("numpy", "reference", "torch", "bare"):
        return True
    try:
        _library(library)
    except ImportError:
        return False
    return True


# --- the MLP training step -----------------------------------------------------------------


def mlp_arrays(seed=SEED):
    """The batch and the initial weights, float32 numpy arrays (labels int64).

    Weights as torch.nn.Linear initialises them: uniform in +-1/sqrt(fan_in).
    """
    rng = np.random.default_rng(seed)
    arrays = {
        "x": rng.standard_normal((BATCH, SIZES[0])).astype(np.float32),
        "y": rng.integers(0, SIZES[-1], size=BATCH).astype(np.int64),
    }
    for layer, (fan_in, fan_out) in enumerate(zip(SIZES[:-1], SIZES[1:]), start=1):
        bound = 1.0 / np.sqrt(fan_in)
        arrays[f"W{layer}"] = rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32)
        arrays[f"b{layer}"] = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    return arrays


PARAMETER_NAMES = ("W1", "b1", "W2", "b2", "W3", "b3")


def make_mlp_step(library, seed=SEED, lr=LEARNING_RATE):
    """One SGD training step of the MLP on `library` ("numpy", "reference", "torch" or an engine
    module); returns the loss (a scalar of that library).

    The returned callable has `.parameters()`: the current weights as numpy arrays (for checks).
    """
    arrays = mlp_arrays(seed)
    if library == "numpy":
        return _numpy_mlp_step(arrays, lr)
    if library == "hips":
        return _hips_mlp_step(arrays, lr)
    if library == "mygrad":
        return _mygrad_mlp_step(arrays, lr)
    return _autograd_mlp_step(_library(library), arrays, lr)


def _autograd_mlp_step(lib, arrays, lr):
    if lib.__name__ == "torch":
        def leaf(array, requires_grad=False):
            return lib.from_numpy(array.copy()).requires_grad_(requires_grad)
    else:
        def leaf(array, requires_grad=False):
            return lib.tensor(array, requires_grad=requires_grad)

    x = leaf(arrays["x"])
    y = leaf(arrays["y"])
    rows = lib.arange(BATCH)
    W1, b1, W2, b2, W3, b3 = params = [leaf(arrays[name], True) for name in PARAMETER_NAMES]
    no_grad = lib.no_grad

    def step():
        h1 = (x @ W1 + b1).sigmoid()
        h2 = (h1 @ W2 + b2).sigmoid()
        logp = (h2 @ W3 + b3).log_softmax(1)
        loss = -logp[rows, y].mean()
        loss.backward()
        with no_grad():
            for p in params:
                p.sub_(lr * p.grad)
                p.grad = None
        return loss

    step.parameters = lambda: [p.detach().numpy().copy() for p in params]
    return step


def _numpy_mlp_step(arrays, lr):
    """The same step by hand: forward, backward (no gradient for x), SGD in place."""
    x, y = arrays["x"], arrays["y"]
    W1, b1, W2, b2, W3, b3 = params = [arrays[name].copy() for name in PARAMETER_NAMES]
    rows = np.arange(BATCH)
    batch = np.float32(BATCH)
    lr = np.float32(lr)

    def step():
        # forward
        h1 = 1 / (1 + np.exp(-(x @ W1 + b1)))
        h2 = 1 / (1 + np.exp(-(h1 @ W2 + b2)))
        z = h2 @ W3 + b3
        z -= z.max(axis=1, keepdims=True)  # stable log-softmax
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        logp = z - np.log(s)
        loss = -logp[rows, y].mean()
        # backward: d loss / d z = (softmax - onehot) / batch
        dz = e / s
        dz[rows, y] -= 1
        dz /= batch
        dW3 = h2.T @ dz
        db3 = dz.sum(axis=0)
        dz = (dz @ W3.T) * h2 * (1 - h2)
        dW2 = h1.T @ dz
        db2 = dz.sum(axis=0)
        dz = (dz @ W2.T) * h1 * (1 - h1)
        dW1 = x.T @ dz
        db1 = dz.sum(axis=0)
        # SGD, in place
        for p, grad in zip(params, (dW1, db1, dW2, db2, dW3, db3)):
            p -= lr * grad
        return loss

    step.parameters = lambda: [p.copy() for p in params]
    return step


def _hips_mlp_step(arrays, lr):
    """HIPS autograd: the loss a function of the weights written with autograd.numpy (its
    own log-softmax: the stable form, as numpy's version), `grad` of it, SGD in place."""
    import autograd.numpy as anp
    from autograd import value_and_grad

    x, y = arrays["x"], arrays["y"]
    params = [arrays[name].copy() for name in PARAMETER_NAMES]
    rows = np.arange(BATCH)

    def loss_of(weights):
        W1, b1, W2, b2, W3, b3 = weights
        h1 = 1 / (1 + anp.exp(-(anp.dot(x, W1) + b1)))
        h2 = 1 / (1 + anp.exp(-(anp.dot(h1, W2) + b2)))
        z = anp.dot(h2, W3) + b3
        z = z - anp.max(z, axis=1, keepdims=True)
        logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
        return -anp.mean(logp[rows, y])

    loss_and_grads = value_and_grad(loss_of)
    lr = np.float32(lr)

    def step():
        loss, grads = loss_and_grads(params)
        for p, grad in zip(params, grads):
            p -= lr * grad
        return loss

    step.parameters = lambda: [p.copy() for p in params]
    return step


def _mygrad_mlp_step(arrays, lr):
    """MyGrad: tensors and backward() as torch's; its own sigmoid and log-softmax."""
    import mygrad as mg
    from mygrad.nnet.activations import logsoftmax, sigmoid

    x, y = mg.tensor(arrays["x"]), arrays["y"]
    params = [mg.tensor(arrays[name].copy()) for name in PARAMETER_NAMES]
    W1, b1, W2, b2, W3, b3 = params
    rows = np.arange(BATCH)
    lr = np.float32(lr)

    def step():
        h1 = sigmoid(x @ W1 + b1)
        h2 = sigmoid(h1 @ W2 + b2)
        logp = logsoftmax(h2 @ W3 + b3, axis=1)
        loss = -logp[rows, y].mean()
        loss.backward()
        with mg.no_autodiff:
            for p in params:
                p -= lr * p.grad
        return loss

    step.parameters = lambda: [np.array(p.data, copy=True) for p in params]
    return step


def _value(scalar):
    if hasattr(scalar, "detach"):
        scalar = scalar.detach()
    return float(getattr(scalar, "data", scalar) if not hasattr(scalar, "item") else scalar.item())


def check_mlp(steps=3, seed=SEED):
    """Run a few steps on every library from the same start; the largest differences of the
    losses and of the weights against numpy's (they should be at float32 rounding level)."""
    results = {}
    for library in filter(available, MLP_LIBRARIES):
        step = make_mlp_step(library, seed)
        losses = [_value(step()) for _ in range(steps)]
        results[library] = (losses, step.parameters())
    base_losses, base_params = results["numpy"]
    report = {}
    for library in results:
        if library == "numpy":
            continue
        losses, params = results[library]
        report[library] = {
            "max_loss_diff": max(abs(a - b) for a, b in zip(losses, base_losses)),
            "max_weight_diff": max(float(np.abs(a - b).max()) for a, b in zip(params, base_params)),
        }
    report["losses"] = base_losses
    return report


# --- the chain of 1,000 tiny operations ----------------------------------------------------

# One cycle of 10 operations; values stay in a small range however many cycles run.
TINY_CYCLE = (
    "y * w",
    "y + 0.5",
    "tanh(y)",
    "y * 0.5",
    "exp(y)",
    "y - b",
    "sigmoid(y)",
    "y * 2.0",
    "y + b",
    "tanh(y)",
)


def make_tiny_chain(library, n_ops=TINY_OPS, seed=SEED):
    """`n_ops` tiny operations on (4,) float32 tensors (three leaves that require grad: the
    input x and the parameters w and b), then y.sum().backward(); the leaves' grads are reset
    after each run. Returns the sum's value."""
    if n_ops % len(TINY_CYCLE):
        raise ValueError(f"n_ops must be a multiple of {len(TINY_CYCLE)}")
    rng = np.random.default_rng(seed)
    values = [
        rng.standard_normal(4).astype(np.float32),
        (1 + 0.1 * rng.standard_normal(4)).astype(np.float32),
        (0.1 * rng.standard_normal(4)).astype(np.float32),
    ]
    if library in ("hips", "mygrad"):
        return _peer_tiny_chain(library, values, n_ops // len(TINY_CYCLE))
    lib = _library(library)
    if lib.__name__ == "torch":
        x, w, b = leaves = [lib.from_numpy(v).requires_grad_(True) for v in values]
    else:
        x, w, b = leaves = [lib.tensor(v, requires_grad=True) for v in values]
    cycles = n_ops // len(TINY_CYCLE)

    def run():
        y = x
        for _ in range(cycles):
            y = y * w
            y = y + 0.5
            y = y.tanh()
            y = y * 0.5
            y = y.exp()
            y = y - b
            y = y.sigmoid()
            y = y * 2.0
            y = y + b
            y = y.tanh()
        total = y.sum()
        total.backward()
        for leaf in leaves:
            leaf.grad = None
        return total

    run.leaves = leaves
    return run


def _peer_tiny_chain(library, values, cycles):
    """The tiny chain on HIPS autograd (a function of (x, w, b), value_and_grad of it) or
    MyGrad (tensors, backward())."""
    if library == "hips":
        import autograd.numpy as anp
        from autograd import value_and_grad

        def sigmoid(y):
            return 1 / (1 + anp.exp(-y))

        def chain(leaves):
            y, w, b = leaves
            for _ in range(cycles):
                y = anp.tanh((y * w + 0.5)) * 0.5
                y = sigmoid(anp.exp(y) - b) * 2.0
                y = anp.tanh(y + b)
            return anp.sum(y)

        loss_and_grads = value_and_grad(chain)
        leaves = tuple(values)

        def run():
            total, run.grads = loss_and_grads(leaves)
            return total

        run.leaves = []
        return run
    import mygrad as mg
    from mygrad.nnet.activations import sigmoid

    x, w, b = leaves = [mg.tensor(v) for v in values]

    def run():
        y = x
        for _ in range(cycles):
            y = mg.tanh(y * w + 0.5) * 0.5
            y = sigmoid(mg.exp(y) - b) * 2.0
            y = mg.tanh(y + b)
        total = y.sum()
        total.backward()
        return total

    run.leaves = []
    return run


# --- the 100,000-deep chain ----------------------------------------------------------------


def make_deep_chain(depth=DEEP, factor=1.00001, library="reference"):
    """The deep chain: `build()` records y = x * factor `depth` times and returns y.sum();
    `backward(root)` runs its backward pass and returns x.grad as a numpy array
    (factor ** depth in every element, about e for the defaults)."""
    if library in ("hips", "mygrad"):
        return _peer_deep_chain(library, depth, factor)
    ag = _library(library)

    if ag.__name__ == "torch":
        x = ag.ones(4, requires_grad=True)
    else:
        x = ag.tensor(np.ones(4, dtype=np.float32), requires_grad=True)

    def build():
        y = x
        for _ in range(depth):
            y = y * factor
        return y.sum()

    def backward(root):
        x.grad = None
        root.backward()
        return x.grad.detach().numpy()

    build.leaf = x
    return build, backward


def _peer_deep_chain(library, depth, factor):
    """The deep chain on HIPS autograd (`build` records it through autograd's own tracing:
    make_vjp, whose vjp runs the backward) or MyGrad."""
    x = np.ones(4, dtype=np.float32)
    if library == "hips":
        import autograd.numpy as anp
        from autograd import make_vjp

        def chain(y):
            for _ in range(depth):
                y = y * factor
            return anp.sum(y)

        def build():
            vjp, total = make_vjp(chain)(x)
            return vjp

        def backward(vjp):
            return np.asarray(vjp(np.float32(1.0)))

        return build, backward
    import mygrad as mg

    leaf = mg.tensor(x)

    def build():
        y = leaf
        for _ in range(depth):
            y = y * factor
        return y.sum()

    def backward(root):
        root.backward()
        return np.array(leaf.grad, copy=True)

    build.leaf = leaf
    return build, backward


# --- the scalar chain (micrograd's home ground) ----------------------------------------------


def micrograd_available():
    try:
        _library("micrograd")
    except ImportError:
        return False
    return True


def make_scalar_chain(library, cycles=SCALAR_CYCLES):
    """`cycles` repetitions of `y = (y * 1.0001 + 0.5).relu()` (3 ops each) from one leaf
    that requires grad, then backward; the leaf's gradient is reset after each run. Scalars
    are (1,)-shaped tensors on reference and torch, `Value`s on micrograd. Returns the
    leaf's gradient as a float (1.0001 ** cycles: relu passes every value, all positive)."""
    if library == "micrograd":
        Value = _library("micrograd").Value
        x = Value(1.0)

        def run():
            y = x
            for _ in range(cycles):
                y = (y * 1.0001 + 0.5).relu()
            y.backward()  # micrograd's backward accumulates into every Value it walks
            gradient, x.grad = x.grad, 0.0
            return gradient

        return run
    lib = _library(library)
    if lib.__name__ == "torch":
        x = lib.ones(1, requires_grad=True)
    else:
        x = lib.tensor(np.ones(1, dtype=np.float32), requires_grad=True)

    def run():
        y = x
        for _ in range(cycles):
            y = (y * 1.0001 + 0.5).relu()
        y.sum().backward()
        gradient, x.grad = float(x.grad[0]), None
        return gradient

    return run


# --- memory held by a recorded graph ---------------------------------------------------------


def _resident_bytes():
    """This process's resident memory (Linux /proc/self/statm; None elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def graph_bytes_per_node(library, depth=DEEP):
    """Resident memory held by a recorded `depth`-deep chain (kept alive, not yet run
    backward), per node: the graph's nodes, saved tensors and intermediate tensors, as a user
    of either library pays for them. None where resident memory cannot be read."""
    import gc

    build, _ = make_deep_chain(depth, library=library)
    build_small, _ = make_deep_chain(100, library=library)
    build_small()  # allocate whatever one-time structures the first graph needs
    gc.collect()
    before = _resident_bytes()
    root = build()
    gc.collect()
    after = _resident_bytes()
    del root
    gc.collect()
    if before is None or after is None:
        return None
    return (after - before) / depth
