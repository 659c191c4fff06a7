"""Run the benchmarks in one process and report them against the targets (benchmarks/README.md).

    python -m benchmarks.run                  # from the repository root
    python -m benchmarks.run --json out.json  # also write every sample
    python -m benchmarks.run --quick          # fewer rounds, for a smoke test

Every library runs every workload it can, side by side: the reference, torch's C++ engine and
hand-written numpy (the bounds), and the pure-Python peers a learner or teacher would pick
instead, HIPS autograd and MyGrad (and micrograd on scalars), when the optional `bench` extra
is installed (`pip install -e .[bench]`). Below the targets, with no target of its own, the
bare engine (bare_engine.py): the floor of an eager Python engine on the MLP step and the tiny
chain.

Method: warm-up first, then interleaved rounds. In each round the MLP step (once with 1 BLAS
thread, once with 2), the tiny-op chain and the scalar chain run a block of repetitions on
each library, the libraries' order rotating from round to round. Each repetition is timed on
its own (time.perf_counter); the figures are medians over all repetitions of all rounds. A
ratio is taken within each round (the medians of two blocks of the same round), so that the
machine's drift cancels; the report gives the median of the rounds' ratios and their range.
A target says how it is judged (benchmarks/README.md): "median" targets on the median of the
rounds, "every round" targets only when every round meets them (missed when none does;
otherwise the count of rounds that did). The garbage collector stays on (as in real use) and
is run before each block.

The deep chain runs after the rounds, on its own: every library back to back in each run
(forward + backward, the order rotating), the reference twice: as a user's program runs it,
and with Python's cycle collector paused (the engine's own work; the difference is the
collector's share). Then the reference's forward alone at 10k, 100k and 300k nodes (its time
per node must stay flat: linear growth). The memory a recorded 100,000-deep chain holds, per
node, is read from the resident size of a fresh process per library.

Threads: the MLP step runs with numpy's BLAS and torch both on 1 thread, then both on 2
(`workloads.configure_threads`); the other workloads on the default (numpy's BLAS count,
given to torch), or on `--threads N`.

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
MLP_THREADS = (1, 2)  # the MLP step's target holds with 1 and with 2 BLAS threads
OWN = "reference-own"  # the reference's deep chain with the cycle collector paused

# The targets of benchmarks/README.md: target -> (bound, how it is judged). Ratios are
# reference / baseline. "ahead/<peer>/<workload>" targets are added for each peer installed.
TARGETS = {
    "mlp1_vs_numpy": (1.3, MEDIAN),  # 1. MLP step at most 1.3x hand-written numpy, 1 BLAS thread
    "mlp2_vs_numpy": (1.3, MEDIAN),  # ... and with 2
    "tiny_vs_torch": (1.5, MEDIAN),  # 3. a tiny op at most 1.5x torch's
    "deep_own_vs_torch": (1.0, MEDIAN),  # 3. 100k-deep chain, the engine's own work, at most torch's
    "deep_vs_torch": (2.0, MEDIAN),  # 3. ... the whole process at most 2x torch's
    "deep_growth": (1.5, EVERY_ROUND),  # forward time per node at 300k / at 10k: flat is linear
    "memory_vs_torch": (1.0, EVERY_ROUND),  # graph bytes per node at most torch's
}
AHEAD = (1.0, MEDIAN)  # 2. the reference at most a peer's time, on every workload
AHEAD_WORKLOADS = {"mlp1": "MLP step, 1 thread", "mlp2": "MLP step, 2 threads", "tiny": "tiny op",
                   "deep": "deep chain"}


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


def libraries(names):
    """The libraries of `names` that can run here (the peers are an optional extra)."""
    return [name for name in names if W.available(name)]


def scalar_libraries():
    """The libraries of the scalar chain: micrograd only when it is installed."""
    return libraries(W.SCALAR_LIBRARIES)


def measure(rounds=7, mlp_reps=30, tiny_reps=10, deep_rounds=3, warmup=3, log=print,
            growth_depths=W.GROWTH_DEPTHS, threads=None):
    """Every sample, keyed "mlp1/<library>" and "mlp2/<library>" (the MLP step on 1 and on 2
    BLAS threads), "tiny/<library>", "scalar/<library>", "deep/<library>/build",
    ".../backward", ".../release" (and "deep/reference-own/...": the collector paused) and
    "growth/<depth>" (the reference's forward, seconds per node); under "round_medians" the
    median of each block, one per round, by the same keys; errors under "errors"."""
    samples = {}
    round_medians = {}
    errors = {}
    mlp = {library: W.make_mlp_step(library) for library in libraries(W.MLP_LIBRARIES)}
    tiny = {library: W.make_tiny_chain(library) for library in libraries(W.TINY_LIBRARIES)}
    scalar = {library: W.make_scalar_chain(library) for library in scalar_libraries()}
    for function in list(mlp.values()) + list(tiny.values()) + list(scalar.values()):
        for _ in range(warmup):
            function()
    threads = threads or W.numpy_blas_threads()[0]  # the default, put back after each MLP block

    for index in range(rounds):
        log(f"  round {index + 1}/{rounds}", end="\r" if sys.stdout.isatty() else "\n")
        for count in MLP_THREADS:
            W.configure_threads(count)
            for library in _rotate(list(mlp), index):
                _block(samples, round_medians, f"mlp{count}/{library}", mlp[library], mlp_reps)
        W.configure_threads(threads)
        for library in _rotate(list(tiny), index):
            _block(samples, round_medians, f"tiny/{library}", tiny[library], tiny_reps)
        for library in _rotate(list(scalar), index):
            _block(samples, round_medians, f"scalar/{library}", scalar[library], tiny_reps)
    # The deep chains run last, on their own: they allocate and free ~200 MB, and on a VM that
    # hands freed memory back to the host the next seconds can see bursts of slow page faults
    # that would land on whichever MLP block came next.
    deep = {library: W.make_deep_chain(library=library) for library in libraries(W.CHAIN_LIBRARIES)}
    deep[OWN] = deep["reference"]
    try:
        for index in range(deep_rounds):
            log(f"  deep chain {index + 1}/{deep_rounds}", end="\r" if sys.stdout.isatty() else "\n")
            for library in _rotate(list(deep), index):
                for part, seconds in _deep_run(*deep[library], collector=library != OWN).items():
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


def _block(samples, round_medians, key, function, repetitions):
    block = _timed_block(function, repetitions)
    samples.setdefault(key, []).extend(block)
    round_medians.setdefault(key, []).append(statistics.median(block))


def _deep_run(build, backward, depth=W.DEEP, factor=1.00001, collector=True):
    """{build, backward, release}: seconds of one deep chain's forward, backward and freeing
    (with Python's cycle collector paused throughout when `collector` is False); raises when
    the gradient is wrong (a RecursionError is an error too)."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.perf_counter()
        root = build()
        built = time.perf_counter()
        gradient = backward(root)
        done = time.perf_counter()
        del root
        released = time.perf_counter()
    finally:
        gc.enable()
    expected = factor**depth
    if abs(float(gradient[0]) - expected) > 1e-2 * expected:
        raise AssertionError(f"deep chain gradient {gradient[0]} != {expected}")
    return {"build": built - start, "backward": done - built, "release": released - done}


def measure_memory():
    """{library: graph bytes per node}, each measured in a fresh process (freed memory that
    one library leaves in the allocator would hide the other's)."""
    import subprocess

    found = {}
    for library in ("reference", "torch"):
        code = f"from benchmarks import workloads as W; print(W.graph_bytes_per_node({library!r}))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        try:
            found[library] = float(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            found[library] = None
    return found


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


def _deep_totals(samples, library):
    """Forward + backward of each deep run of `library`."""
    build = samples.get(f"deep/{library}/build") or []
    backward = samples.get(f"deep/{library}/backward") or []
    return [b + f for b, f in zip(build, backward)]


def _per_run(samples, library, baseline):
    """Per deep run: `library`'s forward + backward over `baseline`'s."""
    return [a / b for a, b in zip(_deep_totals(samples, library), _deep_totals(samples, baseline))]


def _per_round(rounds, workload, baseline):
    if workload not in rounds or baseline not in rounds:
        return []
    return [a / b for a, b in zip(rounds[workload], rounds[baseline])]


def summarize(samples, memory=None):
    """(figures, ratios, spreads, verdicts, targets): medians of every sample; each target's
    median over the rounds of the per-round ratio, with its (lowest, highest) round; the
    targets judged (TARGETS and one "ahead/<peer>/<workload>" per peer measured). `memory`
    is measure_memory()'s {library: bytes per node}."""

    def median(key):
        values = samples.get(key)
        return statistics.median(values) if values else None

    def scaled(key, factor):
        value = median(key)
        return None if value is None else value * factor

    depths = sorted(int(k.split("/")[1]) for k in samples if k.startswith("growth/"))
    figures = {
        "mlp_ms": {count: {lib: scaled(f"mlp{count}/{lib}", 1e3) for lib in W.MLP_LIBRARIES
                           if samples.get(f"mlp{count}/{lib}")} for count in MLP_THREADS},
        "tiny_us_per_op": {lib: scaled(f"tiny/{lib}", 1e6 / W.TINY_OPS) for lib in W.TINY_LIBRARIES
                           if samples.get(f"tiny/{lib}")},
        "scalar_us_per_op": {lib: scaled(f"scalar/{lib}", 1e6 / (3 * W.SCALAR_CYCLES))
                             for lib in W.SCALAR_LIBRARIES if samples.get(f"scalar/{lib}")},
        "deep_s": {lib: {part: median(f"deep/{lib}/{part}") for part in ("build", "backward", "release")}
                   for lib in (*W.CHAIN_LIBRARIES, OWN) if samples.get(f"deep/{lib}/build")},
        "growth_us_per_node": {depth: median(f"growth/{depth}") * 1e6 for depth in depths},
        "bytes_per_node": dict(memory or {}),
    }
    rounds = samples["round_medians"]
    per_target = {
        f"mlp{count}_vs_numpy": _per_round(rounds, f"mlp{count}/reference", f"mlp{count}/numpy")
        for count in MLP_THREADS
    }
    per_target["tiny_vs_torch"] = _per_round(rounds, "tiny/reference", "tiny/torch")
    per_target["deep_own_vs_torch"] = _per_run(samples, OWN, "torch")
    per_target["deep_vs_torch"] = _per_run(samples, "reference", "torch")
    growth = figures["growth_us_per_node"]
    per_target["deep_growth"] = [growth[depths[-1]] / growth[depths[0]]] if len(depths) > 1 else []
    sizes = figures["bytes_per_node"]
    per_target["memory_vs_torch"] = (
        [sizes["reference"] / sizes["torch"]] if sizes.get("reference") and sizes.get("torch") else []
    )
    figures["floor"] = _floor(rounds)
    targets = dict(TARGETS)
    for peer in ("hips", "mygrad"):
        for workload in AHEAD_WORKLOADS:
            if workload == "deep":
                values = _per_run(samples, "reference", peer)
            else:
                values = _per_round(rounds, f"{workload}/reference", f"{workload}/{peer}")
            if values:
                per_target[f"ahead/{peer}/{workload}"] = values
                targets[f"ahead/{peer}/{workload}"] = AHEAD
    ratios, spreads, verdicts = {}, {}, {}
    for name, values in per_target.items():
        ratios[name] = statistics.median(values) if values else None
        spreads[name] = (min(values), max(values)) if values else (None, None)
        verdicts[name] = verdict(values, targets[name])
    if samples["errors"].get("deep"):  # a deep chain that failed (RecursionError, ...) misses
        for name in verdicts:
            if name.startswith("deep") or name.endswith("/deep"):
                verdicts[name] = "MISS"
    figures["growth_depths"] = (depths[0], depths[-1]) if depths else None
    own, whole = _deep_totals(samples, OWN), _deep_totals(samples, "reference")
    figures["collector_share"] = (
        statistics.median([1 - o / w for o, w in zip(own, whole)]) if own and whole else None
    )
    return figures, ratios, spreads, verdicts, targets


# The bare engine (benchmarks/bare_engine.py) is no target and no peer: these ratios say where
# the floor of an eager Python engine lies, and how far above it the reference is.
FLOOR_RATIOS = {
    "MLP step, 1 thread: bare engine / numpy by hand": ("mlp1/bare", "mlp1/numpy"),
    "MLP step, 2 threads: bare engine / numpy by hand": ("mlp2/bare", "mlp2/numpy"),
    "tiny op: bare engine / torch": ("tiny/bare", "tiny/torch"),
    "MLP step, 1 thread: reference / bare engine": ("mlp1/reference", "mlp1/bare"),
    "MLP step, 2 threads: reference / bare engine": ("mlp2/reference", "mlp2/bare"),
    "tiny op: reference / bare engine": ("tiny/reference", "tiny/bare"),
}


def _floor(rounds):
    """{label: (median, lowest, highest)} of the per-round ratios of FLOOR_RATIOS measured."""
    floor = {}
    for label, (workload, baseline) in FLOOR_RATIOS.items():
        values = _per_round(rounds, workload, baseline)
        if values:
            floor[label] = (statistics.median(values), min(values), max(values))
    return floor


def _cell(value, unit, digits):
    return f"{value:.{digits}f} {unit}" if value is not None else "-"


def side_by_side(figures):
    """The table: one row per library, one column per workload (medians)."""
    mlp, tiny, scalar, deep = (figures["mlp_ms"], figures["tiny_us_per_op"], figures["scalar_us_per_op"],
                               figures["deep_s"])

    def deep_cell(library):
        parts = deep.get(library)
        if not parts or parts.get("backward") is None:
            return "-"
        return f"{parts['build'] + parts['backward']:.2f} s ({parts['build']:.2f} + {parts['backward']:.2f})"

    header = (f"  {'library':<17}{'MLP, 1 thread':>14}{'MLP, 2 threads':>16}{'tiny op':>11}"
              f"{'scalar op':>11}   deep chain: fwd + bwd")
    lines = [header]
    for library in ("numpy", "torch", "reference", "hips", "mygrad", "micrograd", "bare"):
        cells = [mlp[count].get(library) for count in MLP_THREADS]
        row = [_cell(cells[0], "ms", 3), _cell(cells[1], "ms", 3), _cell(tiny.get(library), "us", 2),
               _cell(scalar.get(library), "us", 2)]
        if all(cell == "-" for cell in row) and deep_cell(library) == "-":
            continue
        lines.append(f"  {W.NAMES[library]:<17}{row[0]:>14}{row[1]:>16}{row[2]:>11}{row[3]:>11}   "
                     f"{deep_cell(library)}")
        if library == "reference" and deep.get(OWN):
            share = figures.get("collector_share")
            lines.append(f"  {'':<17}{'':>52}   {deep_cell(OWN)} with the collector paused"
                         + (f" (the collector: {share:.0%} of the whole)" if share is not None else ""))
    return lines


TARGET_LABELS = {
    "mlp1_vs_numpy": "1. MLP step / numpy by hand, 1 thread",
    "mlp2_vs_numpy": "1. MLP step / numpy by hand, 2 threads",
    "tiny_vs_torch": "3. tiny op / torch",
    "deep_own_vs_torch": "3. deep chain, engine's own work / torch",
    "deep_vs_torch": "3. deep chain, whole process / torch",
    "memory_vs_torch": "   graph memory per node / torch",
}


def _label(name, figures):
    if name in TARGET_LABELS:
        return TARGET_LABELS[name]
    if name == "deep_growth":
        depths = figures.get("growth_depths")
        return f"   forward per node, {depths[1] // 1000}k / {depths[0] // 1000}k" if depths else \
            "   forward per node, deepest / shallowest"
    _, peer, workload = name.split("/")
    return f"2. {AHEAD_WORKLOADS[workload]} / {W.NAMES[peer]}"


def report(figures, ratios, spreads, verdicts, targets, samples, threads, check, settings):
    lines = [
        "",
        "Autograd Katas benchmarks: "
        f"{settings['rounds']} interleaved rounds, medians "
        f"(python {platform.python_version()}, numpy {_version('numpy')}, torch {_version('torch')}"
        + "".join(f", {W.NAMES[p]} {_version(m)}" for p, m in (("hips", "autograd"), ("mygrad", "mygrad"),
                                                               ("micrograd", "micrograd")) if W.available(p))
        + ")",
        f"threads: the MLP step on 1, then 2 (numpy's BLAS and torch alike); the rest on numpy BLAS "
        f"{threads['numpy_blas_threads']} (from {threads['numpy_blas_threads_from']}), torch "
        f"{threads['torch_threads']}; {threads['cpu_count']} CPUs",
        "check (3 MLP steps from the same weights, max |diff| against numpy): "
        + "; ".join(f"{W.NAMES[lib]} loss {c['max_loss_diff']:.1e} weights {c['max_weight_diff']:.1e}"
                    for lib, c in check.items() if lib != "losses"),
        "",
        f"Every library, side by side (MLP step 784-256-128-10, batch 64, float32, {settings['mlp_reps']} "
        f"reps/round; {W.TINY_OPS:,} tiny ops on (4,) float32, forward + backward, per op; scalar chain "
        f"{W.SCALAR_CYCLES} x (y * 1.0001 + 0.5).relu(), per op; {W.DEEP:,}-deep chain y = y * 1.00001, "
        f"{settings['deep_rounds']} runs):",
    ]
    lines += side_by_side(figures)
    missing = [W.NAMES[p] for p in W.PEERS if not W.available(p)]
    if missing:
        lines.append(f"  (not installed: {', '.join(missing)}; pip install -e .[bench])")
    if samples["errors"].get("deep"):
        lines.append(f"  deep chain ERROR: {samples['errors']['deep']}")
    growth = figures.get("growth_us_per_node") or {}
    if growth:
        lines.append("  reference forward per node: "
                     + ", ".join(f"{depth:,} nodes {us:.2f} us" for depth, us in growth.items()))
    sizes = figures.get("bytes_per_node") or {}
    if sizes:
        lines.append("  graph memory per node (resident, 100,000-deep chain): "
                     + ", ".join(f"{lib} {size:,.0f} B" if size else f"{lib} n/a" for lib, size in sizes.items()))
    load = settings.get("other_load_cpus")
    if load is not None:
        lines.append(
            f"other processes kept {load:.2f} of {threads['cpu_count']} CPUs busy during the run"
            + ("  (WARNING: a busy machine; the figures are noisy, run again when it is idle)"
               if load > 0.25 else "")
        )

    def ratio(name):
        value, (low, high) = ratios[name], spreads[name]
        if value is None:
            return f"{'n/a':>7}  {'':<18}"
        return f"{value:6.2f}x  range {f'{low:.2f}-{high:.2f}x':<11}"

    def bound(name):
        limit, rule = targets[name]
        return f"(at most {limit:.2f}x, {rule})"

    lines += ["", "Targets (benchmarks/README.md): reference / the other, the median and range of the "
                  "rounds (the runs, for the deep chain):"]
    order = [n for n in ("mlp1_vs_numpy", "mlp2_vs_numpy") if n in ratios]
    order += [f"ahead/{peer}/{workload}" for peer in ("hips", "mygrad") for workload in AHEAD_WORKLOADS
              if f"ahead/{peer}/{workload}" in ratios]
    order += [n for n in ("tiny_vs_torch", "deep_own_vs_torch", "deep_vs_torch", "deep_growth", "memory_vs_torch")
              if n in ratios]
    for name in order:
        lines.append(f"  {_label(name, figures):<44}{ratio(name)}  {bound(name):<26} {verdicts[name]}")
    share = figures.get("collector_share")
    if share is not None:
        lines.append(f"  (the deep chain's whole process: the cycle collector's share {share:.0%})")
    if figures.get("floor"):
        lines += ["", "The floor, no target (benchmarks/bare_engine.py: an eager engine with nothing but "
                      "one object and one closure per operation), the median and range of the rounds:"]
        for label, (value, low, high) in figures["floor"].items():
            lines.append(f"  {label:<50}{value:6.2f}x  range {low:.2f}-{high:.2f}x")
    lines.append("")
    return "\n".join(lines)


def _version(distribution):
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
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
        help="threads for numpy's BLAS and torch alike outside the MLP step (default: numpy's default)",
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
        threads=args.threads,
    )
    settings["other_load_cpus"] = other_load(start, _cpu_snapshot())
    memory = measure_memory() if not args.quick else {}
    figures, ratios, spreads, verdicts, targets = summarize(samples, memory)
    print(report(figures, ratios, spreads, verdicts, targets, samples, threads, check, settings))
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
                    "targets": targets,
                    "verdicts": verdicts,
                    "samples": samples,
                },
                out,
                indent=1,
                default=str,
            )
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # a report never fails the caller
        print(f"benchmarks.run: {type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(0)
