"""One kata's feedback within five seconds (issue 15, section 4): what keeps a run short,
checked as behaviour, never as a time (the figures are benchmarks/feedback.py's).

Each check runs pytest in a subprocess with a probe plugin beside the kit's: in-process, the
modules and the collector's state would be the outer run's."""
import json
import re

from kit import learner_source, make_checkout, write_learner_file
from mutation import mutate
from test_mutants_01 import FILE, MUTANTS, SOURCE

KATA = "01_elementwise_rules"

PROBE = '''
import gc
import json
import sys

import pytest

seen = {"freeze_counts": [], "items_seen_by_hypothesis": [], "failures": [], "tracebacks_built": 0,
        "kata_folders_looked_up_in_tests": 0}
testing = []


def _count_tracebacks():  # pytest's own traceback of a failing test (its source parsing)
    from _pytest.python import Function

    original = Function._repr_failure_py

    def _repr_failure_py(self, *args, **kwargs):
        seen["tracebacks_built"] += 1
        return original(self, *args, **kwargs)

    Function._repr_failure_py = _repr_failure_py


_count_tracebacks()


def _count_kata_lookups():  # a kata folder looked for on disk, while the tests run
    from plugin.manifest import Kata

    original = Kata.present

    def present(self):
        seen["kata_folders_looked_up_in_tests"] += bool(testing)
        return original(self)

    Kata.present = present


_count_kata_lookups()


def _watch_hypothesis():  # (in a process that runs tests: the probe imports nothing else)
    import hypothesis.core as core

    if hasattr(core.format_exception, "probed"):
        return
    original = core.format_exception

    def format_exception(err, tb):
        from hypothesis.internal.escalation import current_pytest_item

        seen["items_seen_by_hypothesis"].append(current_pytest_item.value is not None)
        return original(err, tb)

    format_exception.probed = True
    core.format_exception = format_exception


def _imported():
    return sorted(name for name in ("torch", "hypothesis") if name in sys.modules)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    seen["imported_at_start"] = _imported()


def pytest_runtest_setup(item):
    testing[:] = [True]
    _watch_hypothesis()
    seen["freeze_counts"].append(gc.get_freeze_count())


def pytest_runtest_logreport(report):
    if report.failed and report.when == "call":
        chain = getattr(report.longrepr, "chain", None)
        entries = (chain[0][0] if chain else report.longrepr.reprtraceback).reprentries
        seen["failures"].append([report.nodeid, type(entries[0]).__name__,
                                 report.longrepr.reprcrash.message.splitlines()[0]])


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    testing.clear()


def pytest_unconfigure(config):
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller reports the rest
        with open(f"probe-{config.workerinput['workerid']}.json", "w") as f:
            json.dump({"imported": _imported()}, f)
        return
    loader = type(getattr(sys.modules.get("hypothesis.core"), "__loader__", None)).__name__
    seen["hypothesis_loader"] = loader
    seen["imported"] = _imported()
    with open("probe.json", "w") as f:
        json.dump(seen, f)
'''


def probed_run(checkout, *args):
    checkout.makepyfile(probe=PROBE)
    result = checkout.runpytest_subprocess("-p", "probe", "-p", "no:randomly", *args)
    return result, json.loads((checkout.path / "probe.json").read_text())


def test_a_kata_test_does_not_look_for_the_learner_files_again(checkout):
    # Each kata test needs the learner files' paths (its pieces, its timer, a stub's
    # NotImplementedError): found once per run, not ten folders looked up for each test.
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_add or test_sub or test_mul")
    assert result.parseoutcomes()["todo"] == 3, result.outlines[-3:]
    assert seen["kata_folders_looked_up_in_tests"] <= 10, seen  # (the kata's first result: find_kata)


def test_hypothesis_asserts_are_not_rewritten(checkout):
    # pytest would rewrite (parse and compile) all of hypothesis's modules at every run
    # where no bytecode is written; the kata test files stay rewritten.
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_add")
    assert seen["hypothesis_loader"] != "AssertionRewritingHook", seen
    assert seen["hypothesis_loader"] != "NoneType", seen  # the probe saw hypothesis


def test_what_was_collected_is_frozen_out_of_the_collectors_sight(checkout):
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_add or test_sub")
    assert seen["freeze_counts"] and all(count > 10_000 for count in seen["freeze_counts"]), seen


def test_torch_imported_by_a_test_is_frozen_out_of_the_collectors_sight_too(checkout):
    # torch comes with the first test that reaches torch's side, after the freeze at
    # collection: its 150,000 objects are frozen after that test, or every full collection
    # (between tests, at exit) would walk them again.
    write_learner_file(checkout, KATA, FILE, SOURCE)  # kata 01 done
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_add or test_sub")
    result.assert_outcomes(passed=2)
    first, second = seen["freeze_counts"]
    assert second - first > 100_000, seen["freeze_counts"]


def test_a_failing_case_is_not_formatted_by_pytest_while_shrinking(checkout):
    mutant = next(m for m in MUTANTS if m.name == "forgets the chain rule in mul")
    write_learner_file(checkout, KATA, FILE, mutate(SOURCE, mutant))
    result, seen = probed_run(checkout, "--kata", "1", "-k", "test_mul")
    result.assert_outcomes(failed=1)
    # the shrunk case, shown once: the kit's "inputs of this call" (hypothesis's own note of it,
    # "Falsifying example" or "Failing test case", would say it again, with the oracle's address)
    result.stdout.re_match_lines([r".*a \* b", r".*inputs of this call: a="])
    assert not re.search(r"Falsifying example|Failing test case", result.stdout.str())
    # hypothesis kept a traceback of each failing case it tried, none through pytest's item
    assert seen["items_seen_by_hypothesis"] and not any(seen["items_seen_by_hypothesis"]), seen


