"""Watch mode, run as a learner runs it: a subprocess in a clone, a saved file, Ctrl-C."""
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from kit import REPO

KATA = "03_toposort"
RUN_LINE = "$ pytest --kata-supervised --kata 3"


@pytest.fixture
def clone(tmp_path):
    shutil.copytree(REPO / "katas" / KATA, tmp_path / "katas" / KATA, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = katas\n")
    return tmp_path


def start(clone, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "plugin.workshop.watch", "--kata", "3", "--interval", "0.1", *args, "--", "-q", "-k", "single"],
        cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    return process, lines


def wait_for(lines, text, seen, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"no {text!r} in:\n" + "".join(seen))


def everything(lines, seen):
    """All the output, once the process is gone: what was seen plus what is still queued."""
    time.sleep(0.2)
    while not lines.empty():
        seen.append(lines.get())
    return "".join(seen)


def test_saving_a_file_runs_the_kata_again(clone):
    process, lines = start(clone, "--max-runs", "2")
    seen = []
    try:
        wait_for(lines, "Watching katas/03_toposort", seen)
        learner = clone / "katas" / KATA / "toposort.py"
        learner.write_text(learner.read_text() + "\n# saved\n")
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
    output = everything(lines, seen)
    assert output.count(RUN_LINE) == 2, output
    assert output.count("1 todo") == 2, output  # the kata was graded each time


def test_ctrl_c_leaves_cleanly(clone):
    process, lines = start(clone)
    seen = []
    try:
        wait_for(lines, "Watching", seen)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    output = everything(lines, seen)
    assert "Goodbye" in output and "Traceback" not in output, output
