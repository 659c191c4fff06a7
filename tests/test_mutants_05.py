"""Kata 05's mutation suite: one plausible mistake per sentence of make_root_grads' contract
(the stub docstring and the lesson), each planted in the reference and graded: the kata must
not come out done. Correct solutions written differently must come out done."""
import pytest

from kit import learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done
from test_kata_05 import ALTERNATIVE

KATA = "05_seeding"
FILE = "seeding.py"
# A learner's module: numpy, the engine's API, and a cache of ones (for the mutant that reuses
# its seeds; the reference never calls it).
SOURCE = '''import numpy as np

from plugin import engine as ag

_ONES = {}


def _cached_ones(output):
    key = (tuple(output.shape), str(output.dtype), str(output.device))
    if key not in _ONES:
        _ONES[key] = output.new_ones(output.shape)
    return _ONES[key]
''' + learner_source("seeding")

ONES = "            grad = output.new_ones(output.shape)\n"
SHAPE_CHECK = "        elif grad.shape != output.shape:\n"
CAST = "            grad = grad.to(dtype=output.dtype)  # torch casts a seed to its output's dtype\n"
MISMATCH = 'f"Mismatch in shape: grad_output[{index}] has a shape of {_size(grad.shape)} "'

MUTANTS = [
    # "the output must have exactly one element (shape (), (1,), (1, 1), ...)"
    Mutant("reads scalar as 0-d", "output.numel() != 1", "output.ndim != 0", expect="(1,)"),
    Mutant("seeds an empty output", "output.numel() != 1", "output.numel() > 1", expect="(0,)"),
    Mutant("asks for a gradient even where the output needs none",
           "if output.requires_grad and output.numel() != 1:", "if output.numel() != 1:",
           expect="output 1 is a constant vector"),
    # "a new tensor of ones with the output's shape, dtype and device, which does not require grad"
    Mutant("seeds with ag.ones (float32)", ONES, "            grad = ag.ones(output.shape)\n", expect="float64"),
    Mutant("seeds with numpy's ones (float64)", ONES, "            grad = ag.tensor(np.ones(output.shape))\n",
           expect="float32"),
    Mutant("seeds on the CPU", ONES, "            grad = ag.ones(output.shape, dtype=output.dtype)\n",
           expect="on the GPU"),
    Mutant("seeds with a 0-d one", ONES, "            grad = output.new_ones(())\n", expect="shape"),
    Mutant("seeds with a tensor from the graph", ONES, "            grad = output * 0 + 1\n",
           expect="test_a_one_element_output_is_seeded_with_one"),
    # "made afresh for every call: a hook may change a seed in place"
    Mutant("reuses its seeds", ONES, "            grad = _cached_ones(output)\n", expect="test_implicit_seeds_are_fresh"),
    # "g must have exactly the output's shape (no broadcasting)"
    Mutant("accepts a gradient with as many elements", SHAPE_CHECK,
           "        elif grad.numel() != output.numel():\n", expect="test_a_gradient_of_the_wrong_shape"),
    Mutant("accepts a gradient that broadcasts", SHAPE_CHECK,
           "        elif np.broadcast_shapes(tuple(grad.shape), tuple(output.shape)) != tuple(output.shape):\n",
           expect="test_a_gradient_of_the_wrong_shape"),
    # torch's words: "grad_output[i] ... output[i]", "torch.Size([2, 3])"
    Mutant("names gradient 0 whatever its index", MISMATCH, MISMATCH.replace("[{index}]", "[0]"),
           expect="names_the_index"),
    Mutant("prints sizes as tuples", 'return f"torch.Size({list(shape)})"', 'return f"torch.Size({tuple(shape)})"',
           expect="not torch's exact words"),
    # "Then, only after every seed has been made (torch's order), each output must require grad"
    Mutant("checks requires_grad before the seed", "        if grad is None:\n",
           "        if not output.requires_grad:\n            raise RuntimeError(f\"element {index} of tensors "
           "does not require grad and does not have a grad_fn\")\n        if grad is None:\n",
           expect="grad can be implicitly created only for scalar outputs"),
    Mutant("counts outputs from 1", 'f"element {index} of tensors does not require grad', 'f"element {index + 1} of '
           'tensors does not require grad', expect="element 0 of tensors"),
    # "g is anything else (a number, a list): TypeError(...)"
    Mutant("takes any gradient for a tensor", "        elif not isinstance(grad, type(output)):",
           "        elif False:", expect="gradients can be either Tensors or None"),
    # "fewer entries than outputs: RuntimeError("got N tensors and M gradients")"
    Mutant("forgets the length check", "    if len(seeds) != len(outputs):\n", "    if False:\n",
           expect="got 2 tensors and 1 gradients"),
    Mutant("swaps the counts", 'f"got {len(outputs)} tensors and {len(seeds)} gradients"',
           'f"got {len(seeds)} tensors and {len(outputs)} gradients"', expect="got 2 tensors and 1 gradients"),
    # "None as a whole means None for every output"
    Mutant("reads grad_outputs=None as one None", "grad_outputs = [None] * len(outputs)", "grad_outputs = [None]",
           expect="test_several_one_element_outputs_without_any_gradient"),
    # "The seed is g itself" (a copy loses its graph) ...
    Mutant("detaches a given gradient", "        seeds.append(grad)\n", "        seeds.append(grad.detach())\n",
           expect="use the given tensor itself"),
    # ... "cast to the output's dtype when the two differ"
    Mutant("keeps a given gradient's dtype", CAST, "            pass\n", expect="cast a given gradient"),
    Mutant("casts through numpy", CAST,
           "            grad = ag.tensor(grad.detach().cpu().numpy().astype(output.dtype))\n",
           expect="test_a_gradient_of_another_dtype_is_cast"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_caught(checkout, mutant):
    assert_caught(checkout, KATA, FILE, SOURCE, mutant)


# Correct, and written differently: the checks as separate passes over the outputs (all seeds
# first, then requires_grad, then the count), new_ones for the ones, a dict of shapes' words.
IN_PASSES = '''
from plugin import engine as ag


def _words(shape):
    return "torch.Size([%s])" % ", ".join(map(str, shape))


def _seed(i, out, g):
    if g is None:
        if out.requires_grad and out.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return out.new_ones(tuple(out.shape))
    if not isinstance(g, ag.Tensor):
        raise TypeError("gradients can be either Tensors or None, but got %s" % type(g).__name__)
    if tuple(g.shape) != tuple(out.shape):
        raise RuntimeError("Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape of %s."
                           % (i, _words(g.shape), i, _words(out.shape)))
    return g.to(dtype=out.dtype) if g.dtype != out.dtype else g


def make_root_grads(outputs, grad_outputs):
    given = list(grad_outputs) if grad_outputs is not None else [None for _ in outputs]
    seeds = [_seed(i, out, g) for i, (out, g) in enumerate(zip(outputs, given))]
    if len(given) < len(outputs):
        raise RuntimeError("got %d tensors and %d gradients" % (len(outputs), len(given)))
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError("element %d of tensors does not require grad and does not have a grad_fn" % i)
    return seeds
'''

VARIANTS = {"indexing, None seeds (test_kata_05)": ALTERNATIVE, "in passes": IN_PASSES}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_correct_solution_written_differently_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, VARIANTS[name])
