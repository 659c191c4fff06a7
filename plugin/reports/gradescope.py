"""Gradescope's autograder results (`results.json`), made from a run's report.

    pytest --kata-report results.json --kata-report-format gradescope
    katas report results.json --gradescope            # the same
    ... --kata-report-per-test                        # one entry per test, not per kata

One entry per kata (the default) with its name, score, max_score, status ("passed" only when
the kata is done) and a short output: the kata's status, its first failure and what to run
next. A kata's points are `points` (10) unless the course sets its own, in the
`[tool.autograd-katas]` table of the clone's pyproject.toml (or a `katas.toml` beside it):

    [tool.autograd-katas]
    points = 10                                  # each kata's points unless named below
    weights = { "03_toposort" = 20, "10_capstone" = 30 }
    partial_credit = true                        # a kata not done: points x passed/total

A flagged kata (it imports torch or the reference, its tests were changed, it delegated to
the reference's piece) scores 0, and so does a kata whose tests did not all run or whose
grading crashed.
See examples/gradescope/ for the autograder's setup.sh and run_autograder.
"""
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

from pathlib import Path

DEFAULT_POINTS = 10.0
SETTINGS_TABLE = "autograd-katas"


def course_settings(root):
    """{"points", "weights", "partial_credit"} from katas.toml or pyproject.toml at `root`;
    the defaults where neither says. A file that cannot be read is a ValueError naming it."""
    settings = {"points": DEFAULT_POINTS, "weights": {}, "partial_credit": True}
    for name, inside_tool in (("katas.toml", False), ("pyproject.toml", True)):
        path = Path(root) / name
        if not path.is_file():
            continue
        if tomllib is None:
            raise ValueError(f"{path}: reading course settings needs Python 3.11 (tomllib)")
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: {error}") from None
        table = data.get("tool", {}).get(SETTINGS_TABLE, {}) if inside_tool else data.get(SETTINGS_TABLE, data)
        if table:
            settings.update(_checked(table, path))
            break
    return settings


def _checked(table, path):
    found = {}
    if "points" in table:
        found["points"] = _number(table["points"], f"{path}: points")
    if "weights" in table:
        if not isinstance(table["weights"], dict):
            raise ValueError(f"{path}: weights must be a table of kata = points")
        found["weights"] = {str(k): _number(v, f"{path}: weights.{k}") for k, v in table["weights"].items()}
    if "partial_credit" in table:
        if not isinstance(table["partial_credit"], bool):
            raise ValueError(f"{path}: partial_credit must be true or false")
        found["partial_credit"] = table["partial_credit"]
    return found


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{where} must be a number of points (0 or more), not {value!r}")
    return float(value)


def kata_points(entry, settings):
    weights = settings["weights"]
    for key in (entry["kata"], str(entry["number"]), entry["kata"].split("_", 1)[-1]):
        if key in weights:
            return weights[key]
    return settings["points"]


def _earned(entry, points, settings):
    if not entry.get("ran", True):
        return 0.0
    if entry["status"] == "done":
        return points
    if entry.get("flags") or entry.get("partial") or entry.get("crashed") or not entry.get("total"):
        return 0.0
    if not settings["partial_credit"]:
        return 0.0
    return round(points * entry["passed"] / entry["total"], 2)


def _kata_output(entry):
    lines = [f"{entry['kata']}: {entry['status']}, {entry['passed']}/{entry['total']} tests passed"]
    for flag in entry.get("flags") or []:
        lines.append(f"flagged: {flag}")
    failure = next((t for t in entry.get("tests", []) if t["status"] == "failed"), None)
    if failure is not None:
        lines.append(f"first failure: {failure['name']}: {failure['message']}")
    if entry["status"] != "done":
        lines.append(f"next: katas check {entry['number']}  (or: pytest --kata {entry['number']})")
    return "\n".join(lines)


def results(report, settings, per_test=False, execution_time=None):
    """Gradescope's results.json (a dict) for the JSON report `report` (json_report.py)."""
    if report.get("solution", "learner") != "learner":
        # The kit checking itself: nothing here is a learner's work.
        return {"score": 0.0, "output": "This run graded the reference solution, not the submission.",
                "tests": []}
    tests = []
    for entry in report["katas"]:
        points = kata_points(entry, settings)
        if not per_test:
            tests.append({
                "name": entry["kata"],
                "number": str(entry["number"]),
                "score": _earned(entry, points, settings),
                "max_score": points,
                "status": "passed" if entry["status"] == "done" else "failed",
                "output": _kata_output(entry),
            })
            continue
        graded = [t for t in entry.get("tests", []) if t["status"] != "skipped"]
        counts = entry.get("flags") or entry.get("partial")
        for index, test in enumerate(graded, start=1):
            share = round(points / len(graded), 4)
            passed = test["status"] == "passed" and not counts
            tests.append({
                "name": f"{entry['kata']}: {test['name']}",
                "number": f"{entry['number']}.{index}",
                "score": share if passed else 0.0,
                "max_score": share,
                "status": "passed" if passed else "failed",
                "output": test["message"] or test["status"],
            })
    done = sum(1 for e in report["katas"] if e["status"] == "done")
    unfinished = next((e for e in report["katas"] if e["status"] != "done"), None)
    output = f"Progress: {done} of {len(report['katas'])} katas done."
    if unfinished is not None:
        output += f" Next: kata {unfinished['kata']} (katas check {unfinished['number']})."
    document = {
        "score": round(sum(t["score"] for t in tests), 2),
        "output": output,
        "tests": tests,
    }
    if execution_time is not None:
        document["execution_time"] = int(round(execution_time))
    return document
