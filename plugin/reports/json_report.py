"""The JSON report of a run (`pytest --kata-report PATH`), for an instructor's scoreboard.

One file per run: who (the learner's name), when, on what (Python, numpy, torch, platform)
and, per kata, the status, the tests in file order, the speed ratio, the hints used and the
integrity flags. The format is versioned: FORMAT names it, VERSION changes only when a field
changes meaning or goes away (new fields may be added within a version). The "Reports" section
of docs/instructors.md documents every field.

The learner's name comes from `--kata-learner NAME`, else the environment variable
AUTOGRAD_KATAS_LEARNER, else git's `user.name`, else the login name.
"""
import datetime
import getpass
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from ..files import write_atomically

FORMAT = "autograd-katas-report"
VERSION = 1
LEARNER_ENV = "AUTOGRAD_KATAS_LEARNER"
GIT_TIMEOUT_S = 5


def learner_name(option=None, cwd=None):
    """The learner's name: the option, the environment variable, git's user.name, the login."""
    for name in (option, os.environ.get(LEARNER_ENV)):
        if name and name.strip():
            return name.strip()
    name = _git_user_name(cwd)
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:  # no login name (some containers): still a report
        return "anonymous"


def _git_user_name(cwd):
    try:
        done = subprocess.run(
            ["git", "config", "user.name"], cwd=cwd, capture_output=True, text=True,
            timeout=GIT_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, or git hangs
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def kit_version():
    try:
        from importlib.metadata import version

        return version("autograd-katas")
    except Exception:
        return "unknown"


def environment():
    import numpy

    try:  # torch's own answer where a test imported it; else its package's (not an import: 1 s)
        torch = sys.modules.get("torch")
        torch_version = torch.__version__ if torch is not None else metadata.version("torch")
    except Exception:
        torch_version = None
    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "torch": torch_version,
        "platform": platform.platform(),
    }


def now():
    """The time of a run: UTC, ISO 8601, to the second (`2026-11-23T09:45:17Z`)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def kata_entry(kata, status, result, hints_used, hints_total, remembered=""):
    """The report's entry of one kata; `result` is None when its tests did not run (then
    `remembered` is the status an earlier run left in pytest's cache, shown, never counted)."""
    missing = not kata.exists()
    ran = not missing and result is not None and bool(result.tests)
    tests = []
    if ran:
        prefix = f"katas/{kata.slug}/"
        for test in result.ordered():
            name = test.nodeid[len(prefix):] if test.nodeid.startswith(prefix) else test.nodeid
            tests.append({
                "name": name,
                "status": test.outcome,
                "message": (test.message or "").strip().split("\n", 1)[0],
            })
    graded = result.graded if ran else []
    return {
        "kata": kata.slug,
        "number": kata.number,
        "status": status,
        "ran": ran,
        "passed": sum(1 for t in graded if t.outcome == "passed"),
        "total": len(graded),
        "speed_ratio": None if not ran or result.ratio is None else round(result.ratio, 3),
        "growth": result.growth if ran else "",
        "hints_used": hints_used,
        "hints_total": hints_total,
        "flags": list(result.flags) if ran else [],
        "partial": bool(ran and result.partial),
        "selection": result.partial if ran else "",
        "file_missing": missing,
        "remembered": "" if ran else (remembered or ""),
        "crashed": result.crash if ran else "",
        "tests": tests,
    }


def build(katas, statuses, results, hints_used, hints_total, learner, solution, time=None, run_flags=(),
          remembered=None):
    """The whole report as a dict (what write() saves). `statuses` are this run's (a kata it
    did not grade is "not started"); `remembered` the statuses of earlier runs, shown for the
    katas this run did not grade. `run_flags` flag the whole run (the grader's own functions
    replaced); the grading adds them to every kata that ran too."""
    remembered = remembered or {}
    entries = [
        kata_entry(k, statuses[k.slug], results.get(k.slug), hints_used.get(k.slug, 0), hints_total.get(k.slug, 0),
                   remembered.get(k.slug, ""))
        for k in katas
    ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "kit_version": kit_version(),
        "learner": learner,
        "time": time or now(),
        "solution": solution,
        "environment": environment(),
        "summary": {"done": sum(1 for e in entries if e["status"] == "done"), "katas": len(entries)},
        "flags": list(run_flags),
        "katas": entries,
    }


MAX_REPORT_BYTES = 16 * 1024 * 1024  # a file this big is no report of the kit's


def not_a_report(path):
    """Why the file at `path` must not be replaced by a report ("" when it may: nothing is
    there, or an empty file, or a report: the kit's JSON or Gradescope's results.json). A
    learner's code or notes at a mistyped path are never overwritten."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return ""
    if not path.is_file():
        return "it is not a regular file"
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if not data.strip():
        return ""
    try:
        document = json.loads(data) if len(data) <= MAX_REPORT_BYTES else None
    except (ValueError, RecursionError):
        document = None
    if document == {} or isinstance(document, dict) and (
            document.get("format") == FORMAT or isinstance(document.get("tests"), list) and "score" in document):
        return ""
    return "it is not a report (the kit's JSON, or Gradescope's results.json)"


def write(path, data):
    """Save `data` at `path` atomically (a temporary file beside it, then a rename), creating
    its folders. Returns the learner of the report it replaced when that was someone else's
    (the path is the user's choice: it is replaced, and the run says so), else None. A file
    there that is not a report is never replaced (OSError)."""
    path = Path(path)
    why = not_a_report(path)
    if why:
        raise OSError(f"{path} is left as it is: {why}")
    path.parent.mkdir(parents=True, exist_ok=True)
    replaced = _learner_of(path)
    write_atomically(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    return replaced if replaced not in (None, data.get("learner")) else None


def _learner_of(path):
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("learner") if isinstance(data, dict) and data.get("format") == FORMAT else None
