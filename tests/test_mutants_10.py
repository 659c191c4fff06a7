"""The capstone's mutation suite: one plausible mistake per sentence of capstone.py's contract
(its docstrings and the lesson), planted in the reference solution as a learner writes it, on
a checkout where every other kata holds its reference piece as the learner's (the capstone
runs on the learner's whole engine); each must leave the capstone not done. Correct solutions
written differently must come out done."""
import pytest

from kit import learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done
from test_kata_10 import plant_every_kata

KATA = "10_capstone"
FILE = "capstone.py"
SOURCE = learner_source("capstone")
# The 100,000-deep chain grades the engine's pieces (a recursive sort), none of capstone.py's
# functions: left out of these runs, where it would cost most of the time.
NOT_DEEP = ("--kata", "10", "-k", "not speed and not deep_chain")

# Correct, written differently: the layers as pairs, the cross entropy from its own
# log-sum-exp (shifted by each row's maximum, detached: the shift's gradient cancels), a
# step with mul_ and add_, the summed loss built first, the Theano pair with explicit loops.
LOGSUMEXP = '''
import numpy as np

from plugin import engine as ag


def mlp_forward(weights, x):
    pairs = list(zip(weights[0::2], weights[1::2]))
    h = x
    for W, b in pairs[:-1]:
        h = (h @ W + b).sigmoid()
    W, b = pairs[-1]
    return h @ W + b


def cross_entropy(logits, labels):
    shift = logits.max(dim=1, keepdim=True)[0].detach()
    z = logits - shift
    log_norm = z.exp().sum(dim=1, keepdim=True).log()
    rows = np.arange(len(labels))
    return (log_norm - z)[rows, labels].sum() * (1.0 / len(labels))


def sgd_step(params, lr):
    with ag.no_grad():
        for p in params:
            step = p.grad * lr
            p.add_(-step)
    for p in params:
        p.grad = None


def train(weights, x, labels, lr, steps):
    params = [ag.tensor(np.array(w), requires_grad=True) for w in weights]
    x = ag.tensor(x)
    history = []
    while len(history) < steps:
        loss = cross_entropy(mlp_forward(params, x), labels)
        history.append(float(loss.item()))
        loss.backward()
        sgd_step(params, lr)
    return history


def multitask_sequential(loss1, loss2):
    for loss, keep in ((loss1, True), (loss2, False)):
        loss.backward(retain_graph=keep)


def multitask_summed(loss1, loss2):
    total = loss1 + loss2
    total.backward()


def grads_all_at_once(loss, weights):
    grads = ag.autograd.grad([loss], list(weights))
    return [g for g in grads]


def grads_one_by_one(loss, weights):
    out = []
    for w in weights:
        (g,) = ag.autograd.grad([loss], [w], retain_graph=True)
        out.append(g)
    return out
'''

# Correct too: the cross entropy as a one-hot dot product with log_softmax, and the
# sequential strategy through ag.autograd.backward.
ONE_HOT = SOURCE.replace(
    '''    picked = logits.log_softmax(1)[np.arange(logits.shape[0]), labels]
    return -picked.mean()''',
    '''    one_hot = np.zeros(tuple(logits.shape))
    one_hot[np.arange(len(labels)), labels] = 1.0
    return -(logits.log_softmax(dim=1) * ag.tensor(one_hot, dtype=logits.dtype)).sum(dim=1).mean()''').replace(
    '''    loss1.backward(retain_graph=True)
    loss2.backward()''',
    '''    ag.autograd.backward([loss1], retain_graph=True)
    ag.autograd.backward([loss2])''')
assert ONE_HOT.count("one_hot") == 3 and "autograd.backward([loss2])" in ONE_HOT

