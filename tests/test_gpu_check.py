"""plugin.grading.gpu_check: a scenario on the engine's simulated GPU against torch on the CPU."""
import numpy as np
import pytest

import reference as ag
from plugin.grading.gpu_check import check_grads_on_gpu
from plugin.grading.oracle import Constant, KataMismatch

X = np.array([0.5, -1.0, 2.0])


def test_the_reference_passes():
    check_grads_on_gpu(ag, lambda lib, x, c: (x * c).tanh().sum(), op="tanh(x * c)", x=X, c=Constant(X * 2))


def test_an_output_that_left_the_gpu_is_named():
    with pytest.raises(KataMismatch, match=r"the result \(forward\) is on cpu, not on cuda:0"):
        check_grads_on_gpu(ag, lambda lib, x: x.cpu() * 2 if lib is ag else x * 2, op="x * 2", x=X)


def test_wrong_values_are_shown():
    with pytest.raises(KataMismatch, match="the result \\(forward\\) differs from torch's"):
        check_grads_on_gpu(ag, lambda lib, x: x * (3 if lib is ag else 2), op="x * 2", x=X)


def test_a_device_error_gets_the_advice():
    def mixes(lib, x):
        return x * (lib.tensor(X) if lib is ag else X[0])

    with pytest.raises(KataMismatch, match="on a GPU every tensor a piece returns must stay"):
        check_grads_on_gpu(ag, mixes, op="x * a CPU tensor", x=X)


def test_a_stub_stays_a_stub():
    def stub(lib, x):
        if lib is ag:
            raise NotImplementedError("a stub")
        return x * 2

    with pytest.raises(NotImplementedError):
        check_grads_on_gpu(ag, stub, op="a stub", x=X)


def test_the_engine_runs_first_so_a_stub_stops_the_test_before_torch():
    # As in the oracle: a test that reaches a learner's stub (here in the backward pass) is a
    # to-do, decided before torch's side is needed.
    from plugin.grading.outcomes import StubReached

    ran = []

    def stub_rule(ctx, grad):
        raise StubReached("reached the stub of tanh_backward: not written yet")

    def fn(lib, x):
        ran.append(lib.__name__)
        return x.tanh()

    with ag.pieces.swapped({"tanh_backward": stub_rule}), pytest.raises(StubReached):
        check_grads_on_gpu(ag, fn, op="tanh(x)", x=X)
    assert ran == ["reference"], ran
