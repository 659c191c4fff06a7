"""The grading plugin, run by pytester on a copy of the katas (a learner's clone)."""
import re

import pytest

from kit import RECURSIVE_TOPOSORT as RECURSIVE, pointed_message, reference_source, table_rows, write_learner_file

KAHN = '''
from collections import deque


def topological_order(roots):
    """Kahn's algorithm: a node is ready once every node that feeds it has been listed."""
    roots = [r for r in dict.fromkeys(roots) if r is not None]
    feeders, seen, stack = {}, set(roots), list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            feeders[child] = feeders.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    ready = deque(r for r in roots if feeders.get(r, 0) == 0)
    order = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                feeders[child] -= 1
                if feeders[child] == 0:
                    ready.append(child)
    return order
'''


QUADRATIC = '''
def topological_order(roots):
    visited, post_order = [], []  # a list used as a set: `in` scans it
    for root in roots:
        if root is None or root in visited:
            continue
        visited.append(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, edges = stack[-1]
            for child, _ in edges:
                if child is not None and child not in visited:
                    visited.append(child)
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                post_order.append(node)
    return post_order[::-1]
'''

def rows(result):
    return {slug: (tests, status) for slug, tests, status in table_rows(result.outlines)}


def test_a_fresh_clone_reports_every_kata_not_started(checkout):
    result = checkout.runpytest()
    assert result.ret == 0
    outcomes = result.parseoutcomes()
    assert outcomes.get("todo", 0) > 0
    assert "failed" not in outcomes and "passed" not in outcomes
    table = rows(result)
    assert table and all(status == "not started" for _, status in table.values())
    assert f"Progress: 0 of {len(table)} katas done" in result.stdout.str()
    assert "Next: kata 01_elementwise_rules" in result.stdout.str()
    assert "Traceback" not in result.stdout.str() and "FAILED" not in result.stdout.str()


