import pytest
# torch imports this (and sympy with it, about a second) lazily, at the first backward with a
# gradient argument on a non-scalar. Imported here, before any pytester run: an in-process run
# drops the modules it imported when it ends, so each planted run would import it again, and
# leak the old copy (torch keeps references to it).
import torch.fx.experimental.symbolic_shapes  # noqa: F401

# The model solutions, imported before any pytester run for the same reason: a module first
# imported inside a run is dropped when it ends, and the next run's import makes new function
# objects, which the tripwire that watches the reference's own functions has never seen (under
# xdist, by the order of tests in a worker, a kata 09 file reaching the reference went unflagged).
import reference.solutions.capstone  # noqa: F401,E402
import reference.solutions.higher_order  # noqa: F401,E402

from kit import make_checkout

pytest_plugins = ["pytester"]


@pytest.fixture
def checkout(pytester, request):
    """A learner's clone in pytester's directory: the kata named by the test module's KATA,
    or every kata when the module names none."""
    kata = getattr(request.module, "KATA", None)
    make_checkout(pytester, katas=None if kata is None else [kata])
    return pytester
