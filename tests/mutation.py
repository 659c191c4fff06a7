"""The kit's mutation suite: plant one plausible learner mistake in a correct solution and
check that the kata does not come out done, with a message that names the mistake.

A mutant is a small source edit of a correct learner file (the reference piece as a learner
writes it, or another correct variant): replace `old` (which must occur exactly once) by
`new`. Adding one is a line in a kata's MUTANTS table:

    Mutant("forgets to unbroadcast the second input", "return a, b", "return a, grad",
           expect="AddBackward0"),

Write mutants from the kata's contract (its stub docstrings and its lesson), not from its
tests: a mutant that no test kills is a sentence of the contract that nothing grades.

A planted run stops at the first failure (`-x`): the kata is then not done, which is all a
mutant must show, and the run stays short. Its random cases are fewer than a learner's run
draws, and a failing one is not shrunk (the PLANTED profile): a mutant is a mistake
everywhere, so the first cases show it, and shrinking would only cost time.
"""
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, settings

from kit import assert_done, kata_row, write_learner_file

# Registered here, in the process that runs the planted runs (pytester's in-process runs share
# hypothesis's registry); otherwise like the plugin's profile: derandomized, no database.
settings.register_profile(
    "planted",
    deadline=None,
    derandomize=True,
    database=None,
    max_examples=10,
    print_blob=False,
    report_multiple_bugs=False,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# The options of every planted run: file order, stop at the first failure, no speed tests
# (they wait for the correctness tests, and a mutant never gets that far), few random cases.
PLANTED_RUN = ("-p", "no:randomly", "-x", "-k", "not speed", "--hypothesis-profile", "planted")


@dataclass(frozen=True)
class Mutant:
    name: str  # the mistake, in a learner's words: "forgets the chain rule in exp"
    old: str  # text of the correct source ...
    new: str  # ... replaced by this
    expect: str = ""  # a phrase the run's output must show: the message that names it

    def __str__(self):  # the test id
        return self.name.replace(" ", "-")


def mutate(source, mutant):
    """`source` with the mutant's edit; fails loudly when the edit no longer applies."""
    count = source.count(mutant.old)
    assert count == 1, f"mutant {mutant.name!r}: {mutant.old!r} occurs {count} times in the source"
    return source.replace(mutant.old, mutant.new)


# A correct solution must come out done, and a kata is done only when every graded test of it
# ran in the run (see plugin/guards/partial_runs.py; speed tests only measure): no -x, no other -k.
FULL_RUN = ("-p", "no:randomly", "-k", "not speed", "--hypothesis-profile", "planted")


def plant_and_grade(checkout, kata, filename, source, *options):
    """Write `source` as the learner's file of `kata` and grade that kata up to its first
    failure (a mutant); the run's result."""
    write_learner_file(checkout, kata, filename, source)
    return checkout.runpytest(*PLANTED_RUN, *options)


def plant_and_grade_in_full(checkout, kata, filename, source, *options):
    """Write `source` as the learner's file of `kata` and grade all of it (a correct
    solution, which must come out done); the run's result."""
    write_learner_file(checkout, kata, filename, source)
    return checkout.runpytest(*FULL_RUN, *options)


def assert_killed(result, kata, mutant):
    """The kata is not done, and the output names the mistake when the mutant says how."""
    __tracebackhide__ = True
    out = result.stdout.str()
    assert result.ret != 0, f"mutant {mutant.name!r} survived (exit 0):\n{out}"
    assert kata_row(result, kata)[1] != "done", f"mutant {mutant.name!r} survived:\n{out}"
    if mutant.expect:
        assert mutant.expect in out, f"mutant {mutant.name!r}: {mutant.expect!r} not shown:\n{out}"


def assert_caught(checkout, kata, filename, source, mutant, *options):
    """Plant `mutant` in the correct `source`, grade the kata up to its first failure, and
    check that it is not done and that the output names the mistake."""
    __tracebackhide__ = True
    planted = mutate(source, mutant)
    compile(planted, filename, "exec")  # a mutant is a mistake in working code, not a syntax error
    assert_killed(plant_and_grade(checkout, kata, filename, planted, *options), kata, mutant)


def assert_correct_is_done(checkout, kata, filename, source, *options):
    """Plant a correct `source` (written differently from the reference) and grade all of the
    kata: it must come out done."""
    __tracebackhide__ = True
    assert_done(plant_and_grade_in_full(checkout, kata, filename, source, *options), kata)
