"""Verdicts that stay honest (issue 30): what a report may count as done, speed measured on
what a piece really does, an oracle that learner code cannot talk round, the kit's own files
anchored, a shared reports folder that cannot hang the scoreboard, a worker that dies."""
import io
import json
import re

from kit import VISITED_LIST_TOPOSORT, kata_row, make_checkout, reference_source, row_line, write_learner_file
from test_plugin import KAHN

from plugin.state import STATUS_CACHE_KEY

RUN_LIMIT = 600  # a pytester run's own limit: only reached when a run hangs

KILLED = '''
import os
import signal


def topological_order(roots):
    os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer does
'''


# --- 1. remembered statuses ---------------------------------------------------------------------

def test_a_status_remembered_in_the_cache_counts_in_no_report(pytester):
    make_checkout(pytester)
    slugs = sorted(p.name for p in (pytester.path / "katas").iterdir() if p.is_dir())
    pytester.parseconfigure().cache.set(STATUS_CACHE_KEY, {slug: "done" for slug in slugs})  # edited by hand
    result = pytester.runpytest("--kata", "1", "--kata-report", "mallory.json", "--kata-learner", "Mallory")
    out = result.stdout.str()
    assert "9 of them remembered from an earlier run" in out, out
    report = json.loads((pytester.path / "mallory.json").read_text())
    assert report["summary"]["done"] == 0, report["summary"]
    others = [e for e in report["katas"] if e["kata"] != slugs[0]]
    assert all((e["status"], e["ran"], e["remembered"]) == ("not started", False, "done") for e in others), others
    # ... nor in the views built from it: the scoreboard, Gradescope's results.
    from plugin.workshop import scoreboard

    board = io.StringIO()
    assert scoreboard.main([str(pytester.path / "mallory.json")], out=board, err=io.StringIO()) == 0
    assert " 0/10 " in next(line for line in board.getvalue().splitlines() if line.startswith("Mallory")), board.getvalue()
    result = pytester.runpytest("--kata", "1", "--kata-report", "results.json", "--kata-report-format", "gradescope")
    results = json.loads((pytester.path / "results.json").read_text())
    assert results["score"] == 0 and all(t["status"] == "failed" for t in results["tests"]), results


def test_the_scoreboard_counts_no_kata_a_report_did_not_grade(tmp_path):
    from test_workshop_scoreboard import a_report

    from plugin.workshop import scoreboard

    data = a_report("Mallory", "2026-11-23T09:00:00Z", {"01_a": "done", "02_b": "done"})
    data["katas"][1]["ran"] = False  # a report of an older kit: the remembered status as its status
    (tmp_path / "m.json").write_text(json.dumps(data))
    board = io.StringIO()
    assert scoreboard.main([str(tmp_path / "m.json")], out=board, err=io.StringIO()) == 0
    assert " 1/2 " in next(line for line in board.getvalue().splitlines() if line.startswith("Mallory"))


# --- 2. speed verdicts on what a piece really does -----------------------------------------------

CACHING = VISITED_LIST_TOPOSORT.replace("def topological_order(roots):", "def _quadratic(roots):") + '''

_answers = {}  # roots -> the order found for them: every call after the first is a lookup


def topological_order(roots):
    key = tuple(roots)
    if key not in _answers:
        _answers[key] = _quadratic(roots)
    return list(_answers[key])
'''

HARNESS_DETECTING = KAHN.replace("def topological_order(roots):", "def _linear(roots):") + \
    VISITED_LIST_TOPOSORT.replace("def topological_order(roots):", "def _quadratic(roots):") + '''

import sys


def _timed():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith("speed.py"):
            return True
        frame = frame.f_back
    return False


def topological_order(roots):
    return _linear(roots) if _timed() else _quadratic(roots)
'''


def timed_toposort(pytester, source, selection):
    """Grade a kata 03 of `source`, only its tests in `selection`; the run and its output."""
    make_checkout(pytester, katas=["03_toposort"])
    write_learner_file(pytester, "03_toposort", "toposort.py", source)
    result = pytester.runpytest("-p", "no:randomly", "-k", selection, "--kata-in-process")
    assert result.ret == 1, result.stdout.str()
    return result, result.stdout.str()


def test_a_piece_that_caches_its_answers_gets_the_verdict_of_its_real_work(pytester):
    _, out = timed_toposort(pytester, CACHING, "linear_time")
    assert "looks quadratic" in out, out


def test_a_piece_that_knows_it_is_timed_gets_no_verdict(pytester):
    result, out = timed_toposort(pytester, HARNESS_DETECTING, "linear_time or speed")
    assert "flagged: looks at the call stack while it is timed (sys._getframe)" in out, out
    assert "x reference" not in row_line(result, "03_toposort"), out


# --- 3. the oracle's comparison ------------------------------------------------------------------

SPY = '''
import sys

import numpy as np


def _spy(frame, event, arg):
    """A profile function: at the grader's comparison, torch's values into the engine's array."""
    if event == "call" and frame.f_code.co_name == "allclose":
        ours, theirs = frame.f_locals.get("a"), frame.f_locals.get("b")
        if isinstance(ours, np.ndarray) and isinstance(theirs, np.ndarray) and ours.shape == theirs.shape:
            np.copyto(ours, theirs, casting="unsafe")


def _watch():
    if sys.getprofile() is not _spy:
        sys.setprofile(_spy)
'''


