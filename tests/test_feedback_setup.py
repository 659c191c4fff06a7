"""Set-up and lessons (issue 15, section 5): the README's set-up, the lessons' claims and
printed tensors, kata 05's hints in torch's order."""
import math
import re

import numpy as np
import pytest
import torch

import reference as ag
from kit import REPO

NAN, INF = math.nan, math.inf

# Values torch prints in each of its formats: 4 decimals, whole numbers, scientific notation
# (a wide range, tiny or huge values), signs, nan and inf, 0-d, 2-D.
PRINTED = [
    [2.0, 0.4, 0.0],
    [0.2350, 0.1966, 0.1050],
    [1.0, 2.0],
    [3.0, 12.0],
    [50.0, 94.0, 138.0],
    [0.0, 0.0],
    [1e-5, 1.0],
    [1e5, 1.0],
    [1e9, 1.0],
    [-1.0, 1.5],
    [[1.0, -2.0], [3.25, 4.0]],
    [NAN, 1.5],
    [INF, 1.0],
    [-INF, 2.5, NAN],
    2.5,
    -3.0,
    [0.1234567],
    [[0.5], [-0.25], [100.0]],
]


@pytest.mark.parametrize("values", PRINTED, ids=str)
def test_a_float32_tensor_prints_as_torchs(values):
    assert repr(ag.tensor(np.array(values, dtype=np.float32))) == repr(torch.tensor(values))


@pytest.mark.parametrize("values", PRINTED[:6], ids=str)
def test_a_tensor_that_requires_grad_prints_as_torchs(values):
    mine = ag.tensor(np.array(values, dtype=np.float32), requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    assert repr(mine) == repr(theirs)
    assert repr(mine * 2) == repr(theirs * 2)  # with grad_fn=<MulBackward0>


def body(text):
    return text.split("dtype=")[0]


@pytest.mark.parametrize("values", PRINTED, ids=str)
def test_a_float64_tensor_prints_its_numbers_as_torchs(values):
    # the dtype is named differently (numpy's float64, torch.float64); the numbers alike
    assert body(repr(ag.tensor(np.array(values)))) == body(repr(torch.tensor(values, dtype=torch.float64)))


def test_the_lessons_print_tensors_as_the_engine_does():
    # kata 01: y = x * x with v = [1, 0.1, 0] -> v * 2x
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(ag.tensor([1.0, 0.1, 0.0]))
    assert "tensor([2.0000, 0.4000, 0.0000])" in (REPO / "katas/01_elementwise_rules/README.md").read_text()
    assert repr(x.grad) == "tensor([2.0000, 0.4000, 0.0000])"
    # kata 02: (x + b) ** 2 summed, b broadcast over 2 rows
    x = ag.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = ag.tensor([10.0, 20.0, 30.0], requires_grad=True)
    ((x + b) ** 2).sum().backward()
    assert repr(b.grad) in (REPO / "katas/02_shapes/README.md").read_text()


def test_a_lesson_does_not_deny_its_speed_test():
    for folder in sorted((REPO / "katas").iterdir()):
        if list(folder.glob("test_*speed*.py")):
            assert "no speed test" not in (folder / "README.md").read_text(), folder.name


def test_kata_05_hints_count_the_gradients_after_making_the_seeds():
    # torch's order: the seed error of an output comes before the count of the gradients
    x = torch.ones(3, requires_grad=True)
    s = (x * 3).sum()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        torch.autograd.backward([x * 2, s], [None])
    hints = (REPO / "katas/05_seeding/hints.md").read_text()
    assert "before the\nloop" not in hints and "before the loop" not in hints
    outline = hints[hints.index("### Hint 6"):]
    assert outline.index("for i, (out, g) in") < outline.index('raise "got N tensors and M gradients"')


def test_the_readme_sets_up_a_venv_and_the_cpu_build_of_torch():
    readme = (REPO / "README.md").read_text()
    pyproject = (REPO / "pyproject.toml").read_text()
    minimum = re.search(r'requires-python = ">=(\d+\.\d+)"', pyproject).group(1)
    assert f"Python {minimum} or newer" in readme
    setup = readme[readme.index("```bash"):]
    install = next(line for line in setup.splitlines() if "pip install" in line)
    # One command: the venv first, then the kit with torch's CPU build from torch's own index.
    assert install.index("python3 -m venv .venv") < install.index("pip install -e .")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in install
