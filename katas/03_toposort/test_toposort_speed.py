"""Kata 03 speed: your order against the reference's on a wide, deep graph."""


def build_graph(ag, n):
    """n operations mixing a chain and fan-out (every value is used twice)."""
    x = ag.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(n // 2):
        y = y * 0.5 + y.tanh()
    return [y.grad_fn]


def test_speed_on_a_deep_graph(speed, ag):
    n = 5_000
    count = 3 * (n // 2) + 1  # a mul, a tanh and an add per step, and x's AccumulateGrad

    def fresh():
        """A new graph for each timed call (built before it is timed), and a check of the order."""
        roots = build_graph(ag, n)

        def check(order):
            assert isinstance(order, list) and len(order) == len(set(order)) == count, (
                "a timed call returned an order that is not one of its own graph")
            assert order[0] is roots[0], "the root must come first"

        return lambda: ag.pieces.active.topological_order(roots), check

    speed(fresh)
