"""The simulated CUDA backend: CuPy's rules on numpy arrays, counted copies, device memory."""
import gc

import numpy as np
import pytest

import reference as ag
from reference import cuda, cuda_sim
from reference.cuda_sim import DeviceArray, to_device


@pytest.fixture(autouse=True)
def simulated():
    previous = cuda.backend()
    cuda.use("sim")
    yield
    cuda.use(previous)


def test_implicit_conversion_and_mixing_with_host_arrays_raise_like_cupy():
    a = to_device(np.arange(3.0), 0)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(3)
    with pytest.raises(TypeError, match="Unsupported type"):
        np.concatenate([a, np.ones(3)])
    with pytest.raises(ValueError, match="is different from the current device"):
        a + to_device(np.ones(3), 1)


def test_numpy_functions_stay_on_the_device_and_agree_with_numpy():
    host = np.array([[1.0, -2.0], [3.0, 0.5]])
    a = to_device(host, 1)
    cuda.transfer_stats.reset()
    results = {
        "exp": (np.exp(a), np.exp(host)),
        "matmul": (a @ a, host @ host),
        "sum": (np.sum(a, axis=0, keepdims=True), np.sum(host, axis=0, keepdims=True)),
        "max": (a.max(), host.max()),
        "swapaxes": (np.swapaxes(a, 0, 1), np.swapaxes(host, 0, 1)),
        "scalar": (2.5 * a - 1, 2.5 * host - 1),
        "index": (a[np.array([1, 1, 0])], host[np.array([1, 1, 0])]),
    }
    assert cuda.transfer_stats.total == 0, "computing on the device copies nothing"
    for name, (mine, theirs) in results.items():
        assert isinstance(mine, DeviceArray) and mine.device == 1, name
        np.testing.assert_allclose(mine.get(), theirs, err_msg=name)


def test_out_arguments_and_ufunc_at_write_into_the_device_array():
    a = to_device(np.zeros(3), 0)
    out = np.add(a, 1.0, out=(a,))
    assert out is a
    a += 1
    np.add.at(a, np.array([0, 0, 2]), to_device(np.ones(3), 0))
    np.testing.assert_array_equal(a.get(), [4.0, 2.0, 3.0])


def test_every_copy_is_counted_with_its_bytes():
    cuda.transfer_stats.reset()
    a = cuda.module(0).asarray(np.ones(4, dtype=np.float32))
    b = cuda.module(1).asarray(a)
    cuda.module(1).asnumpy(b)
    b.item() if b.size == 1 else b[0].item()
    assert cuda.transfer_stats.counts == {"htod": 1, "dtoh": 2, "dtod": 1}
    assert cuda.transfer_stats.bytes == {"htod": 16, "dtoh": 20, "dtod": 16}


def test_device_memory_counts_buffers_once_and_frees_them_with_their_last_view():
    gc.collect()
    before = cuda.memory_allocated(1)
    cuda.reset_peak_memory_stats(1)
    a = cuda.module(1).zeros((100,), dtype=np.float64)  # made on the device: no copy
    view = a.reshape(10, 10)[2:]
    assert cuda.memory_allocated(1) == before + 800, "a view shares its base's buffer"
    del a
    gc.collect()
    assert cuda.memory_allocated(1) == before + 800, "the view keeps the buffer alive"
    del view
    gc.collect()
    assert cuda.memory_allocated(1) == before
    assert cuda.max_memory_allocated(1) == before + 800


def test_a_gpu_tensor_costs_the_cpu_path_nothing():
    """CPU tensors never see a device array, and their constants stay cached."""
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (x * 0.5).sum().backward()
    assert type(x.grad._data) is np.ndarray
    from reference import ops

    assert ops.constant(0.5, x) is ops.constant(0.5, x)


def test_backends_and_counts_in_the_torch_like_namespace():
    assert cuda.backend() == "sim" and ag.cuda.is_available() and ag.cuda.device_count() == 2
    with pytest.raises(ValueError, match="must be one of"):
        cuda.use("gpu")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ag.ones(2, device="cuda:2")
    assert cuda_sim.DEVICE_COUNT == 2


def test_indexing_a_gpu_tensor_with_a_gpu_index_tensor_matches_the_cpu():
    # x[i] with both on the device once crashed deciding the node (a device array has no truth
    # value); the same program on the CPU is the yardstick, and torch's name for the node
    values = np.array([[1.0, 3.0], [4.0, 2.0]])
    results = {}
    for device in ("cpu", "cuda"):
        x = ag.tensor(values, requires_grad=True, device=device)
        y = x[ag.tensor([0, 0, 1], device=device)]
        (y * y).sum().backward()
        results[device] = (y.grad_fn.name(), y.detach().cpu().numpy(), x.grad.cpu().numpy())
    assert results["cuda"][0] == results["cpu"][0] == "IndexBackward0"
    np.testing.assert_array_equal(results["cuda"][1], values[[0, 0, 1]])
    np.testing.assert_array_equal(results["cuda"][2], results["cpu"][2])


def test_second_derivatives_through_a_gpu_index_match_torch():
    # index_put's backward reads its gradient back with the index it kept: on the GPU a device
    # array, which the engine once took for a slice ("truth value of an array ... ambiguous")
    import torch

    values = np.array([[1.0, 3.0], [4.0, 2.0]])

    def second(lib, device):
        x = lib.tensor(values, requires_grad=True, device=device)
        y = x[lib.tensor([0, 0, 1], device=device)]
        (g,) = lib.autograd.grad((y * y * y).sum(), [x], create_graph=True)
        (g * g).sum().backward()
        return g.detach().cpu().numpy(), x.grad.cpu().numpy()

    expected = second(torch, "cpu")
    for got in (second(ag, "cpu"), second(ag, "cuda")):
        np.testing.assert_allclose(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1])
