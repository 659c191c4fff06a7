"""What a learner waits for and what a speed verdict is worth, measured as a learner meets them.

    python -m benchmarks.feedback stability --kata 3 --runs 5   # the same piece graded 5 times
    python -m benchmarks.feedback stability --kata 3 --busy 2   # ... with 2 CPU burners beside it
    python -m benchmarks.feedback time --kata 1 --kata 3        # `pytest --kata N`, in 3 states
    python -m benchmarks.feedback time --kata 2 --state "in progress" --mutant 4
    python -m benchmarks.feedback whole                         # every kata: serial and -n 2

Each run works in a fresh copy of the katas (a learner's clone) in a temporary folder, with
the kata "done" (the reference's own piece planted as the learner's file), "not started"
(the shipped stub; `--stub` for that state alone) or "in progress" (the reference's piece
with a mutant of the kata's mutation suite planted, tests/test_mutants_NN.py: a one-line
mistake; `--mutant I` picks which, default the first). `stability` grades the kata `--runs`
times from an empty cache (every run times the piece again) and prints each speed ratio,
their median and the largest deviation from it (wanted: within +-15% on an idle machine), and
whether any growth verdict failed (it never may on the reference's own code). `time` prints
the wall time and the CPU time (user + system, pytest and its children) of `pytest --kata N`,
the first run (everything timed) and a second one (the verdicts remembered), as
`katas watch` gives them after each save; wanted: within 5 s wall on 2 cores.
`whole` prints the same for a whole run (`pytest`, every kata) on a clone with every kata not
started, then every kata done, serial and with `-n 2` (`-n W` to add worker counts), each
twice.

Run from the repository root, on an idle machine for figures worth quoting. Figures of
2026-11-25, on the shared 2-core machine with other developers' jobs running (load 3 to 4,
so wall times were about twice the CPU times; the lead will replace them with idle figures),
CPU time of the first / second run: not started 1.4-2.6 s; in progress 1.2-4.0 s (kata 02,
60 failures: 4.0 / 3.9 s, from 7.6 / 7.6 s before the changes of issue 15's section 4);
done 1.3-4.0 s (kata 01: 3.2 / 2.5 s, from 5.2 / 4.5 s). The table per kata and state is in
the README's Performance section.
"""
import argparse
import importlib
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
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


STATES = ("not started", "in progress", "done")


def mutant_of(kata, index=0):
    """(learner file, source, mutant) of kata's mutation suite (tests/test_mutants_NN.py): its
    correct source with the mutant's one-line mistake, a learner's kata in progress."""
    from mutation import mutate

    suite = importlib.import_module(f"test_mutants_{kata.number:02d}")
    mutant = suite.MUTANTS[index % len(suite.MUTANTS)]
    # A suite plants its mutants in SOURCE, or else in the reference's piece as a learner has it.
    source = getattr(suite, "SOURCE", None) or learner_source(_module(kata))
    return suite.FILE, mutate(source, mutant), mutant


def _module(kata):
    return Path(kata.reference_module).stem  # reference/solutions/rules.py -> rules


def plant_reference(folder, kata):
    """The reference's piece of `kata` as the learner's file in the clone `folder`."""
    (folder / "katas" / kata.slug / kata.learner_file).write_text(learner_source(_module(kata)))


def make_clone(folder, kata, state, mutant=0):
    """A learner's clone in `folder` with kata's file the shipped stub ("not started"), the
    reference solution ("done"), or the reference solution with a mutant of the kata's
    mutation suite planted ("in progress"). The mutant planted, or None."""
    prepare(folder)  # the same clone the Gradescope autograder grades in
    if state == "not started":
        return None
    # The capstone runs on every learner piece: plant every kata's reference solution.
    for planted in (ALL_KATAS if kata.whole_engine else [kata]):
        plant_reference(folder, planted)
    if state == "done":
        return None
    filename, source, planted = mutant_of(kata, mutant)
    (folder / "katas" / kata.slug / filename).write_text(textwrap.dedent(source))
    return planted


