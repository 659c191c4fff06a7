"""Kata 07's mutation suite: one plausible mistake per sentence of SavedTensors' contract (the
stub's docstrings and the lesson), planted in the reference as a learner writes it; each must
leave the kata not done. Correct solutions written differently must come out done."""
import pytest

from kit import learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done

KATA = "07_retain_graph"
FILE = "saved.py"
SOURCE = learner_source("saved")

# Correct, in yet another shape: plain lists, a flag named for what it means, the message
# built by a small function that strips the node's "Backward" (and an overload number 0) with a
# regular expression.
PLAIN = '''
import re
import weakref

from plugin import engine as ag

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
         "after they have already been freed). Saved intermediate values of the graph are freed "
         "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
         "backward through the graph a second time or if you need to access saved tensors after "
         "calling backward.")


def describe(t, node):
    name = {"float32": "Float", "float64": "Double", "int64": "Long"}[str(t.dtype)]  # int64: an index
    text = f"[torch.{name}Tensor {list(t.shape)}]"
    if node is not None:
        text += ", which is output 0 of " + re.sub(r"Backward(0$)?", "", node.name()) + ","
    return text


class SavedTensors:
    def __init__(self, owner):
        self.node = weakref.ref(owner)
        self.freed = False
        self.items = []
        self.versions = []
        self.mine = []

    def save(self, *tensors):
        node = self.node()
        for t in tensors:
            own = t is not None and t.grad_fn is node
            self.items.append(t.detach() if own else t)
            self.versions.append(None if t is None else t._version)
            self.mine.append(own)

    def unpack(self):
        if self.freed:
            raise RuntimeError(FREED)
        node = self.node()
        result = []
        for t, version, own in zip(self.items, self.versions, self.mine):
            if t is not None and t._version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an "
                    f"inplace operation: {describe(t, node if own else t.grad_fn)} is at version "
                    f"{t._version}; expected version {version} instead. Hint: use y = y * 2, "
                    "not y.mul_(2).")
            result.append(ag.reattach(t, node) if own else t)
        return tuple(result)

    def release(self):
        self.freed = True
        self.items, self.versions, self.mine = [], [], []
'''

MUTANTS = [
    # the owner
    Mutant("holds the owner strongly", "self._owner = weakref.ref(owner)", "self._owner = lambda: owner",
           expect="your SavedTensors holds its owner strongly (node -> saved -> node): keep weakref.ref(owner)"),
    # save: versions and outputs
    Mutant("never compares versions", "if t is not None and t._version != version:", "if False:",
           expect="test_an_output_changed_in_place_is_detected"),
    Mutant("skips leaves that require grad (torch refuses in-place ops on them, but not under no_grad)",
           "if t is not None and t._version != version:",
           "if t is not None and not (t.is_leaf and t.requires_grad) and t._version != version:",
           expect="a saved leaf"),
    Mutant("checks the version of outputs and of tensors that require grad only, not constants",
           "if t is not None and t._version != version:",
           "if t is not None and (is_output or t.requires_grad) and t._version != version:",
           expect="a saved constant"),
    Mutant("reads the version when unpacking, not when saving",
           "versions.append(None if t is None else t._version)", "versions.append(None)",
           expect="test_one_backward_uses_what_was_saved"),
    Mutant("keeps a saved output as it is: the output keeps itself alive",
           "        if True in outputs:\n", "        if False:\n",
           expect="a saved output must be kept detached"),
    Mutant("detaches every saved tensor, not only the node's own output",
           "            tensors = tuple([t.detach() if out else t for t, out in zip(tensors, outputs)])\n",
           "            pass\n        tensors = tuple([None if t is None else t.detach() for t in tensors])\n",
           expect="unpack() must give back (None, x, None) as saved"),
    Mutant("takes every tensor with a grad_fn for the node's own output",
           "outputs.append(t is not None and t.grad_fn is owner)",
           "outputs.append(t is not None and t.grad_fn is not None)",
           expect="test_a_second_derivative_through_a_times_a"),
    Mutant("gives a saved output back detached, without its node",
           "reattach(t, owner) if is_output else t", "t",
           expect="must have the node as grad_fn again"),
    # unpack: what comes back
    Mutant("drops the Nones when unpacking",
           "            unpacked.append(reattach(t, owner) if is_output else t)\n",
           "            if t is not None:\n                unpacked.append(reattach(t, owner) if is_output else t)\n",
           expect="unpack() must return a tuple of 3"),
    Mutant("returns a list", "        return tuple(unpacked)", "        return unpacked",
           expect="unpack() must return a tuple of 3"),
    # release and the freed error
    Mutant("unpack after release does not raise",
           "        if self._released:\n            raise RuntimeError(FREED_MESSAGE)\n", "",
           expect="test_a_second_backward_raises_torchs_error"),
    Mutant("release only sets the flag: the arrays live on",
           "        self._tensors = self._versions = self._outputs = None\n", "",
           expect="release() must drop every reference to them"),
    Mutant("release drops the tensors but forgets the flag",
           "        self._tensors = self._versions = self._outputs = None\n        self._released = True\n",
           "        self._tensors = self._versions = self._outputs = None\n",
           expect="test_a_second_backward_raises_torchs_error"),
    Mutant("says only the first sentence of torch's freed error",
           "raise RuntimeError(FREED_MESSAGE)", 'raise RuntimeError(FREED_MESSAGE.split(". ")[0])',
           expect="Specify retain_graph=True"),
    # the in-place message, in full
    Mutant("swaps the two versions in the message",
           "f\"{tensor._version}; expected version {saved_version} instead.",
           "f\"{saved_version}; expected version {tensor._version} instead.",
           expect="test_the_message_has_torchs_details"),
    Mutant("names the node (SigmoidBackward0), not the operation",
           "{_operation(producer.name())}", "{producer.name()}",
           expect="which is output 0 of SigmoidBackward0"),
    Mutant("drops every overload number (Max, not torch's Max1)",
           'return operation if overload == "0" else operation + overload', "return operation",
           expect="which is output 0 of Max1"),
    Mutant("calls a float64 tensor a FloatTensor", '"float64": "DoubleTensor"', '"float64": "FloatTensor"',
           expect="torch.FloatTensor [2]"),
    Mutant("writes the shape as a tuple", "[torch.{kind} {list(tensor.shape)}]", "[torch.{kind} {tuple(tensor.shape)}]",
           expect="[torch.FloatTensor (2,)]"),
    Mutant("names the owner for every changed tensor, not the tensor's own producer",
           "owner if is_output else t.grad_fn", "owner", expect="a saved leaf"),
    Mutant("leaves out the producer of a saved output",
           "owner if is_output else t.grad_fn", "t.grad_fn",
           expect="test_the_message_has_torchs_details"),
    Mutant("says 'which is output 0 of' for a leaf too",
           'origin = "" if producer is None else f", which is output 0 of {_operation(producer.name())},"',
           'origin = ", which is output 0 of Leaf," if producer is None else f", which is output 0 of {_operation(producer.name())},"',
           expect="a saved leaf"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_not_done(checkout, mutant):
    assert_caught(checkout, KATA, FILE, SOURCE, mutant)


# The reference planted as a learner writes it is the baseline: planting alone must not fail.
# (A third correct solution, ALTERNATIVE, is graded in test_kata_07.py.)
CORRECT = {"the reference as a learner writes it": SOURCE, "plain lists": PLAIN}


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_variant_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, CORRECT[name])
