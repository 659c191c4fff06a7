"""Kata 08 (devices): the kit's mutation suite (see tests/mutation.py).

Each mutant is one plausible mistake against a sentence of the stub docstrings of
katas/08_devices/devices.py or of the kata's lesson, planted in the reference solution; the
kata must not come out done, and the output must name the mistake. The correct variants,
written differently, must come out done.
"""
import pytest

from kit import assert_done, learner_source, write_learner_file
from mutation import Mutant, assert_caught
from test_kata_08 import ALTERNATIVE

KATA = "08_devices"
FILE = "devices.py"

# A correct solution written the way the hints go: partition, isdigit, a tuple compared.
AS_THE_HINTS_SAY = '''
import numpy as np

from plugin import engine as ag


class Device:
    def __init__(self, spec, index=None):
        if isinstance(spec, Device):
            spec, index = str(spec), None
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not {type(index).__name__}")
        kind, colon, number = spec.partition(":")
        if colon and not (number.isdecimal() and str(int(number)) == number):
            raise RuntimeError(f"Invalid device string: '{spec}'")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {kind}")
        if colon:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {spec}")
            index = int(number)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = kind, index

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = Device(other)
            except RuntimeError:
                return False
        if not isinstance(other, Device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


def array_module(device):
    if device.type == "cpu":
        return np
    return ag.cuda.module(0 if device.index is None else device.index)


def transfer(array, src, dst):
    if src == dst:
        return array
    if dst.type == "cpu":
        return array_module(src).asnumpy(array)
    return array_module(dst).asarray(array)


def check_same_device(op, *tensors):
    devices = [t.device for t in tensors if t is not None]
    for device in devices:
        if device != devices[0]:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                               f"devices, {devices[0]} and {device}!")


def to_backward(ctx, grad):
    return (grad.to(ctx.source_device),)
'''

CORRECT = {
    "the reference": lambda: learner_source("devices"),
    "a regular expression and a set": lambda: ALTERNATIVE,
    "as the hints say": lambda: AS_THE_HINTS_SAY,
}

BAD_STRING = "test_bad_device_strings_fail_with_torchs_words"

