"""The supervised run (issue 26, points 2 and 3): the commands that decide a grade or an exit
status grade in a child process, under a supervisor that no learner code can cross.

Each case plants a hostile kata 03 in a clone with katas 03 and 04 (04 is graded after it)
and checks the verdict of kata 03 and that kata 04 was still graded. Small limits keep the
runs short; the pytester timeouts are only reached when a run hangs, which is the bug.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kit import REPO, kata_row, make_checkout, write_learner_file

KATAS = ["03_toposort", "04_accumulation"]
HARD = "6"  # --kata-hard-limit of the runs below, in seconds
RUN_LIMIT = 600  # a pytester run's own limit: only reached when a run hangs

C_LOOP = '''
import collections
import itertools


def topological_order(roots):
    collections.deque(itertools.count(), maxlen=0)  # a loop inside C: no signal handler runs
'''

CANCELLED_TIMER = '''
import signal


def topological_order(roots):
    signal.setitimer(signal.ITIMER_REAL, 0)  # the grader's per-test timer is gone
    while True:
        pass
'''

LIVE_THREAD = '''
import threading
import time

threading.Thread(target=lambda: time.sleep(10 ** 6)).start()  # not a daemon: keeps the process alive


def topological_order(roots):
    raise NotImplementedError
'''

SEGFAULT = '''
import sys


def topological_order(roots):
    sys.setrecursionlimit(10 ** 8)
    return deeper()


def deeper():
    return deeper.__call__()  # each call through C: past the C stack, the interpreter crashes
'''

EXIT_0 = '''
import os


def topological_order(roots):
    os._exit(0)
'''

ATEXIT_FORGER = '''
import atexit
import json
import os
import sys
import time


def forge():
    path = next(a.split("=", 1)[-1] for a in sys.argv if a.endswith(".json"))
    forged = {"score": 100.0, "output": "forged", "tests": []}
    if os.fork() == 0:  # a daemon that leaves the process group, waits, and writes again
        os.setsid()
        if os.fork() == 0:
            time.sleep(2)
            with open(path, "w") as out:
                json.dump(forged, out)
        os._exit(0)
    with open(path, "w") as out:
        json.dump(forged, out)


atexit.register(forge)


def topological_order(roots):
    raise NotImplementedError
'''


def hostile(pytester, source):
    make_checkout(pytester, katas=KATAS)
    write_learner_file(pytester, "03_toposort", "toposort.py", source)


def supervised(pytester, *options):
    return pytester.runpytest_subprocess("--kata-supervised", "--kata-hard-limit", HARD, "-p", "no:randomly",
                                         "--kata-report", "r.json", *options, timeout=RUN_LIMIT)


def report_entries(pytester):
    return {e["kata"]: e for e in json.loads((pytester.path / "r.json").read_text())["katas"]}


def assert_kata_03_lost_and_04_graded(pytester, result, status, phrase):
    __tracebackhide__ = True
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 1, out
    assert kata_row(result, "03_toposort")[1] in ("in progress", "crashed", "timed out"), out
    assert f"03_toposort" in out and phrase in out, out
    assert kata_row(result, "04_accumulation")[0] != "not run", out  # graded in a fresh child
    entries = report_entries(pytester)
    assert entries["03_toposort"]["status"] == "in progress", entries["03_toposort"]
    assert phrase in entries["03_toposort"]["crashed"], entries["03_toposort"]
    assert entries["04_accumulation"]["ran"] and entries["04_accumulation"]["status"] == "not started"
    assert status in "\n".join(result.outlines)


@pytest.mark.parametrize("source", [C_LOOP, CANCELLED_TIMER], ids=["loop-in-C", "timer-cancelled"])
def test_a_kata_past_its_hard_limit_is_timed_out_and_the_others_are_graded(pytester, source):
    hostile(pytester, source)
    result = supervised(pytester)
    assert_kata_03_lost_and_04_graded(pytester, result, "timed out", f"ran past its hard limit of {HARD} s")


def test_a_segfault_costs_its_kata_only(pytester):
    hostile(pytester, SEGFAULT)
    result = supervised(pytester)
    assert_kata_03_lost_and_04_graded(pytester, result, "crashed", "was killed by SIGSEGV")


def test_os_exit_0_costs_its_kata_and_decides_nothing(pytester):
    hostile(pytester, EXIT_0)
    (pytester.path / "r.json").write_text(json.dumps({"format": "autograd-katas-report", "learner": "old"}))
    result = supervised(pytester, "--kata-require-done")
    assert_kata_03_lost_and_04_graded(pytester, result, "crashed", "exited with status 0")
    assert json.loads((pytester.path / "r.json").read_text())["learner"] != "old"  # written anew
    # pytest's own option decides honestly too: it runs itself under the supervisor.
    direct = pytester.runpytest_subprocess("--kata", "3", "--kata-require-done", timeout=RUN_LIMIT)
    assert direct.ret == 1, direct.stdout.str()
    assert "Autograd Katas" in direct.stdout.str()


def test_a_live_thread_does_not_keep_the_run_alive(pytester):
    hostile(pytester, LIVE_THREAD)
    result = supervised(pytester)
    out = result.stdout.str()
    assert result.ret == 0, out
    tests, status = kata_row(result, "03_toposort")
    assert tests.startswith("0/") and status == "not started", out
    assert "did not end after grading" in out


def test_an_atexit_handler_cannot_rewrite_the_results(pytester):
    hostile(pytester, ATEXIT_FORGER)
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "--kata-report", "results.json", "--kata-report-format", "gradescope", timeout=RUN_LIMIT)
    assert result.ret == 0, result.stdout.str()
    time.sleep(3)  # the daemon's second write would have come by now
    results = json.loads((pytester.path / "results.json").read_text())
    assert results["score"] == 0.0 and results["output"] != "forged", results


def test_ctrl_c_stops_the_child_too(pytester):
    hostile(pytester, C_LOOP)
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--kata-supervised", "-p", "no:randomly", "--kata", "3"],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = ""
    try:
        while "test_toposort.py" not in output:  # until the kata's first test runs (in the C loop)
            output += process.stdout.read(1) or "(ended)"
        time.sleep(1)
        process.send_signal(signal.SIGINT)
        output += process.communicate(timeout=60)[0]
    finally:
        process.kill()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Stopped" in output
    alive = subprocess.run(["pgrep", "-f", f"--kata-child-fd.*"], capture_output=True, text=True).stdout.split()
    mine = [pid for pid in alive if str(pytester.path) in _cwd(pid)]
    assert not mine, mine


def _cwd(pid):
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def test_a_piece_that_allocates_without_end_meets_the_memory_limit(pytester):
    hostile(pytester, "def topological_order(roots):\n    return [0] * (10 ** 10)  # 80 GB\n")
    result = supervised(pytester, "--kata-memory-limit", "2048")
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "MemoryError" in out, out
    assert kata_row(result, "04_accumulation")[0] != "not run", out


def test_the_katas_command_runs_supervised(pytester):
    hostile(pytester, EXIT_0)
    done = subprocess.run([sys.executable, "-m", "plugin.workshop.cli", "check", "3", "--require-done"],
                          cwd=pytester.path, env=dict(os.environ, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True, timeout=RUN_LIMIT, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("$ pytest --kata-supervised")
    assert "crashed: the grading process exited with status 0" in done.stdout
