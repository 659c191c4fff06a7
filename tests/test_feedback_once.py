"""Say it once (issue 15, section 2): the hint, an import error and pytest-benchmark's output
are shown once, not under every failure."""
from kit import DEPTH_FIRST_TOPOSORT, learner_source, make_checkout, pointed_message, write_learner_file

KATA = "01_elementwise_rules"
SIGN_ERROR = learner_source("rules").replace("return grad, -grad", "return grad, grad")


def first_hint_line(checkout):
    hints = (checkout.path / "katas" / KATA / "hints.md").read_text().split("\n---")
    return next(line for line in hints[0].strip().splitlines() if line.strip())


def test_the_hint_shows_once_under_the_first_failure(checkout):
    write_learner_file(checkout, KATA, "rules.py", SIGN_ERROR)
    checkout.runpytest("--kata", "1", "--hint", "-k", "no_test_matches_this")
    result = checkout.runpytest("--kata", "1", "-p", "no:randomly", "-k", "not speed")
    out = result.stdout.str()
    assert result.parseoutcomes()["failed"] > 1, out
    assert out.count(first_hint_line(checkout)) == 1, out
    # ... under the first failure (the only one shown in full), before the table
    first = next(i for i, line in enumerate(result.outlines) if line.startswith("____"))
    table = next(i for i, line in enumerate(result.outlines) if "Autograd Katas" in line)
    hint_at = next(i for i, line in enumerate(result.outlines) if first_hint_line(checkout) in line)
    assert first < hint_at < table, out


def test_the_hint_shows_once_under_verbose_too(checkout):
    write_learner_file(checkout, KATA, "rules.py", SIGN_ERROR)
    checkout.runpytest("--kata", "1", "--hint", "-k", "no_test_matches_this")
    result = checkout.runpytest("--kata", "1", "-p", "no:randomly", "-v", "-k", "test_sub or second_derivatives")
    assert result.stdout.str().count(first_hint_line(checkout)) == 1, result.stdout.str()


def test_an_import_error_shows_once_without_kit_frames(checkout):
    broken = learner_source("rules") + "\ndef oops(:\n"
    write_learner_file(checkout, KATA, "rules.py", broken)
    result = checkout.runpytest("--kata", "1", "-p", "no:randomly", "-k", "not speed")
    out = result.stdout.str()
    errors = result.parseoutcomes()["errors"]
    assert errors > 10, out
    assert out.count("ERROR at setup of") == 1, out
    shown = "\n".join(line for line in result.outlines if not line.startswith("ERROR katas/"))
    # once, in the failure; the table's row points to it (pytest's short summary, which newer
    # pytest fills, aside)
    assert shown.count("SyntaxError: invalid syntax") == 1, out
    assert f"first failure ({errors} tests): shown in full above (test_" in out, out
    assert f"the same error stops all {errors} tests of this kata" in out
    assert "contextlib" not in out and "plugin/" not in out, out
    assert f"{errors} errors" in result.outlines[-1]  # every test still counted


def test_an_import_error_shows_once_under_verbose_and_a_hint(checkout):
    broken = learner_source("rules") + "\nimport no_such_module_here\n"
    write_learner_file(checkout, KATA, "rules.py", broken)
    checkout.runpytest("--kata", "1", "--hint", "-k", "no_test_matches_this")
    result = checkout.runpytest("--kata", "1", "-p", "no:randomly", "-v", "-k", "not speed")
    out = result.stdout.str().split("Autograd Katas")[0]  # the failures, before the table
    # (pytest's short summary, which newer pytest fills, aside)
    shown = "\n".join(line for line in out.splitlines() if not line.startswith("ERROR katas/"))
    assert shown.count("ModuleNotFoundError: No module named 'no_such_module_here'") == 1, out
    assert out.count(first_hint_line(checkout)) == 1, out
    assert "contextlib" not in out, out


