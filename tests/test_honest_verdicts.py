"""Verdicts that stay honest (issue 30): what a report may count as done, speed measured on
what a piece really does, an oracle that learner code cannot talk round, the kit's own files
anchored, a shared reports folder that cannot hang the scoreboard, a worker that dies."""
import json

from kit import kata_row, make_checkout, write_learner_file

RUN_LIMIT = 600  # a pytester run's own limit: only reached when a run hangs

KILLED = '''
import os
import signal


def topological_order(roots):
    os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer does
'''


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
