"""Kata 08 (devices) through the grading plugin, on a copy of its folder (pytester)."""
import re

from kit import assert_done, assert_stubs_all_todo, kata_row, learner_source, row_line, write_learner_file

KATA = "08_devices"

# A correct solution written differently from reference/devices.py: a regular expression for
# parsing, a tuple key for equality and hashing, the module looked up in a dict, and the
# device check done with a set.
ALTERNATIVE = '''
import re

import numpy as np

from plugin import engine as ag

_PATTERN = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<index>.*))?$")


class Device:
    def __init__(self, spec, index=None):
        if isinstance(spec, Device):
            self.type, self.index = spec.type, spec.index
            return
        match = _PATTERN.match(spec)
        kind = match.group("kind") if match else spec
        if kind not in ("cpu", "cuda"):
            raise RuntimeError("Expected one of cpu, cuda device type at start of device string: " + spec)
        number = match.group("index")
        if number is not None:
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: '{spec}'")
            index = int(number)
        self.type, self.index = kind, index

    def _key(self):
        return (self.type, self.index)

    def __eq__(self, other):
        other = Device(other) if isinstance(other, str) else other
        return isinstance(other, Device) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return self.type + ("" if self.index is None else f":{self.index}")

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"


def array_module(device):
    return {"cpu": np}.get(device.type) or ag.cuda.module(device.index or 0)


def transfer(array, src, dst):
    if src == dst:
        return array
    return array_module(src).asnumpy(array) if dst.type == "cpu" else array_module(dst).asarray(array)


def check_same_device(op, *tensors):
    devices = [t.device for t in tensors if t is not None]
    if len(set(devices)) > 1:
        other = next(d for d in devices if d != devices[0])
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {devices[0]} and {other}!")


def to_backward(ctx, grad):
    return (grad.to(ctx.source_device),)
'''


def test_the_stubs_are_all_todo(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("--kata", "8"), KATA)
    assert outcomes.get("todo", 0) >= 25, outcomes


def test_the_reference_solution_is_done(checkout):
    assert_done(checkout.runpytest("--kata", "8", "--solution", "reference", "-p", "no:randomly"), KATA)


def test_a_correct_solution_written_differently_is_done(checkout):
    write_learner_file(checkout, KATA, "devices.py", ALTERNATIVE)
    result = checkout.runpytest("--kata", "8")
    assert result.ret == 0, result.stdout.str()
    assert kata_row(result, KATA)[1] == "done"
    assert "compare with the reference solution in reference/devices.py" in result.stdout.str()
    # the speed column carries the transfer count, equal to the reference's
    assert re.search(r"(\d+) transfers, ([\d,]+) bytes \(reference: \1, \2\)", row_line(result, KATA)), row_line(result, KATA)


def test_typical_slips_are_told_so(checkout):
    """Three classic slips in one file: an equality that ignores the index, a move between GPUs that
    goes through the host (two copies for one), and a backward of .to() that leaves the
    gradient where it arrived."""
    source = learner_source("devices")
    wrong = (
        source.replace("(self.type, self.index) == (other.type, other.index)", "self.type == other.type")
        .replace("    if dst.type == \"cpu\":\n        return array_module(src).asnumpy(array)\n",
                 "    if src.type == \"cuda\":\n        array = array_module(src).asnumpy(array)\n"
                 "        if dst.type == \"cpu\":\n            return array\n")
        .replace("return (grad.to(ctx.source_device),)", "return (grad,)")
    )
    assert "self.type == other.type" in wrong and "return (grad,)" in wrong and "array = array_module(src)" in wrong
    write_learner_file(checkout, KATA, "devices.py", wrong)
    result = checkout.runpytest("--kata", "8", "-v", "-p", "no:randomly")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, KATA)[1] == "in progress"
    assert "test_equality_and_hash_follow_torch FAILED" in out
    assert "Device('cuda') == Device('cuda:0') should be False" in out
    assert "test_transfers_copy_and_are_counted FAILED" in out
    assert "one copy each way expected" in out
    assert "test_the_gradient_of_a_move_goes_back_where_it_came_from[sim] FAILED" in out
    assert "must go back to the device it came from" in out
    assert "test_training_makes_exactly_the_reference_transfers FAILED" in out
    assert "test_mixing_devices_fails_with_torchs_words[add] PASSED" in out


def test_a_detour_through_the_host_shows_in_the_transfer_count(checkout):
    """Only the GPU-to-GPU detour: every answer is right, but the count column shows the
    extra copies and the count test fails."""
    source = learner_source("devices")
    wrong = source.replace("    if dst.type == \"cpu\":\n        return array_module(src).asnumpy(array)\n",
                           "    if src.type == \"cuda\":\n        array = array_module(src).asnumpy(array)\n"
                           "        if dst.type == \"cpu\":\n            return array\n")
    assert wrong != source
    write_learner_file(checkout, KATA, "devices.py", wrong)
    result = checkout.runpytest("--kata", "8", "-k", "transfers", "-p", "no:randomly")
    assert result.ret == 1
    counts = re.search(r"(\d+) transfers, [\d,]+ bytes \(reference: (\d+),", row_line(result, KATA))
    assert counts and int(counts[1]) > int(counts[2]), row_line(result, KATA)