def run_pytest(folder, *options):
    """(wall seconds, CPU seconds: user + system of pytest and its children) of one pytest run
    in `folder`."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-q", *options],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def grade(folder, kata, *options):
    """(wall seconds, the report's entry of the kata, CPU seconds) for one `pytest --kata N`."""
    report = folder / "report.json"
    wall, cpu = run_pytest(folder, "--kata", str(kata.number), "--kata-report", str(report), *options)
    entries = json.loads(report.read_text())["katas"]
    return wall, next(e for e in entries if e["kata"] == kata.slug), cpu


def find(number):
    return next(k for k in ALL_KATAS if k.number == number)


def stability(numbers, runs, busy):
    for number in numbers:
        kata = find(number)
        with tempfile.TemporaryDirectory() as tmp, Busy(busy):
            folder = Path(tmp)
            make_clone(folder, kata, "done")
            ratios, growth_failures = [], 0
            for _ in range(runs):
                _, entry, _ = grade(folder, kata, "--cache-clear")
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


def feedback_time(numbers, states, busy, mutant=0):
    for number in numbers:
        kata = find(number)
        for state in states:
            with tempfile.TemporaryDirectory() as tmp, Busy(busy):
                folder = Path(tmp)
                planted = make_clone(folder, kata, state, mutant)
                first, entry, first_cpu = grade(folder, kata)
                again, _, again_cpu = grade(folder, kata)
            note = f"; mutant: {planted.name}" if planted else ""
            print(
                f"{kata.slug} {state} ({entry['status']}{note}): first run {first:.1f} s "
                f"(CPU {first_cpu:.1f} s), again {again:.1f} s (CPU {again_cpu:.1f} s)",
                flush=True,
            )


def whole_run(state, workers, busy):
    """A whole run (`pytest`, every kata) on a clone whose katas are all `state` ("not
    started" or "done"), serial and with `-n W` for each W of `workers`, each run twice."""
    with tempfile.TemporaryDirectory() as tmp, Busy(busy):
        folder = Path(tmp)
        prepare(folder)
        if state == "done":
            for kata in ALL_KATAS:
                plant_reference(folder, kata)
        for count in workers:
            options = ("-n", str(count)) if count else ("-p", "no:xdist")
            times = [run_pytest(folder, *options) for _ in range(2)]
            label = f"-n {count}" if count else "serial"
            print(f"all katas {state}, {label}: " + ", then ".join(
                f"{wall:.1f} s (CPU {cpu:.1f} s)" for wall, cpu in times), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.feedback", description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("stability", "time", "whole"))
    parser.add_argument("--kata", type=int, action="append", help="kata numbers (default: 3)")
    parser.add_argument("--runs", type=int, default=5, help="gradings per kata (stability)")
    parser.add_argument("--busy", type=int, default=0, help="CPU burners running beside the grading")
    parser.add_argument("--stub", action="store_true", help="time only the shipped stub (a kata not started)")
    parser.add_argument("--state", action="append", choices=STATES,
                        help="the kata's state (time, default all three; whole: not started, done)")
    parser.add_argument("--mutant", type=int, default=0,
                        help="which mutant of the kata's mutation suite makes it in progress (default: the first)")
    parser.add_argument("-n", dest="workers", type=int, action="append",
                        help="whole: xdist worker counts to compare with serial (default 2)")
    args = parser.parse_args(argv)
    numbers = args.kata or [3]
    if args.what == "stability":
        stability(numbers, args.runs, args.busy)
    elif args.what == "time":
        states = ["not started"] if args.stub else (args.state or STATES)
        feedback_time(numbers, states, args.busy, args.mutant)
    else:
        for state in args.state or ("not started", "done"):
            whole_run(state, [0, *(args.workers or [2])], args.busy)


if __name__ == "__main__":
    main()