def test_the_reference_solution_passes_every_kata(checkout):
    result = checkout.runpytest("--solution", "reference", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    table = rows(result)
    assert all(status == "done" for _, status in table.values()), table
    assert f"On the model solutions (--solution reference): {len(table)} of {len(table)} katas done" in result.stdout.str()


def test_kata_option_runs_only_that_kata(checkout):
    result = checkout.runpytest("--kata", "3")
    table = rows(result)
    assert table["03_toposort"][0] != "not run"
    assert table["01_elementwise_rules"][0] == "not run"
    ran = [line for line in result.outlines if line.startswith("katas/")]
    assert ran and all(line.startswith("katas/03_toposort/") for line in ran), ran


def test_kata_option_accepts_names_and_rejects_unknown_ones(checkout):
    by_name = rows(checkout.runpytest("--kata", "toposort"))
    assert by_name["03_toposort"][0] != "not run"
    result = checkout.runpytest("--kata", "99")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no such kata" in result.stderr.str()


def test_kata_next_picks_the_first_unfinished_kata(checkout):
    write_learner_file(checkout, "01_elementwise_rules", "rules.py", reference_source("rules"))
    assert rows(checkout.runpytest())["01_elementwise_rules"][1] == "done"
    ordered = table_rows(checkout.runpytest("--kata", "next").outlines)
    ran = [slug for slug, tests, _ in ordered if tests != "not run"]
    assert ran == [ordered[1][0]]  # the kata after 01, the first one not done
    assert ordered[0] == ("01_elementwise_rules", "not run", "done")  # remembered from the last run


def test_a_correct_solution_written_differently_turns_the_kata_done(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", KAHN)
    result = checkout.runpytest()
    table = rows(result)
    assert table["03_toposort"][1] == "done", result.stdout.str()
    assert table["01_elementwise_rules"][1] == "not started"
    assert "compare with the reference solution in reference/solutions/toposort.py" in result.stdout.str()
    assert "x reference" in result.stdout.str()  # the speed column has a ratio
    assert result.ret == 0


def test_a_recursive_solution_fails_the_deep_chain_with_a_reason(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", RECURSIVE)
    result = checkout.runpytest("--kata", "3")
    assert result.ret == 1
    assert rows(result)["03_toposort"][1] == "in progress"
    assert "Fix: use an explicit stack or queue instead of recursion" in result.stdout.str()  # in full
    line = next(l for l in result.outlines if "first failure" in l).split(": ", 1)[1]
    assert pointed_message(result, line).startswith("recursed too deep (RecursionError): use an explicit stack")


def test_a_quadratic_solution_is_flagged_slow(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", QUADRATIC)
    result = checkout.runpytest("--kata", "3", "--kata-timeout", "30")
    assert "looks quadratic" in result.stdout.str()
    assert rows(result)["03_toposort"][1] == "in progress"


def test_a_wrong_rule_shows_the_divergent_node(checkout):
    wrong = reference_source("rules").replace(
        "grad_b = grad * a if ctx.needs_input_grad[1] else None",
        "grad_b = grad * b if ctx.needs_input_grad[1] else None",
    )
    write_learner_file(checkout, "01_elementwise_rules", "rules.py", wrong)
    result = checkout.runpytest("--kata", "1", "-k", "test_mul")
    out = result.stdout.str()
    assert result.ret == 1
    assert "the gradient of `b` differs from torch's" in out
    assert "MulBackward0 received the right gradient but returned a wrong one for its input 1" in out
    assert "MulBackward0   <== here" in out


def test_a_real_error_in_learner_code_stays_a_failure(checkout):
    write_learner_file(checkout, "01_elementwise_rules", "rules.py", reference_source("rules").replace(
        "def neg_backward(ctx, grad):\n", "def neg_backward(ctx, grad):\n    return (grad.nope,)\n"))
    result = checkout.runpytest("--kata", "1", "-k", "neg")
    assert result.ret == 1
    assert "AttributeError" in result.stdout.str()


def test_a_learner_file_that_does_not_import_fails_only_its_kata(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", "def topological_order(roots)\n    return []\n")
    result = checkout.runpytest()
    table = rows(result)
    assert table["03_toposort"][1] == "in progress"
    assert "could not be imported (line 1): SyntaxError" in result.stdout.str()
    assert table["01_elementwise_rules"][1] == "not started"


def test_a_rule_returning_numpy_gets_a_clear_sentence(checkout):
    write_learner_file(checkout, "01_elementwise_rules", "rules.py", reference_source("rules").replace(
        "    return (-grad,)", "    return (-grad.numpy(),)"))
    result = checkout.runpytest("--kata", "1", "-k", "unary and neg")
    assert "neg_backward returned a numpy." in result.stdout.str()
    assert "gradients must be Tensors" in result.stdout.str()


def test_later_failures_of_a_kata_are_one_line_unless_verbose(checkout):
    wrong = reference_source("rules").replace("return grad, grad\n", "return grad, grad * 2\n")
    write_learner_file(checkout, "01_elementwise_rules", "rules.py", wrong)
    short = checkout.runpytest("--kata", "1")
    out = short.stdout.str()
    failed = short.parseoutcomes()["failed"]
    # each failure once: the first in full, the others one line each in the table
    assert out.count("_ test_") == 1 and "short test summary info" not in out, out
    said = [re.match(r"\s*(first failure|also)(?: \((\d+) tests\))?: ", line) for line in short.outlines]
    said = [m for m in said if m]
    assert said[0].group(1) == "first failure" and len(said) <= 9, out
    shown = sum(int(m.group(2) or 1) for m in said)  # failures alike share a line: "also (3 tests): "
    assert shown == failed or len(said) == 9, out
    if failed > shown:
        assert f"(+{failed - shown} more failing; -v shows every failure in full)" in out, out
    full = checkout.runpytest("--kata", "1", "-v")
    assert full.stdout.str().count("_ test_") == failed


def test_xdist_gives_the_same_table(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", KAHN)
    serial = checkout.runpytest_subprocess(timeout=300)
    parallel = checkout.runpytest_subprocess("-n", "2", "--kata-keep-workers", timeout=300)
    assert table_rows(parallel.outlines) == table_rows(serial.outlines)
    (_, tests, status), = [row for row in table_rows(parallel.outlines) if row[0] == "03_toposort"]
    passed, total = tests.split("/")
    assert status == "done" and passed == total, tests
    # pytest-benchmark is off under xdist: the plugin's own timer gives the ratio
    assert "x reference" in parallel.stdout.str()


def test_todo_is_its_own_outcome_in_the_summary_line(checkout):
    result = checkout.runpytest("--kata", "3")
    assert result.stdout.lines[-1].count("todo") == 1
    verbose = checkout.runpytest("--kata", "3", "-v")
    assert "TODO" in verbose.stdout.str()


def test_hint_shows_one_more_hint_per_call(checkout):
    first = checkout.runpytest("--kata", "3", "--hint")
    assert "Hint 1 of" in first.stdout.str() and "for kata 03_toposort" in first.stdout.str()
    second = checkout.runpytest("--kata", "3", "--hint")
    assert "Hint 2 of" in second.stdout.str()
    plain = checkout.runpytest("--kata", "3")
    assert "Hint 3 of" not in plain.stdout.str()  # only --hint reveals more


def test_a_failing_test_carries_the_current_hint(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", RECURSIVE)
    asked = checkout.runpytest("--kata", "3", "--hint")  # the learner asked for a hint: the one for this failure
    number = int(re.search(r"Hint (\d+) of \d+ for kata 03_toposort", asked.stdout.str()).group(1))
    result = checkout.runpytest("--kata", "3", "-k", "deep_chain")
    out = result.stdout.str()
    assert "Hint (pytest --hint shows the next one)" in out
    hints = (checkout.path / "katas" / "03_toposort" / "hints.md").read_text().split("\n---")
    assert "RecursionError" in hints[number - 1]  # the hint that matches a recursion
    assert hints[number - 1].strip().splitlines()[0] in out


def test_a_learner_file_importing_the_reference_is_flagged_and_not_done(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", "from reference.solutions.toposort import topological_order\n")
    result = checkout.runpytest("--kata", "3")
    assert "flagged: imports reference.solutions.toposort (line 1)" in result.stdout.str()
    assert rows(result)["03_toposort"][1] == "in progress"
