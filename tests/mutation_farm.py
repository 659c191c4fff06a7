"""The automatic mutation score on a many-core machine: cosmic-ray's mutants graded in parallel.

tests/mutation_score.py grades one mutant at a time (cosmic-ray's own loop): about 1,200
mutants at several seconds each. This driver grades the same mutants, each exactly as
mutation_score.py does (cosmic-ray mutates the model solution planted as the learner's file,
then `mutation_score.py --grade N`), on a pool of workers, each in its own scratch checkout per
kata. Results are written as JSON lines as they come, so that a run cut short keeps what was
graded, and a later run can skip it.

    python tests/mutation_farm.py --workers 15               # every kata: mutants, grading, score
    python tests/mutation_farm.py --kata 8 --workers 4 --out DIR

In steps (make the list on one machine, grade on another, report anywhere):

    python tests/mutation_farm.py --prepare DIR [--kata N]   # DIR/items.jsonl (cosmic-ray init)
    python tests/mutation_farm.py --from DIR --workers 15 --out OUT [--models] [--stop-after S]
                                  [--skip OLD/results.jsonl]
    python tests/mutation_farm.py --report OUT/results.jsonl [MORE.jsonl ...]

`--models` first grades each kata's model solution in every worker's checkout: a kata whose
model solution is not done there is not scored. `--stop-after S` starts no mutant after S
seconds (the report counts what is left as not graded). The report reads
tests/mutation_equivalents.toml as mutation_score.py does; it exits 1 when a kata graded in
full is below the target.
"""
import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mutation_score import (KATAS, MUTANT_LIMIT_S, TARGET, equivalents, planted_checkout,  # noqa: E402
                            print_summary, run_env, summarize, test_command)

ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
MODEL = "model"  # the operator of an item that grades the model solution itself, unmutated


def prepare(where, numbers):
    """Every mutant of the chosen katas (all when none), as cosmic-ray's `init` lists them,
    written to where/items.jsonl, smaller katas first."""
    from cosmic_ray.work_db import WorkDB, use_db

    where = Path(where)
    where.mkdir(parents=True, exist_ok=True)
    items = []
    for slug, kata in KATAS.items():
        if numbers and kata.number not in numbers:
            continue
        checkout, module, source = planted_checkout(slug)
        session = checkout / "session.sqlite"
        subprocess.run(["cosmic-ray", "init", "cosmic-ray.toml", str(session)], cwd=checkout, env=run_env(checkout),
                       check=True, capture_output=True, text=True)
        lines = source.splitlines()
        with use_db(str(session), WorkDB.Mode.open) as db:
            for item in db.pending_work_items:
                for mutation in item.mutations:
                    items.append({"kata": slug, "number": kata.number, "module": str(module),
                                  "operator": mutation.operator_name, "occurrence": mutation.occurrence,
                                  "line_number": mutation.start_pos[0],
                                  "line": lines[mutation.start_pos[0] - 1].strip()})
    sizes = {slug: sum(i["kata"] == slug for i in items) for slug in KATAS}
    items.sort(key=lambda i: (sizes[i["kata"]], i["kata"], i["line_number"], i["operator"], i["occurrence"]))
    with open(where / "items.jsonl", "w") as out:
        out.writelines(json.dumps(i) + "\n" for i in items)
    return items


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(item):
    return item["kata"], item["operator"], item["occurrence"]


