"""Blame the right thing (issue 15, section 1): the oracle's diagnosis names the rule at
fault, the inputs the failing call used, and the slot as the rule's returned tuple counts it."""
import numpy as np
import pytest

import reference
from kit import learner_source, write_learner_file
from plugin.grading.oracle import KataMismatch, Oracle
from reference import pieces

KATA = "01_elementwise_rules"
X = np.array([0.7, 1.3, 2.1])


@pytest.fixture
def oracle():
    return Oracle(reference)


def mismatch(oracle, swaps, fn, **kwargs):
    with pieces.swapped(swaps), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(fn, **kwargs)
    return str(caught.value)


def wrong_sub(ctx, grad):
    return grad, grad  # the sign error of the issue


def second_derivative(f):
    def second(lib, x):
        (first,) = lib.autograd.grad(f(x).sum(), x, create_graph=True)
        return first
    return second


def test_a_second_derivative_does_not_blame_a_correct_mul(oracle):
    message = mismatch(oracle, {"sub_backward": wrong_sub}, second_derivative(lambda x: x.sigmoid()),
                       op="second derivative through sigmoid", x=X)
    assert "received the right gradient but returned a wrong one" not in message, message
    assert "torch has SigmoidBackwardBackward0 here" in message, message
    assert "derivative of your sigmoid_backward" in message and "SubBackward0" in message, message


def test_a_node_with_torchs_name_is_still_compared_and_blamed(oracle):
    def wrong_mul_backward_of_backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a * 2  # wrong for input 1
    # x * x * x: torch's first derivative is made of MulBackward0 nodes too
    message = mismatch(oracle, {"mul_backward": wrong_mul_backward_of_backward}, lambda lib, x: x * 3.0 * x,
                       op="x * 3 * x", x=X)
    assert "MulBackward0 received the right gradient but returned a wrong one for its input 1" in message


