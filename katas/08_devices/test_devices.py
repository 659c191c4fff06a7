"""Kata 08 tests: devices, graded against torch (torch.device for parsing, torch's own words for
errors, torch's CPU gradients for values; torch's CUDA tensors too when torch has a GPU).

They run on the CUDA backend chosen by AUTOGRAD_KATAS_CUDA (the simulated GPU by default), and
the gradient tests once more on CuPy when CuPy and a GPU are present."""
import contextlib
import gc

import numpy as np
import pytest
# torch: imported in the tests, after your code ran (a kata not started never waits for it)

from plugin.grading import device_strings
from reference import cuda as cuda_backend

SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, "
NUMPY_ADVICE = "Use Tensor.cpu() to copy the tensor to host memory first."
BACKENDS = ["sim"] + (["cupy"] if cuda_backend.cupy_available() else [])


def reach(ag):
    """A stub stops here, before anything else is built."""
    return ag.pieces.active.Device("cuda:1")


def two_gpus(ag):
    """For a test about two GPUs: a skip, saying why, on a machine with one (CuPy on a
    one-GPU machine; the simulated backend has two)."""
    count = ag.cuda.device_count()
    if count < 2:
        pytest.skip(f"needs two CUDA devices (cuda:0 and cuda:1); the {ag.cuda.backend()} backend has {count}")


@pytest.fixture(params=BACKENDS)
def backend(request):
    previous = cuda_backend.backend()
    cuda_backend.use(request.param)
    yield request.param
    cuda_backend.use(previous)


def torch_grads(fn, **arrays):
    """fn(torch, **leaves) -> scalar; torch's gradients (float64, CPU, or CUDA when torch has it)."""
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    leaves = {k: torch.tensor(v, dtype=torch.float64, device=device, requires_grad=True) for k, v in arrays.items()}
    fn(torch, **leaves).backward()
    return {k: t.grad.cpu().numpy() for k, t in leaves.items()}


def backward_through_moves(loss):
    try:
        loss.backward()
    except RuntimeError as error:
        if not str(error).startswith(SAME_DEVICE):
            raise
        pytest.fail(
            f"the backward pass mixed devices ({error}): the gradient of x.to(dst) arrives on dst "
            "and must go back to the device it came from (ctx.source_device)", pytrace=False)


def host(t):
    return t.detach().cpu().numpy()


# --- Device ---------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", device_strings.READ)
def test_device_strings_read_like_torchs(ag, spec):
    reach(ag)
    import torch
    mine, theirs = ag.pieces.active.Device(spec), torch.device(spec)
    assert (mine.type, mine.index) == (theirs.type, theirs.index), f"Device({spec!r}): type and index"
    assert str(mine) == str(theirs), f"str(Device({spec!r})) should be {str(theirs)!r}, got {str(mine)!r}"
    assert repr(mine) == repr(theirs), f"repr(Device({spec!r})) should be {theirs!r}, got {mine!r}"


def test_device_from_type_and_index_and_from_a_device(ag):
    Device = reach(ag).__class__
    assert Device("cuda", 1) == Device("cuda:1"), (
        f"Device('cuda', 1) should equal Device('cuda:1'), got {Device('cuda', 1)!r}")
    assert Device(Device("cuda:1")) == Device("cuda:1"), (
        f"Device(Device('cuda:1')) should equal Device('cuda:1'), got {Device(Device('cuda:1'))!r}")


def test_equality_and_hash_follow_torch(ag):
    Device = reach(ag).__class__
    specs = ["cpu", "cuda", "cuda:0", "cuda:1"]
    import torch
    for a in specs:
        for b in specs:
            expected = torch.device(a) == torch.device(b)
            assert (Device(a) == Device(b)) == expected, f"Device({a!r}) == Device({b!r}) should be {expected}"
            if expected:
                assert hash(Device(a)) == hash(Device(b)), f"equal devices {a!r} must hash equal"
    assert len({Device(s) for s in specs + specs}) == 4, (
        "a set of cpu, cuda, cuda:0, cuda:1 (each twice) should hold 4 devices: hash by (type, index)"
    )
    assert Device("cuda:1") == "cuda:1" and Device("cuda:1") != "cuda:0", "a Device equals its string"
    assert (Device("cpu") == "gpu") is False, "a string that is not a device is not equal (no error)"


