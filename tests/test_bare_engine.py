"""The bare engine (benchmarks/bare_engine.py), the floor the benchmark report shows beside the
targets: it must compute what numpy by hand and torch compute, or its times mean nothing."""
import numpy as np
import pytest

from benchmarks import workloads as W



def test_the_bare_engine_trains_the_mlp_as_numpy_by_hand_does():
    bare, by_hand = W.make_mlp_step("bare"), W.make_mlp_step("numpy")
    for _ in range(3):
        assert float(bare().item()) == pytest.approx(float(by_hand()), rel=1e-5)
    for mine, theirs in zip(bare.parameters(), by_hand.parameters()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_the_bare_engine_gives_torchs_gradients_where_a_node_feeds_two_others():
    torch = pytest.importorskip("torch")
    from benchmarks import bare_engine

    values = np.array([0.3, -1.2, 0.8, 2.0], dtype=np.float32)
    results = []
    for lib in (bare_engine, torch):
        x = lib.tensor(values, requires_grad=True)
        w = lib.tensor(values[::-1].copy(), requires_grad=True)
        n = (x * w).tanh()  # n feeds the root directly and through a
        a = (n * 0.5 + w).exp() - n.sigmoid()
        root = (n * a).sum()
        root.backward()
        results.append([np.asarray(t.grad.detach().numpy()) for t in (x, w)])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5)
