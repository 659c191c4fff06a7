"""The arithmetic of the benchmark report (benchmarks/run.py): a ratio is taken within each
round; an "every round" target is PASS only when every round meets it, MISS when none does,
and otherwise says how many rounds did; a "median" target is judged on the rounds' median;
each peer installed is a target on each workload it ran. The inputs are made up so that
every expected figure can be worked out by hand."""
import pytest

from benchmarks import run
from benchmarks import workloads as W


def test_an_every_round_target_is_met_only_when_every_round_meets_it():
    target = (1.15, run.EVERY_ROUND)
    assert run.verdict([1.10, 1.12, 1.15], target) == "PASS"
    assert run.verdict([1.20, 1.30], target) == "MISS"
    assert run.verdict([1.10, 1.20, 1.30], target) == "1 of 3 rounds"


def test_a_median_target_is_judged_on_the_median_of_the_rounds():
    target = (1.25, run.MEDIAN)
    assert run.verdict([1.10, 1.20, 1.60], target) == "PASS"  # one bad round: the median holds
    assert run.verdict([1.20, 1.30, 1.40], target) == "MISS"
    assert run.verdict([], target) == "not measured"


def made_up_samples(per_round, deep=None, growth=None, deep_error=None):
    """Samples as measure() returns them, from the block median of each workload in each
    round; every block holds that one value three times."""
    samples = {"round_medians": {k: list(v) for k, v in per_round.items()}}
    for key, medians in per_round.items():
        samples[key] = [m for m in medians for _ in range(3)]
    for library, (build, backward) in (deep or {}).items():
        samples[f"deep/{library}/build"] = list(build)
        samples[f"deep/{library}/backward"] = list(backward)
        samples[f"deep/{library}/release"] = [0.1] * len(build)
    for depth, per_node in (growth or {}).items():
        samples[f"growth/{depth}"] = [per_node]
    samples["errors"] = {"deep": deep_error} if deep_error else {}
    return samples


# Three rounds; the host gets slower from round to round (x1, x2, x3), which moves every
# library of a round alike. Within each round:
#   MLP, 1 thread, reference / numpy : 1.10, 1.12, 1.40  -> median 1.12, at most 1.3: PASS
#   MLP, 2 threads, reference / numpy: 1.20, 1.40, 1.50  -> median 1.40: MISS
#   MLP, 1 thread, reference / MyGrad: 0.50, 0.56, 1.05  -> median 0.56, at most 1.0: PASS
#   tiny, reference / torch          : 1.50, 1.60, 1.40  -> median 1.50, at most 1.5: PASS
#   tiny, reference / MyGrad         : 1.20, 0.90, 1.10  -> median 1.10: MISS (behind a peer)
ROUNDS = {
    "mlp1/numpy": [1.0, 2.0, 3.0],
    "mlp1/reference": [1.10, 2.24, 4.20],
    "mlp1/mygrad": [2.20, 4.00, 4.00],
    "mlp2/numpy": [1.0, 2.0, 3.0],
    "mlp2/reference": [1.20, 2.80, 4.50],
    "tiny/torch": [0.010, 0.020, 0.030],
    "tiny/reference": [0.015, 0.032, 0.042],
    "tiny/mygrad": [0.0125, 0.032 / 0.9, 0.042 / 1.1],
}
# Deep chain, two runs (forward, backward): the reference 0.4 + 0.5 and 0.6 + 0.6, with the
# collector paused 0.2 + 0.25 and 0.3 + 0.3; torch 0.5 + 0.5 twice -> whole process 0.9 and
# 1.2 (median 1.05, at most 2: PASS), own work 0.45 and 0.6 (median 0.525, at most 1: PASS),
# the collector's share 50% in both runs. MyGrad 1.0 + 2.0 twice: 0.3 and 0.4 -> ahead.
# Forward per node: 3 us at 10k, 4.5 us at 300k -> 1.5.
DEEP = {"reference": ((0.4, 0.6), (0.5, 0.6)), "reference-own": ((0.2, 0.3), (0.25, 0.3)),
        "torch": ((0.5, 0.5), (0.5, 0.5)), "mygrad": ((1.0, 1.0), (2.0, 2.0))}
