"""Learner code that disturbs the rest of the run (issue 13, section 5): floods of output,
patches of the engine or numpy, KeyboardInterrupt raised by a piece."""
from kit import kata_row, make_checkout, write_learner_file

# Prints 200,000 characters on every call, and gets every graph wrong.
CHATTY_TOPOSORT = '''
def topological_order(roots):
    print("spam" * 50_000)
    return []
'''


def test_a_learners_output_is_shown_once_per_kata_and_cut(pytester):
    make_checkout(pytester, katas=["03_toposort"])
    write_learner_file(pytester, "03_toposort", "toposort.py", CHATTY_TOPOSORT)
    result = pytester.runpytest("-p", "no:randomly")
    out = result.stdout.str()
    assert kata_row(result, "03_toposort")[1] == "in progress"
    assert result.parseoutcomes()["failed"] >= 5
    assert out.count("Captured stdout call") == 1, out[-3000:]
    assert out.count("characters cut here: the kit shows a few KB of a learner's output") == 1
    assert out.count("spam") < 2000  # a few KB of it, not 200,000 characters per test
    assert len(out) < 100_000
