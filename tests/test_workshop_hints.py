"""--hint without --kata: the first kata not done, one more hint per call."""
from kit import reference_source, write_learner_file


def test_hint_goes_to_the_next_unfinished_kata(checkout):
    write_learner_file(checkout, "01_elementwise_rules", "rules.py", reference_source("rules"))
    checkout.runpytest("--kata", "1", "-p", "no:randomly")  # kata 01 done, remembered
    first = checkout.runpytest("--hint", "-k", "no_test_matches_this")
    assert "Hint 1 of" in first.stdout.str() and "for kata 02_shapes" in first.stdout.str()
    again = checkout.runpytest("--kata", "next", "--hint", "-k", "no_test_matches_this")
    assert "Hint 2 of" in again.stdout.str() and "for kata 02_shapes" in again.stdout.str()
    hints = (checkout.path / "katas" / "02_shapes" / "hints.md").read_text().split("\n---")
    assert hints[1].strip().splitlines()[0] in again.stdout.str()
