"""Grades a blind round: every learner file its writers wrote, as a learner's run grades it.

A round is a folder of kata folders (`01_elementwise_rules/`, ...), each with a
`manifest.json` listing its files: bugs (`"kind": "bug"`, a plausible mistake proven against
torch) and correct variants (`"kind": "correct"`). Each file is planted as the learner's file
of its kata in a scratch checkout (the katas as shipped, every other learner file a stub; for
the capstone, katas 01-08 hold their model solutions, as it runs on the whole engine) and
graded with pytest's default options, `pytest --kata N`, from an empty cache, as a learner
would run it. A bug is caught when its kata does not come out done; a correct variant is
rejected when it does not.

    python tests/blind_rounds/grade.py ROUND [--kata N ...] [--jobs 2] [--out DIR]

ROUND is a round's folder or its kept archive (tests/blind_rounds/round1/files.tar.gz).
prints, per kata, the bugs caught and escaped and the correct variants rejected, and writes
`summary.json` and `summary.md` (and each run's output, under `logs/`) to `--out`.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: the kit's test helpers

from kit import REPO, learner_source  # noqa: E402

sys.path.insert(0, str(REPO))
from plugin.manifest import ALL_KATAS  # noqa: E402

KATAS = {k.slug: k for k in ALL_KATAS}
# The model solutions the capstone's checkout holds as the learner's files of katas 01-08.
PIECE_MODULES = {k.slug: Path(k.reference_module).stem for k in ALL_KATAS if k.pieces}
ROW = re.compile(r"^  (\d\d_\w+)\s+(\d+/\d+|not run)\s+(not started|in progress|done)")
RUN_LIMIT_S = 900  # one file's grading; the kit's own limit per test is 30 s


KIT = ("katas", "plugin", "reference")  # what a learner's clone holds and the run imports


def make_checkout(where, slug):
    """A learner's clone at `where`: the kit's code as it is now (copied, so that changes to the
    repository during a long round do not reach it: the runs import the copy, see run_env), the
    katas as shipped (stubs), the root conftest and pytest's testpaths; katas 01-08 solved for
    the capstone."""
    for folder in KIT:
        shutil.copytree(REPO / folder, where / folder,
                        ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache"))
    shutil.copy(REPO / "autograd_katas_args.py", where / "autograd_katas_args.py")
    for kata in ALL_KATAS:  # the stubs, whatever the kit's own katas/ holds
        stub = REPO / "plugin" / "shipped" / "stubs" / kata.slug / kata.learner_file
        if stub.exists():
            shutil.copy(stub, where / "katas" / kata.slug / kata.learner_file)
    shutil.copy(REPO / "conftest.py", where / "conftest.py")
    (where / "pytest.ini").write_text("[pytest]\ntestpaths = katas\n")
    if KATAS[slug].whole_engine:
        for other, module in PIECE_MODULES.items():
            (where / "katas" / other / KATAS[other].learner_file).write_text(learner_source(module))
    return where


def grade_file(checkout, slug, source):
    """Plant `source` as the learner's file of kata `slug`, run `pytest --kata N` from an
    empty cache; (status, tests, exit code, output, seconds)."""
    kata = KATAS[slug]
    planted = checkout / "katas" / slug / kata.learner_file
    stub = planted.read_text()
    planted.write_text(source)
    shutil.rmtree(checkout / ".pytest_cache", ignore_errors=True)
    env = run_env(checkout)
    start = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-m", "pytest", "--kata", str(kata.number)], cwd=checkout,
                             env=env, capture_output=True, text=True, timeout=RUN_LIMIT_S)
        output, code = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired as exc:
        output, code = f"(killed after {RUN_LIMIT_S} s)\n{exc.stdout or ''}", None
    finally:
        planted.write_text(stub)  # the next file of this checkout may be another kata's
    seconds = time.monotonic() - start
    rows = {m.group(1): m.groups()[1:] for m in map(ROW.match, output.splitlines()) if m}
    tests, status = rows.get(slug, ("?", "no table"))
    return status, tests, code, output, seconds


def run_env(checkout):
    """The environment of a graded run: the checkout's own kit first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "AUTOGRAD_KATAS"))}
    env["PYTHONPATH"] = os.pathsep.join([str(checkout)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def first_failure(output):
    """The first test the run reports as failed, with its one-line reason."""
    for line in output.splitlines():
        if line.startswith("FAILED "):
            return line[len("FAILED "):][:300]
    return ""


def unpacked(round_path):
    """A round's folder: itself, or a kept round's archive (roundN.tar.gz) unpacked."""
    path = Path(round_path)
    if path.is_file() and path.name.endswith(".tar.gz"):
        where = Path(tempfile.mkdtemp(prefix="blind-round-files-"))
        with tarfile.open(path) as archive:
            archive.extractall(where, filter="data")
        inner = [p for p in where.iterdir() if p.is_dir()]
        return inner[0] if len(inner) == 1 and not (inner[0] / "manifest.json").exists() else where
    return path


def entries(round_dir, wanted):
    for manifest in sorted(Path(round_dir).glob("*/manifest.json")):
        slug = manifest.parent.name
        if slug not in KATAS or (wanted and KATAS[slug].number not in wanted):
            continue
        for entry in json.loads(manifest.read_text()):
            yield slug, manifest.parent, entry


def grade_round(round_dir, wanted=(), jobs=2, out=None, echo=print, only=None):
    """Grade every file of the round (or the (kata, id) pairs in `only`); the list of results
    (one dict per file)."""
    todo = [e for e in entries(round_dir, wanted) if only is None or (e[0], e[2]["id"]) in only]
    logs = Path(out) / "logs" if out else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="blind-round-"))
    checkouts = {}  # (worker, slug) -> checkout

    def grade(job):
        index, (slug, folder, entry) = job
        worker = index % max(jobs, 1)
        key = (worker, KATAS[slug].whole_engine)
        if key not in checkouts:
            checkouts[key] = make_checkout(scratch / f"w{worker}-{int(key[1])}", slug)
        source = (folder / entry["file"]).read_text()
        status, tests, code, output, seconds = grade_file(checkouts[key], slug, source)
        if logs:
            (logs / f"{slug}-{entry['id']}.txt").write_text(output)
        done = status == "done"
        verdict = ("escaped" if done else "caught") if entry["kind"] == "bug" else ("accepted" if done else "rejected")
        result = {"kata": slug, "id": entry["id"], "file": entry["file"], "kind": entry["kind"],
                  "family": entry.get("family", ""), "status": status, "tests": tests, "exit": code,
                  "verdict": verdict, "seconds": round(seconds, 1), "first_failure": first_failure(output)}
        echo(f"{slug} {entry['id']:>4} {verdict:9} {status:12} {tests:>8} {seconds:6.1f} s  {entry['file']}")
        return result

    try:
        # One worker per checkout: the jobs are dealt out by index, so two never share one.
        by_worker = {}
        for job in enumerate(todo):
            by_worker.setdefault(job[0] % max(jobs, 1), []).append(job)
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            lists = pool.map(lambda js: [grade(j) for j in js], by_worker.values())
            results = [r for chunk in lists for r in chunk]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    order = {(slug, entry["id"]): i for i, (slug, _, entry) in enumerate(todo)}
    results.sort(key=lambda r: order[(r["kata"], r["id"])])
    return results


