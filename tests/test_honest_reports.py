"""Reports that never claim work that was not done (issue 13, section 2): partial runs,
remembered statuses, missing learner files; and the report's path and exit status (section 4).
On a copy of kata 03."""
import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from kit import REPO, kata_row, row_line, write_learner_file
from test_plugin import KAHN

from plugin.reports import json_report
from plugin.state import STATUS_CACHE_KEY

KATA = "03_toposort"
NONE_TOPOSORT = "def topological_order(roots):\n    return None\n"


def _entry(path, slug=KATA):
    data = json.loads(path.read_text())
    return data, next(e for e in data["katas"] if e["kata"] == slug)


def _remembered(pytester):
    return pytester.parseconfigure().cache.get(STATUS_CACHE_KEY, {})


def test_a_run_of_part_of_the_tests_never_makes_a_kata_done(checkout):
    # A toposort returning None: one test picked with -k may pass on its own.
    write_learner_file(checkout, KATA, "toposort.py", NONE_TOPOSORT)
    result = checkout.runpytest("--kata", "3", "-k", "linear_time", "--kata-report", "r.json", "-p", "no:randomly")
    assert kata_row(result, KATA)[1] != "done", result.stdout.str()
    assert "partial run: 1 of its" in result.stdout.str()
    data, entry = _entry(checkout.path / "r.json")
    assert entry["status"] != "done" and entry["partial"] is True and entry["ran"] is True
    assert data["summary"]["done"] == 0

    # A correct toposort, graded in full: done and remembered so.
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    result = checkout.runpytest("--kata", "3", "-p", "no:randomly", "--kata-report", "r.json")
    assert kata_row(result, KATA)[1] == "done"
    assert _entry(checkout.path / "r.json")[1]["partial"] is False
    assert _remembered(checkout)[KATA] == "done"

    # Speed tests only measure: a run without them still grades the whole kata.
    result = checkout.runpytest("-p", "no:randomly", "-k", "not speed", "--kata-report", "r.json")
    assert kata_row(result, KATA)[1] == "done", result.stdout.str()
    assert _entry(checkout.path / "r.json")[1]["partial"] is False

    # Every other way of picking part of the kata: not done in that run, nothing forgotten.
    graded = f"katas/{KATA}/test_toposort.py"
    for options in (["-k", "chain"], ["--deselect", f"{graded}::test_a_chain"], [f"{graded}::test_a_chain"]):
        result = checkout.runpytest("-p", "no:randomly", "--kata-report", "r.json", *options)
        assert kata_row(result, KATA)[1] == "in progress", (options, result.stdout.str())
        assert "a kata counts as done only when all its tests pass in one run" in result.stdout.str()
        assert _entry(checkout.path / "r.json")[1]["partial"] is True, options
        assert _remembered(checkout)[KATA] == "done", options  # a partial pass proves nothing new

    # A partial run that finds a failure does tell: the kata is not done.
    write_learner_file(checkout, KATA, "toposort.py", NONE_TOPOSORT)
    checkout.runpytest("--kata", "3", "-k", "chain", "-p", "no:randomly")
    assert _remembered(checkout)[KATA] == "in progress"

    # --lf runs the tests that failed last time only: partial too.
    checkout.runpytest("--kata", "3", "-p", "no:randomly")
    result = checkout.runpytest("--kata", "3", "--lf", "-p", "no:randomly", "--kata-report", "r.json")
    assert "partial run" in result.stdout.str()
    assert _entry(checkout.path / "r.json")[1]["partial"] is True


