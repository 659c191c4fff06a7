"""Kata 06's mutation suite: one plausible mistake per sentence of run_backward's contract
(its docstring and the lesson), planted in the reference loop as a learner writes it; each
must leave the kata not done. Correct loops written differently must come out done."""
import pytest

from kit import learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done

KATA = "06_backward_pass"
FILE = "backward_pass.py"
SOURCE = learner_source("backward_pass")

# Correct, and written differently from the reference: the loop split into small helpers
# (seeds, needed nodes, hooks), the needed set found by walking up from the targets through
# each node's parents, and the captures kept per position of `inputs` (found through a dict:
# a search of the inputs for each node was quadratic in a pass that captures many inputs).
HELPERS = '''
from plugin import engine as ag


def _seeds(roots, root_grads):
    buffers = {}
    for root, seed in zip(roots, root_grads):
        node = ag.gradient_node(root)
        if node is None:
            continue
        buffers[node] = seed if node not in buffers else ag.pieces.active.merge_grads(buffers[node], seed)
    return buffers


def _needed(order, targets):
    parents = {}
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    needed, stack = set(), list(targets)
    while stack:  # walk up from the targets: every ancestor leads to one
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(parents.get(node, ()))
    return needed


def _after_hooks(node, grad):
    for hook in list(node.pre_hooks or []):  # a copy: a hook may remove itself
        replaced = hook(grad)
        if replaced is not None:
            grad = replaced
    tensor = node.retained() if node.retained is not None else None
    if tensor is not None:
        if tensor._grad is None:
            tensor._grad = grad.clone()
        else:
            tensor._grad = tensor._grad + grad
    return grad


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None):
    buffers = _seeds(roots, root_grads)
    order = ag.pieces.active.topological_order(list(buffers))
    targets = None if inputs is None else [ag.gradient_node(t) for t in inputs]
    needed = None if targets is None else _needed(order, targets)
    results = [None] * (0 if targets is None else len(targets))
    positions = {}  # node -> its places in inputs: a search of targets per node is quadratic
    for i, target in enumerate(targets or ()):
        positions.setdefault(target, []).append(i)
    with ag.set_grad_enabled(create_graph):
        for node in order:
            if node not in buffers:
                continue
            grad = buffers.pop(node)
            if targets is None:
                grad = _after_hooks(node, grad)
            else:
                # captured before the hooks if the node runs on, after them if it stops here
                below = [c for c, _ in node.next_functions if c is not None and c in needed]
                if not below:
                    grad = _after_hooks(node, grad)
                for i in positions.get(node, ()):
                    results[i] = grad
                if not below:
                    continue
                grad = _after_hooks(node, grad)
            for (child, _), g in zip(node.next_functions, node(grad)):
                if child is None or g is None or (needed is not None and child not in needed):
                    continue
                buffers[child] = g if child not in buffers else ag.pieces.active.merge_grads(buffers[child], g)
            if not retain_graph:
                node.release_saved()
    return None if targets is None else tuple(results)
'''

# A loop of its own (a depth-first order) instead of the active piece of kata 03.
OWN_ORDER = """    order, seen, stack = [], set(), [(n, False) for n in root_nodes if n is not None]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif node not in seen:
            seen.add(node)
            stack.append((node, True))
            stack.extend((c, False) for c, _ in node.next_functions if c is not None and c not in seen)
    order.reverse()
"""

# retain_grad fed before the hooks instead of after them.
RETAIN_BEFORE_HOOKS = '''    """The tensor's hooks, in registration order, then retain_grad with the final value."""
    if node.retained is not None:
        tensor = node.retained()
        if tensor is not None:
            tensor._grad = grad.clone() if tensor._grad is None else tensor._grad + grad
    if node.pre_hooks:
        for hook in list(node.pre_hooks):
            result = hook(grad)
            if result is not None:
                grad = result
    return grad
'''

RUN_HOOKS = '''    """The tensor's hooks, in registration order, then retain_grad with the final value."""
    if node.pre_hooks:
        for hook in list(node.pre_hooks):
            result = hook(grad)
            if result is not None:
                grad = result
    if node.retained is not None:
        tensor = node.retained()
        if tensor is not None:
            tensor._grad = grad.clone() if tensor._grad is None else tensor._grad + grad
    return grad
'''

