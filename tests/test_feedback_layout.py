"""Say it once, keep the first failure in view (issue 27.2, 31.5): each failure once (the
first in full, next to the table; the others one line each in it), no pytest short summary of
kata failures, no pytest-benchmark header, a Next line that follows what the learner is
doing, and a last line that says what a run was or why it is not done."""
import re

from kit import kata_row, learner_source, make_checkout, write_learner_file

KATA = "01_elementwise_rules"
SIGN_ERROR = learner_source("rules").replace("return grad, -grad", "return grad, grad")


def test_each_failure_is_said_once_and_the_first_sits_next_to_the_table(pytester):
    make_checkout(pytester, katas=[KATA])
    write_learner_file(pytester, KATA, "rules.py", SIGN_ERROR)
    result = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "not speed")
    out, lines = result.stdout.str(), result.outlines
    failed = result.parseoutcomes()["failed"]
    assert failed > 3, out
    assert "short test summary info" not in out and "shown in one line" not in out, out
    headers = [i for i, line in enumerate(lines) if line.startswith("___") and " test_" in line]
    assert len(headers) == 1, out  # the first failure, in full; the others have no section
    table = next(i for i, line in enumerate(lines) if "Autograd Katas" in line)
    between = lines[headers[0] + 1:table]  # the table right after it: nothing else between them
    assert not any(line.startswith(("FAILED", "ERROR", "(shown")) or "short test summary" in line for line in between), out
    one_liners = [line.strip() for line in lines if re.match(r"(first failure|also)( \(\d+ tests\))?: ", line.strip())]
    assert 1 < len(one_liners) <= 9, out  # alike failures (a GPU twin) share a line
    counted = [int(found.group(1)) if found else 1 for found in (re.match(r"[a-z ]+\((\d+) tests\)", line) for line in one_liners)]
    more = re.search(r"\(\+(\d+) more failing", out)
    assert sum(counted) + (int(more.group(1)) if more else 0) == failed, out  # every failure counted once
    for line in one_liners:  # each said once in the whole output
        assert out.count(line.split(": ", 1)[1]) == 1, line


def test_no_pytest_benchmark_header_unless_asked(pytester):
    make_checkout(pytester, katas=[KATA])
    plain = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "test_add")
    assert "benchmark:" not in plain.stdout.str()
    asked = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "test_add", "--benchmark-disable")
    assert "benchmark:" in asked.stdout.str()


def next_line(result):
    return next(line for line in result.outlines if line.startswith("Next:") or line.startswith("Every kata"))


def test_next_follows_the_kata_the_learner_works_on(pytester):
    """Working on kata 03 (01 done, 02 not started): Next spoke of kata 02, or repeated the
    command that had just run."""
    make_checkout(pytester, katas=[KATA, "02_shapes", "03_toposort", "04_accumulation"])
    write_learner_file(pytester, KATA, "rules.py", learner_source("rules"))
    pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "not speed")
    unreversed = learner_source("toposort").replace("    post_order.reverse()\n", "")
    write_learner_file(pytester, "03_toposort", "toposort.py", unreversed)
    working = pytester.runpytest("--kata", "3", "-p", "no:randomly", "-k", "not speed and not linear and not 100000")
    line = next_line(working)
    assert "03_toposort" in line and "first failure" in line and "02_shapes" not in line, line
    assert "then run: pytest --kata 3" not in line, line
    write_learner_file(pytester, "03_toposort", "toposort.py", learner_source("toposort"))
    finished = pytester.runpytest("--kata", "3", "-p", "no:randomly", "-k", "not speed")
    assert kata_row(finished, "03_toposort")[1] == "done", finished.stdout.str()
    assert "Next: kata 04_accumulation" in next_line(finished), next_line(finished)  # the one after it


def test_a_run_on_the_reference_says_so(pytester):
    make_checkout(pytester, katas=["03_toposort"])
    result = pytester.runpytest("--solution", "reference", "-p", "no:randomly", "-k", "not speed")
    out = result.stdout.str()
    assert "Well built" not in out and "Compare your pieces" not in out, out
    assert "On the model solutions (--solution reference): 1 of 1 katas done" in out, out


def test_require_done_ends_with_why_it_is_not_done(pytester):
    """A flagged kata: every test passes, the last line read "14 passed" and the exit was 1."""
    make_checkout(pytester, katas=["03_toposort"])
    write_learner_file(pytester, "03_toposort", "toposort.py", "import torch  # noqa\n" + learner_source("toposort"))
    result = pytester.runpytest("--kata", "3", "--kata-require-done", "-p", "no:randomly", "-k", "not speed")
    assert result.ret == 1, result.stdout.str()
    last = result.outlines[-1]
    assert last.startswith("Not done") and "03_toposort is flagged" in last, result.stdout.str()
