"""Kata 09 speed: a Jacobian of 32 outputs, yours against the reference solution's."""
import numpy as np


def test_speed_of_a_32_output_jacobian(speed, ag, solution):
    w = ag.tensor(np.random.default_rng(0).normal(size=(32, 16)) / 4)
    x = ag.tensor(np.random.default_rng(1).normal(size=16))

    def f(t):
        return ((w @ t).tanh() * 2 + (w @ t.sigmoid())).exp()

    speed(lambda: solution.jacobian(f, x))
