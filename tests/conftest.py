import pytest
# torch imports this (and sympy with it, about a second) lazily, at the first backward with a
# gradient argument on a non-scalar. Imported here, before any pytester run: an in-process run
# drops the modules it imported when it ends, so each planted run would import it again, and
# leak the old copy (torch keeps references to it).
import torch.fx.experimental.symbolic_shapes  # noqa: F401

from kit import make_checkout

pytest_plugins = ["pytester"]


@pytest.fixture
def checkout(pytester, request):
    """A learner's clone in pytester's directory: the kata named by the test module's KATA,
    or every kata when the module names none."""
    kata = getattr(request.module, "KATA", None)
    make_checkout(pytester, katas=None if kata is None else [kata])
    return pytester
