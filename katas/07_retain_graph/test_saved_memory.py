"""Kata 07 memory: the peak memory of training steps on a deep graph, yours against the
reference's (tracemalloc counts every array numpy allocates)."""
import gc
import tracemalloc

from plugin.grading.speed import report_verdict
from reference import pieces

DEPTH = 60
WIDTH = 20_000  # 160 KB of float64 per saved array


def two_steps(ag):
    """Two steps of a training loop. `loss` of step 1 is still referenced while step 2 builds
    its graph, as in `for batch in data: loss = model(batch); loss.backward()`."""
    w = ag.tensor([0.999], dtype=ag.float64, requires_grad=True)
    base = ag.ones(WIDTH, dtype=ag.float64)
    loss = None
    for _ in range(2):
        h = base
        for _ in range(DEPTH):
            h = (h * w).sigmoid()   # saves h and w, and the sigmoid's output
        loss = h.sum()
        loss.backward()
        del h
    return loss


def peak_of(ag):
    gc.collect()
    tracemalloc.start()
    try:
        two_steps(ag)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_of_training_steps(ag, request):
    ag.tensor([0.5], requires_grad=True).sigmoid()  # a stub stops here, before the deep graph
    reference = {"SavedTensors": pieces.REFERENCE["SavedTensors"]}
    with pieces.swapped(reference):
        theirs = peak_of(ag)
    mine = peak_of(ag)
    report_verdict(request, f"peak memory {mine / theirs:.2f}x reference")
    assert mine <= 1.5 * theirs, (
        f"peak memory {mine / 1e6:.1f} MB, the reference's {theirs / 1e6:.1f} MB "
        f"({mine / theirs:.2f}x): the saved arrays of step 1's graph are still alive after its "
        f"backward, because `loss` still holds the graph and the graph still holds what was saved. "
        f"release() must drop them (a backward without retain_graph frees them)."
    )
