"""Kata 04's mutation suite: one plausible mistake per sentence of merge_grads' and
accumulate_grad's contract (the stub docstrings and the lesson), each planted in the reference
pieces and graded: the kata must not come out done. Correct solutions written differently must
come out done."""
import pytest

from kit import learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done
from test_kata_04 import ALTERNATIVE

KATA = "04_accumulation"
FILE = "accumulate.py"
# A learner's module: the engine's API, and a helper that remembers leaves (for the mutant
# that keeps state of its own; the reference never calls it).
SOURCE = '''from plugin import engine as ag

_SEEN = set()


def _first_time(leaf):
    new = id(leaf) not in _SEEN
    _SEEN.add(id(leaf))
    return new
''' + learner_source("accumulate")

MERGE = "    return existing + incoming\n"
FIRST = "    if leaf._grad is None:\n"
STEAL = ("        if not create_graph and autograd.graph.pass_owns(grad) and grad.stride() == leaf.stride():\n"
         "            leaf.grad = grad\n")
COPY = "            leaf.grad = empty_like(leaf).copy_(grad)\n"
IN_PLACE = "        leaf._grad.add_(grad)\n"
OUT_OF_PLACE = "        leaf.grad = leaf._grad + grad\n"

MUTANTS = [
    # merge_grads: "return the sum"
    Mutant("keeps only the incoming gradient", MERGE, "    return incoming\n", expect="x * x"),
    Mutant("keeps only the existing gradient", MERGE, "    return existing\n", expect="x * x"),
    # "never change existing or incoming in place"
    Mutant("adds into existing in place", MERGE, "    return existing.add_(incoming)\n",
           expect="in place"),
    Mutant("adds into incoming in place", MERGE, "    incoming += existing\n    return incoming\n",
           expect="in place"),
    # "with create_graph the sum must be part of that graph"
    Mutant("sums with Python's sum() (from 0: -0.0 + -0.0 gives 0.0)", MERGE, "    return sum([existing, incoming])\n",
           expect="two -0.0 gradients merged"),
    Mutant("detaches the sum", MERGE, "    return (existing + incoming).detach()\n",
           expect="test_merging_is_recorded_with_create_graph"),
    Mutant("sums through numpy", MERGE,
           "    return ag.tensor(existing.detach().cpu().numpy() + incoming.detach().cpu().numpy())\n",
           expect="create_graph"),
    # accumulate_grad, the first gradient: "never be, or share memory with, a tensor that
    # other code holds" ... "keep grad itself when ... pass_owns(grad) ... grad.stride() ==
    # leaf.stride()" ... "otherwise store a COPY laid out like the leaf"
    Mutant("stores the first gradient itself", COPY, "            leaf.grad = grad\n", expect="is g"),
    Mutant("keeps the first gradient without asking who holds it", "autograd.graph.pass_owns(grad) and ", "",
           expect="is g"),
    Mutant("keeps the first gradient whatever its layout", " and grad.stride() == leaf.stride()", "",
           expect="x.T made a leaf, gradient from matmul"),
    Mutant("keeps the first gradient under create_graph too", "if not create_graph and ", "if ",
           expect="with create_graph the first gradient must be copied"),
    Mutant("always copies the first gradient", STEAL, "        if False:\n            pass\n",
           expect="yet .grad is a copy of it"),
    Mutant("copies the first gradient with clone() (the gradient's layout)", COPY,
           "            leaf.grad = grad.clone()\n", expect="leaf.grad.stride()"),
    Mutant("copies the first gradient by adding it to zeros", COPY,
           "            leaf.grad = ag.zeros_like(leaf) + grad\n", expect="CopyBackwards"),
    Mutant("copies the first gradient detached with create_graph", COPY,
           "            leaf.grad = empty_like(leaf).copy_(grad.detach())\n", expect="requires_grad is False"),
    Mutant("copies the first gradient through numpy", COPY,
           "            leaf.grad = ag.tensor(grad.detach().cpu().numpy().copy())\n", expect="create_graph"),
    # "later gradients, without create_graph: add IN PLACE, so that leaf.grad stays the same object"
    Mutant("adds out of place without create_graph", IN_PLACE, "        leaf.grad = leaf._grad + grad\n",
           expect="is first"),
    Mutant("overwrites instead of adding", FIRST, "    if True:\n", expect="three backward calls"),
    Mutant("adds in place a copy of .grad", IN_PLACE, "        leaf.grad = leaf._grad.clone().add_(grad)\n",
           expect="is first"),
    # "later gradients, with create_graph: OUT OF PLACE ... and differentiable"
    Mutant("adds in place with create_graph too", "    elif create_graph:\n", "    elif False:\n",
           expect="create_graph"),
    Mutant("decides by .grad's requires_grad instead of create_graph", "    elif create_graph:\n",
           "    elif leaf._grad.requires_grad:\n", expect="create_graph"),
    Mutant("detaches the out-of-place sum", OUT_OF_PLACE, "        leaf.grad = (leaf._grad + grad).detach()\n",
           expect="create_graph"),
    Mutant("drops the old .grad's graph with create_graph", OUT_OF_PLACE,
           "        leaf.grad = leaf._grad.detach() + grad\n", expect="test_accumulated_grad_can_be_differentiated"),
    # "zeroing is the user's business: after zero_() keep adding into that object; after
    # leaf.grad = None start again from a copy" ... "keep no state of your own"
    Mutant("takes a zeroed .grad for no gradient", FIRST,
           "    if leaf._grad is None or not leaf._grad.detach().cpu().numpy().any():\n",
           expect="zeroed tensor"),
    Mutant("remembers which leaves it has seen", FIRST, "    if _first_time(leaf):\n"),  # ids are reused: fails wherever
    # "the setter checks shape, dtype and device": a .grad made on the CPU for a GPU leaf
    Mutant("copies a plain first gradient through numpy (onto the CPU)", COPY,
           "            leaf.grad = empty_like(leaf).copy_(grad) if create_graph else "
           "ag.empty_like(leaf.detach().cpu()).copy_(ag.tensor(grad.detach().cpu().numpy()))\n",
           expect="located on a different device"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_caught(checkout, mutant):
    assert_caught(checkout, KATA, FILE, SOURCE, mutant)


# Correct, and written differently: the public .grad only, the copy into zeros_like (laid out
# like the leaf too), add_ on the public attribute, a sum that starts from the incoming gradient.
PUBLIC_ATTRIBUTE_ONLY = '''
from plugin import engine as ag


def merge_grads(existing, incoming):
    total = incoming.clone()
    return total + existing


def accumulate_grad(leaf, grad, create_graph):
    if leaf.grad is None:
        owned = ag.autograd.graph.pass_owns(grad) and not create_graph
        if owned and tuple(grad.stride()) == tuple(leaf.stride()):
            leaf.grad = grad
        else:
            copy = ag.zeros_like(leaf, dtype=grad.dtype)
            copy.copy_(grad)
            leaf.grad = copy
        return
    if create_graph:
        leaf.grad = grad + leaf.grad
        return
    leaf.grad.add_(grad)
'''

VARIANTS = {"no detach, += (test_kata_04)": ALTERNATIVE, "public attribute only": PUBLIC_ATTRIBUTE_ONLY}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_correct_solution_written_differently_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, VARIANTS[name])