MUTANTS = [
    # mlp_forward
    # every call of a learner's function is watched: the caller's tensors stay as they were
    Mutant("adds loss2 into loss1 in place", "    (loss1 + loss2).backward()\n", "    loss1.add_(loss2).backward()\n",
           expect="changed its argument `loss1`"),
    Mutant("sigmoid after the last layer too", "        if i < layers - 1:\n", "        if True:\n",
           expect="the loss differs from torch's"),
    Mutant("no sigmoid at all", "            h = h.sigmoid()\n", "            pass\n",
           expect="the loss differs from torch's"),
    Mutant("tanh instead of sigmoid", "            h = h.sigmoid()\n", "            h = h.tanh()\n",
           expect="the loss differs from torch's"),
    Mutant("forgets the bias", "h = h @ weights[2 * i] + weights[2 * i + 1]", "h = h @ weights[2 * i]",
           expect="the loss differs from torch's"),
    Mutant("sigmoid after the first layer only (two layers hard-coded)",
           "        if i < layers - 1:\n", "        if i == 0:\n", expect="the loss differs from torch's"),
    # cross_entropy
    Mutant("an unstabilised softmax: exp, normalise, log",
           "picked = logits.log_softmax(1)[np.arange(logits.shape[0]), labels]",
           "picked = (logits.exp() / logits.exp().sum(dim=1, keepdim=True)).log()[np.arange(logits.shape[0]), labels]",
           expect="use log_softmax"),
    Mutant("sums over the batch instead of the mean", "    return -picked.mean()", "    return -picked.sum()",
           expect="the loss differs from torch's"),
    Mutant("the softmax over the batch dimension", "logits.log_softmax(1)", "logits.log_softmax(0)",
           expect="the loss differs from torch's"),
    Mutant("forgets the minus sign", "    return -picked.mean()", "    return picked.mean()",
           expect="the loss differs from torch's"),
    Mutant("picks the label columns for every row",
           "[np.arange(logits.shape[0]), labels]", "[:, labels]", expect="the loss differs from torch's"),
    # sgd_step
    Mutant("updates without no_grad", "    with ag.no_grad():\n        for p in params:", "    if True:\n        for p in params:",
           expect="a leaf Variable that requires grad is being used in an in-place operation"),
    Mutant("keeps the gradient after the step", "            p.grad = None\n", "", expect="the loss curve parts from torch's"),
    Mutant("zeroes the gradient in place instead of clearing it",
           "            p.grad = None\n", "            p.grad.zero_()\n", expect="must clear"),
    Mutant("clears the gradient of the last parameter only",
           "            p.grad = None\n", "        p.grad = None\n", expect="the loss curve parts from torch's"),
    Mutant("steps uphill", "p.add_(p.grad * -lr)", "p.add_(p.grad * lr)", expect="the loss curve parts from torch's"),
    Mutant("rebinds the name instead of updating in place", "p.add_(p.grad * -lr)", "p = p - p.grad * lr",
           expect="the loss curve parts from torch's"),
    # train
    Mutant("records the loss tensors, not floats", "losses.append(loss.item())", "losses.append(loss)",
           expect="Python floats"),
    Mutant("never steps", "        sgd_step(params, lr)\n", "", expect="the loss curve parts from torch's"),
    Mutant("trains at a fixed learning rate", "        sgd_step(params, lr)\n", "        sgd_step(params, 0.1)\n",
           expect="the loss curve parts from torch's"),
    # the two multi-task strategies
    Mutant("sequential: the first backward frees the trunk", "loss1.backward(retain_graph=True)", "loss1.backward()",
           expect="the first backward must keep them (retain_graph=True)"),
    Mutant("sequential: the last backward retains too", "    loss2.backward()\n", "    loss2.backward(retain_graph=True)\n",
           expect="the last backward must not retain it"),
    Mutant("summed: two backward calls instead of one",
           "    (loss1 + loss2).backward()", "    loss1.backward(retain_graph=True)\n    loss2.backward()",
           expect="multitask_summed ran"),
    Mutant("summed: the mean of the two losses", "    (loss1 + loss2).backward()", "    ((loss1 + loss2) / 2).backward()",
           expect="multitask_summed: the gradient of"),
    Mutant("summed: starts from clean gradients",
           "    (loss1 + loss2).backward()",
           "    for leaf in [n.variable for n in _leaves(loss1)]:\n        leaf.grad = None\n    (loss1 + loss2).backward()\n\n\n"
           "def _leaves(t):\n    seen, stack, out = set(), [t.grad_fn], []\n    while stack:\n        node = stack.pop()\n"
           "        if node is None or node in seen:\n            continue\n        seen.add(node)\n"
           "        if hasattr(node, 'variable'):\n            out.append(node)\n"
           "        stack.extend(c for c, _ in node.next_functions)\n    return out",
           expect="it must hold ones plus the gradient"),
    # the Theano pair
    Mutant("all at once: one call per weight after all",
           "    return list(ag.autograd.grad(loss, weights))",
           "    return [ag.autograd.grad(loss, [w], retain_graph=True)[0] for w in weights]",
           expect="one autograd.grad call with every weight runs each node at most once"),
    Mutant("all at once: backward() and .grad",
           "    return list(ag.autograd.grad(loss, weights))",
           "    loss.backward()\n    grads = [w.grad for w in weights]\n    for w in weights:\n        w.grad = None\n    return grads",
           expect="grads_all_at_once (first call): the gradient of weight 0"),
    Mutant("all at once: allow_unused hides an unused weight (blind round 5's b14)",
           "    return list(ag.autograd.grad(loss, weights))",
           "    return list(ag.autograd.grad(loss, weights, allow_unused=True))",
           expect="appears to not have been used in the graph"),
    Mutant("one by one: one call for all weights",
           "    return [ag.autograd.grad(loss, [w], retain_graph=True)[0] for w in weights]",
           "    return list(ag.autograd.grad(loss, weights))",
           expect="each separate call walks the shared part near the loss again"),
    Mutant("one by one: frees the graph after the first weight",
           "ag.autograd.grad(loss, [w], retain_graph=True)[0]", "ag.autograd.grad(loss, [w])[0]",
           expect="Trying to backward through the graph a second time"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_not_done(checkout, mutant):
    plant_every_kata(checkout)
    assert_caught(checkout, KATA, FILE, SOURCE, mutant, *NOT_DEEP)


# The reference as a learner writes it is graded in test_kata_10.py.
CORRECT = {"log-sum-exp": LOGSUMEXP, "one-hot": ONE_HOT}


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_variant_is_done(checkout, name):
    plant_every_kata(checkout)
    assert_correct_is_done(checkout, KATA, FILE, CORRECT[name], "--kata", "10")
