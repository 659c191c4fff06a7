"""Run the benchmarks in one process and report them against the targets (SPEC section 6).

    python -m benchmarks.run                  # from the repository root
    python -m benchmarks.run --json out.json  # also write every sample
    python -m benchmarks.run --quick          # fewer rounds, for a smoke test

Method: warm-up first, then interleaved rounds. In each round the MLP step and the tiny-op
chain run a block of repetitions on each library, the libraries' order rotating from round to
round. Each repetition is timed on its own (time.perf_counter); the figures are medians over
all repetitions of all rounds. A ratio is taken within each round (the medians of two
adjacent blocks), so that the machine's drift (frequency, a neighbour on the host) cancels;
the report gives the median of the rounds' ratios and their range, and a target counts as met
only when every round meets it (missed when none does; otherwise the count of rounds that
did). The garbage collector stays on (as in real use) and is run before each block. The
100,000-deep chain (reference only, an absolute target) runs after the rounds: build,
backward and release timed separately; the target is on the backward, in every run.

Threads: torch gets as many intra-op threads as numpy's BLAS (OpenBLAS) uses by default, read
with threadpoolctl if installed, otherwise from OpenBLAS itself (see workloads.configure_threads);
`--threads N` sets both to N (`--threads 1` is steadier on a machine shared with other jobs).

The exit status is 0 whatever the figures: this is a report, not a test.
"""
import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

from . import workloads as W

TARGETS = {
    "mlp_vs_numpy": 1.15,  # reference MLP step at most 1.15x hand-written numpy
    "mlp_vs_torch": 1.0,  # ... and below torch's
    "tiny_vs_torch": 1.0,  # per tiny op at most torch's
    "deep_backward_s": 2.0,  # 100k-deep chain backward under 2 s
}


def _timed_block(function, repetitions):
    gc.collect()
    samples = []
    clock = time.perf_counter
    for _ in range(repetitions):
        start = clock()
        function()
        samples.append(clock() - start)
    return samples


