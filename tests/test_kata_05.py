"""Kata 05 (seeding) through the grading plugin, on a copy of its folder (pytester)."""
from kit import assert_done, assert_stubs_all_todo, kata_row, reference_source, write_learner_file

KATA = "05_seeding"

# A correct solution written differently from reference/solutions/seeding.py: indexing instead of zip,
# the length check only for a shorter list (torch ignores extra gradients), None as the seed
# of an output that needs none (as torch's _make_grads), ag.ones_like for the ones, and one
# search for the first output that does not require grad. A given gradient of another dtype
# is cast, as the contract says.
ALTERNATIVE = '''
from plugin import engine as ag


def _size(shape):
    return "torch.Size([" + ", ".join(str(n) for n in shape) + "])"


def make_root_grads(outputs, grad_outputs):
    given = [None] * len(outputs) if grad_outputs is None else list(grad_outputs)
    seeds = []
    for i in range(min(len(outputs), len(given))):
        out, g = outputs[i], given[i]
        if g is not None:
            if not isinstance(g, ag.Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {_size(g.shape)} "
                    f"and output[{i}] has a shape of {_size(out.shape)}."
                )
            seeds.append(g if g.dtype == out.dtype else g.to(dtype=out.dtype))
        elif not out.requires_grad:
            seeds.append(None)
        elif out.numel() == 1:
            seeds.append(ag.ones_like(out))
        else:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if len(given) < len(outputs):  # after the seeds, in torch's order
        raise RuntimeError(f"got {len(outputs)} tensors and {len(given)} gradients")
    bad = next((i for i, out in enumerate(outputs) if not out.requires_grad), None)
    if bad is not None:
        raise RuntimeError(f"element {bad} of tensors does not require grad and does not have a grad_fn")
    return seeds
'''


def test_the_stubs_are_all_todo(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("--kata", "5"), KATA)
    assert outcomes.get("todo", 0) >= 40, outcomes


def test_the_reference_solution_is_done(checkout):
    result = checkout.runpytest("--kata", "5", "--solution", "reference", "-p", "no:randomly")
    assert_done(result, KATA)
    assert "no speed test for this kata" in result.stdout.str()


def test_a_correct_solution_written_differently_is_done(checkout):
    write_learner_file(checkout, KATA, "seeding.py", ALTERNATIVE)
    result = checkout.runpytest("--kata", "5")
    assert_done(result, KATA)
    assert "compare with the reference solution in reference/solutions/seeding.py" in result.stdout.str()


def test_a_seed_for_zero_dimensional_outputs_only_is_told_so(checkout):
    """The classic slip: "scalar" read as ndim == 0, so (1,) and (1, 1) outputs are refused."""
    wrong = reference_source("seeding").replace("output.numel() != 1", "output.ndim != 0")
    assert wrong != reference_source("seeding")
    write_learner_file(checkout, KATA, "seeding.py", wrong)
    result = checkout.runpytest("--kata", "5", "-v")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, KATA)[1] == "in progress"
    assert "make_root_grads(outputs=(<shape (1,)>,), grad_outputs=None) raised RuntimeError" in out
    assert "but torch seeds this without error: an output with one element (shape (1,))" in out
    # through backward(), the oracle reports the same mistake against torch
    assert "test_backward_from_a_one_element_output_needs_no_gradient[(1, 1)] FAILED" in out


def test_requires_grad_checked_before_the_seeds_is_told_so(checkout):
    """Checking requires_grad first gives the wrong one of torch's messages."""
    source = reference_source("seeding")
    start = source.index("    for index, output in enumerate(outputs):\n        if not output.requires_grad")
    check = source[start:source.index("    return seeds")]
    wrong = source.replace(check, "").replace("    seeds = []\n", "    seeds = []\n" + check, 1)
    write_learner_file(checkout, KATA, "seeding.py", wrong)
    result = checkout.runpytest("--kata", "5", "-k", "before_requires_grad")
    out = result.stdout.str()
    assert result.ret == 1
    assert "torch raises RuntimeError: grad can be implicitly created only for scalar outputs" in out
    # the learner's own raise, once, under torch's error (not chained above it)
    assert "your make_root_grads raised RuntimeError: element 0 of tensors does not require grad" in out
    assert "The above exception was the direct cause" not in out


def test_words_that_differ_from_torch_are_shown_side_by_side(checkout):
    wrong = reference_source("seeding").replace('f"and output[{index}]', 'f"while output[{index}]')
    assert wrong != reference_source("seeding")
    write_learner_file(checkout, KATA, "seeding.py", wrong)
    result = checkout.runpytest("--kata", "5", "-k", "names_the_index")
    out = result.stdout.str()
    assert result.ret == 1
    assert "the right error, but not torch's exact words" in out
    assert "torch: Mismatch in shape: grad_output[1] has a shape of torch.Size([2]) and output[1]" in out
    assert "yours: Mismatch in shape: grad_output[1] has a shape of torch.Size([2]) while output[1]" in out
