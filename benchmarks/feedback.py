"""What a learner waits for and what a speed verdict is worth, measured as a learner meets them.

    python -m benchmarks.feedback stability --kata 3 --runs 5   # the same piece graded 5 times
    python -m benchmarks.feedback stability --kata 3 --busy 2   # ... with 2 CPU burners beside it
    python -m benchmarks.feedback time --kata 1 --kata 3        # wall time of `pytest --kata N`

Each run works in a fresh copy of the katas (a learner's clone) in a temporary folder, with
the reference's own piece planted as the learner's file (a finished kata), or the shipped
stub (`--stub`, a kata not started). `stability` grades the kata `--runs` times from an empty
cache (every run times the piece again) and prints each speed ratio, their median and the
largest deviation from it (SPEC: within +-15% on an idle machine), and whether any growth
verdict failed (it never may on the reference's own code). `time` prints the wall time of
`pytest --kata N`, the first run (everything timed) and a second one (the verdicts
remembered), as `python -m plugin.watch` gives them after each save.

Run from the repository root, on an idle machine for figures worth quoting.
"""
import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from kit import learner_source  # noqa: E402  (the kit's own tests plant pieces the same way)

from plugin.manifest import ALL_KATAS  # noqa: E402
from plugin.workshop.autograder import prepare  # noqa: E402


def _burn(stop):
    while not stop.is_set():
        sum(i * i for i in range(10_000))


class Busy:
    """`count` processes that keep a core each busy, as other jobs on a shared machine."""

    def __init__(self, count):
        self.count = count

    def __enter__(self):
        self.stop = multiprocessing.Event()
        self.workers = [multiprocessing.Process(target=_burn, args=(self.stop,)) for _ in range(self.count)]
        for worker in self.workers:
            worker.start()
        return self

    def __exit__(self, *exc_info):
        self.stop.set()
        for worker in self.workers:
            worker.join(5)
            if worker.is_alive():
                worker.kill()


def make_clone(folder, kata, stub):
    """A learner's clone in `folder` with kata's file the reference solution (or the stub)."""
    prepare(folder)  # the same clone the Gradescope autograder grades in
    if stub:
        return
    # The capstone runs on every learner piece: plant every kata's reference solution.
    for planted in (ALL_KATAS if kata.whole_engine else [kata]):
        module = planted.reference_module.removeprefix("reference/").removesuffix(".py")
        (folder / "katas" / planted.slug / planted.learner_file).write_text(learner_source(module))


def grade(folder, kata, *options):
    """(wall seconds, the report's entry of the kata) for one `pytest --kata N`."""
    report = folder / "report.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "--kata", str(kata.number), "-p", "no:randomly", "-q",
         "--kata-report", str(report), *options],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )
    wall = time.perf_counter() - start
    entries = json.loads(report.read_text())["katas"]
    return wall, next(e for e in entries if e["kata"] == kata.slug)


def find(number):
    return next(k for k in ALL_KATAS if k.number == number)


def stability(numbers, runs, busy):
    for number in numbers:
        kata = find(number)
        with tempfile.TemporaryDirectory() as tmp, Busy(busy):
            folder = Path(tmp)
            make_clone(folder, kata, stub=False)
            ratios, growth_failures = [], 0
            for _ in range(runs):
                _, entry = grade(folder, kata, "--cache-clear")
                if entry["speed_ratio"] is not None:
                    ratios.append(entry["speed_ratio"])
                growth_failures += "quadratic" in (entry.get("growth") or "")
                if entry["status"] != "done":
                    print(f"  {kata.slug}: not done on the reference ({entry['status']})")
        if not ratios:
            print(f"{kata.slug}: no speed ratio")
            continue
        middle = statistics.median(ratios)
        deviation = max(abs(r / middle - 1) for r in ratios)
        print(
            f"{kata.slug}: ratios {', '.join(f'{r:.2f}' for r in ratios)}; median {middle:.2f}, "
            f"largest deviation {deviation:+.0%}; growth verdicts failed: {growth_failures}"
            + (f" (with {busy} CPU burners)" if busy else "")
        )


def feedback_time(numbers, stub, busy):
    for number in numbers:
        kata = find(number)
        with tempfile.TemporaryDirectory() as tmp, Busy(busy):
            folder = Path(tmp)
            make_clone(folder, kata, stub=stub)
            first, entry = grade(folder, kata)
            again, _ = grade(folder, kata)
        print(f"{kata.slug} ({entry['status']}): first run {first:.1f} s, again {again:.1f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.feedback", description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("stability", "time"))
    parser.add_argument("--kata", type=int, action="append", help="kata numbers (default: 3)")
    parser.add_argument("--runs", type=int, default=5, help="gradings per kata (stability)")
    parser.add_argument("--busy", type=int, default=0, help="CPU burners running beside the grading")
    parser.add_argument("--stub", action="store_true", help="time the shipped stub (a kata not started)")
    args = parser.parse_args(argv)
    numbers = args.kata or [3]
    if args.what == "stability":
        stability(numbers, args.runs, args.busy)
    else:
        feedback_time(numbers, args.stub, args.busy)


if __name__ == "__main__":
    main()