def _cpu_snapshot():
    """(wall, busy CPU seconds of the whole machine, CPU seconds of this process), to tell how
    much else ran during the measurement (Linux /proc/stat; None elsewhere)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
        busy = (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        busy = None
    own = os.times()
    return time.monotonic(), busy, own.user + own.system


def other_load(start, end):
    """CPUs kept busy by other processes between two snapshots, on average (None if unknown)."""
    if start[1] is None or end[1] is None:
        return None
    wall = end[0] - start[0]
    return max(0.0, ((end[1] - start[1]) - (end[2] - start[2])) / wall) if wall > 0 else None


def _rotate(items, by):
    by %= len(items)
    return items[by:] + items[:by]


def measure(rounds=7, mlp_reps=30, tiny_reps=10, deep_rounds=3, warmup=3, log=print):
    """Every sample, keyed "mlp/<library>", "tiny/<library>", "deep/build", "deep/backward",
    "deep/release"; under "round_medians" the median of each block, one per round, by the same
    keys; errors (a workload that raised) under "errors"."""
    samples = {}
    round_medians = {}  # "mlp/<library>" -> the median of its block in each round
    errors = {}
    mlp = {library: W.make_mlp_step(library) for library in W.MLP_LIBRARIES}
    tiny = {library: W.make_tiny_chain(library) for library in W.CHAIN_LIBRARIES}
    for function in list(mlp.values()) + list(tiny.values()):
        for _ in range(warmup):
            function()

    deep_build, deep_backward = W.make_deep_chain()

    def deep_round():
        gc.collect()
        start = time.perf_counter()
        root = deep_build()
        built = time.perf_counter()
        gradient = deep_backward(root)
        done = time.perf_counter()
        del root
        released = time.perf_counter()
        expected = 1.00001**W.DEEP
        if abs(float(gradient[0]) - expected) > 1e-2 * expected:
            raise AssertionError(f"deep chain gradient {gradient[0]} != {expected}")
        samples.setdefault("deep/build", []).append(built - start)
        samples.setdefault("deep/backward", []).append(done - built)
        samples.setdefault("deep/release", []).append(released - done)

    for index in range(rounds):
        log(f"  round {index + 1}/{rounds}", end="\r" if sys.stdout.isatty() else "\n")
        blocks = [(f"mlp/{lib}", mlp[lib], mlp_reps) for lib in _rotate(list(W.MLP_LIBRARIES), index)]
        blocks += [(f"tiny/{lib}", tiny[lib], tiny_reps) for lib in _rotate(list(W.CHAIN_LIBRARIES), index)]
        for key, function, repetitions in blocks:
            block = _timed_block(function, repetitions)
            samples.setdefault(key, []).extend(block)
            round_medians.setdefault(key, []).append(statistics.median(block))
    # The deep chain runs last, on its own: it allocates and frees ~200 MB, and on a VM that
    # hands freed memory back to the host the next seconds can see bursts of slow page faults
    # that would land on whichever MLP block came next. It is a reference-only, absolute target.
    for index in range(deep_rounds):
        log(f"  deep chain {index + 1}/{deep_rounds}", end="\r" if sys.stdout.isatty() else "\n")
        try:
            deep_round()
        except Exception as error:  # a report: record it, keep going
            errors["deep"] = f"{type(error).__name__}: {str(error)[:300]}"
            break
    samples["round_medians"] = round_medians
    samples["errors"] = errors
    return samples


# target -> (the two workloads whose ratio it bounds, whether the bound is strict)
RATIO_TARGETS = {
    "mlp_vs_numpy": ("mlp/reference", "mlp/numpy", False),
    "mlp_vs_torch": ("mlp/reference", "mlp/torch", True),
    "tiny_vs_torch": ("tiny/reference", "tiny/torch", False),
}


def verdict(values, target, strict=False):
    """PASS when every value meets the target, MISS when none does, otherwise
    "k of n rounds" (the machine's noise straddles the target)."""
    met = sum(1 for v in values if (v < target if strict else v <= target))
    if values and met == len(values):
        return "PASS"
    if met == 0:
        return "MISS"
    return f"{met} of {len(values)} rounds"


def summarize(samples):
    """(figures, ratios, spreads, verdicts): medians of every sample; each ratio target's
    median over the rounds of the per-round ratio, with its (lowest, highest) round."""

    def median(key):
        values = samples.get(key)
        return statistics.median(values) if values else None

    figures = {
        "mlp_ms": {lib: median(f"mlp/{lib}") * 1e3 for lib in W.MLP_LIBRARIES},
        "tiny_us_per_op": {
            lib: median(f"tiny/{lib}") / W.TINY_OPS * 1e6 for lib in W.CHAIN_LIBRARIES
        },
        "deep_s": {
            part: median(f"deep/{part}") for part in ("build", "backward", "release")
        },
    }
    rounds = samples["round_medians"]
    ratios, spreads, verdicts = {}, {}, {}
    for name, (workload, baseline, strict) in RATIO_TARGETS.items():
        per_round = [a / b for a, b in zip(rounds[workload], rounds[baseline])]
        ratios[name] = statistics.median(per_round)
        spreads[name] = (min(per_round), max(per_round))
        verdicts[name] = verdict(per_round, TARGETS[name], strict)
    backward = samples.get("deep/backward") or []
    ratios["deep_backward_s"] = figures["deep_s"]["backward"]
    spreads["deep_backward_s"] = (min(backward), max(backward)) if backward else (None, None)
    if samples["errors"].get("deep") or not backward:
        verdicts["deep_backward_s"] = "MISS"
    else:
        verdicts["deep_backward_s"] = verdict(backward, TARGETS["deep_backward_s"], strict=True)
    return figures, ratios, spreads, verdicts


def report(figures, ratios, spreads, verdicts, samples, threads, check, settings):
    def spread(key, scale):
        values = samples.get(key) or [float("nan")]
        return f"min {min(values) * scale:8.3f}  n={len(values)}"

    mlp, tiny, deep = figures["mlp_ms"], figures["tiny_us_per_op"], figures["deep_s"]
    lines = [
        "",
        "Autograd Katas benchmarks: "
        f"{settings['rounds']} interleaved rounds, medians "
        f"(python {platform.python_version()}, numpy {_version('numpy')}, torch {_version('torch')})",
        f"threads: numpy BLAS {threads['numpy_blas_threads']} "
        f"(from {threads['numpy_blas_threads_from']}); torch set to {threads['torch_threads']} "
        f"(its default: {threads['torch_threads_default']}); {threads['cpu_count']} CPUs",
        "check (3 steps from the same weights, max |diff| against numpy): "
        + "; ".join(
            f"{lib} loss {check[lib]['max_loss_diff']:.1e} weights {check[lib]['max_weight_diff']:.1e}"
            for lib in ("reference", "torch")
        ),
        "",
        f"MLP training step (784-256-128-10, batch 64, float32), per step, "
        f"{settings['mlp_reps']} reps/round:",
    ]
    names = {"numpy": "numpy (hand-written)", "reference": "reference", "torch": "torch CPU autograd"}
    for lib in W.MLP_LIBRARIES:
        lines.append(f"  {names[lib]:<22}{mlp[lib]:9.3f} ms   {spread(f'mlp/{lib}', 1e3)}")
    lines.append(
        f"Chain of {W.TINY_OPS:,} tiny ops on (4,) float32, forward + backward, per op, "
        f"{settings['tiny_reps']} reps/round:"
    )
    for lib in W.CHAIN_LIBRARIES:
        lines.append(
            f"  {names[lib]:<22}{tiny[lib]:9.2f} us   "
            f"{spread(f'tiny/{lib}', 1e6 / W.TINY_OPS)}"
        )
    lines.append(f"{W.DEEP:,}-deep chain on reference (y = y * 1.00001), {settings['deep_rounds']} rounds:")
    if samples["errors"].get("deep"):
        lines.append(f"  ERROR: {samples['errors']['deep']}")
    if deep["backward"] is not None:
        lines.append(
            f"  build (forward) {deep['build']:.3f} s   backward {deep['backward']:.3f} s   "
            f"release {deep['release']:.3f} s"
        )

    def ratio(key, unit="x", over="rounds"):
        value, (low, high) = ratios[key], spreads[key]
        if value is None:
            return f"{'n/a':>7}  {'':<18}"
        span = f"{low:.2f}-{high:.2f}{unit}"
        return f"{value:6.2f}{unit}  {over} {span:<11}"

    load = settings.get("other_load_cpus")
    if load is not None:
        lines.append(
            f"other processes kept {load:.2f} of {threads['cpu_count']} CPUs busy during the run"
            + ("  (WARNING: a busy machine; the figures are noisy, run again when it is idle)"
               if load > 0.25 else "")
        )
    lines += [
        "",
        "Targets (SPEC section 6; a ratio per round, the median and the range of the rounds):",
        f"  reference MLP step / numpy MLP step  {ratio('mlp_vs_numpy')}  "
        f"(at most {TARGETS['mlp_vs_numpy']:.2f}x)  {verdicts['mlp_vs_numpy']}",
        f"  reference MLP step / torch MLP step  {ratio('mlp_vs_torch')}  "
        f"(below {TARGETS['mlp_vs_torch']:.2f}x)    {verdicts['mlp_vs_torch']}",
        f"  reference / torch, per tiny op       {ratio('tiny_vs_torch')}  "
        f"(at most {TARGETS['tiny_vs_torch']:.2f}x)  {verdicts['tiny_vs_torch']}",
        f"  100,000-deep chain backward          {ratio('deep_backward_s', 's', 'runs  ')}  "
        f"(under {TARGETS['deep_backward_s']:.1f} s)     {verdicts['deep_backward_s']}",
        "",
    ]
    return "\n".join(lines)


def _version(module):
    try:
        return __import__(module).__version__
    except Exception:
        return "?"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--mlp-reps", type=int, default=30, help="MLP steps per library per round")
    parser.add_argument("--tiny-reps", type=int, default=10, help="tiny chains per library per round")
    parser.add_argument("--deep-rounds", type=int, default=3, help="runs of the deep chain (after the rounds)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each workload first")
    parser.add_argument(
        "--threads", type=int, default=None,
        help="threads for numpy's BLAS and torch alike (default: numpy's default, given to torch)",
    )
    parser.add_argument("--quick", action="store_true", help="2 rounds, fewer reps, 1 deep chain")
    parser.add_argument("--json", metavar="PATH", help="also write figures and every sample as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.mlp_reps, args.tiny_reps, args.deep_rounds = 2, 5, 2, 1
    settings = {
        k: getattr(args, k) for k in ("rounds", "mlp_reps", "tiny_reps", "deep_rounds", "warmup", "threads")
    }

    threads = W.configure_threads(args.threads)
    check = W.check_mlp()
    start = _cpu_snapshot()
    samples = measure(
        args.rounds, args.mlp_reps, args.tiny_reps, args.deep_rounds, args.warmup,
        log=lambda *a, **k: print(*a, **k, file=sys.stderr),
    )
    settings["other_load_cpus"] = other_load(start, _cpu_snapshot())
    figures, ratios, spreads, verdicts = summarize(samples)
    print(report(figures, ratios, spreads, verdicts, samples, threads, check, settings))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(
                {
                    "settings": settings,
                    "threads": threads,
                    "check": check,
                    "figures": figures,
                    "ratios": ratios,
                    "ratio_ranges": spreads,
                    "targets": TARGETS,
                    "verdicts": verdicts,
                    "samples": samples,
                },
                out,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # a report never fails the caller
        print(f"benchmarks.run: {type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(0)