GROWTH = {10_000: 3e-6, 100_000: 3.3e-6, 300_000: 4.5e-6}


THREADS = {"numpy_blas_threads": 2, "numpy_blas_threads_from": "test", "torch_threads": 2,
           "torch_threads_default": 2, "cpu_count": 2}
SETTINGS = {"rounds": 3, "mlp_reps": 3, "tiny_reps": 3, "deep_rounds": 2}


def summary(*args, **kwargs):
    return run.summarize(made_up_samples(*args, **kwargs))


def test_ratios_are_the_median_and_range_of_the_rounds_ratios():
    figures, ratios, spreads, verdicts, _ = summary(ROUNDS, DEEP, GROWTH)
    assert ratios["mlp1_vs_numpy"] == pytest.approx(1.12)
    assert spreads["mlp1_vs_numpy"] == pytest.approx((1.10, 1.40))
    assert verdicts["mlp1_vs_numpy"] == "PASS"
    assert ratios["mlp2_vs_numpy"] == pytest.approx(1.40)
    assert verdicts["mlp2_vs_numpy"] == "MISS"
    assert ratios["tiny_vs_torch"] == pytest.approx(1.50)
    assert verdicts["tiny_vs_torch"] == "PASS"


def test_every_peer_measured_is_a_target_on_every_workload_it_ran():
    _, ratios, _, verdicts, targets = summary(ROUNDS, DEEP, GROWTH)
    assert ratios["ahead/mygrad/mlp1"] == pytest.approx(0.56)
    assert verdicts["ahead/mygrad/mlp1"] == "PASS"
    assert ratios["ahead/mygrad/tiny"] == pytest.approx(1.10)
    assert verdicts["ahead/mygrad/tiny"] == "MISS"  # behind a peer: the target is missed
    assert ratios["ahead/mygrad/deep"] == pytest.approx(0.35)
    assert "ahead/mygrad/mlp2" not in verdicts  # MyGrad ran no 2-thread MLP here
    assert not any(name.startswith("ahead/hips") for name in targets)  # not installed: no target


def test_the_deep_chain_is_judged_on_the_engines_own_work_and_on_the_whole_process():
    figures, ratios, spreads, verdicts, _ = summary(ROUNDS, DEEP, GROWTH)
    assert spreads["deep_vs_torch"] == pytest.approx((0.9, 1.2))
    assert verdicts["deep_vs_torch"] == "PASS"
    assert spreads["deep_own_vs_torch"] == pytest.approx((0.45, 0.6))
    assert verdicts["deep_own_vs_torch"] == "PASS"
    assert figures["collector_share"] == pytest.approx(0.5)
    slow = dict(DEEP, **{"reference-own": ((0.6, 0.7), (0.6, 0.7))})  # 1.2 and 1.3 of torch
    assert summary(ROUNDS, slow, GROWTH)[3]["deep_own_vs_torch"] == "MISS"
    *_, verdicts, _ = summary(ROUNDS, DEEP, GROWTH, deep_error="RecursionError: ...")
    assert verdicts["deep_vs_torch"] == verdicts["deep_own_vs_torch"] == verdicts["deep_growth"] == "MISS"
    assert verdicts["ahead/mygrad/deep"] == "MISS"


def test_linear_growth_means_a_flat_time_per_node():
    figures, ratios, _, verdicts, _ = summary(ROUNDS, DEEP, GROWTH)
    assert ratios["deep_growth"] == pytest.approx(1.5)  # 4.5 us / 3 us
    assert verdicts["deep_growth"] == "PASS"
    quadratic = {10_000: 3e-6, 100_000: 30e-6, 300_000: 90e-6}  # per node grows with depth
    assert summary(ROUNDS, DEEP, quadratic)[3]["deep_growth"] == "MISS"


def test_graph_memory_is_judged_against_torch_and_only_when_measured():
    samples = made_up_samples(ROUNDS, DEEP, GROWTH)
    assert run.summarize(samples, {"reference": 1080, "torch": 1190})[3]["memory_vs_torch"] == "PASS"
    assert run.summarize(samples, {"reference": 1300, "torch": 1190})[3]["memory_vs_torch"] == "MISS"
    assert run.summarize(samples)[3]["memory_vs_torch"] == "not measured"


