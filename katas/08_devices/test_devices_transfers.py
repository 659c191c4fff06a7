"""Kata 08 count test: the transfers of training steps on the GPU, yours against the
reference's. Counts and bytes are exact (not noisy like time): an engine that copies more
than it must is slower on a real GPU, however fast the copy looks here."""
import numpy as np
import pytest

from plugin.grading.speed import report_verdict
from reference import pieces

rng = np.random.default_rng(0)
BATCHES = [rng.standard_normal((16, 8)).astype(np.float32) for _ in range(3)]
TARGETS = [rng.standard_normal((16, 4)).astype(np.float32) for _ in range(3)]
W1 = rng.standard_normal((8, 32)).astype(np.float32) * 0.3
W2 = rng.standard_normal((32, 4)).astype(np.float32) * 0.3


def training(ag):
    """Three SGD steps of a small MLP split over two GPUs (layer 1 on cuda:0, layer 2 on
    cuda:1), with the loss on the host; batches come from the host, as from a loader. Every
    move in the forward is a move back in the backward."""
    w1 = ag.tensor(W1, requires_grad=True, device="cuda")
    w2 = ag.tensor(W2, requires_grad=True, device="cuda:1")
    losses = []
    for batch, target in zip(BATCHES, TARGETS):
        x, y = ag.tensor(batch).to("cuda"), ag.tensor(target)
        h = (x @ w1).tanh().to("cuda:1")
        loss = (((h @ w2).cpu() - y) ** 2).mean()
        loss.backward()
        with ag.no_grad():
            for w in (w1, w2):
                w -= 0.1 * w.grad
                w.grad = None
        losses.append(loss.item())
    return losses


def transfers_of(ag):
    ag.cuda.transfer_stats.reset()
    losses = training(ag)
    return ag.cuda.transfer_stats.snapshot(), losses


def test_training_makes_exactly_the_reference_transfers(ag, request):
    ag.pieces.active.Device("cuda")  # a stub stops here
    if ag.cuda.device_count() < 2:  # the model is split over cuda:0 and cuda:1
        pytest.skip(f"needs two CUDA devices (cuda:0 and cuda:1); the {ag.cuda.backend()} backend "
                    f"has {ag.cuda.device_count()}")
    with pieces.swapped({n: pieces.REFERENCE[n] for n in
                         ("Device", "array_module", "transfer", "check_same_device", "to_backward")}):
        theirs, their_losses = transfers_of(ag)
    mine, my_losses = transfers_of(ag)
    np.testing.assert_allclose(my_losses, their_losses, rtol=1e-5)
    copies, size = (sum(mine[k].values()) for k in ("counts", "bytes"))
    their_copies, their_size = (sum(theirs[k].values()) for k in ("counts", "bytes"))
    report_verdict(request, f"{copies} transfers, {size:,} bytes "
                            f"(reference: {their_copies}, {their_size:,})")
    assert mine == theirs, (
        f"three training steps made {mine['counts']} transfers ({mine['bytes']} bytes); the "
        f"reference makes {theirs['counts']} ({theirs['bytes']} bytes). Copy only when asked "
        "(.to(), .cpu(), .cuda(), .item()), once, straight to the destination."
    )