@pytest.mark.parametrize("spec", device_strings.REFUSED)
def test_bad_device_strings_fail_with_torchs_words(ag, spec):
    reach(ag)
    import torch
    with pytest.raises(RuntimeError) as theirs:
        torch.device(spec)
    try:
        ag.pieces.active.Device(spec)
    except RuntimeError as error:
        mine = str(error)
    else:
        pytest.fail(f"Device({spec!r}) must raise RuntimeError, as torch does: {theirs.value}", pytrace=False)
    words = f"Device({spec!r}): torch's words expected\n  torch: {theirs.value}\n  yours: {mine}"
    if str(theirs.value).startswith("Expected one of"):  # torch lists its many device types; the engine knows cpu and cuda
        assert mine.startswith("Expected one of cpu, cuda"), words
        tail = str(theirs.value)[str(theirs.value).index("device type at start"):]
        assert mine.endswith(tail), words
    else:
        assert mine == str(theirs.value), words


# (spec, index, the error torch raises): an index below 0 (-1 too: it is no "any index"), one
# that is no int (True: an int to Python, not to torch), and an index given twice
BAD_INDEXES = [("cuda", -1, RuntimeError), ("cuda", -2, RuntimeError), ("cuda", True, TypeError),
               ("cuda", 1.0, TypeError), ("cuda", "1", TypeError), ("cuda:0", 1, RuntimeError)]


@pytest.mark.parametrize("spec, index, error", BAD_INDEXES, ids=[f"{s!r}, {i!r}" for s, i, _ in BAD_INDEXES])
def test_a_bad_index_fails_with_torchs_words(ag, spec, index, error):
    """Device(spec, index) refuses an index torch refuses, with torch's error and words."""
    reach(ag)
    import torch
    with pytest.raises(error) as theirs:
        torch.device(spec, index)
    call = f"Device({spec!r}, {index!r})"
    try:
        ag.pieces.active.Device(spec, index)
    except error as mine:
        assert str(mine) == str(theirs.value), f"{call}: torch's words expected\n  torch: {theirs.value}\n  yours: {mine}"
    else:
        pytest.fail(f"{call} must raise {error.__name__}, as torch does: {theirs.value}", pytrace=False)


def test_a_bad_device_string_fails_in_tensor_creation(ag):
    reach(ag)
    with pytest.raises(RuntimeError, match="device type at start of device string: gpu"):
        ag.tensor([1.0], device="gpu")


# --- array_module and transfer ----------------------------------------------------------------

def test_array_module_of_each_device(ag):
    Device = reach(ag).__class__
    module = ag.pieces.active.array_module
    assert module(Device("cpu")) is np, "the CPU's array module is numpy"
    assert module(Device("cuda:0")) is ag.cuda.module(0), f"cuda:0's array module is ag.cuda.module(0), got {module(Device('cuda:0'))!r}"
    assert module(Device("cuda")) is ag.cuda.module(0), "cuda without an index means cuda:0"


def test_array_module_of_the_second_gpu(ag):
    Device = reach(ag).__class__
    two_gpus(ag)
    got = ag.pieces.active.array_module(Device("cuda:1"))
    assert got is ag.cuda.module(1), f"cuda:1's array module is ag.cuda.module(1), got {got!r}"