def spying_rules():
    """The reference's rules, each installing the spy, and mul_backward wrong by construction."""
    source = reference_source("rules")
    source = re.sub(r"(def \w+_backward\(ctx, grad\):\n)", r"\1    _watch()\n", source)
    right = "grad_a = grad * b if"
    assert right in source and source.count("_watch()") == 11
    return "from plugin import engine as ag\n" + SPY + source.replace(right, "grad_a = grad * a if")


def test_a_profile_function_cannot_rewrite_the_comparison(pytester):
    make_checkout(pytester, katas=["01_elementwise_rules"])
    write_learner_file(pytester, "01_elementwise_rules", "rules.py", spying_rules())
    result = pytester.runpytest("-p", "no:randomly", "-k", "not speed", "--kata-in-process")
    out = result.stdout.str()
    assert kata_row(result, "01_elementwise_rules")[1] == "in progress", out
    assert "mul" in out and "differs from torch's" in out, out  # the wrong rule is caught
    assert "flagged: installs a profile or trace function while graded (sys.setprofile)" in out, out


def test_the_oracles_settings_cannot_be_changed_from_a_learner_file(pytester):
    make_checkout(pytester, katas=["01_elementwise_rules"])
    widened = ("import numpy as np\nfrom plugin.grading import oracle\n"
               "oracle.TOLERANCES = {np.dtype(np.float32): (1.0, 1.0), np.dtype(np.float64): (1.0, 1.0)}\n")
    write_learner_file(pytester, "01_elementwise_rules", "rules.py", widened + spying_rules().replace("    _watch()\n", "    pass\n"))
    result = pytester.runpytest("-p", "no:randomly", "-k", "not speed", "--kata-in-process")
    out = result.stdout.str()
    assert kata_row(result, "01_elementwise_rules")[1] == "in progress", out
    assert "were changed: plugin.grading.oracle.TOLERANCES" in out, out
    from plugin.grading import oracle

    assert isinstance(oracle.TOLERANCES, type(type.__dict__))  # read-only: no change in place either


# --- 4. learner code that rewrites the kit ---------------------------------------------------------

REWRITER = '''
import hashlib
import json
from pathlib import Path

from plugin import shipped

# When imported: kata 03's tests become two that pass on the stub, and their hashes in the
# kit's shipped.json follow, so that the next run would find nothing changed.
tests = Path(__file__).resolve().parent.parent / "03_toposort" / "test_toposort.py"
tests.write_text("def test_one():\\n    pass\\n\\n\\ndef test_two():\\n    pass\\n")
record = json.loads(shipped.SHIPPED.read_text())
record["katas"]["03_toposort"]["tests"]["test_toposort.py"] = shipped.file_hash(tests)
shipped.SHIPPED.write_text(json.dumps(record))


def add_backward(ctx, grad):
    raise NotImplementedError
'''


def test_learner_code_that_rewrites_the_kits_record_stays_flagged(pytester, monkeypatch, tmp_path):
    from plugin import shipped

    clone_record = tmp_path / "shipped.json"  # the clone's shipped.json, as learner code finds it
    clone_record.write_bytes(shipped.SHIPPED.read_bytes())
    monkeypatch.setattr(shipped, "SHIPPED", clone_record)
    make_checkout(pytester, katas=["01_elementwise_rules", "03_toposort"])
    write_learner_file(pytester, "01_elementwise_rules", "rules.py", REWRITER)
    pytester.runpytest("--kata", "1", "--kata-in-process")
    assert json.loads(clone_record.read_text()) != json.loads(shipped.installed_record_path().read_text())
    result = pytester.runpytest("--kata", "3", "--kata-in-process", "--kata-report", "r.json")  # the next run
    out = result.stdout.str()
    assert kata_row(result, "03_toposort") == ("2/2", "in progress"), out
    assert "flagged: test files changed: test_toposort.py" in out, out
    assert "pip install -e . again" in out


# --- 6. a worker that dies under -n 2 -------------------------------------------------------------

def test_a_worker_that_dies_costs_the_kata_it_was_running(pytester):
    make_checkout(pytester, katas=["03_toposort", "04_accumulation"])
    write_learner_file(pytester, "03_toposort", "toposort.py", KILLED)
    result = pytester.runpytest_subprocess("-n", "2", "--kata-keep-workers", "--kata-in-process", "-p", "no:randomly",
                                           "--kata-report", "r.json", timeout=RUN_LIMIT)
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out, out
    assert result.ret == 1, out
    assert kata_row(result, "03_toposort")[1] == "crashed", out
    assert "crashed: the worker process gw" in out and "died while it ran kata 03_toposort" in out, out
    assert kata_row(result, "04_accumulation")[0] != "not run", out
    entries = {e["kata"]: e for e in json.loads((pytester.path / "r.json").read_text())["katas"]}
    assert entries["03_toposort"]["status"] == "in progress" and "died" in entries["03_toposort"]["crashed"]
    assert entries["04_accumulation"]["ran"]