MUTANTS = [
    # Device: parsing
    Mutant("accepts any device type", "if kind not in DEVICE_TYPES:", "if not kind:", expect=BAD_STRING),
    Mutant("accepts an index with leading zeros", "([1-9][0-9]*|0)", "([0-9]+)", expect="cuda:01"),
    Mutant("accepts a negative index", "([1-9][0-9]*|0)", "(-?[1-9][0-9]*|0)", expect="cuda:-1"),
    Mutant("reads any Unicode digit after the first (\\d: blind round 5's b19)", "([1-9][0-9]*|0)",
           "([1-9]\\d*|0)", expect="random program"),
    Mutant("accepts a colon with no index", "(?::([1-9][0-9]*|0))?", "(?::([1-9][0-9]*|0)?)?",
           expect="cuda:]"),
    Mutant("gives cuda the index 0 when none is written", "        self.index = index\n",
           "        self.index = 0 if index is None and kind == \"cuda\" else index\n",
           expect="Device('cuda'): type and index"),
    Mutant("drops the index of a Device it copies",
           "spec, index = spec.type, spec.index if index is None else index", "spec = spec.type",
           expect="test_device_from_type_and_index_and_from_a_device"),
    Mutant("ignores the index given next to the type", "        self.index = index\n",
           "        self.index = None if number is None else int(number)\n",
           expect="test_device_from_type_and_index_and_from_a_device"),
    Mutant("takes an index given twice (the string's wins)", "            if index is not None:\n                raise",
           "            if False:\n                raise", expect="passed explicitly"),
    Mutant("takes an index that is no int", "if index is not None and (isinstance(index, bool) or not isinstance(index, int)):",
           "if False:", expect="must be int, not bool"),
    # Device: equality, hash, strings
    Mutant("compares the type only", "(self.type, self.index) == (other.type, other.index)",
           "self.type == other.type", expect="Device('cuda') == Device('cuda:0') should be False"),
    Mutant("raises when compared with a string that is no device",
           "            try:\n                other = Device(other)\n            except RuntimeError:\n"
           "                return False\n", "            other = Device(other)\n",
           expect="test_equality_and_hash_follow_torch"),
    Mutant("never equals its string", "if isinstance(other, str):", "if False:",
           expect="a Device equals its string"),
    Mutant("hashes by identity", "return hash((self.type, self.index))", "return id(self)",
           expect="must hash equal"),
    Mutant("always writes the index in str", 'return self.type if self.index is None else f"{self.type}:{self.index}"',
           'return f"{self.type}:{self.index}"', expect="str(Device('cpu')) should be 'cpu'"),
    Mutant("writes index=None in repr", "        if self.index is None:\n            return f\"device(type='{self.type}')\"",
           "        if self.index is None and self.type == \"cpu\":\n            return f\"device(type='{self.type}')\"",
           expect="repr(Device('cuda')) should be"),
    # array_module
    Mutant("takes every device without an index for the CPU", 'if device.type == "cpu":\n        return np',
           'if device.index is None:\n        return np', expect="cuda without an index means cuda:0"),
    Mutant("forgets that cuda means cuda:0", "return cuda.module(device.index or 0)",
           "return cuda.module(device.index)", expect="test_array_module_of_each_device"),
    Mutant("gives every GPU the first GPU's module", "return cuda.module(device.index or 0)",
           "return cuda.module(0)", expect="test_array_module_of_the_second_gpu"),
    # transfer
    Mutant("copies onto the same device", "    if src == dst:\n        return array\n",
           "    if src == dst:\n        return array.copy()\n", expect="same device: return the array itself"),
    Mutant("never copies", "    if src == dst:\n        return array\n", "    if True:\n        return array\n",
           expect="a move to the host gives a new host array"),
    Mutant("copies to the host with the destination's module", "return array_module(src).asnumpy(array)",
           "return array_module(dst).asnumpy(array)", expect="asnumpy"),
    Mutant("copies to the host implicitly", "return array_module(src).asnumpy(array)",
           "return np.asarray(array)", expect="Implicit conversion to a NumPy array is not allowed"),
    Mutant("copies to a GPU with the source's module", "return array_module(dst).asarray(array)",
           "return array_module(src).asarray(array)", expect="one copy each way expected"),
    Mutant("goes from GPU to GPU through the host",
           '    if dst.type == "cpu":\n        return array_module(src).asnumpy(array)\n',
           '    if src.type == "cuda":\n        array = array_module(src).asnumpy(array)\n'
           '        if dst.type == "cpu":\n            return array\n', expect="one copy each way expected"),
    # check_same_device
    Mutant("never raises", "        if device != devices[0]:", "        if device is None:",
           expect="test_mixing_devices_fails_with_torchs_words"),
    Mutant("does not skip None", "devices = [t.device for t in tensors if t is not None]",
           "devices = [t.device for t in tensors]", expect="test_check_same_device_names_the_first_two_devices"),
    Mutant("names the last device first", 'f"devices, {devices[0]} and {device}!"',
           'f"devices, {devices[-1]} and {device}!"', expect="torch's words expected"),
    Mutant("names the two devices in the wrong order", 'f"devices, {devices[0]} and {device}!"',
           'f"devices, {device} and {devices[0]}!"', expect="torch's words expected"),
    Mutant("words the error its own way", '"Expected all tensors to be on the same device, but found at least two "',
           '"Expected all tensors on one device, but found at least two "', expect="torch's words expected"),
    # to_backward
    Mutant("leaves the gradient where it arrived", "return (grad.to(ctx.source_device),)", "return (grad,)",
           expect="must go back to the device it came from"),
    Mutant("sends every gradient to the host", "return (grad.to(ctx.source_device),)", "return (grad.cpu(),)",
           expect="must go back to the device it came from"),
    Mutant("moves the gradient outside the graph", "return (grad.to(ctx.source_device),)",
           "return (grad.detach().to(ctx.source_device),)",
           expect="the first derivative must keep its graph under create_graph=True"),
]


@pytest.mark.parametrize("variant", sorted(CORRECT))
def test_a_correct_variant_is_done(checkout, variant):
    write_learner_file(checkout, KATA, FILE, CORRECT[variant]())
    assert_done(checkout.runpytest("--kata", "8", "-p", "no:randomly"), KATA)


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_mutant_is_killed(checkout, mutant):
    assert_caught(checkout, KATA, FILE, learner_source("devices"), mutant, "--kata", "8")
