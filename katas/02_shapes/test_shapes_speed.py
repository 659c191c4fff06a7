"""Kata 02 speed: a classic MLP step, forward and backward, on your shape rules and on the
reference's."""
import numpy as np


def test_speed_of_an_mlp_step(speed, ag):
    """784-256-128-10, batch 64, float32, sigmoid, log_softmax and the negative log-likelihood
    `-logp[arange(B), y].mean()`: every matmul, bias broadcast, index and mean of a training
    step goes through your pieces. Each timed step has weights and data of its own (drawn
    before it is timed)."""
    rng = np.random.default_rng(0)
    batch, sizes = 64, (784, 256, 128, 10)

    def fresh():
        params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            w = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)  # float32, as torch needs for x @ w
            params += [ag.tensor(w, requires_grad=True), ag.tensor(np.zeros(fan_out, np.float32), requires_grad=True)]
        w1, b1, w2, b2, w3, b3 = params
        x = ag.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32))
        y = ag.tensor(rng.integers(0, sizes[-1], batch))

        def step():
            h = (x @ w1 + b1).sigmoid()
            h = (h @ w2 + b2).sigmoid()
            logp = (h @ w3 + b3).log_softmax(1)
            loss = -logp[ag.arange(batch), y].mean()
            loss.backward()

        def check(_):
            assert all(p.grad is not None and p.grad.shape == p.shape for p in params), (
                "a timed step left no gradient of the right shape in its own parameters")

        return step, check

    speed(fresh)
