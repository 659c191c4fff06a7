"""The `katas` command (plugin/workshop/cli.py), run as a learner and an instructor run it: in a
fresh clone (pytester's folder), as a subprocess. Grading stays pytest's; these check that each
command reaches it, and the exit statuses the README documents (0 done / all right, 1 not
done, 2 usage)."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from importlib.metadata import entry_points

import pytest

from kit import DEPTH_FIRST_TOPOSORT, REPO, learner_source, write_learner_file

TIMEOUT = 600  # a busy machine: generous, never reached when all is well


def katas(checkout, *args):
    """Run `katas ARGS` in the clone; the CompletedProcess (text)."""
    return subprocess.run(
        [sys.executable, "-m", "plugin.workshop.cli", *args],
        cwd=checkout.path, env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )


def plant_reference(checkout, kata_folder, filename, module):
    write_learner_file(checkout, kata_folder, filename, learner_source(module))


def test_the_console_script_is_katas():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "katas"]
    assert script.value == "plugin.workshop.cli:main"


def test_help_lists_every_command(checkout):
    done = katas(checkout, "--help")
    assert done.returncode == 0
    for command in ("next", "check", "hint", "watch", "show", "reset", "report", "scoreboard"):
        assert re.search(rf"^\s+{command}\s", done.stdout, re.M), (command, done.stdout)
    assert "Exit status: 0 done" in done.stdout
    check = katas(checkout, "check", "--help")
    assert check.returncode == 0 and "--require-done" in check.stdout


def test_usage_errors_exit_2(checkout):
    assert katas(checkout, "frobnicate").returncode == 2
    unknown = katas(checkout, "check", "99")
    assert unknown.returncode == 2
    assert "no such kata" in unknown.stdout + unknown.stderr
    assert katas(checkout, "reset", "99").returncode == 2


def test_progress_on_a_fresh_clone_shows_the_table_and_exits_0(checkout):
    done = katas(checkout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Progress: 0 of 10 katas done" in done.stdout
    assert "Next: kata 01_elementwise_rules" in done.stdout
    assert done.stdout.startswith("$ pytest")  # the command is shown, so that it can be learned


def test_next_grades_the_first_kata_not_done(checkout):
    done = katas(checkout, "next")
    assert done.returncode == 0
    assert re.search(r"01_elementwise_rules\s+0/\d+\s+not started", done.stdout), done.stdout


def test_check_require_done_exits_1_until_the_kata_is_done(checkout):
    stub = katas(checkout, "check", "3", "--require-done")
    assert stub.returncode == 1, stub.stdout
    assert katas(checkout, "check", "3").returncode == 0  # not done, but nothing failed
    plant_reference(checkout, "03_toposort", "toposort.py", "toposort")
    done = katas(checkout, "check", "3", "--require-done")
    assert done.returncode == 0, done.stdout
    assert re.search(r"03_toposort\s+\d+/\d+\s+done", done.stdout)


def test_check_of_a_wrong_piece_exits_1(checkout):
    write_learner_file(checkout, "03_toposort", "toposort.py", "def topological_order(roots):\n    return []\n")
    assert katas(checkout, "check", "3").returncode == 1


def test_the_pytest_option_require_done(checkout):
    assert checkout.runpytest("--kata", "3", "--kata-require-done").ret == 1
    plain = checkout.runpytest("--kata", "3")
    assert plain.ret == 0
    assert checkout.runpytest("--kata", "3", "--kata-require-done", "--solution", "reference").ret == 0


def test_hint_shows_the_next_hint(checkout):
    first = katas(checkout, "hint", "3")
    assert first.returncode == 0
    assert "Hint 1 of" in first.stdout and "03_toposort" in first.stdout
    assert "Hint 2 of" in katas(checkout, "hint", "3").stdout


def test_reset_keeps_the_learner_file(checkout):
    path = write_learner_file(checkout, "03_toposort", "toposort.py", "def topological_order(roots):\n    return []\n")
    done = katas(checkout, "reset", "3")
    assert done.returncode == 0, done.stderr
    backups = list(path.parent.glob("toposort.py.bak-*"))
    assert len(backups) == 1 and "return []" in backups[0].read_text()
    assert "NotImplementedError" in path.read_text()


def test_show_opens_the_graph_page_of_a_wrong_gradient(checkout):
    """Issue 27.4: the page opens from the terminal (`katas show`), not only from its address."""
    from plugin.workshop import show

    assert katas(checkout, "show", "--no-open").returncode == 1  # nothing graded yet: no page
    write_learner_file(checkout, "01_elementwise_rules", "rules.py", learner_source("rules").replace(
        "    grad_a = grad * b if ctx.needs_input_grad[0] else None",
        "    grad_a = b if ctx.needs_input_grad[0] else None"))
    graded = katas(checkout, "check", "1", "--", "-p", "no:randomly", "-k", "test_mul")
    assert graded.returncode == 1 and "katas show 1" in graded.stdout, graded.stdout
    shown = katas(checkout, "show", "1", "--no-open")
    assert shown.returncode == 0, shown.stderr
    page = shown.stdout.strip()
    assert page.startswith("file://") and page.endswith("/01_elementwise_rules.html") and page in graded.stdout
    opened = []
    assert show.main([], root=checkout.path, open_page=opened.append) == 0 and opened == [page]
    other = katas(checkout, "show", "3", "--no-open")
    assert other.returncode == 1 and "No graph page for kata 03_toposort" in other.stderr
    assert katas(checkout, "show", "99").returncode == 2


def test_report_then_scoreboard(checkout):
    plant_reference(checkout, "03_toposort", "toposort.py", "toposort")
    report = checkout.path / "reports" / "ada.json"
    done = katas(checkout, "report", str(report), "--learner", "Ada")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(report.read_text())
    assert data["learner"] == "Ada"
    assert {e["kata"]: e["status"] for e in data["katas"]}["03_toposort"] == "done"
    board = katas(checkout, "scoreboard", str(report))
    assert board.returncode == 0, board.stderr
    assert "Ada" in board.stdout


def test_watch_takes_the_interval_the_readme_documents(checkout):
    """Issue 27.3: `katas watch 1 --interval 1` was "unrecognized arguments"; a usage error
    names `katas watch`, not the module behind it."""
    from plugin.workshop import cli, watch

    args = cli.parser().parse_args(["watch", "1", "--interval", "1"])
    args.pytest_args = []
    seen = {}
    real = watch.main
    watch.main = lambda argv, prog: seen.update(argv=argv, prog=prog) or 0
    try:
        assert args.run(args) == 0
    finally:
        watch.main = real
    assert seen["argv"][:4] == ["--kata", "1", "--interval", "1.0"] and seen["prog"] == "katas watch", seen
    wrong = subprocess.run([sys.executable, "-m", "plugin.workshop.cli", "watch", "1", "--interval", "soon"],
                           cwd=checkout.path, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)
    assert wrong.returncode == 2 and "usage: katas watch" in wrong.stderr, wrong.stderr


def test_watch_grades_then_stops_on_ctrl_c(checkout):
    process = subprocess.Popen(
        [sys.executable, "-m", "plugin.workshop.cli", "watch", "3", "--", "-q", "-k", "single"],
        cwd=checkout.path, env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    output = ""
    try:
        deadline = time.monotonic() + TIMEOUT
        for line in process.stdout:
            output += line
            if "Progress:" in line or time.monotonic() > deadline:
                break
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
        output += rest
    finally:
        if process.poll() is None:
            process.kill()
    assert "Progress:" in output
    assert process.returncode == 0, output


# --- Gradescope ----------------------------------------------------------------------------

SCHEMA = json.loads((REPO / "docs" / "gradescope-results.schema.json").read_text())


def validate(value, schema, where="results"):
    """The subset of JSON Schema the documented schema uses: type, required, properties,
    additionalProperties, items, enum, minimum. Raises AssertionError naming the place."""
    types = {"object": dict, "array": list, "string": str, "integer": int, "number": (int, float)}
    if "type" in schema:
        assert isinstance(value, types[schema["type"]]) and not isinstance(value, bool), (where, value)
    if "enum" in schema:
        assert value in schema["enum"], (where, value)
    if "minimum" in schema:
        assert value >= schema["minimum"], (where, value)
    if isinstance(value, dict):
        for key in schema.get("required", []):
            assert key in value, (where, key)
        for key, item in value.items():
            if key in schema.get("properties", {}):
                validate(item, schema["properties"][key], f"{where}.{key}")
            else:
                assert schema.get("additionalProperties", True), (where, key)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            validate(item, schema["items"], f"{where}[{index}]")


def test_the_validator_rejects_what_the_schema_forbids():
    good = {"score": 1.0, "output": "", "tests": []}
    validate(good, SCHEMA)
    for bad in ({"output": "", "tests": []}, {**good, "score": -1}, {**good, "grade": 1},
                {**good, "tests": [{"name": "a", "number": "1", "score": 1, "max_score": 1, "status": "ok", "output": ""}]}):
        with pytest.raises(AssertionError):
            validate(bad, SCHEMA)


def gradescope_run(checkout, *options):
    results = checkout.path / "results.json"
    run = checkout.runpytest("--kata-report", str(results), "--kata-report-format", "gradescope", *options)
    return run, json.loads(results.read_text())


def test_gradescope_results_validate_and_score_each_kata(checkout):
    plant_reference(checkout, "03_toposort", "toposort.py", "toposort")
    write_learner_file(checkout, "04_accumulation", "accumulate.py", "import torch\n" + learner_source("accumulate"))
    (checkout.path / "pyproject.toml").write_text(
        '[tool.autograd-katas]\npoints = 5\nweights = { "03_toposort" = 20 }\n')
    _, results = gradescope_run(checkout, "--kata", "3", "--kata", "4", "--kata", "5")
    validate(results, SCHEMA)
    tests = {t["name"]: t for t in results["tests"]}
    assert tests["03_toposort"]["max_score"] == 20 and tests["03_toposort"]["score"] == 20
    assert tests["03_toposort"]["status"] == "passed"
    # done in every test but flagged (it imports torch): no points
    assert tests["04_accumulation"]["score"] == 0 and tests["04_accumulation"]["status"] == "failed"
    assert "flagged" in tests["04_accumulation"]["output"]
    assert tests["05_seeding"]["max_score"] == 5 and tests["05_seeding"]["score"] == 0
    assert "katas check 5" in tests["05_seeding"]["output"]
    assert results["score"] == 20


def test_gradescope_partial_credit_and_one_entry_per_test(checkout):
    # Right on small graphs, a node short on graphs of more than 50,000 nodes.
    wrong = DEPTH_FIRST_TOPOSORT.replace("    return post_order", "    return post_order[1:] if len(post_order) > 50_000 else post_order")
    assert wrong != DEPTH_FIRST_TOPOSORT
    write_learner_file(checkout, "03_toposort", "toposort.py", wrong)
    _, per_kata = gradescope_run(checkout, "--kata", "3")
    (entry,) = [t for t in per_kata["tests"] if t["name"] == "03_toposort"]
    assert 0 < entry["score"] < entry["max_score"]  # most tests pass: partial credit
    _, per_test = gradescope_run(checkout, "--kata", "3", "--kata-report-per-test")
    validate(per_test, SCHEMA)
    mine = [t for t in per_test["tests"] if t["name"].startswith("03_toposort: ")]
    assert len(mine) > 5
    assert sum(t["score"] for t in mine) == pytest.approx(entry["score"], abs=0.01)
    assert any(t["status"] == "failed" and "100000" in t["name"] for t in mine)


def test_gradescope_settings_that_are_wrong_say_so(checkout):
    (checkout.path / "pyproject.toml").write_text('[tool.autograd-katas]\npoints = "ten"\n')
    results = checkout.path / "results.json"
    run = checkout.runpytest("--kata", "3", "--kata-report", str(results), "--kata-report-format", "gradescope")
    assert "points must be a number" in run.stdout.str()
    assert not results.exists()


def run_autograder(root):
    """Run examples/gradescope/run_autograder with `root` for /autograder; its results,
    checked against the documented schema."""
    subprocess.run(
        [str(REPO / "examples" / "gradescope" / "run_autograder")],
        env=dict(os.environ, AUTOGRADER_ROOT=str(root), PYTHON=sys.executable, PYTHONPATH=str(REPO)),
        capture_output=True, text=True, timeout=TIMEOUT, check=True,
    )
    results = json.loads((root / "results" / "results.json").read_text())
    validate(results, SCHEMA)
    return results


def test_run_autograder_grades_only_the_learner_files_of_a_submission(tmp_path):
    root = tmp_path / "autograder"
    (root / "submission" / "katas" / "03_toposort").mkdir(parents=True)
    (root / "source").symlink_to(REPO)
    submitted = root / "submission" / "katas" / "03_toposort"
    (submitted / "toposort.py").write_text(learner_source("toposort"))
    # A test file of the learner's own is not the grader's: it must be ignored.
    (submitted / "test_mine.py").write_text("def test_always():\n    assert True\n")
    results = run_autograder(root)
    scores = {t["name"]: (t["score"], t["max_score"]) for t in results["tests"]}
    assert scores["03_toposort"] == (10, 10)
    assert scores["04_accumulation"] == (0, 10)
    assert results["score"] == 10
    assert isinstance(results["execution_time"], int)


def test_run_autograder_on_an_empty_submission_still_writes_results(tmp_path):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "source").symlink_to(REPO)
    results = run_autograder(root)
    assert results["score"] == 0 and "no learner file found" in results["output"]


# --- GitHub Classroom ------------------------------------------------------------------------

def test_the_classroom_workflow_checks_each_kata_and_its_commands_work(checkout):
    workflow = (REPO / "examples" / "github-classroom" / "classroom.yml").read_text()
    commands = re.findall(r"^\s+command: (.+)$", workflow, re.M)
    assert commands == [f"katas check {n} --require-done" for n in range(1, 11)]
    plant_reference(checkout, "03_toposort", "toposort.py", "toposort")
    for command, expected in ((commands[2], 0), (commands[3], 1)):
        args = command.split()[1:]
        assert katas(checkout, *args).returncode == expected, command


def test_run_autograder_grades_with_its_own_copy_of_the_kit(tmp_path):
    """Issue 27.3: from an environment where another copy of the kit is installed (an editable
    install of an instructor's checkout: here a decoy `plugin` first on the path), the grading
    imports `plugin` and `reference` from the kit the autograder runs from."""
    decoy = tmp_path / "elsewhere"
    (decoy / "plugin").mkdir(parents=True)
    (decoy / "plugin" / "__init__.py").write_text("raise ImportError('the wrong copy of the kit was imported')\n")
    root = tmp_path / "autograder"
    (root / "submission" / "katas" / "03_toposort").mkdir(parents=True)
    (root / "source").symlink_to(REPO)
    (root / "submission" / "katas" / "03_toposort" / "toposort.py").write_text(learner_source("toposort"))
    env = {**os.environ, "PYTHONPATH": str(decoy)}
    subprocess.run(["bash", str(REPO / "examples" / "gradescope" / "run_autograder")],
                   env={**env, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable},
                   capture_output=True, text=True, timeout=TIMEOUT, check=True)
    results = json.loads((root / "results" / "results.json").read_text())
    assert "the wrong copy" not in results.get("output", ""), results
    assert {t["name"]: t["score"] for t in results["tests"]}["03_toposort"] == 10, results
