"""Kata 06 (backward_pass), graded by the plugin on a copy of its folder: the stubs are to-dos,
the reference and a differently written solution are done, a typical mistake fails with a reason."""

from kit import assert_done, assert_stubs_all_todo, kata_row, write_learner_file

KATA = "06_backward_pass"
FILE = "backward_pass.py"

# Correct, and written differently from reference/solutions/backward_pass.py: the order still comes from
# the active topological_order (the contract), but each node's incoming gradients wait in a
# list and are merged when its turn comes, pruning is a memoised "leads to an input" walk
# with an explicit stack, and the hooks run inline.
ALTERNATIVE = '''
from plugin import engine as ag


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None):
    pieces = ag.pieces.active
    pending = {}
    for tensor, seed in zip(roots, root_grads):
        node = ag.gradient_node(tensor)
        if node is not None:
            pending.setdefault(node, []).append(seed)
    order = pieces.topological_order(list(pending))
    wanted = None
    if inputs is not None:
        wanted = [ag.gradient_node(t) for t in inputs]
        wanted_set = set(wanted)  # searched for each node: a list would be quadratic in many inputs
        # which nodes lead to a wanted node: memoised walk without recursion
        leads = {}
        for start in pending:
            stack = [start]
            while stack:
                node = stack[-1]
                if node in leads:
                    stack.pop()
                    continue
                todo = [c for c, _ in node.next_functions if c is not None and c not in leads]
                if todo:
                    stack.extend(todo)
                    continue
                stack.pop()
                leads[node] = node in wanted_set or any(leads[c] for c, _ in node.next_functions if c is not None)
        keep = lambda node: leads.get(node, False)
    else:
        keep = lambda node: True
    captured = {}
    with ag.set_grad_enabled(create_graph):
        for node in order:
            grads = pending.pop(node, None)
            if not grads or not keep(node):
                continue
            grad = grads[0]
            for more in grads[1:]:
                grad = pieces.merge_grads(grad, more)
            runs = wanted is None or any(keep(c) for c, _ in node.next_functions if c is not None)
            if wanted is not None and node in wanted_set and runs:
                captured[node] = grad  # a node that runs on: captured before the hooks
            for hook in list(node.pre_hooks or ()):
                out = hook(grad)
                grad = grad if out is None else out
            owner = None if node.retained is None else node.retained()
            if owner is not None:
                owner._grad = grad.clone() if owner._grad is None else owner._grad + grad
            if not runs:
                if node in wanted_set:
                    captured[node] = grad
                continue
            outs = node(grad)
            if not retain_graph:
                node.release_saved()
            for (child, _), g in zip(node.next_functions, outs):
                if child is not None and g is not None and keep(child):
                    pending.setdefault(child, []).append(g)
    if wanted is None:
        return None
    return tuple(captured.get(n) for n in wanted)
'''

# The typical mistake: push each gradient down as soon as it arrives (no buffers, no order).
# The gradients are right, but a node runs once per path instead of once per pass.
EAGER = '''
from plugin import engine as ag


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None):
    # typical wrong: push each gradient down as soon as it arrives (a node runs once per path)
    wanted = None if inputs is None else [ag.gradient_node(t) for t in inputs]
    captured = {}
    with ag.set_grad_enabled(create_graph):
        stack = [(ag.gradient_node(t), g) for t, g in zip(roots, root_grads)]
        while stack:
            node, grad = stack.pop()
            if node is None:
                continue
            for hook in list(node.pre_hooks or ()):
                out = hook(grad)
                grad = grad if out is None else out
            if wanted is not None and node in wanted:
                captured[node] = grad if node not in captured else captured[node] + grad
                continue
            if wanted is not None and not node.next_functions:
                continue
            for (child, _), g in zip(node.next_functions, node(grad)):
                if child is not None and g is not None:
                    stack.append((child, g))
    if wanted is not None:
        return tuple(captured.get(n) for n in wanted)
'''


def test_the_shipped_stubs_are_all_to_dos(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("-p", "no:randomly"), KATA)
    assert outcomes.get("todo", 0) >= 20, outcomes
    # only the speed tests (2 tests x learner/reference) and the fuzz test are left, waiting
    # for the kata's tests to pass
    assert outcomes.get("skipped", 0) == 5, outcomes


def test_the_reference_solution_is_done(checkout):
    assert_done(checkout.runpytest("--solution", "reference", "-p", "no:randomly"), KATA)


def test_a_correct_solution_written_differently_is_done(checkout):
    write_learner_file(checkout, KATA, FILE, ALTERNATIVE)
    result = checkout.runpytest("-p", "no:randomly")
    assert_done(result, KATA)
    assert "compare with the reference solution in reference/solutions/backward_pass.py" in result.stdout.str()
    assert "x reference" in result.stdout.str()  # the speed column has a ratio


def test_pushing_each_gradient_down_at_once_fails_with_a_reason(checkout):
    write_learner_file(checkout, KATA, FILE, EAGER)
    result = checkout.runpytest("-p", "no:randomly", "-v", "-k", "once_per_pass or registration_order")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, KATA)[1] == "in progress"
    assert "the graph has 18 nodes, but the pass ran 38 node calls" in out
    assert "each node must run once, with the sum of all the gradients that reach it" in out
    # h feeds two uses: its hooks ran once per path, not once per pass
    assert "torch gives ['first', 'third'], the engine ['first', 'third', 'first', 'third']" in out
