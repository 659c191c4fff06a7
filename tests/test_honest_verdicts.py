"""Verdicts that stay honest (issue 30): what a report may count as done, speed measured on
what a piece really does, an oracle that learner code cannot talk round, the kit's own files
anchored, a shared reports folder that cannot hang the scoreboard, a worker that dies."""
import io
import json

from kit import kata_row, make_checkout, write_learner_file

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
