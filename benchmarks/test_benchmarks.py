"""The benchmarks as pytest-benchmark tests, one group per workload, parametrized by library:

    python -m pytest benchmarks --benchmark-only -p no:cacheprovider

pytest-benchmark runs one test after the other, not interleaved: for the targets (ratios taken
in one interleaved run) use `python -m benchmarks.run`. These are for pytest-benchmark's
tooling (--benchmark-compare, --benchmark-histogram, ...). They are not in the default test run
(pyproject's testpaths is `katas`).
"""
import numpy as np
import pytest

from . import workloads as W


@pytest.mark.parametrize("library", W.MLP_LIBRARIES)
def test_mlp_step(benchmark, library):
    """One training step of the 784-256-128-10 MLP, batch 64, float32."""
    benchmark.group = "mlp-step (784-256-128-10, batch 64, float32)"
    if not W.available(library):
        pytest.skip(f"{library} is not installed (pip install -e .[bench])")
    step = W.make_mlp_step(library)
    for _ in range(3):
        step()
    loss = benchmark(step)
    assert np.isfinite(float(loss.detach() if hasattr(loss, "detach") else loss))


@pytest.mark.parametrize("library", W.TINY_LIBRARIES)
def test_tiny_chain(benchmark, library):
    """1,000 tiny ops on (4,) float32, forward and backward; extra_info has the time per op."""
    benchmark.group = f"tiny-chain ({W.TINY_OPS:,} ops, forward + backward)"
    if not W.available(library):
        pytest.skip(f"{library} is not installed (pip install -e .[bench])")
    run = W.make_tiny_chain(library)
    for _ in range(3):
        run()
    benchmark(run)
    benchmark.extra_info["median_us_per_op"] = benchmark.stats.stats.median / W.TINY_OPS * 1e6
    assert all(leaf.grad is None for leaf in run.leaves)


def test_deep_chain_backward(benchmark):
    """Backward through a 100,000-deep chain on the reference (each round records a new one;
    only the backward is timed). Target: under 2 s, no RecursionError."""
    benchmark.group = f"deep-chain ({W.DEEP:,} deep, backward, reference)"
    build, backward = W.make_deep_chain()
    gradient = benchmark.pedantic(
        backward, setup=lambda: ((build(),), {}), rounds=3, iterations=1, warmup_rounds=0
    )
    np.testing.assert_allclose(gradient, 1.00001**W.DEEP, rtol=1e-2)
