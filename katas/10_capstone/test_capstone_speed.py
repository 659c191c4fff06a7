"""Kata 10 speed: one training step of the classic MLP on your whole engine against the
reference engine (every piece swapped at once)."""
import numpy as np


def test_speed_of_a_training_step(speed, ag, solution):
    """Each timed step has weights and data of its own (drawn before it is timed)."""
    rng = np.random.default_rng(0)
    sizes = (64, 128, 64, 10)

    def fresh():
        params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            params += [ag.tensor(rng.normal(size=(fan_in, fan_out)) / np.sqrt(fan_in), requires_grad=True),
                       ag.tensor(np.zeros(fan_out), requires_grad=True)]
        before = params[0].detach().numpy().copy()
        x = ag.tensor(rng.normal(size=(32, sizes[0])))
        labels = rng.integers(0, sizes[-1], size=32)

        def step():
            loss = solution.cross_entropy(solution.mlp_forward(params, x), labels)
            loss.backward()
            solution.sgd_step(params, 0.01)

        def check(_):
            assert not np.array_equal(params[0].detach().numpy(), before), "a timed step did not move its own weights"

        return step, check

    speed(fresh)
