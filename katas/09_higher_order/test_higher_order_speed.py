"""Kata 09 speed: a Jacobian of 32 outputs, yours against the reference solution's."""
import numpy as np


def test_speed_of_a_32_output_jacobian(speed, ag, solution):
    """Each timed Jacobian is of a function and a point of its own (drawn before it is timed)."""
    rng = np.random.default_rng(0)

    def fresh():
        w = ag.tensor(rng.normal(size=(32, 16)) / 4)
        x = ag.tensor(rng.normal(size=16))

        def f(t):
            return ((w @ t).tanh() * 2 + (w @ t.sigmoid())).exp()

        def check(jacobian):
            assert tuple(jacobian.shape) == (32, 16), f"a timed Jacobian has shape {tuple(jacobian.shape)}, not (32, 16)"

        return lambda: solution.jacobian(f, x), check

    speed(fresh)