def test_a_run_that_collects_only_some_test_files_of_a_kata_is_partial():
    from types import SimpleNamespace

    from plugin import manifest
    from plugin.guards import partial_runs as selection

    kata = manifest.find_kata("8")  # two graded test files
    files = sorted(p for p in kata.folder.glob("test_*.py") if "speed" not in p.name)
    assert len(files) == 2
    items = [SimpleNamespace(path=files[0])] * 3
    assert "not every test file" in selection.why_partial(kata, items, items, [str(files[0])])
    both = items + [SimpleNamespace(path=files[1])]
    assert selection.why_partial(kata, both, both, ["katas"]) == ""
    assert "3 of its 4 tests" in selection.why_partial(kata, both, items, ["katas"])


def test_a_run_that_stops_early_grades_part_of_a_kata(checkout):
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    # What -x does after a failure elsewhere: the session stops after the kata's third test.
    checkout.makeconftest(
        (REPO / "conftest.py").read_text()
        + "\nRAN = []\n\ndef pytest_runtest_teardown(item):\n    RAN.append(item)\n"
        "    if len(RAN) == 3:\n        item.session.shouldstop = 'stopped by the test'\n"
    )
    result = checkout.runpytest("--kata", "3", "-p", "no:randomly", "--kata-report", "r.json")
    assert kata_row(result, KATA) == ("3/3", "in progress"), result.stdout.str()
    assert "the run stopped early: 3 of its" in row_line(result, KATA) + result.stdout.str()
    assert _entry(checkout.path / "r.json")[1]["partial"] is True


