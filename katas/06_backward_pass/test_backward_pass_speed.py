"""Kata 06 speed: the loop's own cost per node, yours against the reference's.

The graphs are made of tiny tensors (one element), so the rules cost little and the time is
the loop's: the order, the buffers, the hooks check, the merges, the release. Each timed
pass runs on a graph of its own, built before it is timed, and the gradient it leaves is
checked."""
import numpy as np


def wide_graph(ag, n):
    """One value feeding n branches, summed back pairwise: fan-out and merges everywhere.
    (x, the loss, d loss / dx)."""
    x = ag.tensor([0.5], requires_grad=True)
    h = x.tanh()
    values = [h * float(i) for i in range(n)]
    while len(values) > 1:
        values = [a + b for a, b in zip(values[::2], values[1::2])] + values[len(values) - len(values) % 2:]
    return x, values[0].sum(), (1 - np.tanh(0.5) ** 2) * n * (n - 1) / 2


def deep_graph(ag, n):
    """A chain of n multiplications. (x, the loss, d loss / dx)."""
    x = ag.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return x, y.sum(), 1.0001 ** n


def fresh_pass(ag, graph, n):
    """A workload maker for `speed`: a new graph for each timed pass, and a check of x.grad."""

    def fresh():
        x, loss, expected = graph(ag, n)
        seed = ag.ones_like(loss)

        def check(_):
            assert x.grad is not None and np.allclose(x.grad.numpy(), expected, rtol=1e-3), (
                f"a timed pass left x.grad = {x.grad} on its own graph, not {expected:.6g}")

        return lambda: ag.pieces.active.run_backward((loss,), (seed,), True, False), check

    return fresh


def test_speed_on_a_wide_graph(speed, ag):
    speed(fresh_pass(ag, wide_graph, 2_000))


def test_speed_on_a_deep_graph(speed, ag):
    speed(fresh_pass(ag, deep_graph, 4_000))