def test_the_figures_stay_the_medians_of_every_sample():
    figures, *_ = summary(ROUNDS, DEEP, GROWTH)
    assert figures["mlp_ms"][1]["numpy"] == pytest.approx(2.0 * 1e3)  # median of 1, 2, 3 (x3 each)
    assert figures["tiny_us_per_op"]["torch"] == pytest.approx(0.020 / W.TINY_OPS * 1e6)
    assert figures["deep_s"]["reference"]["backward"] == pytest.approx(0.55)


def test_the_report_shows_every_library_side_by_side_and_each_target_with_its_verdict():
    samples = made_up_samples(ROUNDS, DEEP, GROWTH)
    figures, ratios, spreads, verdicts, targets = run.summarize(samples, {"reference": 1080, "torch": 1190})
    check = {lib: {"max_loss_diff": 0.0, "max_weight_diff": 0.0} for lib in ("reference", "torch")}
    text = run.report(figures, ratios, spreads, verdicts, targets, samples, THREADS, check, SETTINGS)
    lines = text.splitlines()
    mygrad_row = next(line for line in lines if line.startswith("  MyGrad "))
    assert "4000.000 ms" in mygrad_row and "3.00 s (1.00 + 2.00)" in mygrad_row  # its MLP median, its deep run
    assert "(the collector: 50% of the whole)" in text
    thread_line = next(line for line in lines if "MLP step / numpy by hand, 2 threads" in line)
    assert "1.40x" in thread_line and "1.20-1.50x" in thread_line and "MISS" in thread_line
    peer_line = next(line for line in lines if "tiny op / MyGrad" in line)
    assert "1.10x" in peer_line and "MISS" in peer_line
    growth_line = next(line for line in lines if "300k / 10k" in line)
    assert "1.50x" in growth_line and "PASS" in growth_line


@pytest.mark.skipif(not W.micrograd_available(), reason="micrograd (the optional bench extra) is not installed")
def test_the_scalar_chain_computes_the_same_gradient_on_every_library():
    # d/dx of 100 x (y * 1.0001 + 0.5).relu() from x = 1 is 1.0001 ** 100 (every value > 0).
    expected = 1.0001 ** W.SCALAR_CYCLES
    for library in W.SCALAR_LIBRARIES:
        run_chain = W.make_scalar_chain(library)
        assert run_chain() == pytest.approx(expected, rel=1e-5), library
        assert run_chain() == pytest.approx(expected, rel=1e-5), library  # the leaf was reset


def test_the_floor_is_reported_beside_the_targets_and_judged_on_none():
    # The bare engine's MLP rounds against numpy's 1, 2, 3: 1.05, 1.00, 1.20 (median 1.05);
    # the reference's 1.10, 2.24, 4.20 against the bare engine's: 1.048, 1.12, 1.167 (1.12).
    rounds = dict(ROUNDS, **{"mlp1/bare": [1.05, 2.0, 3.6]})
    samples = made_up_samples(rounds, DEEP, GROWTH)
    figures, ratios, spreads, verdicts, targets = run.summarize(samples)
    floor = figures["floor"]
    assert floor["MLP step, 1 thread: bare engine / numpy by hand"] == pytest.approx((1.05, 1.00, 1.20))
    assert floor["MLP step, 1 thread: reference / bare engine"][0] == pytest.approx(1.12)
    assert "MLP step, 2 threads: bare engine / numpy by hand" not in floor  # not measured
    assert not any("bare" in name for name in list(targets) + list(verdicts))
    text = run.report(figures, ratios, spreads, verdicts, targets, samples, THREADS, {}, SETTINGS)
    line = next(line for line in text.splitlines() if "1 thread: bare engine / numpy" in line)
    assert "1.05x" in line and "1.00-1.20x" in line
    assert next(line for line in text.splitlines() if line.startswith("  bare engine ")).split()[2] == "2000.000"

