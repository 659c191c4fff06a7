"""Feedback that reads right the first time (issues 27 and 31): each message a learner meets
names the piece they wrote, in words, never a bare Python exception from a test file or a
piece they have not written, and its one line carries what the full message says."""
import re

import numpy as np
import pytest

import reference
from kit import DEPTH_FIRST_TOPOSORT, kata_row, learner_source, make_checkout, pointed_message, write_learner_file
from mutation import BARE_EXCEPTION, NOT_PIECES
from plugin.grading.oracle import KataMismatch, Oracle
from plugin.grading.one_line import one_line
from reference import pieces


@pytest.fixture
def oracle():
    return Oracle(reference)


def one_liners(result):
    """Every failure's one line: the table's and the "also" lines (-v lists them all); the
    first failure's as the table says it where pytest shows no failure (--tb=no)."""
    return [pointed_message(result, line.split(": ", 1)[1].strip()) for line in result.outlines
            if re.match(r"(first failure|also)( \(\d+ tests\))?: ", line.strip())]


def assert_sentences(lines, learner_names):
    __tracebackhide__ = True
    assert lines, "no failure shown"
    for line in lines:
        assert not BARE_EXCEPTION.match(line), f"a bare Python exception: {line!r}"
        named = set(re.findall(r"\byour (\w+)", line)) - NOT_PIECES
        assert named <= learner_names, f"names {named - learner_names}, not the learner's: {line!r}"


# --- kata 01: a rule that returns gradients of the wrong shapes ----------------------------------

SWAPPED_MUL = learner_source("rules").replace(
    "    grad_a = grad * b if ctx.needs_input_grad[0] else None\n"
    "    grad_b = grad * a if ctx.needs_input_grad[1] else None\n"
    "    return grad_a, grad_b\n",
    "    return b, a  # forgets grad, and swaps the shapes\n", 1)


def test_a_rule_returning_the_wrong_shapes_is_named_not_unbroadcast(pytester):
    """Issue 27.1: kata 01's mul_backward returning (b, a) was reported as "your unbroadcast
    raised IndexError" (unbroadcast is kata 02's, the model solution's here)."""
    make_checkout(pytester, katas=["01_elementwise_rules"])
    write_learner_file(pytester, "01_elementwise_rules", "rules.py", SWAPPED_MUL)
    result = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-v", "-k", "middle_of_a_graph and (add or mul)")
    lines = one_liners(result)
    assert_sentences(lines, {"mul_backward", "add_backward"})
    out = result.stdout.str()
    assert "your mul_backward returned a gradient of shape (1, 3) for input 0 of MulBackward0, whose shape is (2, 1)" in out, out
    assert "unbroadcast" not in " ".join(lines), lines


def test_a_wrong_rule_shows_the_gradient_it_received(oracle):
    """Issue 27.1: 'expected [..] got [1., 1.]' reads at once beside 'received [..]'."""
    def forgets_the_chain_rule(ctx, grad):
        (out,) = ctx.saved_tensors
        return (out,)

    x = np.array([0.3, -0.8])
    with pieces.swapped({"exp_backward": forgets_the_chain_rule}), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(lambda lib, x: x.exp().sigmoid().sum(), op="x.exp().sigmoid().sum()", x=x)
    # what ExpBackward0 receives: sigmoid's derivative at exp(x), computed here with numpy
    s = 1 / (1 + np.exp(-np.exp(x)))
    received = np.array2string(s * (1 - s), precision=5, separator=", ")
    assert f"received {received}" in str(caught.value), str(caught.value)


# --- kata 03: an order that is not reversed ------------------------------------------------------

# A depth-first search that forgets to reverse its post-order (leaves first).
UNREVERSED_POST_ORDER = DEPTH_FIRST_TOPOSORT.replace("    post_order.reverse()\n", "")
assert UNREVERSED_POST_ORDER != DEPTH_FIRST_TOPOSORT


