"""The functions of katas 09 and 10 are watched for changes to the arguments they were given
(plugin/grading/arguments.py): a change in place, a requires_grad set, a numpy array stepped,
each named by the argument's name; a function whose contract changes them is not watched."""
import numpy as np
import pytest

import reference as ag
from plugin.grading.arguments import leaving_arguments_alone
from plugin.grading.oracle import KataMismatch


def summed_in_place(loss1, loss2):
    loss1.add_(loss2)
    return loss1


def marks_x(f, x):
    x.requires_grad_()
    return f(x)


def steps_the_weights(weights, lr):
    weights[1] -= lr
    return len(weights)


def leaves_them(weights, x):
    return [w.copy() for w in weights], x * 2


@pytest.mark.parametrize("function, args, words", [
    (summed_in_place, lambda: (ag.tensor(1.0, requires_grad=True) * 2, ag.tensor(2.0)), "`loss1`: it was changed in place"),
    (marks_x, lambda: (lambda t: t * 2, ag.tensor([1.0])), "`x`: its requires_grad went from False to True"),
    (steps_the_weights, lambda: ([np.ones(2), np.ones(3)], 0.1), "`weights[1]`: its values changed"),
])
def test_a_change_to_an_argument_fails_naming_it(function, args, words):
    with pytest.raises(KataMismatch, match="changed its argument " + words.replace("[", r"\[").replace("]", r"\]")):
        leaving_arguments_alone(function.__name__, function)(*args())


def test_a_function_that_leaves_its_arguments_alone_runs_as_it_is():
    weights, x = [np.ones(2)], ag.tensor([1.0, 2.0])
    copies, doubled = leaving_arguments_alone("leaves_them", leaves_them)(weights, x)
    assert np.array_equal(copies[0], weights[0]) and doubled.tolist() == [2.0, 4.0]


def test_a_function_whose_contract_changes_its_arguments_is_not_watched():
    weights = [np.ones(2), np.ones(3)]
    assert leaving_arguments_alone("sgd_step", steps_the_weights, may_change=True)(weights, 0.5) == 2
    assert weights[1].tolist() == [0.5, 0.5, 0.5]
