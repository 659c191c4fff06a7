"""The arithmetic of the benchmark report (benchmarks/run.py): a ratio is taken within each
round, and a target is PASS only when every round meets it, MISS when none does, and
otherwise says how many rounds did. The inputs are made up so that every expected figure
can be worked out by hand."""
import pytest

from benchmarks import run
from benchmarks import workloads as W


def test_a_target_is_met_only_when_every_round_meets_it():
    assert run.verdict([1.10, 1.12, 1.15], 1.15) == "PASS"
    assert run.verdict([1.20, 1.30], 1.15) == "MISS"
    assert run.verdict([1.10, 1.20, 1.30], 1.15) == "1 of 3 rounds"


def test_a_strict_target_is_missed_at_equality():
    assert run.verdict([1.00], 1.0, strict=True) == "MISS"
    assert run.verdict([1.00], 1.0) == "PASS"
    assert run.verdict([0.90, 1.00], 1.0, strict=True) == "1 of 2 rounds"


def made_up_samples(per_round, deep_backward=(0.5, 0.6, 0.7), deep_error=None):
    """Samples as measure() returns them, from the block median of each workload in each
    round; every block holds that one value three times."""
    samples = {"round_medians": {k: list(v) for k, v in per_round.items()}}
    for key, medians in per_round.items():
        samples[key] = [m for m in medians for _ in range(3)]
    for part, values in (("build", (1.0,) * 3), ("backward", deep_backward), ("release", (0.1,) * 3)):
        samples[f"deep/{part}"] = list(values)
    samples["errors"] = {"deep": deep_error} if deep_error else {}
    return samples


# Three rounds; the host gets slower from round to round (x1, x2, x3), which moves every
# library of a round alike. Within each round:
#   reference / numpy : 1.10, 1.12, 1.14  -> every round at most 1.15: PASS, median 1.12
#   reference / torch : 0.90, 1.10, 0.95  -> two rounds below 1.00,   median 0.95
#   tiny, ref / torch : 1.50, 1.60, 1.40  -> no round at most 1.00:  MISS, median 1.50
ROUNDS = {
    "mlp/numpy": [1.0, 2.0, 3.0],
    "mlp/reference": [1.10, 2.24, 3.42],
    "mlp/torch": [1.10 / 0.90, 2.24 / 1.10, 3.42 / 0.95],
    "tiny/torch": [0.010, 0.020, 0.030],
    "tiny/reference": [0.015, 0.032, 0.042],
}


def test_ratios_are_the_median_and_range_of_the_rounds_ratios():
    figures, ratios, spreads, verdicts = run.summarize(made_up_samples(ROUNDS))
    assert ratios["mlp_vs_numpy"] == pytest.approx(1.12)
    assert spreads["mlp_vs_numpy"] == pytest.approx((1.10, 1.14))
    assert verdicts["mlp_vs_numpy"] == "PASS"
    assert ratios["mlp_vs_torch"] == pytest.approx(0.95)
    assert spreads["mlp_vs_torch"] == pytest.approx((0.90, 1.10))
    assert verdicts["mlp_vs_torch"] == "2 of 3 rounds"
    assert ratios["tiny_vs_torch"] == pytest.approx(1.50)
    assert verdicts["tiny_vs_torch"] == "MISS"


def test_the_figures_stay_the_medians_of_every_sample():
    figures, *_ = run.summarize(made_up_samples(ROUNDS))
    assert figures["mlp_ms"]["numpy"] == pytest.approx(2.0 * 1e3)  # median of 1, 2, 3 (x3 each)
    assert figures["tiny_us_per_op"]["torch"] == pytest.approx(0.020 / W.TINY_OPS * 1e6)
    assert figures["deep_s"]["backward"] == pytest.approx(0.6)


def test_the_deep_chain_must_pass_in_every_run_and_without_error():
    *_, verdicts = run.summarize(made_up_samples(ROUNDS, deep_backward=(0.5, 0.6, 2.5)))
    assert verdicts["deep_backward_s"] == "2 of 3 rounds"
    *_, verdicts = run.summarize(made_up_samples(ROUNDS, deep_error="RecursionError: ..."))
    assert verdicts["deep_backward_s"] == "MISS"


def test_the_report_prints_each_ratio_with_its_range_and_verdict():
    samples = made_up_samples(ROUNDS)
    figures, ratios, spreads, verdicts = run.summarize(samples)
    threads = {"numpy_blas_threads": 2, "numpy_blas_threads_from": "test", "torch_threads": 2,
               "torch_threads_default": 2, "cpu_count": 2}
    check = {lib: {"max_loss_diff": 0.0, "max_weight_diff": 0.0} for lib in ("reference", "torch")}
    settings = {"rounds": 3, "mlp_reps": 3, "tiny_reps": 3, "deep_rounds": 3}
    text = run.report(figures, ratios, spreads, verdicts, samples, threads, check, settings)
    torch_line = next(line for line in text.splitlines() if "/ torch MLP step" in line)
    assert "0.95x" in torch_line and "0.90-1.10x" in torch_line and "2 of 3 rounds" in torch_line
