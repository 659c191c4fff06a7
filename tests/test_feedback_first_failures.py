"""First failures that point at their cause (issue 15, section 1): each mistake is named by
its own test, in words that send the learner to the right lesson."""
import numpy as np
import pytest

import reference
from kit import RECURSIVE_TOPOSORT, learner_source, make_checkout, write_learner_file
from plugin.grading.oracle import KataMismatch, Oracle

LOOP = "06_backward_pass"


def backward_pass(old, new):
    source = learner_source("backward_pass")
    assert source.count(old) == 1, old
    return source.replace(old, new)


# The engine loop of kata 06, written as a learner might get it wrong.
ONCE_PER_EDGE = '''    with set_grad_enabled(create_graph):
        stack = [(n, g) for n, g in zip(root_nodes, root_grads) if n is not None]
        while stack:  # runs a node each time a gradient reaches it
            node, grad = stack.pop()
            grads = node(grad)
            if not retain_graph:
                node.release_saved()
            for (child, _), child_grad in zip(node.next_functions, grads):
                if child is not None and child_grad is not None:
                    stack.append((child, child_grad))
        return None

    with set_grad_enabled(create_graph):
        for node in order:'''


def test_a_node_run_once_per_edge_is_named_not_retain_graph(pytester):
    make_checkout(pytester, katas=[LOOP])
    source = backward_pass("    with set_grad_enabled(create_graph):\n        for node in order:", ONCE_PER_EDGE)
    write_learner_file(pytester, LOOP, "backward_pass.py", source)
    result = pytester.runpytest("--kata", "6", "-p", "no:randomly", "-v", "-k", "diamond or exactly_once")
    out = result.stdout.str()
    assert "a diamond: a node found its saved tensors freed" in out and "a node ran a second time in one backward pass" in out, out
    assert "buffer them, and run the node when its turn in the order comes" in out
    # the once-per-node test fails on its own count, not on the freed graph
    assert "but the pass ran" in out and "node calls" in out, out


def test_grad_mode_left_off_fails_the_test_that_left_it(pytester):
    make_checkout(pytester, katas=[LOOP])
    source = backward_pass("    with set_grad_enabled(create_graph):\n        for node in order:",
                           "    set_grad_enabled(create_graph)  # never put back\n    if True:\n        for node in order:")
    write_learner_file(pytester, LOOP, "backward_pass.py", source)
    result = pytester.runpytest("--kata", "6", "-p", "no:randomly", "-k", "test_a_chain or diamond")
    out = result.stdout.str()
    assert "ERROR at teardown of test_a_chain" in out, out
    assert "grad mode is still off after this test" in out
    assert "does not require grad and does not have a grad_fn" not in out, out  # the next test's symptom
    result.assert_outcomes(passed=2, errors=2)  # each test left it off, each says so


@pytest.fixture
def oracle():
    return Oracle(reference)


def test_a_none_where_torch_has_a_value_says_so(oracle):
    def grad_then_detach(lib, x):
        (x * 2).sum().backward()
        grad = x.grad if lib is not reference else None  # the engine's gradient never arrived
        return grad.detach()

    with pytest.raises(KataMismatch) as caught:
        oracle.compare(grad_then_detach, x=np.array([1.0, 2.0]))
    message = str(caught.value)
    assert "torch runs this without error, but `grad` is None where the test uses it (AttributeError" in message, message
    assert "is None in the engine but set in torch: a gradient never reached it" in message


def test_a_labelled_result_names_what_differs(oracle):
    def hooks(lib, x):
        factor = 3.0 if lib is reference else 4.0
        return {"the hooks that ran": ["first"], "the gradient each of them saw": (x * 2, x * factor)}

    # the label says which value, the running test's scenario (its name in words) what was compared
    with pytest.raises(KataMismatch, match=r"^a labelled result names what differs: the gradient each of them saw \(item 1\) differs from torch's"):
        oracle.compare(hooks, x=np.array([1.0, 2.0]))



def test_a_recursive_toposort_fails_in_a_few_friendly_lines(pytester):
    make_checkout(pytester, katas=["03_toposort"])
    write_learner_file(pytester, "03_toposort", "toposort.py", RECURSIVE_TOPOSORT)
    result = pytester.runpytest("--kata", "3", "-p", "no:randomly", "-k", "100000")
    out = result.stdout.str()
    assert "RecursionError" in out and "visit (katas/03_toposort/toposort.py, line 10) called itself" in out, out
    assert "use an explicit stack or queue instead of recursion" in out
    assert out.count("in visit") == 0 and len(result.outlines) < 60, out
    full = pytester.runpytest("--kata", "3", "-p", "no:randomly", "-k", "100000", "--full-trace")
    assert len(full.outlines) > 200 and "called itself" not in full.stdout.str()  # every frame, when asked


