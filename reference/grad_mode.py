"""Grad mode: whether operations record a graph.

Mirrors torch.no_grad / enable_grad / set_grad_enabled. The engine reads `GradMode.enabled`
on every operation, so it is a plain class attribute (one lookup, no function call).
During a backward pass the engine sets it to `create_graph`: the backward rules then build
a graph of their own only when higher derivatives were asked for.
"""
import functools


class GradMode:
    enabled = True


def is_grad_enabled():
    return GradMode.enabled


class _GradModeContext:
    """Base for the context managers; each also works as a function decorator."""

    mode = True

    def __enter__(self):
        self._previous = GradMode.enabled
        GradMode.enabled = self.mode

    def __exit__(self, *exc_info):
        GradMode.enabled = self._previous
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return function(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Operations inside do not record a graph (evaluation, optimizer updates)."""

    mode = False


class enable_grad(_GradModeContext):
    """Turn recording back on inside a no_grad block."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """Like torch: takes effect when called, and as a context manager restores the old mode."""

    def __init__(self, mode):
        self._previous = GradMode.enabled
        self.mode = bool(mode)
        GradMode.enabled = self.mode

    def __enter__(self):
        pass

    def __call__(self, function):
        # Used as a decorator: undo the immediate switch and apply it around each call.
        GradMode.enabled = self._previous
        mode = self.mode

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return function(*args, **kwargs)

        return wrapper
