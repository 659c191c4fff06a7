"""A learner's piece that loops forever never hangs the run (issue 13, section 1).

Each run is a subprocess (the time limit is a signal, and a hang must stay a failure of
this test, not of the kit's whole suite), with a small --kata-timeout and a generous limit
on the subprocess itself, so that a busy machine is slow but never wrong.
"""
import contextlib
import json
import re
import time

import pytest

from kit import kata_row, learner_source, make_checkout, reference_source, write_learner_file

LIMIT = 2  # --kata-timeout of the runs below, in seconds
RUN_LIMIT = 400  # the subprocess's own limit: only reached when the run hangs

# A realistic bug: a depth-first toposort that never pops its stack.
ENDLESS_TOPOSORT = '''
def topological_order(roots):
    order, seen = [], set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack[-1]
        if node not in seen:
            seen.add(node)
            order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                stack.append(child)
    return order
'''

LOOP_AT_IMPORT = '''
CACHE = []
while len(CACHE) < 10:
    pass


def topological_order(roots):
    return []
'''


def endless_exp_rules():
    """The reference's rules (right) with an exp_backward that never returns."""
    source = reference_source("rules")
    right = "    (out,) = ctx.saved_tensors\n    return (grad * out,)\n"
    assert right in source
    return source.replace(right, "    (out,) = ctx.saved_tensors\n    while out is not None:\n        grad = grad * 1\n")


def runaway_checkout(pytester):
    make_checkout(pytester, katas=["01_elementwise_rules", "03_toposort", "04_accumulation"])
    write_learner_file(pytester, "01_elementwise_rules", "rules.py", endless_exp_rules())
    write_learner_file(pytester, "03_toposort", "toposort.py", ENDLESS_TOPOSORT)


def failed_ids(result):
    # (-rf asks for pytest's short summary, which a kata run otherwise leaves to the table)
    return [line.split()[1] for line in result.outlines if line.startswith("FAILED ")]


def slow_tests(result, seconds):
    """Node ids of the tests whose call took at least `seconds` (from --durations)."""
    found = []
    for line in result.outlines:
        match = re.match(r"^(\d+\.\d+)s (?:setup|call|teardown)\s+(\S+)", line)
        if match and float(match.group(1)) >= seconds:
            found.append(match.group(2))
    return found


def check_runaway_run(pytester, result):
    out = result.stdout.str()
    assert result.ret == 1, out
    # The kata 01 tests that reach exp_backward fail, hypothesis's included; the other
    # rules are still graded, and so is kata 04 (its stubs are to-dos).
    failed = failed_ids(result)
    assert "katas/01_elementwise_rules/test_rules.py::test_unary[exp]" in failed, out
    tests, status = kata_row(result, "01_elementwise_rules")
    assert status == "in progress" and int(tests.split("/")[0]) > 20, tests
    assert re.search(r"timed out after 2 s in exp_backward \(katas/01_elementwise_rules/rules.py, line \d+\): "
                     r"does it loop forever\?", out), out
    # Every kata 03 test fails with the sentence that names the piece.
    tests, status = kata_row(result, "03_toposort")
    assert re.fullmatch(r"0/\d+", tests) and status == "in progress", (tests, status)
    graded = int(tests.split("/")[1])
    assert len([f for f in failed if "03_toposort" in f]) == graded, failed
    assert re.search(r"timed out after 2 s in topological_order \(katas/03_toposort/toposort.py, line \d+\)", out)
    assert "(later calls to topological_order in this run fail at once)" in out
    tests, status = kata_row(result, "04_accumulation")
    assert tests != "not run" and status == "not started"
    report = json.loads((pytester.path / "r.json").read_text())
    statuses = {k["kata"]: k["status"] for k in report["katas"]}
    assert statuses["03_toposort"] == "in progress" and statuses["04_accumulation"] == "not started"
    assert "Report written to" in out
    # The breaker's record of a piece that ran away is the grader's own state, not a setting
    # that learner code changed: the run is not flagged.
    assert report["flags"] == [] and "This run is flagged" not in out, report["flags"]


