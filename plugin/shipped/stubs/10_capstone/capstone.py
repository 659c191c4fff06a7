"""Kata 10, the capstone: your whole engine at work.

Read README.md first. Run this kata alone with:  pytest --kata 10

Everything here runs on every piece you wrote in katas 01-08, with no reference fallback.
Write these functions with the engine's public API only (`from plugin import engine as ag`);
numpy is allowed for indices.
"""
import numpy as np  # noqa: F401

from plugin import engine as ag  # noqa: F401


def mlp_forward(weights, x):
    """The logits of a classic MLP.

    - `weights`: a list of engine tensors [W1, b1, W2, b2, ...], Wi of shape (inputs, outputs),
      bi of shape (outputs,).
    - `x`: an engine tensor (batch, inputs).
    - Every layer is `h @ W + b`; every layer but the last is followed by `sigmoid`.
    - Returns the logits (batch, classes) of the last layer (no softmax).
    """
    raise NotImplementedError("mlp_forward: see katas/10_capstone/README.md")


def cross_entropy(logits, labels):
    """The mean softmax cross-entropy, like `torch.nn.functional.cross_entropy(logits, labels)`.

    - `logits`: an engine tensor (batch, classes); `labels`: a numpy array of ints (batch,).
    - Returns a one-element engine tensor: -mean over the batch of log_softmax(logits)[b, labels[b]].
    """
    raise NotImplementedError("cross_entropy: see katas/10_capstone/README.md")


def sgd_step(params, lr):
    """One step of plain gradient descent: `p <- p - lr * p.grad` for every tensor in `params`.

    - Change each parameter in place, without recording it in the graph (`ag.no_grad()`).
    - Then clear each gradient (`p.grad = None`), so that the next backward starts from zero.
    """
    raise NotImplementedError("sgd_step: see katas/10_capstone/README.md")


def train(weights, x, labels, lr, steps):
    """Train the MLP for `steps` steps and return the loss of each step (a list of floats).

    - `weights`: numpy arrays [W1, b1, W2, b2, ...] (the starting point; do not change them):
      make engine leaves that require grad from them.
    - `x`: a numpy array (batch, inputs); `labels`: numpy ints (batch,).
    - Each step: forward (`mlp_forward`), `cross_entropy`, backward, `sgd_step`; the loss
      recorded is the one computed before the step (`loss.item()`).
    """
    raise NotImplementedError("train: see katas/10_capstone/README.md")


def multitask_sequential(loss1, loss2):
    """Backpropagate two losses that share a trunk, one backward call each.

    Afterwards every leaf's `.grad` holds the gradient of loss1 + loss2. The first backward
    must keep the shared graph for the second.
    """
    raise NotImplementedError("multitask_sequential: see katas/10_capstone/README.md")


def multitask_summed(loss1, loss2):
    """Backpropagate two losses that share a trunk with one backward call of their sum."""
    raise NotImplementedError("multitask_summed: see katas/10_capstone/README.md")


def grads_all_at_once(loss, weights):
    """The gradients of `loss` with respect to every tensor in `weights` (a list, in order),
    from ONE `ag.autograd.grad` call. `.grad` is not touched. A weight the loss does not use
    is an error, in torch's words (autograd.grad's, without allow_unused)."""
    raise NotImplementedError("grads_all_at_once: see katas/10_capstone/README.md")


def grads_one_by_one(loss, weights):
    """The same list, from one `ag.autograd.grad` call PER weight (keep the graph between
    calls). `.grad` is not touched. The tests count how many nodes each way runs."""
    raise NotImplementedError("grads_one_by_one: see katas/10_capstone/README.md")