# --- kata 05: the seeding tests say their own sentence ---------------------------------------

SEEDING = "05_seeding"
IMPLICIT_SEED = "grad = output.new_ones(output.shape)"


def test_a_seed_with_a_graph_gets_the_seed_message_not_numpys(pytester):
    make_checkout(pytester, katas=[SEEDING])
    source = learner_source("seeding")
    assert source.count(IMPLICIT_SEED) == 1
    write_learner_file(pytester, SEEDING, "seeding.py", source.replace(IMPLICIT_SEED, "grad = output * 0 + 1"))
    result = pytester.runpytest("--kata", "5", "-p", "no:randomly", "-v", "-k", "one_element_output_is_seeded")
    out = result.stdout.str()
    assert "the implicit seed must be a plain constant" in out, out
    assert "Can't call numpy() on Tensor that requires grad" not in out, out


def test_a_seed_that_is_none_names_the_call(pytester):
    make_checkout(pytester, katas=[SEEDING])
    source = learner_source("seeding")
    write_learner_file(pytester, SEEDING, "seeding.py", source.replace(IMPLICIT_SEED, "grad = None"))
    result = pytester.runpytest("--kata", "5", "-p", "no:randomly", "-v", "-k", "one_element_output_is_seeded")
    out = result.stdout.str()
    assert "make_root_grads(outputs=(<shape ()>,), grad_outputs=None) returned [None]: a seed must be a Tensor, not NoneType" in out, out


# --- kata 08: the device tests name the piece and show torch's words ---------------------------

DEVICES = "08_devices"


def plant_devices(pytester, old, new):
    make_checkout(pytester, katas=[DEVICES])
    source = learner_source("devices")
    assert source.count(old) == 1, old
    write_learner_file(pytester, DEVICES, "devices.py", source.replace(old, new))


def test_two_gpus_let_through_name_check_same_device(pytester):
    plant_devices(pytester, "if device != devices[0]:", "if device.type != devices[0].type:")
    result = pytester.runpytest("--kata", "8", "-p", "no:randomly", "-k", "mixing_two_gpus and add")
    out = result.stdout.str()
    assert "check_same_device let a cuda:0 and a cuda:1 tensor through to add" in out, out
    assert "Peer access is unavailable" in out  # the GPU's own words, quoted


def test_a_bad_device_string_shows_torchs_words(pytester):
    plant_devices(pytester, 'raise RuntimeError(f"Invalid device string: \'{spec}\'")',
                  'raise RuntimeError(f"bad device {spec}")')
    result = pytester.runpytest("--kata", "8", "-p", "no:randomly", "-k", "bad_device_strings")
    out = result.stdout.str()
    assert "torch: Invalid device string: 'cuda:x'" in out and "yours: bad device cuda:x" in out, out


# --- kata 10: grads_one_by_one without retain_graph gets the advice ---------------------------

def test_grads_one_by_one_without_retain_graph_gets_the_advice(pytester):
    from test_kata_10 import capstone_reference, plant_every_kata

    make_checkout(pytester)
    plant_every_kata(pytester)
    old = "return [ag.autograd.grad(loss, [w], retain_graph=True)[0] for w in weights]"
    source = capstone_reference()
    assert source.count(old) == 1
    write_learner_file(pytester, "10_capstone", "capstone.py",
                       source.replace(old, "return [ag.autograd.grad(loss, [w])[0] for w in weights]"))
    result = pytester.runpytest("--kata", "10", "-p", "no:randomly", "-k", "one_call_per_weight")
    out = result.stdout.str()
    assert "grads_one_by_one: the second autograd.grad call found the graph freed" in out, out
    assert "(retain_graph=True)" in out


def test_kata_02_calls_a_first_derivative_by_its_name(pytester):
    make_checkout(pytester, katas=["02_shapes"])
    source = learner_source("shapes")
    old = "return (expanded / count,)"
    assert source.count(old) == 1
    write_learner_file(pytester, "02_shapes", "shapes.py", source.replace(old, "return (expanded * count,)"))
    result = pytester.runpytest("--kata", "2", "-p", "no:randomly", "-k", "second_derivatives and mean")
    out = result.stdout.str()
    assert "second derivative through mean: the first derivative (what autograd.grad returned) differs" in out, out