def test_transfers_copy_and_are_counted(ag):
    Device = reach(ag).__class__
    two_gpus(ag)
    transfer, stats = ag.pieces.active.transfer, ag.cuda.transfer_stats
    cpu, gpu0, gpu1 = Device("cpu"), Device("cuda:0"), Device("cuda:1")
    array = np.arange(6, dtype=np.float32)
    stats.reset()
    assert transfer(array, cpu, Device("cpu")) is array, "same device: return the array itself"
    on_gpu = transfer(array, cpu, gpu0)
    on_other = transfer(on_gpu, gpu0, gpu1)
    back = transfer(on_other, gpu1, cpu)
    assert isinstance(back, np.ndarray) and back is not array, "a move to the host gives a new host array"
    np.testing.assert_array_equal(back, array)
    assert stats.counts == {"htod": 1, "dtoh": 1, "dtod": 1}, (
        f"one copy each way expected (host->cuda:0, cuda:0->cuda:1, cuda:1->host), got {stats.counts}: "
        "go through ag.cuda.module(i).asarray / .asnumpy, where copies are counted"
    )
    assert stats.bytes == {"htod": 24, "dtoh": 24, "dtod": 24}, stats.bytes


def test_a_tensor_lands_on_the_gpu_it_names(ag):
    reach(ag)
    two_gpus(ag)
    x = ag.tensor([1.0, 2.0], device="cuda:1")
    assert str(x.device) == "cuda:1" and x.is_cuda, f"ag.tensor(..., device='cuda:1') landed on {x.device}"
    zeros = ag.zeros(2, device="cuda")
    assert str(zeros.device) == "cuda:0", f"ag.zeros(2, device='cuda') should land on cuda:0, got {zeros.device}"
    np.testing.assert_array_equal(x.cpu().numpy(), [1.0, 2.0])


# --- check_same_device --------------------------------------------------------------------------

OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a ** b, "matmul": lambda a, b: a @ b,
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_mixing_devices_fails_with_torchs_words(ag, op):
    reach(ag)
    on_gpu = ag.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    on_cpu = ag.tensor([[1.0, 2.0], [3.0, 4.0]])
    for a, b, first, second in [(on_gpu, on_cpu, "cuda:0", "cpu"), (on_cpu, on_gpu, "cpu", "cuda:0")]:
        with pytest.raises(RuntimeError) as info, _gpu_refused(op, first, second):
            OPS[op](a, b)
        assert str(info.value) == f"{SAME_DEVICE}{first} and {second}!", (
            f"{op} of a {first} and a {second} tensor: torch's words expected, got {info.value}"
        )


@contextlib.contextmanager
def _gpu_refused(op, first, second):
    """The (simulated) GPU's own error, when check_same_device let two devices through."""
    __tracebackhide__ = True
    try:
        yield
    except ValueError as error:
        pytest.fail(
            f"check_same_device let a {first} and a {second} tensor through to {op}, and the GPU "
            f"itself refused ({error}): check_same_device must raise torch's RuntimeError first",
            pytrace=False,
        )


@pytest.mark.parametrize("op", sorted(OPS))
def test_mixing_two_gpus_fails_with_torchs_words(ag, op):
    reach(ag)
    two_gpus(ag)
    on_gpu0 = ag.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda:0")
    on_gpu1 = ag.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda:1")
    with pytest.raises(RuntimeError) as info, _gpu_refused(op, "cuda:0", "cuda:1"):
        OPS[op](on_gpu0, on_gpu1)
    assert str(info.value) == f"{SAME_DEVICE}cuda:0 and cuda:1!", (
        f"{op} of a cuda:0 and a cuda:1 tensor: torch's words expected, got {info.value}"
    )


def test_check_same_device_names_the_first_two_devices(ag):
    reach(ag)
    check = ag.pieces.active.check_same_device
    a, b = ag.ones(1), ag.ones(1, device="cuda:0")
    check("add", a, None, ag.ones(2))  # one device (None ignored): nothing to say
    with pytest.raises(RuntimeError) as info:
        check("add", b, None, b, a, b)
    assert str(info.value) == f"{SAME_DEVICE}cuda:0 and cpu!", (
        f"torch says:\n  {SAME_DEVICE}cuda:0 and cpu!\nyours:\n  {info.value}")


