"""Kata 06 speed: the loop's own cost per node, yours against the reference's.

The graphs are made of tiny tensors (one element), so the rules cost little and the time is
the loop's: the order, the buffers, the hooks check, the merges, the release."""


def wide_graph(ag, n):
    """One value feeding n branches, summed back pairwise: fan-out and merges everywhere."""
    x = ag.tensor([0.5], requires_grad=True)
    h = x.tanh()
    values = [h * float(i) for i in range(n)]
    while len(values) > 1:
        values = [a + b for a, b in zip(values[::2], values[1::2])] + values[len(values) - len(values) % 2:]
    return values[0].sum()


def deep_graph(ag, n):
    """A chain of n multiplications."""
    x = ag.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return y.sum()


def _pass(ag, loss):
    seed = ag.ones_like(loss)
    # retain_graph=True: the same graph is run again and again (x.grad just keeps adding)
    return lambda: ag.pieces.active.run_backward((loss,), (seed,), True, False)


def test_speed_on_a_wide_graph(speed, ag):
    speed(_pass(ag, wide_graph(ag, 4_000)))


def test_speed_on_a_deep_graph(speed, ag):
    speed(_pass(ag, deep_graph(ag, 8_000)))