def test_only_the_failure_shown_in_full_gets_pytests_long_traceback(checkout):
    # A mistake in mul fails several tests; all but the first (in file order) are shown in
    # one line, so pytest's long traceback (its source parsing) is built for that one only.
    mutant = next(m for m in MUTANTS if m.name == "forgets the chain rule in mul")
    write_learner_file(checkout, KATA, FILE, mutate(SOURCE, mutant))
    result, seen = probed_run(checkout, "--kata", "1", "-k", "not speed")
    failures = seen["failures"]
    assert len(failures) >= 3, failures
    assert failures[0][1] == "ReprEntry", failures  # the first, in full
    assert {kind for _, kind, _ in failures[1:]} == {"ReprEntryNative"}, failures
    result.stdout.fnmatch_lines(["*test_mul*", "*def test_mul*"])
    # the others: one line each in the table, once (no section of their own, no short summary)
    also = [line for line in result.outlines if line.strip().startswith(("also: ", "also ("))]  # "also (N tests): "
    assert len(also) == min(len(failures) - 1, 8), result.stdout.str()
    assert "short test summary info" not in result.stdout.str()

    verbose, seen_verbose = probed_run(checkout, "--kata", "1", "-k", "not speed", "-v")
    assert {kind for _, kind, _ in seen_verbose["failures"]} == {"ReprEntry"}, seen_verbose
    # the same failures, with the same crash lines (the one lines and the report's messages)
    assert [[n, m] for n, _, m in seen_verbose["failures"]] == [[n, m] for n, _, m in failures]


def test_the_xdist_controller_imports_neither_torch_nor_hypothesis(checkout):
    # It runs no test, and starts its workers once configured: each of them imports both
    # (a second or so each), the controller need not before them.
    result, seen = probed_run(checkout, "-n", "2", "--kata-keep-workers", "--kata", "1",
                              "-k", "test_add or test_sub",
                              "--kata-report", "report.json")
    result.stdout.fnmatch_lines(["*2 workers*", "*2 todo in*"])  # the workers ran both
    assert seen["imported_at_start"] == [], seen  # the workers start without waiting for them
    # (hypothesis's own plugin imports hypothesis for its summary, after the tests)
    assert "torch" not in seen["imported"], seen
    environment = json.loads((checkout.path / "report.json").read_text())["environment"]
    assert environment["torch"], environment  # the report still names torch's version


def test_a_to_do_gets_no_traceback(checkout):
    # Kata 07's stub is a class whose methods raise NotImplementedError themselves (not the
    # guard's StubReached, which pytest reports as a skip): pytest would build each to-do's
    # long traceback, parsing the source of every frame, for the report to replace it.
    make_checkout(checkout, katas=["07_retain_graph"])
    result, seen = probed_run(checkout, "--kata", "7")
    assert result.parseoutcomes()["todo"] >= 20, result.outlines[-3:]
    assert seen["tracebacks_built"] == 0, seen


def test_a_fresh_clone_is_graded_without_importing_torch(pytester):
    # Every test of a fresh clone stops at a learner's stub, and torch's side of a test comes
    # after the learner's (the oracle runs the engine first; no kata test file imports torch
    # before its test has run the learner's code): a second of start-up saved, per process.
    make_checkout(pytester)
    for workers in (), ("-n", "2", "--kata-keep-workers"):
        result, seen = probed_run(pytester, *workers)
        assert result.ret == 0 and result.parseoutcomes()["todo"] >= 500, result.outlines[-3:]
        assert "torch" not in seen["imported"], seen
        for worker in ("gw0", "gw1") if workers else ():
            imported = json.loads((pytester.path / f"probe-{worker}.json").read_text())["imported"]
            assert imported == ["hypothesis"], (worker, imported)


def test_a_run_with_fewer_than_two_katas_started_goes_serial(pytester):
    # Under -n 2 a kata's tests share one worker: with fewer than two katas started there is
    # nothing to share out, and the workers would only add their start-up (plugin/grading/parallel.py).
    make_checkout(pytester, katas=["01_elementwise_rules", "03_toposort", "04_accumulation"])
    serial = "*autograd-katas: one process, not -n 2: {} started yet*"
    fresh = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly")
    fresh.stdout.fnmatch_lines([serial.format("no kata")])
    fresh.stdout.no_fnmatch_line("*2 workers*")
    assert fresh.ret == 0 and fresh.parseoutcomes()["todo"] >= 50, fresh.outlines[-3:]
    kept = pytester.runpytest_subprocess("-n", "2", "--kata-keep-workers", "-p", "no:randomly")
    kept.stdout.fnmatch_lines(["*2 workers*"])
    kept.stdout.no_fnmatch_line("*one process*")
    # tests that are not katas (the kit's own, say) keep their workers
    (pytester.path / "elsewhere").mkdir()
    (pytester.path / "elsewhere" / "test_other.py").write_text("def test_one():\n    pass\n")
    other = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "elsewhere")
    other.stdout.fnmatch_lines(["*2 workers*", "*1 passed*"])
    other.stdout.no_fnmatch_line("*one process*")

    write_learner_file(pytester, "03_toposort", "toposort.py", learner_source("toposort"))
    one = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "-k", "not speed")
    one.stdout.fnmatch_lines([serial.format("one kata")])
    one.stdout.no_fnmatch_line("*2 workers*")

    write_learner_file(pytester, "04_accumulation", "accumulate.py", "# started: nothing yet\n")
    two = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "-k", "not speed")
    two.stdout.fnmatch_lines(["*2 workers*"])
    two.stdout.no_fnmatch_line("*one process*")
