"""The arithmetic of the benchmark report (benchmarks/run.py): a ratio is taken within each
round; an "every round" target is PASS only when every round meets it, MISS when none does,
and otherwise says how many rounds did; a "median" target is judged on the rounds' median.
The inputs are made up so that every expected figure can be worked out by hand."""
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
#   reference / numpy : 1.10, 1.12, 1.40  -> median 1.12, at most 1.3: PASS (median target)
#   reference / torch : 0.90, 1.10, 0.95  -> two rounds at most 1.00: "2 of 3 rounds"
#   tiny, ref / torch : 1.50, 1.60, 1.40  -> median 1.50 over 1.25: MISS
ROUNDS = {
    "mlp/numpy": [1.0, 2.0, 3.0],
    "mlp/reference": [1.10, 2.24, 4.20],
    "mlp/torch": [1.10 / 0.90, 2.24 / 1.10, 4.20 / 0.95],
    "tiny/torch": [0.010, 0.020, 0.030],
    "tiny/reference": [0.015, 0.032, 0.042],
}
# Deep chain, two runs: reference 0.4 + 0.5 and 0.6 + 0.6; torch 0.5 + 0.5 and 0.5 + 0.5
# -> ratios 0.9 and 1.2: "1 of 2 rounds". Forward per node: 3 us at 10k, 4.5 us at 300k -> 1.5.
DEEP = {"reference": ((0.4, 0.6), (0.5, 0.6)), "torch": ((0.5, 0.5), (0.5, 0.5))}
GROWTH = {10_000: 3e-6, 100_000: 3.3e-6, 300_000: 4.5e-6}


def test_ratios_are_the_median_and_range_of_the_rounds_ratios():
    figures, ratios, spreads, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH))
    assert ratios["mlp_vs_numpy"] == pytest.approx(1.12)
    assert spreads["mlp_vs_numpy"] == pytest.approx((1.10, 1.40))
    assert verdicts["mlp_vs_numpy"] == "PASS"
    assert ratios["mlp_vs_torch"] == pytest.approx(0.95)
    assert spreads["mlp_vs_torch"] == pytest.approx((0.90, 1.10))
    assert verdicts["mlp_vs_torch"] == "2 of 3 rounds"
    assert ratios["tiny_vs_torch"] == pytest.approx(1.50)
    assert verdicts["tiny_vs_torch"] == "MISS"


def test_the_deep_chain_is_forward_plus_backward_against_torch_in_every_run():
    *_, spreads, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH))
    assert spreads["deep_vs_torch"] == pytest.approx((0.9, 1.2))
    assert verdicts["deep_vs_torch"] == "1 of 2 rounds"
    *_, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH, deep_error="RecursionError: ..."))
    assert verdicts["deep_vs_torch"] == "MISS" and verdicts["deep_growth"] == "MISS"


def test_linear_growth_means_a_flat_time_per_node():
    figures, ratios, _, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH))
    assert ratios["deep_growth"] == pytest.approx(1.5)  # 4.5 us / 3 us
    assert verdicts["deep_growth"] == "PASS"
    quadratic = {10_000: 3e-6, 100_000: 30e-6, 300_000: 90e-6}  # per node grows with depth
    *_, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, quadratic))
    assert verdicts["deep_growth"] == "MISS"


def test_graph_memory_is_judged_against_torch_and_only_when_measured():
    *_, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH), {"reference": 1080, "torch": 1190})
    assert verdicts["memory_vs_torch"] == "PASS"
    *_, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH), {"reference": 1300, "torch": 1190})
    assert verdicts["memory_vs_torch"] == "MISS"
    *_, verdicts = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH))
    assert verdicts["memory_vs_torch"] == "not measured"


def test_the_figures_stay_the_medians_of_every_sample():
    figures, *_ = run.summarize(made_up_samples(ROUNDS, DEEP, GROWTH))
    assert figures["mlp_ms"]["numpy"] == pytest.approx(2.0 * 1e3)  # median of 1, 2, 3 (x3 each)
    assert figures["tiny_us_per_op"]["torch"] == pytest.approx(0.020 / W.TINY_OPS * 1e6)
    assert figures["deep_s"]["reference"]["backward"] == pytest.approx(0.55)


def test_the_report_prints_each_ratio_with_its_range_and_verdict():
    samples = made_up_samples(ROUNDS, DEEP, GROWTH)
    figures, ratios, spreads, verdicts = run.summarize(samples, {"reference": 1080, "torch": 1190})
    threads = {"numpy_blas_threads": 2, "numpy_blas_threads_from": "test", "torch_threads": 2,
               "torch_threads_default": 2, "cpu_count": 2}
    check = {lib: {"max_loss_diff": 0.0, "max_weight_diff": 0.0} for lib in ("reference", "torch")}
    settings = {"rounds": 3, "mlp_reps": 3, "tiny_reps": 3, "deep_rounds": 2}
    text = run.report(figures, ratios, spreads, verdicts, samples, threads, check, settings)
    torch_line = next(line for line in text.splitlines() if "/ torch MLP step" in line)
    assert "0.95x" in torch_line and "0.90-1.10x" in torch_line and "2 of 3 rounds" in torch_line
    growth_line = next(line for line in text.splitlines() if "300k / 10k" in line)
    assert "1.50x" in growth_line and "PASS" in growth_line


@pytest.mark.skipif(not W.micrograd_available(), reason="micrograd (the optional bench extra) is not installed")
def test_the_scalar_chain_computes_the_same_gradient_on_every_library():
    # d/dx of 100 x (y * 1.0001 + 0.5).relu() from x = 1 is 1.0001 ** 100 (every value > 0).
    expected = 1.0001 ** W.SCALAR_CYCLES
    for library in W.SCALAR_LIBRARIES:
        run_chain = W.make_scalar_chain(library)
        assert run_chain() == pytest.approx(expected, rel=1e-5), library
        assert run_chain() == pytest.approx(expected, rel=1e-5), library  # the leaf was reset
