"""Shared helpers for the kit's tests of the reference engine against torch.

The idea is the oracle's: one function, written against the torch-like namespace, runs on
`torch` and on `reference`; what it observes (values, dtypes, shapes, None-ness, flags) is
turned into plain numpy/Python data by `snap` and compared by `assert_same`.
"""
import re
from contextlib import contextmanager

import numpy as np
import pytest
import torch

import reference

LIBS = {"torch": torch, "reference": reference}


@pytest.fixture(scope="module", autouse=False)
def single_threaded_torch():
    """torch on one thread while a module runs: these tensors are tiny, and intra-op threads
    only add synchronisation (milliseconds per op when the cores are busy)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def lib_name(lib):
    return "torch" if lib is torch else "reference"


def is_tensor(value):
    return isinstance(value, (torch.Tensor, reference.Tensor))


def dtype_name(dtype):
    """'float32' for torch.float32 and for numpy's float32."""
    return str(dtype).removeprefix("torch.")


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        # force=True also materializes torch's ZeroTensor (second derivatives of linear ops)
        return np.array(t.detach().cpu().numpy(force=True), copy=True)
    return np.array(t.detach().numpy(), copy=True)


class Snap:
    """A tensor's value, dtype name and shape, detached from its library."""

    __slots__ = ("array", "dtype", "shape")

    def __init__(self, t):
        self.array = to_numpy(t)
        self.dtype = dtype_name(t.dtype)
        self.shape = tuple(t.shape)

    def __repr__(self):
        return f"Snap({self.array!r}, dtype={self.dtype}, shape={self.shape})"


def snap(value):
    """Tensors (also inside lists, tuples and dicts) as Snaps; everything else unchanged."""
    if is_tensor(value):
        return Snap(value)
    if isinstance(value, dict):
        return {k: snap(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [snap(v) for v in value]
    return value


def tolerances(dtype):
    if dtype in ("float64",):
        return dict(rtol=1e-9, atol=1e-12)
    if dtype in ("float16",):
        return dict(rtol=1e-3, atol=1e-3)
    return dict(rtol=2e-5, atol=1e-6)


def assert_same(actual, expected, path="result", rtol=None, atol=None):
    """Compare two observations (built by `snap`): the engine's against torch's."""
    if isinstance(expected, Snap) or isinstance(actual, Snap):
        assert isinstance(actual, Snap) and isinstance(expected, Snap), (
            f"{path}: expected {expected!r}, got {actual!r}"
        )
        assert actual.shape == expected.shape, (
            f"{path}: shape {actual.shape} but torch has {expected.shape}"
        )
        assert actual.dtype == expected.dtype, (
            f"{path}: dtype {actual.dtype} but torch has {expected.dtype}"
        )
        tol = tolerances(expected.dtype)
        if rtol is not None:
            tol["rtol"] = rtol
        if atol is not None:
            tol["atol"] = atol
        np.testing.assert_allclose(
            actual.array, expected.array, err_msg=f"{path} differs from torch", **tol
        )
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected a dict, got {actual!r}"
        assert list(actual) == list(expected), f"{path}: keys {list(actual)} vs {list(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], f"{path}[{key!r}]", rtol, atol)
        return
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)), f"{path}: expected a sequence, got {actual!r}"
        assert len(actual) == len(expected), (
            f"{path}: {len(actual)} items but torch has {len(expected)}: {actual!r} vs {expected!r}"
        )
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{i}]", rtol, atol)
        return
    if isinstance(expected, float) and isinstance(actual, float):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, err_msg=path)
        return
    assert actual == expected, f"{path}: {actual!r} but torch gives {expected!r}"


def check_against_torch(scenario, lib, **tol):
    """Run `scenario(lib)` and `scenario(torch)`; their observations must agree."""
    actual = snap(scenario(lib))
    expected = snap(scenario(torch))
    assert_same(actual, expected, **tol)
    return actual