def test_under_xdist_the_controller_finds_the_same_partial_run(checkout, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    result = checkout.runpytest_subprocess("-n", "2", "--kata-keep-workers", "--kata", "3", "-k", "chain or single",
                                           "--kata-report", "r.json", timeout=300)
    assert kata_row(result, KATA)[1] == "in progress", result.stdout.str()
    data, entry = _entry(checkout.path / "r.json")
    assert entry["partial"] is True and entry["status"] == "in progress"
    assert entry["passed"] == entry["total"] > 0


def test_the_table_says_which_statuses_are_remembered(checkout):
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    checkout.makeconftest((REPO / "conftest.py").read_text())
    checkout.runpytest("--kata", "3", "-p", "no:randomly")
    result = checkout.runpytest("--kata", "3", "-k", "no_test_is_named_so", "--kata-report", "r.json")
    assert "remembered from an earlier run" in row_line(result, KATA)
    entry = _entry(checkout.path / "r.json")[1]
    # (issue 30, point 1) shown as remembered, never counted: a report counts what its run graded.
    assert (entry["status"], entry["ran"], entry["remembered"]) == ("not started", False, "done")


def test_a_missing_learner_file_stays_in_the_table_with_the_way_back(checkout):
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    checkout.runpytest("--kata", "3", "-p", "no:randomly")
    assert _remembered(checkout)[KATA] == "done"
    mine = checkout.path / "katas" / KATA / "toposort.py"
    mine.rename(mine.with_name("toposort_old.py"))

    for options in ([], ["--kata", "3"]):
        result = checkout.runpytest("-p", "no:randomly", "--kata-report", "r.json", *options)
        out = result.stdout.str()
        assert "no such kata" not in out and "Every kata is done" not in out, out
        assert "file missing" in row_line(result, KATA)
        assert f"learner file missing: katas/{KATA}/toposort.py" in out
        assert "katas reset 3" in out
        data, entry = _entry(checkout.path / "r.json")
        assert data["summary"] == {"done": 0, "katas": 1}
        assert (entry["status"], entry["file_missing"]) == ("not started", True)

    # Reset puts the stub back where the file was missing.
    done = subprocess.run([sys.executable, "-m", "plugin.workshop.reset", "3"], cwd=checkout.path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert mine.read_bytes() == (REPO / "plugin" / "shipped" / "stubs" / KATA / "toposort.py").read_bytes()


def test_a_report_path_that_cannot_be_written_fails_the_run(checkout, monkeypatch):
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    (checkout.path / "reports").mkdir()
    result = checkout.runpytest("--kata", "3", "-k", "single", "--kata-report", "reports")
    assert result.ret != 0
    assert "--kata-report reports: that is a folder" in result.stderr.str() + result.stdout.str()

    def full_disk(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json_report, "write", full_disk)
    result = checkout.runpytest("--kata", "3", "-k", "single", "--kata-report", "reports/ada.json")
    assert result.ret != 0
    assert "Could not write the report reports/ada.json: OSError: No space left on device" in result.stdout.str()


@pytest.mark.parametrize("how", ["supervised", "--kata-in-process"])
def test_a_report_is_never_written_over_a_file_that_is_not_a_report(checkout, how):
    """(issue 26, point 5) `--kata-report katas/03_toposort/toposort.py` replaced the
    learner's code with a JSON report, no backup, no warning."""
    mine = write_learner_file(checkout, KATA, "toposort.py", KAHN)
    options = ["--kata-in-process"] if how != "supervised" else []
    result = checkout.runpytest("--kata", "3", "-k", "single", "--kata-report", str(mine), *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert "a file is there and it is not a report" in result.stderr.str() + result.stdout.str()
    assert mine.read_text() == textwrap.dedent(KAHN)
    # An earlier report, or Gradescope's results, may be replaced.
    (checkout.path / "old.json").write_text(json.dumps({"score": 3.0, "tests": []}))
    assert checkout.runpytest("--kata", "3", "-k", "single", "--kata-report", "old.json", *options).ret == 0
    assert json.loads((checkout.path / "old.json").read_text())["format"] == "autograd-katas-report"


def test_reports_are_written_with_the_usual_permissions(checkout):
    previous = os.umask(0o022)
    try:
        checkout.runpytest("--kata", "3", "-k", "single", "--kata-report", "out/r.json")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((checkout.path / "out" / "r.json").stat().st_mode) == 0o644


def test_reset_keeps_the_mode_of_the_learners_file(tmp_path, monkeypatch):
    import shutil

    from plugin import manifest
    from plugin.workshop import reset

    shutil.copytree(REPO / "katas" / KATA, tmp_path / "katas" / KATA, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(manifest, "KATAS_DIR", tmp_path / "katas")
    kata = manifest.find_kata("3")
    kata.path.write_bytes(b"def topological_order(roots):\n    return []  # mine\n")
    kata.path.chmod(0o640)
    reset.reset(kata)
    backup = next(kata.path.parent.glob("toposort.py.bak-*"))
    assert stat.S_IMODE(kata.path.stat().st_mode) == 0o640
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640


# --- a report in a shared folder outside the clone -------------------------------------------

import pytest  # noqa: E402


@pytest.mark.parametrize("form", ["--kata-report PATH", "--kata-report=PATH"])
def test_a_report_path_outside_the_clone_works_once_the_file_exists(checkout, tmp_path_factory, form):
    shared = tmp_path_factory.mktemp("shared") / "ada.json"
    shared.write_text("{}")  # last week's report: an existing file outside the clone
    option = ["--kata-report", str(shared)] if " " in form else [f"--kata-report={shared}"]
    # `-p autograd_katas_args` loads what the entry point (pip install -e .) loads.
    result = checkout.runpytest("-p", "autograd_katas_args", "--kata", "3", "-k", "single",
                                "--kata-learner", "Ada", *option)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert f"rootdir: {checkout.path}" in result.stdout.str()
    assert json.loads(shared.read_text())["learner"] == "Ada"


def test_the_entry_point_knows_every_option_that_takes_a_value(pytestconfig):
    import tomllib

    import autograd_katas_args

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"autograd_katas_args": "autograd_katas_args"}
    group = pytestconfig._parser.getgroup("autograd-katas")
    # A flag's default is a bool (pytest 9.2's attrs() no longer tells the action).
    takes_value = {name for option in group.options if not isinstance(option.attrs().get("default"), bool)
                   for name in option.names()}
    assert takes_value == set(autograd_katas_args.VALUE_OPTIONS)
