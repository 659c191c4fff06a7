"""Run the benchmarks in one process and report them against the targets (benchmarks/README.md).

    python -m benchmarks.run                  # from the repository root
    python -m benchmarks.run --json out.json  # also write every sample
    python -m benchmarks.run --quick          # fewer rounds, for a smoke test

Method: warm-up first, then interleaved rounds. In each round the MLP step, the tiny-op chain
and the scalar chain run a block of repetitions on each library, the libraries' order rotating
from round to round. Each repetition is timed on its own (time.perf_counter); the figures are
medians over all repetitions of all rounds. A ratio is taken within each round (the medians of
two adjacent blocks), so that the machine's drift (frequency, a neighbour on the host) cancels;
the report gives the median of the rounds' ratios and their range. A target says how it is
judged (benchmarks/README.md): "every round" targets are met only when every round meets them (missed
when none does; otherwise the count of rounds that did), "median" targets on the median of the
rounds. The garbage collector stays on (as in real use) and is run before each block.

The deep chain runs after the rounds, on its own: reference and torch back to back in each
run (forward + backward, the order alternating), then the reference's forward alone at 10k,
100k and 300k nodes (its time per node must stay flat: linear growth). The memory a recorded
100,000-deep chain holds, per node, is read from the resident size of a fresh process per
library. micrograd's scalar chain is shown beside the reference and torch when the optional
`bench` extra is installed (`pip install -e .[bench]`); it has no target.

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

EVERY_ROUND, MEDIAN = "every round", "median"

# The targets of benchmarks/README.md: target -> (bound, how it is judged). Ratios are reference / baseline.
TARGETS = {
    "mlp_vs_numpy": (1.3, MEDIAN),  # MLP step at most 1.3x hand-written numpy
    "mlp_vs_torch": (1.0, EVERY_ROUND),  # ... and at most torch's, in every round
    "tiny_vs_torch": (1.25, MEDIAN),  # a tiny op at most 1.25x torch's
    "deep_vs_torch": (1.0, EVERY_ROUND),  # 100k-deep chain, forward + backward, at most torch's
    "deep_growth": (1.5, EVERY_ROUND),  # forward time per node at 300k / at 10k: flat is linear
    "memory_vs_torch": (1.0, EVERY_ROUND),  # graph bytes per node at most torch's
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


def scalar_libraries():
    """The libraries of the scalar chain: micrograd only when it is installed."""
    return [lib for lib in W.SCALAR_LIBRARIES if lib != "micrograd" or W.micrograd_available()]


def measure(rounds=7, mlp_reps=30, tiny_reps=10, deep_rounds=3, warmup=3, log=print,
            growth_depths=W.GROWTH_DEPTHS):
    """Every sample, keyed "mlp/<library>", "tiny/<library>", "scalar/<library>",
    "deep/<library>/build", ".../backward", ".../release" and "growth/<depth>" (the
    reference's forward, seconds per node); under "round_medians" the median of each block,
    one per round, by the same keys (for the deep chain, one run per round); errors (a
    workload that raised) under "errors"."""
    samples = {}
    round_medians = {}  # "mlp/<library>" -> the median of its block in each round
    errors = {}
    mlp = {library: W.make_mlp_step(library) for library in W.MLP_LIBRARIES}
    tiny = {library: W.make_tiny_chain(library) for library in W.CHAIN_LIBRARIES}
    scalar = {library: W.make_scalar_chain(library) for library in scalar_libraries()}
    for function in list(mlp.values()) + list(tiny.values()) + list(scalar.values()):
        for _ in range(warmup):
            function()

    for index in range(rounds):
        log(f"  round {index + 1}/{rounds}", end="\r" if sys.stdout.isatty() else "\n")
        blocks = [(f"mlp/{lib}", mlp[lib], mlp_reps) for lib in _rotate(list(W.MLP_LIBRARIES), index)]
        blocks += [(f"tiny/{lib}", tiny[lib], tiny_reps) for lib in _rotate(list(W.CHAIN_LIBRARIES), index)]
        blocks += [(f"scalar/{lib}", scalar[lib], tiny_reps) for lib in _rotate(list(scalar), index)]
        for key, function, repetitions in blocks:
            block = _timed_block(function, repetitions)
            samples.setdefault(key, []).extend(block)
            round_medians.setdefault(key, []).append(statistics.median(block))
    # The deep chains run last, on their own: they allocate and free ~200 MB, and on a VM that
    # hands freed memory back to the host the next seconds can see bursts of slow page faults
    # that would land on whichever MLP block came next.
    deep = {library: W.make_deep_chain(library=library) for library in W.CHAIN_LIBRARIES}
    try:
        for index in range(deep_rounds):
            log(f"  deep chain {index + 1}/{deep_rounds}", end="\r" if sys.stdout.isatty() else "\n")
            for library in _rotate(list(W.CHAIN_LIBRARIES), index):
                for part, seconds in _deep_run(*deep[library]).items():
                    samples.setdefault(f"deep/{library}/{part}", []).append(seconds)
        for depth in growth_depths:
            log(f"  forward of {depth:,} nodes", end="\r" if sys.stdout.isatty() else "\n")
            build, backward = W.make_deep_chain(depth)
            samples[f"growth/{depth}"] = [_deep_run(build, backward, depth)["build"] / depth]
    except Exception as error:  # a report: record it, keep going
        errors["deep"] = f"{type(error).__name__}: {str(error)[:300]}"
    samples["round_medians"] = round_medians
    samples["errors"] = errors
    return samples


def _deep_run(build, backward, depth=W.DEEP, factor=1.00001):
    """{build, backward, release}: seconds of one deep chain's forward, backward and freeing;
    raises when the gradient is wrong (a RecursionError is an error too)."""
    gc.collect()
    start = time.perf_counter()
    root = build()
    built = time.perf_counter()
    gradient = backward(root)
    done = time.perf_counter()
    del root
    released = time.perf_counter()
    expected = factor**depth
    if abs(float(gradient[0]) - expected) > 1e-2 * expected:
        raise AssertionError(f"deep chain gradient {gradient[0]} != {expected}")
    return {"build": built - start, "backward": done - built, "release": released - done}


def measure_memory():
    """{library: graph bytes per node}, each measured in a fresh process (freed memory that
    one library leaves in the allocator would hide the other's)."""
    import subprocess

    found = {}
    for library in W.CHAIN_LIBRARIES:
        code = f"from benchmarks import workloads as W; print(W.graph_bytes_per_node({library!r}))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        try:
            found[library] = float(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            found[library] = None
    return found


# target -> the two workloads whose per-round ratio it bounds
RATIO_TARGETS = {
    "mlp_vs_numpy": ("mlp/reference", "mlp/numpy"),
    "mlp_vs_torch": ("mlp/reference", "mlp/torch"),
    "tiny_vs_torch": ("tiny/reference", "tiny/torch"),
}


def verdict(values, target):
    """`values` (a ratio per round) against `target` = (bound, rule). "median": PASS when the
    median is at most the bound. "every round": PASS when every value is, MISS when none is,
    otherwise "k of n rounds" (the machine's noise straddles the bound)."""
    bound, rule = target
    if not values:
        return "not measured"
    if rule == MEDIAN:
        return "PASS" if statistics.median(values) <= bound else "MISS"
    met = sum(1 for v in values if v <= bound)
    if met == len(values):
        return "PASS"
    if met == 0:
        return "MISS"
    return f"{met} of {len(values)} rounds"


def _deep_ratios(samples):
    """Per deep run: reference (forward + backward) over torch (forward + backward)."""
    def total(library):
        build = samples.get(f"deep/{library}/build") or []
        backward = samples.get(f"deep/{library}/backward") or []
        return [b + f for b, f in zip(build, backward)]

    return [r / t for r, t in zip(total("reference"), total("torch"))]


def summarize(samples, memory=None):
    """(figures, ratios, spreads, verdicts): medians of every sample; each ratio target's
    median over the rounds of the per-round ratio, with its (lowest, highest) round; `memory`
    is measure_memory()'s {library: bytes per node}."""

    def median(key):
        values = samples.get(key)
        return statistics.median(values) if values else None

    def per_op(key, ops):
        value = median(key)
        return None if value is None else value / ops * 1e6

    depths = sorted(int(k.split("/")[1]) for k in samples if k.startswith("growth/"))
    figures = {
        "mlp_ms": {lib: median(f"mlp/{lib}") * 1e3 for lib in W.MLP_LIBRARIES},
        "tiny_us_per_op": {lib: per_op(f"tiny/{lib}", W.TINY_OPS) for lib in W.CHAIN_LIBRARIES},
        "scalar_us_per_op": {
            lib: per_op(f"scalar/{lib}", 3 * W.SCALAR_CYCLES)
            for lib in W.SCALAR_LIBRARIES if samples.get(f"scalar/{lib}")
        },
        "deep_s": {
            lib: {part: median(f"deep/{lib}/{part}") for part in ("build", "backward", "release")}
            for lib in W.CHAIN_LIBRARIES
        },
        "growth_us_per_node": {depth: median(f"growth/{depth}") * 1e6 for depth in depths},
        "bytes_per_node": dict(memory or {}),
    }
    rounds = samples["round_medians"]
    per_target = {
        name: [a / b for a, b in zip(rounds[workload], rounds[baseline])]
        for name, (workload, baseline) in RATIO_TARGETS.items()
    }
    per_target["deep_vs_torch"] = _deep_ratios(samples)
    growth = figures["growth_us_per_node"]
    per_target["deep_growth"] = [growth[depths[-1]] / growth[depths[0]]] if len(depths) > 1 else []
    sizes = figures["bytes_per_node"]
    per_target["memory_vs_torch"] = (
        [sizes["reference"] / sizes["torch"]] if sizes.get("reference") and sizes.get("torch") else []
    )
    ratios, spreads, verdicts = {}, {}, {}
    for name, values in per_target.items():
        ratios[name] = statistics.median(values) if values else None
        spreads[name] = (min(values), max(values)) if values else (None, None)
        verdicts[name] = verdict(values, TARGETS[name])
    if samples["errors"].get("deep"):  # a deep chain that failed (RecursionError, ...) misses
        verdicts["deep_vs_torch"] = verdicts["deep_growth"] = "MISS"
    figures["growth_depths"] = (depths[0], depths[-1]) if depths else None
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
    names = {"numpy": "numpy (hand-written)", "reference": "reference", "torch": "torch CPU autograd",
             "micrograd": "micrograd"}
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
    scalar = figures.get("scalar_us_per_op") or {}
    lines.append(
        f"Scalar chain, {W.SCALAR_CYCLES} x (y * 1.0001 + 0.5).relu(), forward + backward, per op"
        + ("" if "micrograd" in scalar else " (micrograd: not installed; pip install -e .[bench])")
        + ":"
    )
    for lib, value in scalar.items():
        lines.append(f"  {names[lib]:<22}{value:9.2f} us")
    lines.append(f"{W.DEEP:,}-deep chain (y = y * 1.00001), {settings['deep_rounds']} runs each:")
    if samples["errors"].get("deep"):
        lines.append(f"  ERROR: {samples['errors']['deep']}")
    for lib in W.CHAIN_LIBRARIES:
        parts = deep.get(lib) or {}
        if parts.get("backward") is not None:
            lines.append(
                f"  {names[lib]:<22}forward {parts['build']:.3f} s   backward {parts['backward']:.3f} s   "
                f"release {parts['release']:.3f} s"
            )
    growth = figures.get("growth_us_per_node") or {}
    if growth:
        lines.append(
            "  reference forward per node: "
            + ", ".join(f"{depth:,} nodes {us:.2f} us" for depth, us in growth.items())
        )
    sizes = figures.get("bytes_per_node") or {}
    if sizes:
        lines.append(
            "  graph memory per node (resident, 100,000-deep chain): "
            + ", ".join(f"{lib} {size:,.0f} B" if size else f"{lib} n/a" for lib, size in sizes.items())
        )

    def ratio(key, unit="x", over="rounds"):
        value, (low, high) = ratios[key], spreads[key]
        if value is None:
            return f"{'n/a':>7}  {'':<18}"
        span = f"{low:.2f}-{high:.2f}{unit}"
        return f"{value:6.2f}{unit}  {over} {span:<11}"

    def bound(key):
        limit, rule = TARGETS[key]
        return f"(at most {limit:.2f}x, {rule})"

    load = settings.get("other_load_cpus")
    if load is not None:
        lines.append(
            f"other processes kept {load:.2f} of {threads['cpu_count']} CPUs busy during the run"
            + ("  (WARNING: a busy machine; the figures are noisy, run again when it is idle)"
               if load > 0.25 else "")
        )
    rows = (
        ("reference MLP step / numpy MLP step", "mlp_vs_numpy", "rounds"),
        ("reference MLP step / torch MLP step", "mlp_vs_torch", "rounds"),
        ("reference / torch, per tiny op", "tiny_vs_torch", "rounds"),
        ("deep chain fwd+bwd, reference / torch", "deep_vs_torch", "runs  "),
        (_growth_label(figures.get("growth_depths")), "deep_growth", "      "),
        ("graph memory per node, ref / torch", "memory_vs_torch", "      "),
    )
    lines += ["", "Targets (benchmarks/README.md; a ratio per round, the median and the range of the rounds):"]
    for label, key, over in rows:
        lines.append(f"  {label:<38}{ratio(key, over=over)}  {bound(key):<28} {verdicts[key]}")
    lines.append("")
    return "\n".join(lines)


def _growth_label(depths):
    if not depths:
        return "forward per node, deepest / shallowest"
    return f"forward per node, {depths[1] // 1000}k / {depths[0] // 1000}k nodes"


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
    parser.add_argument("--quick", action="store_true",
                        help="2 rounds, fewer reps, 1 deep chain, growth up to 10k, no memory")
    parser.add_argument("--json", metavar="PATH", help="also write figures and every sample as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.mlp_reps, args.tiny_reps, args.deep_rounds = 2, 5, 2, 1
    growth_depths = W.GROWTH_DEPTHS if not args.quick else (1_000, 10_000)
    settings = {
        k: getattr(args, k) for k in ("rounds", "mlp_reps", "tiny_reps", "deep_rounds", "warmup", "threads")
    }

    threads = W.configure_threads(args.threads)
    check = W.check_mlp()
    start = _cpu_snapshot()
    samples = measure(
        args.rounds, args.mlp_reps, args.tiny_reps, args.deep_rounds, args.warmup,
        log=lambda *a, **k: print(*a, **k, file=sys.stderr), growth_depths=growth_depths,
    )
    settings["other_load_cpus"] = other_load(start, _cpu_snapshot())
    memory = measure_memory() if not args.quick else {}
    figures, ratios, spreads, verdicts = summarize(samples, memory)
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
