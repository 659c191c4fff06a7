"""The engine's public API, for learner files: `from plugin import engine as ag`.

Everything a kata's piece may need: creating tensors, grad mode, and the graph helpers
torch also has (get_gradient_edge) or that a piece needs to talk to the engine. It is the
same engine the tests run, whichever pieces are plugged in. Importing `reference`'s own
piece modules (or torch) in a learner file instead is flagged by the grader.
"""
from reference import (  # noqa: F401
    Tensor,
    arange,
    autograd,
    bool,
    cuda,
    double,
    empty_like,
    enable_grad,
    float,
    float32,
    float64,
    full,
    int64,
    is_grad_enabled,
    manual_seed,
    no_grad,
    ones,
    ones_like,
    rand,
    randn,
    set_grad_enabled,
    tensor,
    zeros,
    zeros_like,
)
from reference import pieces  # noqa: F401  (pieces.active: the pieces the engine runs now)
from reference.graph import AccumulateGrad, Node, Stats, gradient_node, reattach  # noqa: F401


def __getattr__(name):
    # `ag.device`: the active Device piece (see reference.__getattr__), looked up when used.
    if name == "device":
        return pieces.active.Device
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
