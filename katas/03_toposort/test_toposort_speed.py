"""Kata 03 speed: your order against the reference's on a wide, deep graph."""


def build_graph(ag, n):
    """n operations mixing a chain and fan-out (every value is used twice)."""
    x = ag.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(n // 2):
        y = y * 0.5 + y.tanh()
    return [y.grad_fn]


def test_speed_on_a_deep_graph(speed, ag):
    roots = build_graph(ag, 20_000)
    speed(lambda: ag.pieces.active.topological_order(roots))

