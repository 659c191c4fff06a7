"""Kata 01 speed: a backward pass made of elementwise rules, yours against the reference's."""
import numpy as np


def test_speed_of_an_elementwise_network(speed, ag):
    """Two sigmoid/tanh layers on a (64, 256) batch: every rule of the kata runs on big arrays.
    Each timed step has inputs of its own (drawn before it is timed)."""
    rng = np.random.default_rng(0)

    def fresh():
        x = ag.tensor(rng.standard_normal((64, 256)).astype(np.float32))
        w = ag.tensor(rng.uniform(0.5, 1.5, (64, 256)).astype(np.float32), requires_grad=True)
        b = ag.tensor(rng.standard_normal((64, 256)).astype(np.float32), requires_grad=True)

        def step():
            h = (x * w + b).sigmoid()
            h = (h * 2 - b / w).tanh() + (-h).exp() * h.relu()
            loss = ((h ** 2).log() * 0.5 - h).sum()
            loss.backward()

        def check(_):
            assert w.grad is not None and b.grad is not None and w.grad.shape == (64, 256), (
                "a timed step left no gradient of the right shape in its own w and b")

        return step, check

    speed(fresh)