def one(module, operator, occurrence, number, timeout):
    """Grade one mutant in the current directory (a planted checkout) and print its result as
    JSON: cosmic-ray applies the mutation, runs the test command, and puts the file back."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.testing import run_tests
    from cosmic_ray.work_item import MutationSpec

    if operator == MODEL:
        outcome, output = run_tests(test_command(number), timeout)
        result = {"test_outcome": str(outcome), "worker_outcome": "WorkerOutcome.NORMAL", "diff": "", "output": output}
    else:
        spec = MutationSpec(Path(module), operator, occurrence, (0, 0), (0, 1))
        work = mutate_and_test([spec], test_command(number), timeout)
        result = {"test_outcome": str(work.test_outcome), "worker_outcome": str(work.worker_outcome),
                  "diff": work.diff or "", "output": work.output or ""}
    result["output"] = result["output"][-2000:]
    print(json.dumps(result))
    return 0


class Farm:
    """A pool of workers, each with its own scratch checkout per kata (made on first use)."""

    def __init__(self, workers, out, timeout, stop_after):
        self.workers, self.timeout, self.stop_after = workers, timeout, stop_after
        self.root = Path(tempfile.mkdtemp(prefix="mutation-farm-"))
        self.results = open(Path(out) / "results.jsonl", "a")
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.done = 0

    def checkout(self, worker, slug):
        where = self.root / f"w{worker}" / slug
        if not where.exists():
            planted_checkout(slug, where)
        return where

    def grade(self, worker, item):
        where = self.checkout(worker, item["kata"])
        env = {**run_env(where), **ONE_THREAD}
        started = time.monotonic()
        command = [sys.executable, str(Path(__file__).resolve()), "--one", item["module"], item["operator"],
                   str(item["occurrence"]), str(item["number"]), str(self.timeout)]
        try:
            run = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True,
                                 timeout=self.timeout + 120)
            result = json.loads(run.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, ValueError, IndexError) as error:
            result = {"test_outcome": "TestOutcome.INCOMPETENT", "worker_outcome": "WorkerOutcome.EXCEPTION",
                      "diff": "", "output": f"the driver lost this mutant: {error!r}"}
        if result["test_outcome"].endswith("KILLED"):
            result["output"] = result["output"][-300:]  # a killed mutant's log is not read
        return {**item, "outcome": result.pop("test_outcome"), "worker": result.pop("worker_outcome"),
                **result, "seconds": round(time.monotonic() - started, 1), "slot": worker}

    def record(self, result):
        with self.lock:
            self.results.write(json.dumps(result) + "\n")
            self.results.flush()
            self.done += 1
            mark = result["outcome"].split(".")[-1].lower()
            print(f"[{time.monotonic() - self.start:6.0f} s] {self.done:4d} {result['kata']} "
                  f"line {result['line_number']} {result['operator']} #{result['occurrence']}: {mark} "
                  f"({result['seconds']} s)", flush=True)

    def run(self, items):
        """Grade `items` in order (a worker takes the next one when it is free)."""
        todo = queue.Queue()
        for item in items:
            todo.put(item)

        def work(worker):
            while time.monotonic() - self.start < self.stop_after:
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                self.record(self.grade(worker, item))

        threads = [threading.Thread(target=work, args=(w,)) for w in range(self.workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return todo.qsize()


def check_models(farm, slugs):
    """Grade each kata's model solution, unmutated, in a worker's checkout (all at once): the
    katas whose model solution comes out done."""
    found = []
    lock = threading.Lock()

    def work(worker, slug):
        item = {"kata": slug, "number": KATAS[slug].number, "module": "", "operator": MODEL, "occurrence": 0,
                "line_number": 0, "line": ""}
        result = farm.grade(worker, item)
        with lock:
            found.append(result)
            print(f"model solution of {slug}: {result['outcome']} in {result['seconds']} s", flush=True)

    threads = [threading.Thread(target=work, args=(n % farm.workers, slug)) for n, slug in enumerate(slugs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    good = [slug for slug in slugs if all(r["outcome"].endswith("SURVIVED") for r in found if r["kata"] == slug)]
    for slug in slugs:
        if slug not in good:
            print(f"{slug}: its model solution is not done here; not scored", flush=True)
    return good, found


def report(results, items=None):
    """The score per kata, as mutation_score.py prints it; 1 when a kata graded in full is below
    the target."""
    listed = equivalents()
    graded = {}
    for result in results:
        if result["operator"] != MODEL:
            graded[key(result)] = result  # a rerun's result of a mutant replaces the earlier one
    low = []
    summaries = []
    for slug in KATAS:
        found = [r for r in graded.values() if r["kata"] == slug]
        if not found:
            continue
        summary = summarize(slug, found, listed.get(slug, []))
        summary["seconds"] = sum(r["seconds"] for r in found)
        summary["lost"] = [r for r in found if not r["worker"].endswith("NORMAL")]
        left = [i for i in items or [] if i["kata"] == slug and key(i) not in graded]
        summaries.append(summary)
        print_summary(summary)
        for r in summary["lost"]:
            print(f"  not graded ({r['worker']}): line {r['line_number']} {r['operator']} #{r['occurrence']}")
        if left:
            print(f"  {len(left)} mutants not graded yet")
        elif summary["score"] < TARGET:
            low.append(slug)
    print(f"\nbelow {TARGET:.0%}: {', '.join(low) or 'none'} (seconds: grading time summed over workers)")
    return summaries, 1 if low else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kata", type=int, action="append", default=[])
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--out", help="where results.jsonl goes (a new temporary folder when not given)")
    parser.add_argument("--prepare", metavar="DIR", help="only list the mutants, in DIR/items.jsonl")
    parser.add_argument("--from", dest="source", metavar="DIR", help="grade the mutants listed in DIR/items.jsonl")
    parser.add_argument("--skip", action="append", default=[], metavar="RESULTS",
                        help="leave out the mutants graded in this results.jsonl")
    parser.add_argument("--models", action="store_true", help="first check each kata's model solution is done")
    parser.add_argument("--stop-after", type=float, default=float("inf"), metavar="S")
    parser.add_argument("--timeout", type=float, default=MUTANT_LIMIT_S, help="seconds one mutant may take")
    parser.add_argument("--report", nargs="+", metavar="RESULTS", help="only the score, from results files")
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)  # a worker's single mutant
    args = parser.parse_args(argv)
    if args.one:
        module, operator, occurrence, number, timeout = args.one
        return one(module, operator, int(occurrence), int(number), float(timeout))
    if args.report:
        return report([r for path in args.report for r in read_jsonl(path)])[1]
    if args.prepare:
        items = prepare(args.prepare, args.kata)
        print(f"{len(items)} mutants in {Path(args.prepare) / 'items.jsonl'}")
        return 0
    items = read_jsonl(Path(args.source) / "items.jsonl") if args.source else prepare(tempfile.mkdtemp(), args.kata)
    if args.kata:
        items = [i for i in items if i["number"] in args.kata]
    skipped = {key(r) for path in args.skip for r in read_jsonl(path) if r["worker"].endswith("NORMAL")}
    items = [i for i in items if key(i) not in skipped]
    out = Path(args.out or tempfile.mkdtemp(prefix="mutation-farm-out-"))
    out.mkdir(parents=True, exist_ok=True)
    farm = Farm(args.workers, out, args.timeout, args.stop_after)
    slugs = list(dict.fromkeys(i["kata"] for i in items))
    if args.models:
        good, models = check_models(farm, slugs)
        with open(out / "models.jsonl", "w") as f:
            f.writelines(json.dumps(m) + "\n" for m in models)
        items = [i for i in items if i["kata"] in good]
    print(f"{len(items)} mutants, {args.workers} workers, results in {out / 'results.jsonl'}", flush=True)
    left = farm.run(items)
    farm.results.close()
    shutil.rmtree(farm.root, ignore_errors=True)
    print(f"graded in {time.monotonic() - farm.start:.0f} s; {left} not started (--stop-after)\n", flush=True)
    return report(read_jsonl(out / "results.jsonl"), items)[1]


if __name__ == "__main__":
    sys.exit(main())
