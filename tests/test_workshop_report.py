"""The JSON report (--kata-report, --kata-learner), on a copy of kata 03."""
import ast
import json
import subprocess

from kit import REPO, write_learner_file
from test_plugin import KAHN

from plugin.reports import json_report as report

KATA = "03_toposort"


def _test_functions_in_file_order(path):
    tree = ast.parse(path.read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def _entry(data, slug):
    return next(e for e in data["katas"] if e["kata"] == slug)


def test_a_report_holds_the_learner_the_environment_and_each_test_in_file_order(checkout, monkeypatch):
    import numpy
    import torch

    monkeypatch.setenv(report.LEARNER_ENV, "Env Name")
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    result = checkout.runpytest("--kata", "3", "--kata-report", "out/deep/r.json", "--kata-learner", "Ada",
                                "-p", "no:randomly")
    path = checkout.path / "out" / "deep" / "r.json"
    assert "Report written to out/deep/r.json" in result.stdout.str()
    data = json.loads(path.read_text())
    assert (data["format"], data["version"], data["learner"]) == ("autograd-katas-report", 1, "Ada")
    assert data["environment"]["numpy"] == numpy.__version__ and data["environment"]["torch"] == torch.__version__
    entry = _entry(data, KATA)
    assert entry["status"] == "done" and entry["flags"] == []
    assert entry["passed"] == entry["total"] > 0
    assert isinstance(entry["speed_ratio"], float)
    graded = checkout.path / "katas" / KATA / "test_toposort.py"
    names = [t["name"].split("::")[1].split("[")[0] for t in entry["tests"] if t["name"].startswith("test_toposort.py")]
    assert list(dict.fromkeys(names)) == _test_functions_in_file_order(graded)
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]  # no temporary file left behind

    # The environment variable names the learner when the option does not; the stub is not
    # started; a hint seen is counted; a changed test file is flagged and the kata not done.
    write_learner_file(checkout, KATA, "toposort.py", KAHN)
    graded.write_text(graded.read_text() + "\n# an extra line\n")
    checkout.runpytest("--kata", "3", "--hint", "-k", "single")
    result = checkout.runpytest("--kata", "3", "--kata-report", "out/deep/r.json")
    assert "it replaced a report of 'Ada'" in result.stdout.str()
    assert "flagged: test files changed: test_toposort.py" in result.stdout.str()
    data = json.loads(path.read_text())
    entry = _entry(data, KATA)
    assert data["learner"] == "Env Name"
    assert entry["status"] == "in progress" and entry["flags"] == ["test files changed: test_toposort.py"]
    assert entry["hints_used"] == 1 and entry["hints_total"] == len(
        [s for s in (checkout.path / "katas" / KATA / "hints.md").read_text().split("\n---\n") if s.strip()])


def test_under_xdist_the_controller_writes_the_same_report(checkout, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    serial = checkout.runpytest("--kata", "3", "-k", "not speed", "--kata-report", "serial.json")
    parallel = checkout.runpytest_subprocess("-n", "2", "--kata-keep-workers", "--kata", "3", "-k", "not speed",
                                             "--kata-report", "parallel.json", timeout=300)
    assert parallel.ret == serial.ret == 0, parallel.stdout.str()
    one, two = (json.loads((checkout.path / name).read_text()) for name in ("serial.json", "parallel.json"))
    assert _entry(two, KATA)["tests"] == _entry(one, KATA)["tests"]
    assert len(_entry(two, KATA)["tests"]) > 3


def test_the_learner_name_falls_back_to_git_then_the_login(tmp_path, monkeypatch):
    monkeypatch.delenv(report.LEARNER_ENV, raising=False)
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Grace Hopper\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    expected = subprocess.run(["git", "config", "user.name"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert report.learner_name(None, tmp_path) == expected == "Grace Hopper"
    assert report.learner_name("  Ada ", tmp_path) == "Ada"
    monkeypatch.setenv("PATH", str(tmp_path))  # no git at all: no crash, the login name
    assert report.learner_name(None, tmp_path)


def test_writing_over_another_learners_report_says_whose_it_was(tmp_path):
    path = tmp_path / "r.json"
    assert report.write(path, {"format": report.FORMAT, "learner": "Ada"}) is None
    assert report.write(path, {"format": report.FORMAT, "learner": "Ada"}) is None
    assert report.write(path, {"format": report.FORMAT, "learner": "Bob"}) == "Ada"
    assert json.loads(path.read_text())["learner"] == "Bob"
