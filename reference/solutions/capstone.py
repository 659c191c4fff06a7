"""Kata 10, model solution: the classic network, multi-task losses and the Theano question, on the
engine's public API only, so that it runs on whichever pieces are plugged in."""
import numpy as np

import reference as ag


def mlp_forward(weights, x):
    """Logits of a sigmoid MLP: weights = [W1, b1, W2, b2, ...], hidden layers sigmoid."""
    h = x
    layers = len(weights) // 2
    for i in range(layers):
        h = h @ weights[2 * i] + weights[2 * i + 1]
        if i < layers - 1:
            h = h.sigmoid()
    return h


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy of logits (batch, classes) against integer labels (batch,)."""
    picked = logits.log_softmax(1)[np.arange(logits.shape[0]), labels]
    return -picked.mean()


def sgd_step(params, lr):
    """p -= lr * p.grad for each parameter, in place and without recording; then clear .grad."""
    with ag.no_grad():
        for p in params:
            p.add_(p.grad * -lr)
            p.grad = None


def train(weights, x, labels, lr, steps):
    """Train the MLP from weights (numpy arrays) for `steps` steps; the loss of each step."""
    params = [ag.tensor(w, requires_grad=True) for w in weights]
    inputs = ag.tensor(x)
    losses = []
    for _ in range(steps):
        loss = cross_entropy(mlp_forward(params, inputs), labels)
        loss.backward()
        sgd_step(params, lr)
        losses.append(loss.item())
    return losses


def multitask_sequential(loss1, loss2):
    """Two losses on a shared trunk, one backward each: the first keeps the trunk's graph."""
    loss1.backward(retain_graph=True)
    loss2.backward()


def multitask_summed(loss1, loss2):
    """Two losses on a shared trunk, one backward of their sum."""
    (loss1 + loss2).backward()


def grads_all_at_once(loss, weights):
    """Every weight's gradient from one reverse pass."""
    return list(ag.autograd.grad(loss, weights))


def grads_one_by_one(loss, weights):
    """One autograd.grad call per weight (the graph is kept for the next call)."""
    return [ag.autograd.grad(loss, [w], retain_graph=True)[0] for w in weights]