def test_check_same_device_names_the_first_device_that_differs(ag):
    reach(ag)
    two_gpus(ag)
    a, b, c = ag.ones(1), ag.ones(1, device="cuda:1"), ag.ones(1, device="cuda:0")
    with pytest.raises(RuntimeError) as info:
        ag.pieces.active.check_same_device("add", a, a, b, c)
    assert str(info.value) == f"{SAME_DEVICE}cpu and cuda:1!", (
        f"torch says:\n  {SAME_DEVICE}cpu and cuda:1!\nyours:\n  {info.value}")


def test_host_arrays_never_mix_with_gpu_tensors(ag):
    reach(ag)
    x = ag.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu"):
        x + np.array([1.0, 2.0])
    np.testing.assert_allclose(host(x * 2.0 + 1), [3.0, 5.0])  # numbers are fine


# --- gradients on devices -------------------------------------------------------------------------

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
X = np.array([[1.0, 2.0], [-1.0, 0.5], [0.3, 0.7], [2.0, -2.0]])


def test_a_model_moved_to_the_gpu_gets_its_gradients_there(ag, backend):
    reach(ag)
    w = ag.tensor(W, dtype=ag.float64, requires_grad=True, device="cuda")
    x = ag.tensor(X, dtype=ag.float64, device="cuda")
    loss = (x @ w).sigmoid().sum()
    loss.backward()
    assert str(w.grad.device) == "cuda:0", f"w lives on cuda:0, its .grad on {w.grad.device}"
    expected = torch_grads(lambda lib, w: (lib.tensor(X, dtype=lib.float64, device=w.device) @ w).sigmoid().sum(), w=W)
    np.testing.assert_allclose(host(w.grad), expected["w"], rtol=1e-10)