def test_an_unreversed_order_never_shows_the_tests_own_exception(pytester):
    """Issue 27.1: the test's own x.grad.detach() raised AttributeError on a None gradient."""
    make_checkout(pytester, katas=["03_toposort"])
    write_learner_file(pytester, "03_toposort", "toposort.py", UNREVERSED_POST_ORDER)
    result = pytester.runpytest("--kata", "3", "-p", "no:randomly", "-v", "-k", "not speed and not linear and not 100000")
    lines = one_liners(result)
    assert_sentences(lines, {"topological_order"})
    assert not any("'NoneType'" in line for line in lines), lines
    assert any("x.grad after a backward pass in your order is None, torch's is a tensor" in line for line in lines), lines


# --- kata 06: inputs, grad mode ------------------------------------------------------------------

def graded_kata_06(pytester, old, new):
    """Kata 06's one lines (-v: all of them) with the model run_backward edited: old -> new."""
    source = learner_source("backward_pass")
    assert source.count(old) == 1
    make_checkout(pytester, katas=["06_backward_pass"])
    write_learner_file(pytester, "06_backward_pass", "backward_pass.py", source.replace(old, new))
    result = pytester.runpytest("--kata", "6", "-p", "no:randomly", "-v", "-k", "not speed and not linear and not deep")
    lines = one_liners(result)
    assert_sentences(lines, {"run_backward"})
    return lines


def test_a_run_backward_that_ignores_inputs_is_told_what_to_return(pytester):
    """Issue 27.1: "TypeError: 'NoneType' object is not iterable" at the test's call of
    ag.autograd.grad; the contract: one gradient per input when `inputs` is given."""
    lines = graded_kata_06(pytester, "    targets = None if inputs is None",
                           "    inputs = None\n    targets = None if inputs is None")
    assert "your run_backward returned None; given inputs, it must return one gradient (or None) per input" in lines[0], lines


def test_a_pass_without_grad_mode_off_says_grad_mode(pytester):
    """Issue 27.1: 'requires_grad is True, torch's is False' never mentioned grad mode."""
    lines = graded_kata_06(pytester, "    with set_grad_enabled(create_graph):\n",
                           "    if True:  # grad mode left as it is\n")
    assert "grad mode" in lines[0], lines
    assert all("grad mode" in line for line in lines if "requires_grad is True, torch's is False" in line), lines
    # the hook's view of grad mode in a pass without create_graph: torch's off, the engine's on
    assert any(re.search(r"grad mode as a hook saw it.*torch gives \[False, .*\], the engine \[True, ", line)
               for line in lines), lines


def test_a_count_is_never_compared_with_a_list(oracle):
    """Issue 27.1: "torch gives 1 values, the engine ['side', 'main']"."""
    with pytest.raises(KataMismatch) as caught:
        oracle.compare(lambda lib, x: ["main"] if lib is not reference else ["side", "main"], x=np.ones(2))
    assert "torch gives ['main'], the engine ['side', 'main']" in str(caught.value)


# --- the one line --------------------------------------------------------------------------------

def raised(fn):
    try:
        fn()
    except AssertionError as error:
        return f"{type(error).__name__}: {error}"
    raise AssertionError("nothing raised")


def test_a_numpy_assertion_shows_expected_and_got():
    """Issue 31.1: numpy's messages start with a newline: the one line was 'AssertionError: '."""
    message = raised(lambda: np.testing.assert_allclose([1.0, 2.0], [1.0, 3.0], err_msg="y - x: x.grad"))
    assert message.startswith("AssertionError: \n")  # what the table used to show: nothing
    line = one_line(message)
    assert line.startswith("y - x: x.grad: expected [1., 3.], got [1., 2.]"), line


def test_numpys_nan_location_line_is_not_read_as_the_tests_words():
    """numpy's 'nan location mismatch:' stood where a test's err_msg goes: 'nan location
    mismatch:: expected ...' (the fifth walk)."""
    message = raised(lambda: np.testing.assert_allclose([np.nan, np.nan], [1.0, 2.0], rtol=1e-10))
    line = one_line(message)
    assert line.startswith("expected [1., 2.], got [nan, nan] (nan location mismatch"), line
    message = raised(lambda: np.testing.assert_allclose([np.nan, 2.0], [1.0, 2.0], err_msg="x.grad"))
    assert one_line(message).startswith("x.grad: expected [1., 2.], got [nan, 2.] (nan location"), one_line(message)