def test_the_capstone_says_a_kata_does_not_import(pytester):
    checkout = pytester
    make_checkout(checkout)  # every kata
    write_learner_file(checkout, "03_toposort", "toposort.py", "def topological_order(roots:\n")
    result = checkout.runpytest("--kata", "10", "-p", "no:randomly", "-k", "not speed")
    out = result.stdout.str()
    assert "does not import: 03" in out, out
    assert "stubs left: 01, 02, 04" in out, out


def test_no_benchmark_table_unless_asked(checkout, monkeypatch):
    # Run by the kit's suite under -n 2, this process is an xdist worker; pytest-benchmark
    # would see that in the environment and switch itself off in the inner runs too.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    write_learner_file(checkout, KATA, "rules.py", learner_source("rules"))
    result = checkout.runpytest("--kata", "1", "-p", "no:randomly")
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "benchmark '" not in out and "Name (time in" not in out, out
    asked = checkout.runpytest("--kata", "1", "-p", "no:randomly", "-k", "speed", "--benchmark-columns", "median")
    assert "benchmark '" in asked.stdout.str(), asked.stdout.str()


def test_no_benchmark_warning_under_xdist(checkout):
    write_learner_file(checkout, KATA, "rules.py", learner_source("rules"))
    result = checkout.runpytest_subprocess("--kata", "1", "-n", "2", "--kata-keep-workers")
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "Benchmark" not in out, out


# --- the blind walk-through (issues 27, 31): one mistake met by many tests ---------------------

# A depth-first search that reads next_functions' (node, input_nr) pairs as nodes.
EDGES_AS_NODES = DEPTH_FIRST_TOPOSORT.replace("for child, _ in edges:", "for child in edges:")
assert EDGES_AS_NODES != DEPTH_FIRST_TOPOSORT


def test_tests_failing_with_the_same_words_share_one_line(pytester):
    """Kata 03, next_functions read as nodes (they are (node, input_nr) pairs): ten tests
    fail alike; the table said the same sentence on nine lines."""
    make_checkout(pytester, katas=["03_toposort"])
    write_learner_file(pytester, "03_toposort", "toposort.py", EDGES_AS_NODES)
    result = pytester.runpytest("--kata", "3", "-p", "no:randomly", "-k", "not speed")
    out = result.stdout.str()
    failed = result.parseoutcomes()["failed"]
    lines = [line.strip() for line in result.outlines if line.strip().startswith(("first failure", "also"))]
    assert len(lines) < failed, out
    first = lines[0]
    assert first.startswith("first failure (") and "tests): shown in full above" in first, out
    said = [pointed_message(result, line.split(": ", 1)[1]) for line in lines]
    assert said[0].startswith("your topological_order raised AttributeError"), out
    assert len(said) == len(set(said)), out


def test_a_learners_key_error_reads_as_a_sentence(pytester):
    """Kata 06, buffers[node] for a node nothing reached: a KeyError quotes its message, so the
    kit's sentence came out in quotes with its line breaks as \\n."""
    make_checkout(pytester, katas=["06_backward_pass"])
    write_learner_file(pytester, "06_backward_pass", "backward_pass.py", learner_source("backward_pass").replace(
        "buffers.pop(node, None)", "buffers[node]"))
    result = pytester.runpytest("--kata", "6", "-p", "no:randomly", "-k", "not speed")
    out = result.stdout.str()
    # the type once: pytest prints it before the message ("KeyError: your run_backward raised
    # KeyError: <" said it twice, the fourth walk)
    assert any(line.startswith("E") and "KeyError: in your run_backward: no entry for " in line
               for line in result.outlines), out
    # the key said by its name, not its address (the seventh walk: `<SumBackward0 object at 0x…>`)
    assert " object at 0x" not in out and "(a node) in the dict: a node that received no gradient" in out, out
    assert "'in your run_backward" not in out and "\\n  at katas" not in out, out
    assert not any(line.startswith("E") and "KeyError: your run_backward raised KeyError" in line
                   for line in result.outlines), out
    assert any(line.startswith("E") and "at katas/06_backward_pass/backward_pass.py, line" in line
               for line in result.outlines), out