def test_the_gradient_of_a_move_goes_back_where_it_came_from(ag, backend):
    reach(ag)
    x = ag.tensor([0.5, -1.0, 2.0], dtype=ag.float64, requires_grad=True, device="cuda")
    y = (x * x).to("cpu")  # the rest of the graph on the host
    assert y.grad_fn.name() == "ToCopyBackward0", f"a move's node is torch's ToCopyBackward0, got {y.grad_fn.name()}"
    backward_through_moves((y.exp() * 3).sum())
    assert str(x.grad.device) == "cuda:0", f"x lives on cuda:0, its gradient arrived on {x.grad.device}"
    expected = torch_grads(lambda lib, x: ((x * x).to("cpu").exp() * 3).sum(), x=np.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(host(x.grad), expected["x"], rtol=1e-10)


def test_a_move_between_gpus_and_back_in_one_graph(ag):
    reach(ag)
    two_gpus(ag)
    w = ag.tensor([1.0, 2.0], dtype=ag.float64, requires_grad=True)
    loss = ((w.cuda(1) * 2).cuda(0).tanh().cpu() * w).sum()
    backward_through_moves(loss)
    expected = torch_grads(lambda lib, w: ((w * 2).tanh() * w).sum(), w=np.array([1.0, 2.0]))
    assert str(w.grad.device) == "cpu", f"w lives on the cpu, its gradient arrived on {w.grad.device}"
    np.testing.assert_allclose(w.grad.numpy(), expected["w"], rtol=1e-10)


def test_seeds_and_accumulated_grads_live_on_the_device(ag):
    reach(ag)
    two_gpus(ag)
    x = ag.tensor([1.0, 2.0], requires_grad=True, device="cuda:1")
    (x * x).sum().backward()
    (x * x).backward(ag.ones(2, device="cuda:1"))  # a seed given on the device: accumulates
    assert str(x.grad.device) == "cuda:1", f"x lives on cuda:1, its .grad on {x.grad.device}"
    np.testing.assert_allclose(host(x.grad), [4.0, 8.0])
    (g,) = ag.autograd.grad((x * 3).sum(), x)
    assert str(g.device) == "cuda:1", f"x lives on cuda:1, autograd.grad gave its gradient on {g.device}"


def test_numpy_of_a_gpu_tensor_is_refused_with_torchs_advice(ag):
    reach(ag)
    x = ag.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(TypeError) as info:
        x.numpy()
    assert NUMPY_ADVICE in str(info.value) and "cuda:0" in str(info.value), (
        f"torch says:\n  can't convert cuda:0 device type tensor to numpy. {NUMPY_ADVICE}\nyours:\n  {info.value}")
    np.testing.assert_array_equal(x.cpu().numpy(), [1.0, 2.0])


def test_a_training_step_leaves_no_device_memory_behind(ag):
    reach(ag)
    gc.collect()
    before = ag.cuda.memory_allocated(0)
    w = ag.tensor(W, requires_grad=True, device="cuda")
    x = ag.tensor(X, device="cuda")
    loss = (x @ w).relu().mean()
    loss.backward()
    assert ag.cuda.memory_allocated(0) > before, "a model on the GPU must hold device memory: were its tensors put on the host?"
    del w, x, loss
    gc.collect()
    assert ag.cuda.memory_allocated(0) == before, (
        f"{ag.cuda.memory_allocated(0) - before} bytes still on cuda:0 after the step's tensors were deleted"
    )


# --- moves onto a tensor's own device, second derivatives across a move ---------------------------

def test_a_move_to_where_a_tensor_lives_is_no_move(ag):
    """torch returns the tensor itself: no copy, no node. The engine asks your Device to
    parse the target, so this runs through it."""
    reach(ag)
    x, g = ag.tensor([1.0, 2.0]), ag.tensor([1.0, 2.0], device="cuda")
    ag.cuda.transfer_stats.reset()
    for moved, name in [(x.to("cpu"), 'x.to("cpu")'), (x.cpu(), "x.cpu()"), (g.cuda(), "g.cuda()"),
                        (g.to("cuda:0"), 'g.to("cuda:0")'), (g.cuda(0), "g.cuda(0)")]:
        assert moved is (x if name.startswith("x") else g), f"{name} should return the tensor itself"
    assert ag.cuda.transfer_stats.total == 0, f"no copy expected, got {ag.cuda.transfer_stats.counts}"


def test_a_second_derivative_across_a_move(ag, backend):
    """create_graph=True through .to(): the move back in the backward must itself be recorded
    (grad.to(...)), so that the first derivative can be differentiated again."""
    reach(ag)
    values = np.array([0.5, -1.0, 2.0])
    x = ag.tensor(values, dtype=ag.float64, requires_grad=True, device="cuda")
    y = (x * x).to("cpu")  # the rest of the graph on the host
    (g,) = ag.autograd.grad((y * y.tanh()).sum(), x, create_graph=True)
    assert g.requires_grad, "the first derivative must keep its graph under create_graph=True"
    (gg,) = ag.autograd.grad((g * g).sum(), x)
    import torch
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    ty = t * t
    (tg,) = torch.autograd.grad((ty * ty.tanh()).sum(), t, create_graph=True)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), t)
    assert str(gg.device) == "cuda:0", f"x lives on cuda:0, its second derivative arrived on {gg.device}"
    np.testing.assert_allclose(host(g), tg.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(host(gg), tgg.numpy(), rtol=1e-10)


# --- random programs (runs last, once every test above passes) ---------------------------------

def test_random_programs_agree_with_torch(fuzz):
    """Random programs for your devices (device strings torch accepts or refuses, devices from
    a type and an index, compared and printed, tensors moved between cpu, cuda and cuda:1,
    operations that mix devices, gradients flowing back across moves), on your engine and on
    torch. A failure shows the shortest program that still differs."""
    fuzz.check()