@contextmanager
def raises_phrase(phrase, exc=RuntimeError):
    """Like pytest.raises, matching torch's words literally (not as a regex)."""
    with pytest.raises(exc, match=re.escape(phrase)) as info:
        yield info


def error_of(fn):
    """(exception type name, message) raised by fn(), or None when it returns."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - any error is an observation
        return type(error).__name__, str(error)
    return None


# --- running one function on both libraries from numpy inputs --------------------------------


def leaves(lib, arrays, requires_grad=True):
    flags = requires_grad if isinstance(requires_grad, (list, tuple)) else [requires_grad] * len(arrays)
    return [lib.tensor(np.array(a, copy=True), requires_grad=rg) for a, rg in zip(arrays, flags)]


def forward_and_grads(lib, fn, arrays, seed, requires_grad=True):
    """fn(lib, *leaves) -> a tensor; backward with a seed of its shape.

    Returns the output (as a Snap) and every leaf's .grad (Snap or None).
    """
    xs = leaves(lib, arrays, requires_grad)
    out = fn(lib, *xs)
    seed_t = lib.tensor(np.broadcast_to(np.asarray(seed, dtype=np.float64), tuple(out.shape)).copy())
    out.backward(seed_t)
    return {"out": snap(out), "grads": [snap(x.grad) for x in xs]}


def compare_forward_and_grads(fn, arrays, rng, requires_grad=True, rtol=1e-7, atol=1e-9, path="forward and gradients"):
    """Run fn on torch and reference with the same inputs and seed; compare everything."""
    out_shape = tuple(fn(torch, *leaves(torch, arrays, False)).shape)
    seed = rng.uniform(-1.0, 1.0, size=out_shape)
    expected = forward_and_grads(torch, fn, arrays, seed, requires_grad)
    actual = forward_and_grads(reference, fn, arrays, seed, requires_grad)
    assert_same(actual, expected, path, rtol=rtol, atol=atol)


def second_derivatives(lib, fn, arrays, seed, direction, square=True):
    """Hessian-vector products through create_graph.

    L = sum(seed * out**2) (square=True: every first derivative then depends on the inputs,
    so the second pass always runs and tests the op's second derivative through the product
    rule) or L = sum(seed * out). g = dL/dx with create_graph; returns g, and d(sum g*v)/dx.
    """
    xs = leaves(lib, arrays)
    out = fn(lib, *xs)
    seed_t = lib.tensor(np.asarray(seed, dtype=np.float64))
    loss = (seed_t * out * out).sum() if square else (seed_t * out).sum()
    firsts = lib.autograd.grad(loss, xs, create_graph=True, allow_unused=True)
    result = {"first": snap(list(firsts)), "first_requires_grad": [
        None if g is None else bool(g.requires_grad) for g in firsts
    ]}
    terms = [
        (g * lib.tensor(np.asarray(v, dtype=np.float64))).sum()
        for g, v in zip(firsts, direction)
        if g is not None and g.requires_grad
    ]
    if terms:
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        seconds = lib.autograd.grad(total, xs, allow_unused=True)
        result["second"] = snap(list(seconds))
    else:
        result["second"] = "no first derivative requires grad"
    return result


def compare_second_derivatives(fn, arrays, rng, square=True, rtol=1e-7, atol=1e-9, path=None):
    out_shape = tuple(fn(torch, *leaves(torch, arrays, False)).shape)
    seed = rng.uniform(-1.0, 1.0, size=out_shape)
    direction = [rng.uniform(-1.0, 1.0, size=np.shape(a)) for a in arrays]
    expected = second_derivatives(torch, fn, arrays, seed, direction, square)
    actual = second_derivatives(reference, fn, arrays, seed, direction, square)
    if path is None:
        path = "second derivatives of sum(seed * out**2)" if square else "second derivatives of sum(seed * out)"
    assert_same(actual, expected, path, rtol=rtol, atol=atol)
