"""Kata 04 speed: many backward passes over a wide fan-in, yours against the reference's."""
import numpy as np


def test_speed_of_many_passes_over_a_wide_fan_in(speed, ag):
    """One (256, 256) weight used by 64 additions: 63 merges per pass (the rules of `+` cost
    nothing, so the merges are most of the work), then one accumulation into w.grad; 20 passes
    per timed call, without zeroing in between, each timed call on a graph of its own."""
    rng = np.random.default_rng(0)

    def fresh():
        w = ag.tensor(rng.standard_normal((256, 256)).astype(np.float32), requires_grad=True)
        scales = [float(s) for s in rng.uniform(0.5, 1.5, 64)]
        total = w + scales[0]
        for s in scales[1:]:
            total = total + (w + s)
        loss = total.sum()

        def passes():
            for _ in range(20):
                loss.backward(retain_graph=True)

        def check(_):
            assert w.grad is not None and np.allclose(w.grad.numpy(), 20 * 64), (
                "20 passes over 64 uses of w must leave 1280 in every element of w.grad")

        return passes, check

    speed(fresh)
