"""Watch mode stopped with SIGTERM stops the pytest run it started (issue 15, section 5)."""
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from kit import REPO
from test_workshop_watch import clone, everything  # noqa: F401 (clone is a fixture)

# A pytest plugin for the child run: it writes its process id, then takes its time.
SLOW_PLUGIN = """
import os, pathlib, time

def pytest_sessionstart(session):
    pathlib.Path("child.pid").write_text(str(os.getpid()))
    time.sleep(120)
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_stops_the_pytest_child_too(clone):
    (clone / "slow_child.py").write_text(SLOW_PLUGIN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(clone)]), PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "plugin.workshop.watch", "--kata", "3", "--", "-q", "-p", "slow_child"],
        cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    pid_file, child = clone / "child.pid", None
    try:
        deadline = time.monotonic() + 120
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        child = int(pid_file.read_text())
        assert alive(child)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(child), "the pytest child outlived the watcher"
    finally:
        process.kill()
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)
    output = everything(lines, [])
    assert "Stopped watching (SIGTERM)" in output and "Traceback" not in output, output
