"""Speed verdicts a learner can trust: a growth verdict never fails linear code because the
machine was busy for a moment, a ratio is shown as a coarse class, and a piece whose source
did not change is not timed again."""
import pytest

from kit import kata_row, row_line, write_learner_file
from plugin.speed import speed_class
from test_plugin import KAHN, QUADRATIC

KATA = "03_toposort"
FILE = "toposort.py"

# Kahn's order (linear), but the first two calls on a big graph stall for 0.3 s without
# running, as when another process takes the core for a moment: the wall-clock timing of the
# big graph that the growth check used to trust then read like a quadratic piece.
STALLS_TWICE = KAHN + '''

import time

_stalls = [2]
_kahn = topological_order


def topological_order(roots):
    order = _kahn(roots)
    if len(order) > 1000 and _stalls[0]:
        _stalls[0] -= 1
        time.sleep(0.3)
    return order
'''


def test_a_burst_of_load_never_fails_linear_code(checkout):
    write_learner_file(checkout, KATA, FILE, STALLS_TWICE)
    result = checkout.runpytest("-p", "no:randomly", "-k", "linear_time")
    assert "looks quadratic" not in result.stdout.str()
    assert result.ret == 0, result.stdout.str()


def test_a_quadratic_piece_still_fails_after_measuring_again(checkout):
    write_learner_file(checkout, KATA, FILE, QUADRATIC)
    result = checkout.runpytest("-p", "no:randomly", "-k", "linear_time", "--kata-timeout", "120")
    assert "looks quadratic" in result.stdout.str()
    assert result.ret == 1


def test_an_unchanged_piece_is_not_timed_again(checkout):
    write_learner_file(checkout, KATA, FILE, KAHN)
    first = checkout.runpytest("-p", "no:randomly")
    assert kata_row(first, KATA)[1] == "done"
    assert "x reference" in row_line(first, KATA)
    assert "unchanged since it was timed" not in row_line(first, KATA)
    second = checkout.runpytest("-p", "no:randomly")
    assert "unchanged since it was timed" in row_line(second, KATA)
    # The same ratio as the first run: it was remembered, not measured again.
    assert row_line(second, KATA).split("x reference")[0] == row_line(first, KATA).split("x reference")[0]
    # An edit (even a comment) is a new piece: timed again.
    write_learner_file(checkout, KATA, FILE, KAHN + "\n# tidied up\n")
    third = checkout.runpytest("-p", "no:randomly")
    assert "x reference" in row_line(third, KATA)
    assert "unchanged since it was timed" not in row_line(third, KATA)


@pytest.mark.parametrize("ratio, words", [
    (0.5, "faster"), (0.79, "faster"), (0.8, "same speed"), (1.0, "same speed"),
    (1.25, "same speed"), (1.26, "slower"), (2.9, "slower"), (3.0, "much slower"), (40, "much slower"),
])
def test_a_ratio_is_told_as_a_coarse_class(ratio, words):
    assert speed_class(ratio) == words
