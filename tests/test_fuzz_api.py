"""The differential fuzzer (tests/fuzz_api.py): random programs against the public API, on
torch and on the reference, must show a user the same things.

CI runs a fixed set of programs (derandomized, so a run is repeatable). The long mode searches
afresh until its time is up:

    AUTOGRAD_KATAS_FUZZ=long AUTOGRAD_KATAS_FUZZ_MINUTES=30 python -m pytest tests/test_fuzz_api.py -k long -s

A failure prints the program, shrunk, as code to paste (`import reference as lib`).
"""
import os
import time

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import reference
import torch
from fuzz_api import Builder, Engine, Program, differences

LONG = os.environ.get("AUTOGRAD_KATAS_FUZZ") == "long"
MAX_STEPS = 12
CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
ran = {"programs": 0}


def run_program(data):
    """Draw and run one program step by step; fail at the first step where the engines differ."""
    ran["programs"] += 1
    program = Program()
    theirs, mine = Engine(torch, symbolic_devices=True), Engine(reference, symbolic_devices=False)
    builder = Builder(theirs)
    for _ in range(data.draw(st.integers(1, MAX_STEPS), label="steps")):
        step = data.draw(builder.steps())
        program.append(step)
        their_run, my_run = theirs.run(step), mine.run(step)
        found = differences(their_run, my_run) + differences(theirs.observe(), mine.observe())
        if found:
            raise AssertionError(
                "torch and the reference differ after the last step of this program:\n\n"
                + str(program) + "\n\n" + "\n".join(found[:12]))


@settings(max_examples=300, derandomize=True, deadline=None, database=None, suppress_health_check=CHECKS)
@given(st.data())
def test_random_programs_show_the_same_as_torch(data):
    run_program(data)


@pytest.mark.skipif(not LONG, reason="the long search: set AUTOGRAD_KATAS_FUZZ=long")
def test_long_search():
    minutes = float(os.environ.get("AUTOGRAD_KATAS_FUZZ_MINUTES", "30"))
    start, batch = time.monotonic(), 0
    ran["programs"] = 0
    while time.monotonic() - start < minutes * 60:
        batch += 1
        settings(max_examples=500, deadline=None, database=None, suppress_health_check=CHECKS)(
            seed(int(time.time() * 1000) % 2**32 + batch)(given(st.data())(run_program)))()
    print(f"\nlong search: {ran['programs']} programs in {time.monotonic() - start:.0f} s, {batch} batches")
