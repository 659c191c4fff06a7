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


# --- hints that match the failure (issue 31.3) ---------------------------------------------------

import ast  # noqa: E402

import pytest  # noqa: E402

from kit import REPO, learner_source  # noqa: E402
from plugin.grading.hints import load_hints  # noqa: E402
from plugin.manifest import katas  # noqa: E402


def graded_test_functions(kata):
    names = set()
    for path in kata.folder.glob("test_*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and "speed" not in path.name:
                names.add(node.name)
    return names


@pytest.mark.parametrize("kata", [k for k in katas() if k.hints.exists()], ids=lambda k: k.slug)
def test_every_hint_says_what_it_helps_and_every_test_has_a_hint(kata):
    hints = load_hints(kata)
    text = kata.hints.read_text()
    assert text.count("\nHelps: ") + text.startswith("Helps: ") == len(hints), "a hint without its Helps line"
    tests = graded_test_functions(kata)
    for hint in hints:
        assert "Helps:" not in hint.text, "the Helps line is for the kit, not shown"
        for pattern in hint.helps:
            if pattern.startswith("test_"):
                assert any(h.matches(f"x.py::{t}", "") == "specific" for t in tests for h in [hint]), (
                    f"hint {hint.number}: {pattern} names no test of {kata.slug}")
    general = any("*" in h.helps for h in hints)
    orphans = sorted(t for t in tests if not any(h.matches(f"x.py::{t}", "") == "specific" for h in hints))
    assert general or not orphans, f"tests no hint helps with: {orphans}"


PENALTY_MISTAKE = ("((norms - 1) ** 2).mean()", "((norms - 1) ** 2).sum()")


def test_the_hint_offered_first_matches_the_first_failure(checkout):
    """Kata 09 with only the penalty wrong: its hint (the fifth) comes first, not hints 1-4
    about jacobian and hvp; then the next one in order."""
    (KATA_09,) = [k for k in katas() if k.number == 9]
    source = learner_source("higher_order")
    assert source.count(PENALTY_MISTAKE[0]) == 1
    write_learner_file(checkout, "09_higher_order", "higher_order.py", source.replace(*PENALTY_MISTAKE))
    first = checkout.runpytest("--kata", "9", "--hint", "-p", "no:randomly", "-k", "not speed")
    out = first.stdout.str()
    penalty = next(h for h in load_hints(KATA_09) if "gradient_penalty" in h.helps)
    assert f"Hint {penalty.number} of {len(load_hints(KATA_09))} for kata 09_higher_order" in out, out
    assert "for your first failure, test_penalty_equals_torchs" in out, out
    assert "stuck?" not in out, out  # the hint is shown: the Next line offers none (the sixth walk)
    again = checkout.runpytest("--kata", "9", "--hint", "-p", "no:randomly", "-k", "not speed")
    assert "Hint 1 of" in again.stdout.str()  # nothing else matches: the first unseen, in order
    # ... and it says so, not to be read as a hint about the failure (the fifth walk)
    assert "no hint you have not seen yet is about your first failure, test_penalty_equals_torchs" in again.stdout.str()
    # the hint a learner is at: once per run, under the kata's first failure, the one that fits it
    shown = again.stdout.str().count("Hint (pytest --hint shows the next one)")
    assert shown == 1, again.stdout.str()
    assert penalty.text.splitlines()[0] in again.stdout.str().split("short test summary")[0]


def test_a_cache_of_counts_still_reads(checkout):
    """Caches written before hints were tagged held a count: the first N hints are seen."""
    checkout.runpytest("--kata", "2", "--hint", "-k", "no_test_matches_this")
    checkout.runpytest("--kata", "2", "--hint", "-k", "no_test_matches_this")
    cache = checkout.path / ".pytest_cache" / "v" / "autograd_katas" / "hints_seen"
    cache.write_text('{"02_shapes": 2}')
    third = checkout.runpytest("--kata", "2", "--hint", "-k", "no_test_matches_this")
    assert "Hint 3 of" in third.stdout.str(), third.stdout.str()


def test_a_hint_seen_for_another_failure_is_not_shown_above_a_new_one(checkout):
    """The penalty's hint was seen; once the penalty is right and the jacobian wrong, the
    default run does not print the penalty's hint above the jacobian's failure (the fifth walk)."""
    source = learner_source("higher_order")
    write_learner_file(checkout, "09_higher_order", "higher_order.py", source.replace(*PENALTY_MISTAKE))
    checkout.runpytest("--kata", "9", "--hint", "-p", "no:randomly", "-k", "not speed")
    jacobian_mistake = ("retain_graph=not last", "retain_graph=False")
    assert source.count(jacobian_mistake[0]) == 1
    write_learner_file(checkout, "09_higher_order", "higher_order.py", source.replace(*jacobian_mistake))
    out = checkout.runpytest("--kata", "9", "-p", "no:randomly", "-k", "not speed").stdout.str()
    assert "jacobian" in out and "Hint (pytest --hint shows the next one)" not in out, out
    assert "stuck? pytest --kata 9 --hint" in out, out