def per_kata(results):
    """{slug: {"bugs", "caught", "escaped": [ids], "correct", "rejected": [ids]}}."""
    table = {}
    for r in results:
        row = table.setdefault(r["kata"], {"bugs": 0, "caught": 0, "escaped": [], "correct": 0, "rejected": []})
        if r["kind"] == "bug":
            row["bugs"] += 1
            row["caught"] += r["verdict"] == "caught"
            if r["verdict"] == "escaped":
                row["escaped"].append(r["id"])
        else:
            row["correct"] += 1
            if r["verdict"] == "rejected":
                row["rejected"].append(r["id"])
    return table


def summary_text(results):
    table = per_kata(results)
    lines = ["| kata | bugs | caught | escaped | correct variants | rejected |",
             "| --- | --- | --- | --- | --- | --- |"]
    bugs = caught = correct = rejected = 0
    for slug, row in table.items():
        share = f"{row['caught']} ({100 * row['caught'] / row['bugs']:.0f}%)" if row["bugs"] else "-"
        lines.append(f"| {slug} | {row['bugs']} | {share} | {', '.join(row['escaped']) or '-'} | "
                     f"{row['correct']} | {', '.join(row['rejected']) or '-'} |")
        bugs, caught = bugs + row["bugs"], caught + row["caught"]
        correct, rejected = correct + row["correct"], rejected + len(row["rejected"])
    if bugs:
        lines.append(f"| all | {bugs} | {caught} ({100 * caught / bugs:.1f}%) | {bugs - caught} | {correct} | {rejected} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("round_dir")
    parser.add_argument("--kata", type=int, action="append", default=[], help="only this kata (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="files graded at once (default 2)")
    parser.add_argument("--out", help="where to write summary.json, summary.md and logs/")
    parser.add_argument("--again", metavar="SUMMARY", help="only the bugs that escaped and the correct variants "
                        "(all of them) of an earlier summary.json: a round measured again after a fix")
    args = parser.parse_args(argv)
    only = None
    if args.again:
        earlier = json.loads(Path(args.again).read_text())
        only = {(r["kata"], r["id"]) for r in earlier if r["verdict"] == "escaped" or r["kind"] == "correct"}
    args.round_dir = unpacked(args.round_dir)
    if not any(Path(args.round_dir).glob("*/manifest.json")):
        parser.error(f"{args.round_dir}: no <kata>/manifest.json in it")
    start = time.monotonic()
    results = grade_round(args.round_dir, args.kata, args.jobs, args.out, echo=lambda s: print(s, flush=True),
                          only=only)
    text = summary_text(results)
    print("\n" + text + f"\n\n{len(results)} files in {time.monotonic() - start:.0f} s")
    if args.out:
        Path(args.out, "summary.json").write_text(json.dumps(results, indent=1) + "\n")
        Path(args.out, "summary.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
