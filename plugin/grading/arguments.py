"""The caller's arguments stay as they were: a kata function (katas 09 and 10) that changes a
tensor or array it was given, where its contract does not ask for it, fails.

A learner's `multitask_summed` that adds loss2 into loss1 in place, a `jacobian` that sets
`requires_grad` on the caller's x, a `train` that steps the numpy weights it was handed: each
gives the right answer the first time and surprises its caller afterwards. Every call a test
makes to a learner's function is watched (not only the ones a test thought of): what each
tensor argument was (its version counter, its requires_grad) and each numpy array (its values),
before the call and after it."""
import functools
import inspect

import numpy as np

from .oracle import KataMismatch


def leaving_arguments_alone(name, function, may_change=False):
    """`function` wrapped so that a call that changes one of its arguments fails with the
    argument's name; `may_change`: the contract asks for the change (sgd_step's params)."""
    if may_change or not callable(function):
        return function

    @functools.wraps(function)
    def watched(*args, **kwargs):
        before = _states(function, args, kwargs)
        result = function(*args, **kwargs)
        for label, value, state in before:
            change = _change(state, _state(value))
            if change:
                raise KataMismatch(
                    f"your {name} changed its argument `{label}`: {change}. The caller's tensors and "
                    "arrays must stay as they were (work on a copy, or on a new tensor)")
        return result

    return watched


def _states(function, args, kwargs):
    """[(label, value, state)] of every tensor or array among the arguments (in lists too)."""
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return []  # the call itself is wrong: the function raises its own error
    found = []
    for name, value in bound.arguments.items():
        _collect(name, value, found)
    return found


def _collect(label, value, found):
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _collect(f"{label}[{i}]", item, found)
        return
    state = _state(value)
    if state is not None:
        found.append((label, value, state))


def _state(value):
    if isinstance(value, np.ndarray):
        return ("values", value.copy())
    if hasattr(value, "_version") and hasattr(value, "requires_grad"):  # an engine tensor
        return ("tensor", value._version, bool(value.requires_grad))
    return None


def _change(before, after):
    """What changed, in words, or ''."""
    if before[0] == "values":
        same = before[1].shape == after[1].shape and np.array_equal(before[1], after[1], equal_nan=True)
        return "" if same else "its values changed (an array you were given, changed in place)"
    if before[1] != after[1]:
        return f"it was changed in place (its version went from {before[1]} to {after[1]})"
    if before[2] != after[2]:
        return (f"its requires_grad went from {before[2]} to {after[2]} (to differentiate at its value, "
                "take a copy: .detach().requires_grad_())")
    return ""