def test_the_input_slot_counts_as_the_rules_tuple(oracle):
    def typo(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = grad * b if ctx.needs_input_grad[0] else None
        grad_b = grad * b if ctx.needs_input_grad[1] else None  # typo: b for a
        return grad_a, grad_b
    message = mismatch(oracle, {"mul_backward": typo}, lambda lib, x: 3.0 * x, op="3 * x", x=X)
    # the engine's 3 * x is mul(3, x): x is item 1 of the rule's tuple (torch's is mul(x, 3))
    assert "for its input 1 (item 1 of the tuple your mul_backward (rules.py) returns)" in message, message


def test_2_minus_x_blames_sub_though_torch_calls_it_rsub(oracle):
    message = mismatch(oracle, {"sub_backward": wrong_sub}, lambda lib, x: 2.0 - x, op="2 - x", x=X)
    assert "SubBackward0 received the right gradient but returned a wrong one for its input 1" in message


def test_the_message_shows_the_inputs_the_call_used(oracle):
    def wrong_div(ctx, grad):
        a, b = ctx.saved_tensors
        return grad / b, grad * a / (b * b)  # sign error
    message = mismatch(oracle, {"div_backward": wrong_div}, lambda lib, a, b: a / b, op="a / b",
                       a=np.array(1.0), b=np.array(0.2))
    assert "inputs of this call: a=1., b=0.2" in message, message


def test_a_first_derivative_is_not_called_a_forward_result(checkout):
    write_learner_file(checkout, KATA, "rules.py", learner_source("rules").replace("return grad, -grad", "return grad, grad"))
    result = checkout.runpytest("--kata", "1", "-p", "no:randomly", "-k", "second_derivatives and sub")
    out = result.stdout.str()
    assert "second derivative through sub: the first derivative (what autograd.grad returned) differs" in out, out
    assert "the result (forward)" not in out


# --- kata 02: unbroadcast named, numpy's errors put in a sentence ----------------------------

def test_a_wrong_unbroadcast_is_named_not_add(oracle):
    reference_unbroadcast = pieces.REFERENCE["unbroadcast"]

    def averages(grad, shape):  # averages over the copies instead of summing them
        reduced = reference_unbroadcast(grad, shape)
        return reduced * (reduced.numel() / grad.numel())

    a, b = np.ones((2, 3)), np.array([1.0, 2.0, 3.0])
    message = mismatch(oracle, {"unbroadcast": averages}, lambda lib, a, b: a + b, op="a + b", a=a, b=b)
    assert "AddBackward0 received the right gradient but returned a wrong one for its input 1" in message
    assert "your unbroadcast (kata 02) is at fault" in message and "shape (3,)" in message, message


def sum_backward(ctx, grad):  # no reshape to the kept shape: a square input expands the wrong way
    return (grad.expand(ctx.input_shapes[0]),)


def mean_backward(ctx, grad):  # right, but it calls the sum_backward above
    count = int(np.prod([ctx.input_shapes[0][d] for d in ctx.dim]))
    (expanded,) = sum_backward(ctx, grad)
    return (expanded / count,)


def test_a_rule_that_calls_another_learner_piece_names_it_too(oracle):
    """mean_backward calls the learner's sum_backward: on a square input only mean's tests can
    fail, and the sentence named mean_backward alone (the fifth walk)."""
    swaps = {"sum_backward": sum_backward, "mean_backward": mean_backward}
    message = mismatch(oracle, swaps, lambda lib, x: x.mean(dim=1), op="x.mean(dim=1)", x=np.arange(9.0).reshape(3, 3))
    assert "MeanBackward1 received the right gradient but returned a wrong one" in message, message
    assert "It calls your sum_backward, which may be at fault" in message, message
    message = mismatch(oracle, {"mean_backward": mean_backward}, lambda lib, x: x.mean(dim=1),
                       op="x.mean(dim=1)", x=np.arange(9.0).reshape(3, 3))
    assert "sum_backward" not in message, message  # its own sum_backward: not the learner's piece


def test_a_wrong_add_rule_is_not_blamed_on_unbroadcast(oracle):
    message = mismatch(oracle, {"add_backward": lambda ctx, grad: (grad, grad * 2)}, lambda lib, a, b: a + b,
                       op="a + b", a=np.ones((2, 3)), b=np.array([1.0, 2.0, 3.0]))
    assert "AddBackward0 received the right gradient but returned a wrong one for its input 1" in message
    assert "unbroadcast" not in message, message


def test_a_shape_error_in_a_rule_names_the_rule_and_the_shapes(oracle):
    def reshape_backward(ctx, grad):
        return (grad.reshape(3, 4),)  # the first two sides of the input only

    with pieces.swapped({"reshape_backward": reshape_backward}), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(lambda lib, x: x.reshape(12, 5), op="x.reshape(12, 5)", x=np.ones((3, 4, 5)))
    message = str(caught.value)
    assert "your reshape_backward raised RuntimeError: shape '[3, 4]' is invalid for input of size 60" in message
    assert "it got a gradient of shape (12, 5) and had to return gradients of shape (3, 4, 5)" in message


def test_an_error_in_unbroadcast_names_unbroadcast(oracle):
    def by_index(grad, shape):
        return grad[tuple(range(5))]  # an IndexError from numpy

    with pieces.swapped({"unbroadcast": by_index}), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(lambda lib, a, b: a * b, op="a * b", a=np.ones((2, 3)), b=np.ones(3))
    message = str(caught.value)
    assert "your unbroadcast raised IndexError" in message, message
    assert "your unbroadcast was called with grad=a tensor of shape (2, 3) (float64), shape=(3,)" in message, message
    assert "to sum MulBackward0's gradient for input 1 down to that input's shape (3,)" in message, message


def test_an_unbroadcast_of_the_wrong_shape_is_named(oracle):
    def half_done(grad, shape):
        return grad.sum(dim=0) if grad.ndim > len(shape) + 1 else grad  # stops one axis short

    with pieces.swapped({"unbroadcast": half_done}), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(lambda lib, a, b: a + b, op="a + b", a=np.ones(3), b=np.ones((2, 2, 3)))
    message = str(caught.value)
    assert "your unbroadcast returned a gradient of shape (2, 3) for input 0 of AddBackward0, whose shape is (3,)" in message
    assert "torch's error: Function AddBackward0 returned an invalid gradient at index 0" in message


def test_a_hinted_kata_02_failure_shows_no_frames_of_the_with_statement(pytester):
    from kit import make_checkout

    make_checkout(pytester, katas=["02_shapes"])
    source = learner_source("shapes")
    plant = "def unbroadcast(grad, shape):\n"
    assert source.count(plant) == 1
    # averages over the copies instead of summing them: right shapes, wrong values
    write_learner_file(pytester, "02_shapes", "shapes.py", source.replace(
        plant, "def unbroadcast(grad, shape):\n    return _sum_to(grad, shape) * (_numel(shape) / grad.numel())\n\n\n"
               "def _numel(shape):\n    n = 1\n    for side in shape:\n        n *= side\n    return n\n\n\n"
               "def _sum_to(grad, shape):\n"))
    result = pytester.runpytest("--kata", "2", "-p", "no:randomly", "-k", "binary_operations_broadcast")
    out = result.stdout.str()
    assert "your unbroadcast (kata 02) is at fault" in out, out
    assert "hint: each operand's gradient must be summed" in out
    assert "contextlib.py" not in out, out
