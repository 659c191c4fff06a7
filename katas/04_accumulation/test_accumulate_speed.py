"""Kata 04 speed: many backward passes over a wide fan-in, yours against the reference's."""
import numpy as np


def test_speed_of_many_passes_over_a_wide_fan_in(speed, ag):
    """One (256, 256) weight used by 64 additions: 63 merges per pass (the rules of `+` cost
    nothing, so the merges are most of the work), then one accumulation into w.grad; 20 passes
    per round, without zeroing in between."""
    rng = np.random.default_rng(0)
    w = ag.tensor(rng.standard_normal((256, 256)).astype(np.float32), requires_grad=True)
    scales = [float(s) for s in rng.uniform(0.5, 1.5, 64)]
    total = w + scales[0]
    for s in scales[1:]:
        total = total + (w + s)
    loss = total.sum()

    def passes():
        w.grad = None
        for _ in range(20):
            loss.backward(retain_graph=True)

    speed(passes)
