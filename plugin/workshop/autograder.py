"""Grade a submission the way Gradescope's autograder runs it (examples/gradescope/).

    python -m plugin.workshop.autograder --submission DIR --results results.json

The kit itself (this repository, with the shipped tests) is the grader: only the learner
files named in the kata manifest are taken from the submission (at `katas/NN_name/FILE` or,
for a flat upload, `FILE`), copied into a fresh copy of the kit's katas, and graded there.
A submission cannot bring its own tests or conftest.py. The results file is always written:
when grading itself fails, it says so with a score of 0.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..files import write_atomically
from ..manifest import ALL_KATAS

KIT = Path(__file__).resolve().parents[2]


def collect(submission, work):
    """Copy each learner file found in `submission` over the stub in `work`; the names found."""
    found = []
    for kata in ALL_KATAS:
        for candidate in (submission / "katas" / kata.slug / kata.learner_file, submission / kata.learner_file):
            if candidate.is_file():
                shutil.copyfile(candidate, work / "katas" / kata.slug / kata.learner_file)
                found.append(f"katas/{kata.slug}/{kata.learner_file}")
                break
    return found


def prepare(work):
    """A learner's clone of the kit in `work`: the shipped katas and the root conftest."""
    shutil.copytree(KIT / "katas", work / "katas", ignore=shutil.ignore_patterns("__pycache__", "*.bak-*"))
    shutil.copyfile(KIT / "conftest.py", work / "conftest.py")
    (work / "pytest.ini").write_text("[pytest]\ntestpaths = katas\n", encoding="utf-8")
    for settings in ("katas.toml", "pyproject.toml"):  # the course's weights, if any
        if (KIT / settings).is_file():
            shutil.copyfile(KIT / settings, work / settings)


def failed(results, why):
    document = {"score": 0.0, "output": f"The autograder could not grade this submission: {why}", "tests": []}
    write_atomically(results, (json.dumps(document, indent=2) + "\n").encode("utf-8"))


def grade(submission, results, extra=()):
    submission, results = Path(submission), Path(results)
    results.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="katas-") as tmp:
        work = Path(tmp)
        prepare(work)
        found = collect(submission, work)
        if not found:
            failed(results, "no learner file found (expected katas/NN_name/FILE.py, as in the kit)")
            return 0
        command = [
            sys.executable, "-m", "pytest", "-q", "--no-header", "-rN", "--tb=no", "-p", "no:cacheprovider",
            "--kata-report", str(results.resolve()), "--kata-report-format", "gradescope", *extra,
        ]
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False, env=_grading_env())
        print(done.stdout[-20_000:])  # Gradescope shows the autograder's output to the instructor
        if done.returncode not in (0, 1) or not results.is_file():
            failed(results, f"pytest exited with {done.returncode}: {done.stderr.strip()[-500:]}")
            return 0
    data = json.loads(results.read_text(encoding="utf-8"))
    data["execution_time"] = int(round(time.monotonic() - start))
    write_atomically(results, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    return 0


def _grading_env():
    """The child's environment: this kit first on its import path, so that the grading imports
    `plugin` and `reference` from the kit the autograder runs from, not from another copy the
    environment has installed (an editable install of an instructor's own checkout)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(KIT), env.get("PYTHONPATH", "")) if p)
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m plugin.workshop.autograder", description=__doc__.split("\n")[0])
    parser.add_argument("--submission", required=True, help="the submitted files (Gradescope: /autograder/submission)")
    parser.add_argument("--results", required=True, help="where to write results.json")
    parser.add_argument("--per-test", action="store_true", help="one Gradescope entry per test")
    args = parser.parse_args(argv)
    return grade(args.submission, args.results, ["--kata-report-per-test"] if args.per_test else [])


if __name__ == "__main__":
    sys.exit(main())
