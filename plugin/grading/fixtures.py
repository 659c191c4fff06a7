"""Fixtures for kata tests: the assembled engine, the oracle, speed measurement."""
import pytest

import reference

from ..edition import has_model_solution
from ..guards import tripwire
from . import blame
from .assembly import KataFunctions, blocked_message, capstone_blockers, engine_for
from ..state import KATA_KEY
from .outcomes import KataBlocked
from .results import last_grading
from .speed import Growth, Speed
from .work import CountedGrowth


def _solution(request):
    if "speed" in request.fixturenames and hasattr(request.node, "callspec"):
        if request.node.callspec.params.get("speed") == "reference":
            return "reference"
    return request.config.getoption("solution")


@pytest.fixture(autouse=True)
def _kata_engine(request):
    """Every test inside a kata runs on that kata's learner pieces (reference for the rest)."""
    kata = request.node.stash.get(KATA_KEY, None)
    if kata is None:
        yield reference
        return
    blame.forget_returns()
    solution = _solution(request)
    if kata.whole_engine and solution == "learner":
        _stop_if_blocked(request, kata)
    # Wires first: a learner file imported for this test (in engine_for) keeps wires too.
    with tripwire.armed(kata, solution), engine_for(kata, solution) as engine:
        yield engine
    _check_grad_mode_restored(engine)


def _check_grad_mode_restored(engine):
    """A test that leaves grad mode off would fail the next test, far from its cause: fail
    this one (at its teardown), and put grad mode back."""
    if engine.is_grad_enabled():
        return
    engine.set_grad_enabled(True)
    pytest.fail(
        "grad mode is still off after this test: something turned it off and did not turn it "
        "back on (use `with set_grad_enabled(...):` or `with no_grad():`, which restore it)",
        pytrace=False,
    )


def _stop_if_blocked(request, kata):
    """The capstone runs on every learner piece, with no reference fallback: until the katas
    it needs are finished, each of its tests is a to-do naming them."""
    grading = request.config.pluginmanager.get_plugin("autograd-katas-grading")
    results = getattr(grading, "results", {})
    cached = getattr(grading, "cached", {})
    blockers = capstone_blockers(kata, lambda k: last_grading(results, cached, k))
    if blockers:
        raise KataBlocked(blocked_message(blockers))


@pytest.fixture
def ag(_kata_engine):
    """The engine under test, with torch's API: `ag.tensor(...)`, `ag.autograd.grad(...)`."""
    return _kata_engine


@pytest.fixture(name="oracle")
def oracle_fixture(ag):
    """Runs the same code on torch and on `ag` and compares (see oracle.py)."""
    from .oracle import Oracle  # here: torch is imported with it, only where a test runs

    return Oracle(ag)


@pytest.fixture
def solution(request, _kata_engine):
    """The kata's functions (katas 09 and 10, written on the public API): the learner's, or
    the reference solution's under --solution reference: `solution.jacobian(f, x)`."""
    kata = request.node.stash.get(KATA_KEY, None)
    if kata is None or not kata.functions:
        pytest.skip("the solution fixture belongs to a kata of functions (09, 10)")
    return KataFunctions(kata, _solution(request))


@pytest.fixture(params=["learner", "reference"])
def speed(request, _kata_engine):
    """Measures a workload on the learner's pieces and on the reference's (see speed.py)."""
    kata = _after_the_kata_tests(request, "speed tests belong to a kata", "speed is measured once the kata's tests pass")
    return Speed(request, kata, request.param)


def _after_the_kata_tests(request, outside, waiting):
    """The test's kata, once its other tests all passed: else a skip saying `waiting` (or
    `outside` for a test that belongs to no kata)."""
    kata = request.node.stash.get(KATA_KEY, None)
    if kata is None:
        pytest.skip(outside)
    grading = request.config.pluginmanager.get_plugin("autograd-katas-grading")
    if grading is not None and not grading.kata_result(kata).clean_so_far():
        pytest.skip(waiting)
    return kata


@pytest.fixture
def fuzz(request, _kata_engine):
    """Random programs drawn for the kata, on the learner's engine and on torch (see
    fuzz/graded.py): `fuzz.check()`. Like speed tests it waits for the kata's other tests:
    it runs last, and only when they all passed."""
    kata = _after_the_kata_tests(request, "the fuzz test belongs to a kata",
                                 "the random programs run once the kata's other tests pass")
    if not has_model_solution(kata):  # what tells the kit's own differences from torch is not here
        pytest.skip(f"a course edition without kata {kata.slug}'s model solution: the autograder runs its random programs")
    from .fuzz.graded import KataFuzz  # here: it imports torch, which a kata not started never needs

    return KataFuzz(kata, _solution(request))


@pytest.fixture
def growth(request, _kata_engine):
    """Checks that a piece's time grows like the reference's (see speed.py)."""
    return Growth(request, request.node.stash.get(KATA_KEY, None))


@pytest.fixture
def counted_growth(request, _kata_engine):
    """Checks that a piece's work, counted rather than timed, grows like the reference's on
    graphs of any shape (see work.py)."""
    return CountedGrowth(request, request.node.stash.get(KATA_KEY, None))
