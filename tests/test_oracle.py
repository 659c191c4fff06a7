"""The oracle itself: it must pass a correct engine and catch each kind of wrong answer."""
import numpy as np
import pytest

import reference
from plugin.grading.oracle import Constant, KataMismatch, Oracle, key_phrase
from plugin.grading.speed import count_node_runs
from reference import pieces


@pytest.fixture
def oracle():
    return Oracle(reference)


def chain(lib, a, b):
    return (a * b).sigmoid() + a.exp() / b


A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
B = np.array([[1.5, 2.0, 0.5], [0.8, 1.2, 2.5]])


def test_a_correct_engine_passes(oracle):
    oracle.check_grads(chain, a=A, b=B)
    oracle.check_grads(chain, a=A.astype(np.float32), b=B.astype(np.float32))


def test_a_wrong_rule_is_located_at_its_node(oracle):
    def wrong_exp(ctx, grad):
        (out,) = ctx.saved_tensors
        return (grad * out * 2,)

    with pieces.swapped({"exp_backward": wrong_exp}), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(chain, op="chain", a=A, b=B)
    message = str(caught.value)
    assert "chain: the gradient of `a` differs from torch's" in message
    assert "ExpBackward0 received the right gradient but returned a wrong one for its input 0" in message
    assert "ExpBackward0   <== here" in message
    assert "AccumulateGrad (a)" in message


def test_a_wrong_merge_is_located_where_the_paths_meet(oracle):
    with pieces.swapped({"merge_grads": lambda existing, incoming: existing}), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(chain, a=A, b=B)
    assert "were not summed right" in str(caught.value) or "received a gradient that differs" in str(caught.value)


def test_a_float64_gradient_for_a_float32_leaf_fails(oracle):
    def float64_sigmoid(ctx, grad):
        (out,) = ctx.saved_tensors
        return (grad.double() * out.double() * (1 - out.double()),)

    with pieces.swapped({"sigmoid_backward": float64_sigmoid}), pytest.raises(KataMismatch) as caught:
        oracle.check_grads(chain, a=A.astype(np.float32), b=B.astype(np.float32))
    message = str(caught.value)
    assert "your sigmoid_backward returned a float64 gradient for input 0 of SigmoidBackward0" in message, message
    assert "torch's error: RuntimeError: Function SigmoidBackward0 returned an invalid gradient at index 0 - expected dtype float32 but got float64" in message


def test_a_missing_gradient_fails(oracle):
    with pieces.swapped({"mul_backward": lambda ctx, grad: (None, None)}), pytest.raises(KataMismatch, match="gradient of `a` is None, torch.s is set"):
        oracle.check_grads(lambda lib, a, b: a * b, a=A, b=B)


def test_a_constant_gets_no_gradient_on_either_side(oracle):
    oracle.check_grads(lambda lib, a, c: a * c, a=A, c=Constant(B))


def test_compare_checks_values_errors_and_warnings(oracle):
    oracle.compare(lambda lib, x: (x * 2).sum().item(), x=A)
    oracle.compare(lambda lib, x: (x * 2).backward(), x=A)  # torch's error, our error
    with pytest.raises(KataMismatch, match="torch raises RuntimeError"):
        oracle.compare(lambda lib, x: (x * 2).backward() if lib is not reference else None, x=A)
    with pytest.raises(KataMismatch, match="torch runs this without error"):
        oracle.compare(lambda lib, x: (x * 2).backward() if lib is reference else None, x=A)
    oracle.compare(lambda lib, x: (x * 2).grad, x=A)  # the non-leaf warning, on both sides
    with pytest.raises(KataMismatch, match="warns"):
        oracle.compare(lambda lib, x: (x * 2).grad if lib is reference else None, x=A)
    with pytest.raises(KataMismatch, match="differs from torch's"):
        oracle.compare(lambda lib, x: x * (2 if lib is reference else 3), x=A)


def test_key_phrase_is_the_part_before_the_details():
    assert key_phrase("Mismatch in shape: grad_output[0] has a shape of ...") == "Mismatch in shape"
    assert key_phrase("grad can be implicitly created only for scalar outputs") == "grad can be implicitly created only for scalar outputs"


def test_torch_runs_on_copies(oracle):
    a = A.copy()

    def vandal(lib, a):
        a.data.mul_(0)  # changes the tensor's data in place (on both sides)
        return a * 2

    oracle.check_grads(vandal, a=a)
    np.testing.assert_array_equal(a, A)  # the caller's array is untouched


def test_counting_node_runs():
    x = reference.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    with count_node_runs() as runs:
        y.backward()
    assert runs.count == 4  # SumBackward0, MulBackward0, ExpBackward0, AccumulateGrad


def test_assemble_outside_pytest(tmp_path):
    """plugin.assemble gives the namespace with the chosen pieces; stubs raise as written."""
    import plugin

    ag = plugin.assemble("reference")
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    try:
        ag = plugin.assemble("learner", kata=3)
        assert ag.pieces.active.topological_order is not pieces.REFERENCE["topological_order"]
        y = (ag.tensor([1.0], requires_grad=True) * 2).sum()
        try:
            y.backward()
        except NotImplementedError:
            pass  # the shipped stub
        with pytest.raises(ValueError, match="no kata"):
            plugin.assemble("learner", kata="nope")
    finally:
        pieces.restore_reference()


def test_the_engine_runs_first_so_a_stub_stops_the_test_before_torch(oracle):
    # A test that reaches a learner's stub is a to-do; torch's side (and `import torch`, a
    # second of a fresh clone's run) is not needed for it.
    from plugin.grading.outcomes import StubReached

    for check in (oracle.check_grads, oracle.compare):
        ran = []

        def stub(lib, a):
            ran.append(lib.__name__)
            if lib is reference:
                raise StubReached("reached the stub of mul_backward: not written yet")
            return a * 2

        with pytest.raises(StubReached):
            check(stub, a=A)
        assert ran == ["reference"], (check.__name__, ran)


def test_a_stub_in_the_engines_backward_stops_check_grads_before_torch(oracle):
    # The stub of a backward rule is reached in the engine's backward pass: it runs before
    # torch's forward (the engine's graph is paired with torch's afterwards).
    from plugin.grading.outcomes import StubReached

    ran = []

    def stub_rule(ctx, grad):
        raise StubReached("reached the stub of exp_backward: not written yet")

    def fn(lib, a):
        ran.append(lib.__name__)
        return a.exp()

    with pieces.swapped({"exp_backward": stub_rule}), pytest.raises(StubReached):
        oracle.check_grads(fn, a=A)
    assert ran == ["reference"], ran
