"""One kata's feedback within five seconds (issue 15, section 4): what keeps a run short,
checked as behaviour, never as a time (the figures are benchmarks/feedback.py's).

Each check runs pytest in a subprocess with a probe plugin beside the kit's: in-process, the
modules and the collector's state would be the outer run's."""
import json

from kit import write_learner_file
from mutation import mutate
from test_mutants_01 import FILE, MUTANTS, SOURCE

KATA = "01_elementwise_rules"

PROBE = '''
import gc
import json
import sys

import pytest

seen = {"freeze_counts": [], "items_seen_by_hypothesis": []}


def pytest_configure(config):
    import hypothesis.core as core

    original = core.format_exception

    def format_exception(err, tb):
        from hypothesis.internal.escalation import current_pytest_item

        seen["items_seen_by_hypothesis"].append(current_pytest_item.value is not None)
        return original(err, tb)

    core.format_exception = format_exception


def pytest_runtest_setup(item):
    seen["freeze_counts"].append(gc.get_freeze_count())


def pytest_unconfigure(config):
    loader = type(getattr(sys.modules.get("hypothesis.core"), "__loader__", None)).__name__
    seen["hypothesis_loader"] = loader
    with open("probe.json", "w") as f:
        json.dump(seen, f)
'''


def probed_run(checkout, *args):
    checkout.makepyfile(probe=PROBE)
    result = checkout.runpytest_subprocess("-p", "probe", "-p", "no:randomly", *args)
    return result, json.loads((checkout.path / "probe.json").read_text())


def test_hypothesis_asserts_are_not_rewritten(checkout):
    # pytest would rewrite (parse and compile) all of hypothesis's modules at every run
    # where no bytecode is written; the kata test files stay rewritten.
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_add")
    assert seen["hypothesis_loader"] != "AssertionRewritingHook", seen
    assert seen["hypothesis_loader"] != "NoneType", seen  # the probe saw hypothesis


def test_what_was_collected_is_frozen_out_of_the_collectors_sight(checkout):
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_add or test_sub")
    assert seen["freeze_counts"] and all(count > 10_000 for count in seen["freeze_counts"]), seen


def test_a_failing_case_is_not_formatted_by_pytest_while_shrinking(checkout):
    mutant = next(m for m in MUTANTS if m.name == "forgets the chain rule in mul")
    write_learner_file(checkout, KATA, FILE, mutate(SOURCE, mutant))
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_mul")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*a * b*", "*Falsifying example*"])  # the shrunk case, shown
    # hypothesis kept a traceback of each failing case it tried, none through pytest's item
    assert seen["items_seen_by_hypothesis"] and not any(seen["items_seen_by_hypothesis"]), seen
