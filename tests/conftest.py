import pytest

from kit import make_checkout

pytest_plugins = ["pytester"]


@pytest.fixture
def checkout(pytester, request):
    """A learner's clone in pytester's directory: the kata named by the test module's KATA,
    or every kata when the module names none."""
    kata = getattr(request.module, "KATA", None)
    make_checkout(pytester, katas=None if kata is None else [kata])
    return pytester