def test_a_heading_takes_the_words_it_announces():
    """Issue 31.1: 'torch says:' and 'the right error, but not torch's exact words:' alone."""
    theirs = "one of the variables needed for gradient computation has been modified by an inplace operation"
    mine = theirs.replace("inplace", "in-place")
    line = one_line(f"AssertionError: the right error, but not torch's exact words:\n  torch: {theirs}\n  yours: {mine}")
    assert line.startswith("the right error, but not torch's exact words: torch: "), line
    assert "by an inplace" in line and "by an in-place" in line, line  # the first place they differ
    line = one_line(f"AssertionError: torch says:\n  {theirs}\nyours:\n  {mine}")
    assert "by an inplace" in line and "by an in-place" in line, line
    # kata 07's in-place messages: the label ends the heading's line (the walk-through's table
    # showed "a saved leaf: torch says" and nothing else)
    line = one_line(f"AssertionError: a saved leaf: torch says\n  {theirs}\nyours:\n  no error")
    assert line.startswith("a saved leaf: torch: ") and line.endswith("| yours: no error"), line


def test_a_regex_that_did_not_match_shows_both_words():
    """Issue 31.1: kata 08's one line was 'Regex pattern did not match.'"""
    def refused():
        with pytest.raises(RuntimeError, match="device type at start of device string: gpu"):
            raise RuntimeError("Expected one of cpu, cuda device type at start of device string: 'gpu'")

    line = one_line(raised(refused))
    assert not line.startswith("Regex"), line
    assert "device string: gpu" in line and "device string: 'gpu'" in line, line


def test_the_kits_class_names_are_not_shown():
    line = one_line("plugin.grading.oracle.KataMismatch: a * b: the gradient of `a` differs from torch's\n"
                    "  expected [0.88, 0.86]\n  got      [1., 1.]\n  where: ...")
    assert line == "a * b: the gradient of `a` differs from torch's (expected [0.88, 0.86], got [1., 1.])", line


def test_the_table_shows_the_one_line(pytester):
    """The table's first failure of kata 01 planted with a sign error: no class name, and
    expected against got."""
    make_checkout(pytester, katas=["01_elementwise_rules"])
    write_learner_file(pytester, "01_elementwise_rules", "rules.py",
                       learner_source("rules").replace("return grad, -grad", "return grad, grad"))
    result = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "test_sub")
    assert kata_row(result, "01_elementwise_rules")[1] == "in progress"
    line = pointed_message(result, next(l for l in result.outlines if "first failure: " in l).split(": ", 1)[1])
    assert "KataMismatch" not in line, line
    assert "a - b: the gradient of `b` differs from torch's (expected" in line and "got" in line, line


# --- kata 07: a cause checked, not guessed -------------------------------------------------------

@pytest.mark.parametrize("old, new, cause, not_cause", [
    ("        if True in outputs:\n", "        if False:\n",
     "keeps the node's own output with its grad_fn", "holds its owner strongly"),
    ("self._owner = weakref.ref(owner)", "self._owner = lambda: owner",
     "holds its owner strongly", "keeps the node's own output"),
], ids=["output kept attached", "owner held strongly"])
def test_why_a_graph_outlives_its_root_is_checked(pytester, old, new, cause, not_cause):
    """Issue 31.2: "SavedTensors holds its owner strongly; use weakref.ref(owner)" was said of
    code that used weakref.ref(owner) (its saved output was not detached)."""
    make_checkout(pytester, katas=["07_retain_graph"])
    source = learner_source("saved")
    assert source.count(old) == 1
    write_learner_file(pytester, "07_retain_graph", "saved.py", source.replace(old, new))
    result = pytester.runpytest("--kata", "7", "-p", "no:randomly", "-k", "owner_is_held_weakly")
    out = result.stdout.str()
    assert cause in out and not_cause not in out, out


