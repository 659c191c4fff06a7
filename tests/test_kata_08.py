"""Kata 08 (devices) through the grading plugin, on a copy of its folder (pytester)."""
import re

import pytest

from kit import (assert_done, assert_stubs_all_todo, kata_row, learner_source, make_checkout, row_line,
                 write_learner_file)

KATA = "08_devices"

# A correct solution written differently from reference/solutions/devices.py: a regular expression for
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
        number = match.group("index") if match else None
        if number is not None and re.fullmatch(r"0|[1-9][0-9]*", number) is None:
            raise RuntimeError(f"Invalid device string: '{spec}'")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError("Expected one of cpu, cuda device type at start of device string: " + kind)
        if number is not None:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was passed explicitly: " + spec)
            index = int(number)
        if isinstance(index, bool) or not isinstance(index, (int, type(None))):
            raise TypeError("device(): argument 'index' (position 2) must be int, not " + type(index).__name__)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = kind, index

    def _key(self):
        return (self.type, self.index)

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = Device(other)
            except RuntimeError:
                return NotImplemented
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
    assert "compare with the reference solution in reference/solutions/devices.py" in result.stdout.str()
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


# --- issue 13 section 3: the engine works with any correct Device, and with one GPU ----------------

CORRECT_DEVICES = {"reference": lambda: learner_source("devices"), "alternative": lambda: ALTERNATIVE}


@pytest.mark.parametrize("variant", sorted(CORRECT_DEVICES))
def test_a_correct_device_class_moves_tensors_through_the_engine(checkout, variant):
    """The engine parses with the learner's Device but never compares it with its own: an
    `__eq__` that knows only its own class (isinstance) is correct, and .to(), .cpu() and
    .cuda() onto a tensor's own device must give the tensor back (they used to copy, and
    .cpu() of a CPU tensor crashed in numpy)."""
    write_learner_file(checkout, KATA, "devices.py", CORRECT_DEVICES[variant]())
    result = checkout.runpytest("--kata", "8", "-p", "no:randomly", "-v")
    assert_done(result, KATA)
    assert "test_a_move_to_where_a_tensor_lives_is_no_move PASSED" in result.stdout.str()


@pytest.mark.parametrize("variant", sorted(CORRECT_DEVICES))
def test_the_capstone_runs_on_a_correct_device_class(pytester, variant):
    """Every kata's reference planted as the learner's, kata 08 as `variant`, and a capstone
    that reads its loss with `.detach().cpu().item()`: the capstone is done."""
    from test_kata_10 import capstone_reference, plant_every_kata

    make_checkout(pytester)
    plant_every_kata(pytester)
    write_learner_file(pytester, KATA, "devices.py", CORRECT_DEVICES[variant]())
    capstone = capstone_reference()
    assert capstone.count("losses.append(loss.item())") == 1
    write_learner_file(pytester, "10_capstone", "capstone.py",
                       capstone.replace("losses.append(loss.item())", "losses.append(loss.detach().cpu().item())"))
    assert_done(pytester.runpytest("--kata", "10", "-p", "no:randomly"), "10_capstone")


def test_on_one_gpu_the_two_gpu_tests_skip_and_say_why(checkout, monkeypatch):
    """A one-GPU machine (CuPy): the simulated backend made to keep one device, so cuda:1 is
    an invalid device ordinal, as there. The tests about two GPUs skip with their reason; the
    rest grade, and the reference is done."""
    from reference import cuda, cuda_sim

    monkeypatch.setattr(cuda_sim, "modules", cuda_sim.modules[:1])
    monkeypatch.setattr(cuda._State, "modules", cuda_sim.modules)
    result = checkout.runpytest("--kata", "8", "--solution", "reference", "-p", "no:randomly", "-rs")
    out = result.stdout.str()
    assert_done(result, KATA)
    skipped = result.parseoutcomes().get("skipped", 0)
    assert skipped >= 12, out  # 6 ops mixing two GPUs, 5 other tests, the transfer count
    assert "needs two CUDA devices (cuda:0 and cuda:1); the sim backend has 1" in out
    assert "invalid device ordinal" not in out