CAPTURE = """            goes_on = targets is None or any(child in needed for child, _ in node.next_functions)
            if goes_on and targets is not None and node in needed.targets:
                captured[node] = grad
            if node.pre_hooks or node.retained is not None:
                grad = _run_hooks(node, grad)
            if not goes_on:  # nothing below this node was asked for
                if node in needed.targets:
                    captured[node] = grad
                continue
"""
CAPTURE_BEFORE_HOOKS = """            goes_on = targets is None or any(child in needed for child, _ in node.next_functions)
            if targets is not None and node in needed.targets:
                captured[node] = grad
            if node.pre_hooks or node.retained is not None:
                grad = _run_hooks(node, grad)
            if not goes_on:
                continue
"""
CAPTURE_AFTER_HOOKS = """            goes_on = targets is None or any(child in needed for child, _ in node.next_functions)
            if node.pre_hooks or node.retained is not None:
                grad = _run_hooks(node, grad)
            if targets is not None and node in needed.targets:
                captured[node] = grad
            if not goes_on:
                continue
"""

MUTANTS = [
    # roots and seeds
    Mutant("takes a root's node from grad_fn, so a leaf root has none",
           "root_nodes = [gradient_node(t) for t in roots]", "root_nodes = [t.grad_fn for t in roots]",
           expect="test_a_leaf_as_the_root"),
    Mutant("two seeds on one root node: the second overwrites the first",
           "    for node, grad in zip(root_nodes, root_grads):\n        _add_to_buffer(buffers, node, grad)",
           "    for node, grad in zip(root_nodes, root_grads):\n        if node is not None:\n            buffers[node] = grad",
           expect="test_two_roots_that_are_one_tensor_merge_their_seeds"),
    Mutant("merges the roots' seeds in place, into the caller's gradient",
           "    buffers[node] = grad if existing is None else active.merge_grads(existing, grad)",
           "    buffers[node] = grad if existing is None else existing.add_(grad)",
           expect="test_two_roots_that_are_one_tensor_merge_their_seeds"),
    # the order and the sums: the active pieces, each node once
    Mutant("sorts the graph itself instead of calling the active topological_order",
           "    order = active.topological_order(root_nodes)\n", OWN_ORDER,
           expect="never called ag.pieces.active.topological_order"),
    Mutant("adds gradients with + instead of the active merge_grads",
           "active.merge_grads(existing, child_grad)", "existing + child_grad",
           expect="sum them with the active piece"),
    Mutant("a second gradient for a node overwrites the first",
           "buffers[child] = child_grad if existing is None else active.merge_grads(existing, child_grad)",
           "buffers[child] = child_grad", expect="the gradient of `x` differs from torch's"),
    Mutant("adds a second gradient into the first in place",
           "active.merge_grads(existing, child_grad)", "existing.add_(child_grad)", expect="test_random_graphs"),
    # Not here: a list of done nodes (`node in done`). The scan is a C loop of about a
    # nanosecond per node, so at the sizes a test can afford it hides behind the loop's own
    # work, and the growth check cannot tell it reliably from linear code.
    # hooks and retain_grad
    Mutant("runs the hooks in reverse order",
           "for hook in list(node.pre_hooks):", "for hook in reversed(node.pre_hooks):",
           expect="test_hooks_run_in_registration_order_and_a_return_replaces_the_gradient"),
    Mutant("ignores what a hook returns", "                grad = result\n", "                pass\n",
           expect="test_hooks_run_in_registration_order_and_a_return_replaces_the_gradient"),
    Mutant("a hook's replacement is seen by retain_grad but does not flow on",
           "                grad = _run_hooks(node, grad)", "                _run_hooks(node, grad)",
           expect="test_hooks_run_in_registration_order_and_a_return_replaces_the_gradient"),
    Mutant("feeds retain_grad only on nodes that also have hooks",
           "if node.pre_hooks or node.retained is not None:", "if node.pre_hooks:",
           expect="test_retain_grad_without_any_hook"),
    Mutant("keeps the gradient itself in retain_grad, not a copy",
           "grad.clone() if tensor._grad is None", "grad if tensor._grad is None",
           expect="test_retain_grad_keeps_a_copy_of_the_first_gradient"),
    Mutant("adds into the retained gradient in place",
           "else tensor._grad + grad", "else tensor._grad.add_(grad)",
           expect="test_retain_grad_adds_out_of_place"),
    Mutant("replaces the retained gradient instead of adding to it",
           "else tensor._grad + grad", "else grad.clone()",
           expect="test_retain_grad_sees_the_final_gradient"),
    Mutant("feeds retain_grad before the hooks", RUN_HOOKS, RETAIN_BEFORE_HOOKS,
           expect="test_retain_grad_sees_the_final_gradient"),
    Mutant("forgets that the retained tensor may be gone",
           "        if tensor is not None:\n            tensor._grad", "        if True:\n            tensor._grad",
           expect="test_retain_grad_on_a_tensor_that_is_gone"),
    # freeing and grad mode
    Mutant("never releases the saved tensors",
           "            if not retain_graph:\n                node.release_saved()\n", "",
           expect="test_saved_tensors_are_freed_unless_retain_graph"),
    Mutant("keeps the saved tensors under create_graph, whatever retain_graph says (blind round 5's b15)",
           "            if not retain_graph:\n                node.release_saved()\n",
           "            if not (retain_graph or create_graph):\n                node.release_saved()\n",
           expect="whatever create_graph says"),
    Mutant("releases even when retain_graph is asked for",
           "            if not retain_graph:\n                node.release_saved()\n",
           "            node.release_saved()\n", expect="Trying to backward through the graph a second time"),
    Mutant("releases a node's saved tensors before running it",
           "            grads = node(grad)\n            if not retain_graph:\n                node.release_saved()\n",
           "            if not retain_graph:\n                node.release_saved()\n            grads = node(grad)\n",
           expect="Trying to backward through the graph a second time"),
    Mutant("leaves grad mode as it was during the pass",
           "    with set_grad_enabled(create_graph):", "    if True:", expect="requires_grad is True, torch's is False"),
    Mutant("records a graph in every pass",
           "with set_grad_enabled(create_graph):", "with set_grad_enabled(True):",
           expect="requires_grad is True, torch's is False"),
    Mutant("never records a graph, even for create_graph",
           "with set_grad_enabled(create_graph):", "with set_grad_enabled(False):",
           expect="test_the_pass_runs_with_grad_mode_off_unless_create_graph"),
    # inputs: capture, do not accumulate, prune
    Mutant("takes an input's node from grad_fn, so a leaf input is never reached",
           "[gradient_node(t) for t in inputs]", "[t.grad_fn for t in inputs]",
           expect="appears to not have been used in the graph"),
    Mutant("with inputs, still runs the AccumulateGrad nodes",
           "                    captured[node] = grad\n                continue\n", "                    captured[node] = grad\n",
           # (the first test to see it: the leaves' .grad then holds the captured gradient
           # itself, and the next call adds into it)
           expect="differs from torch's"),
    Mutant("captures an input's gradient before its hooks, also where its node stops there",
           CAPTURE, CAPTURE_BEFORE_HOOKS, expect="test_hooks_apply_to_what_autograd_grad_returns"),
    Mutant("captures an input's gradient after its hooks, also where its node runs on",
           CAPTURE, CAPTURE_AFTER_HOOKS, expect="test_an_input_whose_node_runs_on_is_captured_before_its_hooks"),
    Mutant("stops at an input even when an input below it is asked for too",
           "                captured[node] = grad\n            if node.pre_hooks",
           "                captured[node] = grad\n                continue\n            if node.pre_hooks",
           expect="test_a_non_leaf_input_below_another_input"),
    Mutant("runs the nodes that lead to no input too",
           "                if needed is not None and child not in needed:\n                    continue\n", "",
           expect="test_only_nodes_that_lead_to_the_inputs_run"),
    # "linear time", on wide graphs and many inputs too (blind rounds 1 and 2: quadratic only
    # there, where a deep chain's growth check sees nothing)
    Mutant("looks the inputs up in a list", "    needed.targets = targets\n", "    needed.targets = list(targets)\n",
           expect="slow on a pass that captures many inputs: looks quadratic"),
    Mutant("remembers the nodes that ran in a list",
           "        for node in order:\n            grad = buffers.pop(node, None)\n",
           "        ran = []\n        for node in order:\n            if node in ran:  # each node runs once\n"
           "                continue\n            ran.append(node)\n            grad = buffers.pop(node, None)\n",
           # the timed growth check may see it first: it is quadratic on a deep chain too
           expect="looks quadratic"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_not_done(checkout, mutant):
    assert_caught(checkout, KATA, FILE, SOURCE, mutant)


# The reference planted as a learner writes it is the baseline: planting alone must not fail.
# (A third correct loop, ALTERNATIVE, is graded in test_kata_06.py.)
CORRECT = {"the reference as a learner writes it": SOURCE, "small helpers": HELPERS}


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_variant_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, CORRECT[name])