# --- kata 02: the learner's function that raised, not the engine's rule that called it ---------------

FORGETS_KEEPDIM = '''    shape = tuple(shape)
    while grad.ndim > len(shape):
        grad = grad.sum(dim=0)
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[i] != 1:
            grad = grad.sum(dim=i)  # forgets keepdim=True
    return grad
'''


def test_an_unbroadcast_that_raises_inside_the_engines_rule_is_named(pytester):
    """Issue 31.2: "your expand_backward raised IndexError": expand_backward is the engine's
    rule, which calls the learner's unbroadcast; name unbroadcast, and show its lines."""
    make_checkout(pytester, katas=["02_shapes"])
    source = learner_source("shapes")
    start = source.index("    shape = tuple(shape)\n    if grad.shape == shape:")
    end = source.index("\n\n\ndef _kept_shape")
    write_learner_file(pytester, "02_shapes", "shapes.py", source[:start] + FORGETS_KEEPDIM + source[end:])
    result = pytester.runpytest("--kata", "2", "-p", "no:randomly", "-v", "-k",
                                "second_derivatives_in_the_middle_of_a_graph and sum and keepdim")
    out = result.stdout.str()
    assert "your expand_backward" not in out, out
    assert "your unbroadcast raised IndexError: tuple index out of range" in out, out
    assert "at katas/02_shapes/shapes.py, line" in out and "in unbroadcast: if size == 1 and grad.shape[i] != 1:" in out, out
    assert "by the engine's expand_backward (ExpandBackward0)" in out, out


# --- silent where torch is silent (issue 27.2) -----------------------------------------------------

def test_numpys_warnings_from_inside_the_engine_are_not_shown(pytester):
    """A pow rule that takes ln(0): nan and inf inside the engine's arithmetic, as in torch,
    which says nothing; numpy's RuntimeWarnings pointed into reference/ops.py and cuda_sim.py."""
    make_checkout(pytester, katas=["01_elementwise_rules"])
    source = learner_source("rules")
    assert source.count("grad * (out * base.log()).where(keep, 0.0)") == 1
    write_learner_file(pytester, "01_elementwise_rules", "rules.py", source.replace("grad * (out * base.log()).where(keep, 0.0)", "grad * out * base.log()"))
    result = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "pow_of_a_zero_base")
    out = result.stdout.str()
    assert result.ret == 1, out  # the mistake is still graded ...
    assert "encountered in" not in out and "reference/ops.py" not in out, out  # ... without numpy's noise


def test_the_fixtures_shown_above_a_failure_say_what_they_are():
    """pytest prints a failing test's arguments above it: `oracle = <plugin.grading.oracle.Oracle
    object at 0x7f...>` on the first screen of every kata (the blind walk-through, issue 31.5)."""
    from plugin.grading.assembly import KataFunctions
    from plugin.manifest import katas

    higher_order = next(k for k in katas() if k.slug == "09_higher_order")
    for fixture in (Oracle(reference), KataFunctions(higher_order, "reference")):
        assert " at 0x" not in repr(fixture), repr(fixture)
    assert repr(KataFunctions(higher_order, "reference")) == (
        "<the model solution's jacobian, hessian_vector_product, gradient_penalty>")


def test_a_long_line_cuts_every_long_array_alike():
    """Expected cut short and got in full read as a mismatch of their own (the seventh walk)."""
    from plugin.grading.one_line import shorten

    line = ("x on the GPU (cuda): the gradient of x differs from torch's (on the CPU): expected "
            "[[-0.11894, 0.43118], [0.12345, -0.55555]], got [[0.05059, 0.42298], [0.36489, 0.86617]], "
            "and words that push the line beyond the limit of two hundred characters")
    short = shorten(line)
    assert "[0.12345, -0.55555]" not in short and "[0.36489, 0.86617]" not in short, short
    assert short.count("…]") == 2, short
