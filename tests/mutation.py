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
import ast
import re
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, settings

from kit import assert_done, kata_row, pointed_message, write_learner_file

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


def assert_killed(result, kata, mutant, source=""):
    """The kata is not done, the output names the mistake when the mutant says how, and the
    table's first failure reads right (see assert_reads_right)."""
    __tracebackhide__ = True
    out = result.stdout.str()
    assert result.ret != 0, f"mutant {mutant.name!r} survived (exit 0):\n{out}"
    assert kata_row(result, kata)[1] != "done", f"mutant {mutant.name!r} survived:\n{out}"
    if mutant.expect:
        assert mutant.expect in out, f"mutant {mutant.name!r}: {mutant.expect!r} not shown:\n{out}"
    assert_reads_right(result, kata, source, what=f"mutant {mutant.name!r}")


# A message that is a Python exception as Python wrote it ("TypeError: 'NoneType' object is not
# iterable"), not a sentence of the kit's about the learner's piece.
BARE_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b")
WORDLESS = ("Regex pattern did not match", "assert ", "failed (no message)")


def first_failure_line(result, kata):
    """The message of the table's "first failure:" line under `kata`'s row (where it points to
    the failure shown in full above, that failure's one line: what the table says without it)."""
    lines = result.outlines
    row = next(i for i, line in enumerate(lines) if line.startswith(f"  {kata} "))
    for line in lines[row + 1:]:
        if not line.startswith("    "):
            break
        if "first failure" in line:  # "first failure: " or "first failure (N tests): "
            return pointed_message(result, line.split(": ", 1)[1].strip())
    return None


def assert_reads_right(result, kata, source, what):
    """Issue 27's rule for the first failure a learner reads: a sentence that says something
    (not empty, not a heading, not a bare Python exception from a test file or the engine),
    naming only pieces the learner wrote (their kata's pieces, or functions of their file)."""
    __tracebackhide__ = True
    message = first_failure_line(result, kata)
    out = result.stdout.str()
    assert message, f"{what}: no first failure in the table:\n{out}"
    words = re.findall(r"[A-Za-z]{2,}", message)
    # a heading ends with a colon; a long sentence the table cut short may end at one too
    heading = message.endswith(":") or (message.endswith(":…") and len(words) < 8)
    assert len(words) >= 4 and not heading, f"{what}: a wordless first failure: {message!r}"
    assert not message.startswith(WORDLESS), f"{what}: a wordless first failure: {message!r}"
    assert not BARE_EXCEPTION.match(message), f"{what}: a bare Python exception as first failure: {message!r}\n{out}"
    yours = set(re.findall(r"\byour (\w+)", message)) - NOT_PIECES
    written = learner_names(kata, source)
    assert yours <= written, f"{what}: names {sorted(yours - written)}, not the learner's: {message!r}"


# Words after "your" that are not names of code: "your engine", "your file", ...
NOT_PIECES = {"engine", "file", "graph", "gradient", "gradients", "own", "piece", "pieces", "rule", "rules",
              "code", "words", "message", "loop", "result", "hook", "hooks", "tensor", "tensors", "run",
              "capstone", "model", "weights", "loss", "order", "sort", "function", "functions", "answer"}


def learner_names(kata, source):
    """The names a learner of `kata` wrote: the kata's pieces and functions, and every
    function, class and method of the planted file."""
    from plugin.manifest import find_kata

    found = find_kata(kata)
    names = set(found.pieces) | set(found.functions)
    if source:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
    return names


def assert_caught(checkout, kata, filename, source, mutant, *options):
    """Plant `mutant` in the correct `source`, grade the kata up to its first failure, and
    check that it is not done and that the output names the mistake."""
    __tracebackhide__ = True
    planted = mutate(source, mutant)
    compile(planted, filename, "exec")  # a mutant is a mistake in working code, not a syntax error
    assert_killed(plant_and_grade(checkout, kata, filename, planted, *options), kata, mutant, planted)


def assert_correct_is_done(checkout, kata, filename, source, *options):
    """Plant a correct `source` (written differently from the reference) and grade all of the
    kata: it must come out done."""
    __tracebackhide__ = True
    assert_done(plant_and_grade_in_full(checkout, kata, filename, source, *options), kata)
