"""The automatic mutation score: cosmic-ray mutates each kata's model solution, planted as the
learner's file, and each mutant is graded by its kata.

For each kata a scratch checkout holds the model solution as the learner's file (for the
capstone, katas 01-08 hold theirs too, as it runs on the whole engine). cosmic-ray (a
maintained mutation-testing tool) makes every mutant of that one file (operators swapped,
comparisons turned, constants changed, ...) and, for each, changes the file in place and runs
the test command: `python tests/mutation_score.py --grade N`, which grades the kata as a
learner's run does up to its first failure (`pytest --kata N -x`, speed files left out:
they only measure) and exits 0 only when the kata comes out done. A mutant is killed when the
kata is not done. Mutants listed in tests/mutation_equivalents.toml, each with a reason,
behave like the model solution for every program (equivalent) and are left out of the score.

    python tests/mutation_score.py                  # every kata; the score per kata, the survivors
    python tests/mutation_score.py --kata 3 --kata 5
    python tests/mutation_score.py --out DIR        # keep the sessions and a summary.json there

It takes long (each mutant is a graded run): see CONTRIBUTING.md for the figures.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "blind_rounds"))

from kit import REPO, learner_source  # noqa: E402
from grade import KATAS, ROW, make_checkout, run_env  # noqa: E402

EQUIVALENTS = HERE / "mutation_equivalents.toml"
TARGET = 0.95
MUTANT_LIMIT_S = 300  # an endless loop planted by a mutant: killed (the kata's own limit is 30 s a test)


def grade(number):
    """The test command: exit 0 only when kata `number` comes out done (run in the checkout)."""
    kata = next(k for k in KATAS.values() if k.number == number)
    shutil.rmtree(".pytest_cache", ignore_errors=True)
    run = subprocess.run([sys.executable, "-m", "pytest", "--kata", str(number), "-x", "-q", "-p", "no:randomly",
                          "-k", "not speed"], capture_output=True, text=True)
    rows = {m.group(1): m.group(3) for m in map(ROW.match, run.stdout.splitlines()) if m}
    if rows.get(kata.slug) == "done":
        return 0
    print((run.stdout + run.stderr)[-1500:])  # kept in cosmic-ray's session: why the kata is not done
    return 1


def equivalents():
    """{kata slug: [(line text, operator, occurrence or None, reason)]} from the committed list
    (an entry without an occurrence covers every mutant of that operator on that line)."""
    if not EQUIVALENTS.exists():
        return {}
    data = tomllib.loads(EQUIVALENTS.read_text())
    return {slug: [(e["line"], e["operator"], e.get("occurrence"), e["reason"]) for e in entries]
            for slug, entries in data.items()}


def test_command(number):
    """cosmic-ray's test command for kata `number` (run in a planted checkout)."""
    return f"{sys.executable} {HERE / 'mutation_score.py'} --grade {number}"


def planted_checkout(slug, where=None):
    """A scratch checkout with kata `slug`'s model solution as the learner's file and a
    cosmic-ray config that mutates it: (checkout, the file's path in it, the model's source)."""
    kata = KATAS[slug]
    checkout = make_checkout(Path(where or tempfile.mkdtemp(prefix=f"mutants-{slug}-")), slug)
    module = Path("katas") / slug / kata.learner_file
    source = learner_source(Path(kata.reference_module).stem)
    (checkout / module).write_text(source)
    (checkout / "cosmic-ray.toml").write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {MUTANT_LIMIT_S}.0\n"
        "excluded-modules = []\n"
        f'test-command = "{test_command(kata.number)}"\n'
        '[cosmic-ray.distributor]\nname = "local"\n'
    )
    return checkout, module, source


def score_kata(slug, out_dir):
    checkout, _, source = planted_checkout(slug)
    config = checkout / "cosmic-ray.toml"
    session = checkout / "session.sqlite"
    env = run_env(checkout)
    start = time.monotonic()
    for command in (["cosmic-ray", "init", str(config), str(session)],
                    ["cosmic-ray", "exec", str(config), str(session)]):
        subprocess.run(command, cwd=checkout, env=env, check=True, capture_output=True, text=True)
    seconds = time.monotonic() - start
    results = read_session(session, source.splitlines())
    if out_dir:
        shutil.copy(session, Path(out_dir) / f"{slug}.sqlite")
    shutil.rmtree(checkout, ignore_errors=True)
    return results, seconds


def read_session(session, lines):
    from cosmic_ray.work_db import WorkDB, use_db

    found = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            for mutation in item.mutations:
                line = lines[mutation.start_pos[0] - 1].strip()
                found.append({"line": line, "line_number": mutation.start_pos[0], "operator": mutation.operator_name,
                              "occurrence": mutation.occurrence, "outcome": str(result.test_outcome),
                              "worker": str(result.worker_outcome), "diff": result.diff or ""})
    return found


def summarize(slug, found, listed):
    def equivalent(m):
        return any(m["line"] == line and m["operator"] == operator and occurrence in (None, m["occurrence"])
                   for line, operator, occurrence, _ in listed)

    counted = [m for m in found if not equivalent(m)]
    survivors = [m for m in counted if m["outcome"].endswith("SURVIVED")]
    killed = len(counted) - len(survivors)
    share = killed / len(counted) if counted else 1.0
    return {"kata": slug, "mutants": len(found), "equivalent": len(found) - len(counted), "killed": killed,
            "survived": len(survivors), "score": round(share, 4), "survivors": survivors}


def print_summary(summary):
    """The score of one kata and each survivor with its diff."""
    print(f"{summary['kata']}: {summary['killed']} of {summary['mutants'] - summary['equivalent']} killed "
          f"({100 * summary['score']:.1f}%), {summary['equivalent']} equivalent, {summary['seconds']:.0f} s", flush=True)
    for m in summary["survivors"]:
        print(f"  survived: line {m['line_number']} {m['operator']} #{m['occurrence']}: {m['line']}")
        for diff_line in m["diff"].splitlines():
            if diff_line.startswith(("+", "-")) and not diff_line.startswith(("+++", "---")):
                print(f"      {diff_line}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kata", type=int, action="append", default=[])
    parser.add_argument("--grade", type=int, help=argparse.SUPPRESS)  # cosmic-ray's test command
    parser.add_argument("--out", help="keep each kata's session and summary.json here")
    args = parser.parse_args(argv)
    if args.grade:
        return grade(args.grade)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    listed = equivalents()
    summaries = []
    for slug, kata in KATAS.items():
        if args.kata and kata.number not in args.kata:
            continue
        found, seconds = score_kata(slug, args.out)
        summary = summarize(slug, found, listed.get(slug, []))
        summary["seconds"] = round(seconds)
        summaries.append(summary)
        print_summary(summary)
    if args.out:
        Path(args.out, "summary.json").write_text(json.dumps(summaries, indent=1) + "\n")
    low = [s["kata"] for s in summaries if s["score"] < TARGET]
    print(f"\nbelow {TARGET:.0%}: {', '.join(low) or 'none'}")
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main())