def test_an_endless_loop_under_hypothesis_fails_its_tests_and_the_run_goes_on(pytester):
    runaway_checkout(pytester)
    result = pytester.runpytest_subprocess(
        "--kata-timeout", str(LIMIT), "--kata-report", "r.json", "-p", "no:randomly", "-rf",
        "--durations=0", f"--durations-min={0.9 * LIMIT}", timeout=RUN_LIMIT,
    )
    check_runaway_run(pytester, result)
    # The breaker: only the first call into the runaway piece waits for the time limit
    # (a few more tests may be slow on a busy machine, doing their own work).
    slow = slow_tests(result, 0.9 * LIMIT)
    assert len([t for t in slow if "03_toposort" in t]) <= 3, slow


def test_an_endless_loop_under_xdist_fails_its_tests_and_the_run_goes_on(pytester):
    runaway_checkout(pytester)
    result = pytester.runpytest_subprocess(
        "-n", "2", "--kata-keep-workers", "--kata-timeout", str(LIMIT), "--kata-report", "r.json", "-p", "no:randomly",
        "-rf", timeout=RUN_LIMIT,
    )
    check_runaway_run(pytester, result)


def test_an_endless_loop_at_import_costs_one_time_limit_for_the_kata(pytester):
    make_checkout(pytester, katas=["03_toposort"])
    write_learner_file(pytester, "03_toposort", "toposort.py", LOOP_AT_IMPORT)
    result = pytester.runpytest_subprocess(
        "--kata-timeout", "1", "-p", "no:randomly", "--durations=0", "--durations-min=0.9",
        timeout=RUN_LIMIT,
    )
    out = result.stdout.str()
    assert result.ret == 1, out
    assert kata_row(result, "03_toposort")[1] == "in progress"
    assert re.search(r"katas/03_toposort/toposort.py could not be imported: timed out after 1 s "
                     r"at line [34] of the file's top-level code", out), out
    # The first test waits for the time limit; the other ten fail at once.
    assert len(slow_tests(result, 0.9)) <= 3, out


def test_a_method_of_a_learner_class_that_loops_forever_waits_once(pytester):
    # Kata 07's piece is a class: its methods get the breaker too.
    make_checkout(pytester, katas=["07_retain_graph"])
    right = "    def unpack(self):\n"
    source = learner_source("saved")
    assert right in source
    write_learner_file(pytester, "07_retain_graph", "saved.py", source.replace(
        right, right + "        while self is not None:\n            pass\n"))
    result = pytester.runpytest_subprocess(
        "--kata-timeout", str(LIMIT), "-p", "no:randomly", "-rf", "--durations=0", f"--durations-min={0.9 * LIMIT}",
        timeout=RUN_LIMIT,
    )
    out = result.stdout.str()
    failed = failed_ids(result)
    assert len(failed) > 15, out
    assert kata_row(result, "07_retain_graph")[1] == "in progress"
    assert re.search(r"timed out after 2 s in unpack \(katas/07_retain_graph/saved.py, line \d+\): "
                     r"does it loop forever\? \(later calls to SavedTensors.unpack in this run fail at once\)", out), out
    assert len([t for t in slow_tests(result, 0.9 * LIMIT) if t in failed]) <= 3, out


BUSY = '''
import time


def busy(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
'''


def test_the_kits_own_work_in_a_test_is_not_counted_against_its_limit(tmp_path):
    """A speed or growth check builds a fresh graph for every timed call (`not_counted`): on
    a busy machine that took most of a test's limit, and a linear piece timed out after it."""
    from plugin.guards import time_limit

    learner = tmp_path / "piece.py"
    learner.write_text(BUSY)
    namespace = {}
    exec(compile(BUSY, str(learner), "exec"), namespace)  # noqa: S102 (a learner file's function)
    busy = namespace["busy"]

    def timed(kits_work, counted):
        timer = time_limit._Timer(None, 1.0, {learner.resolve()})
        timer.start()
        try:
            with (contextlib.nullcontext() if counted else time_limit.not_counted()):
                time.sleep(kits_work)  # past the limit, within twice it (not the learner's code)
            busy(0.5)  # then the learner's piece runs for half the limit
        finally:
            timer.stop()

    try:
        timed(1.5, counted=False)
    except time_limit.RanAway as exc:  # a skip-type outcome: made this test's failure
        pytest.fail(f"the kit's own work was counted: {exc}")
    with pytest.raises(time_limit.RanAway, match="timed out after 1 s in busy"):
        timed(1.5, counted=True)
