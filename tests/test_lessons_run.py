"""Every lesson snippet that says it runs on both engines does, and prints what torch prints.

The lessons (katas/*/README.md, hints.md) show code that starts with
`import torch as lib  # or: from plugin import engine as lib`. Each such block runs here on
torch and on the engine, and their printed output must agree, up to the differences the
lessons and the README name: object addresses, torch's C++ spelling of the leaf node
(`torch::autograd::AccumulateGrad`), `CopyBackwards` for the copy a create_graph `.grad` gets
(the engine's is a `CloneBackward0`), `torch.Size([2, 3])` for a shape (the engine's `.shape`
is a plain tuple), and the last digit of a printed float32.
"""
import contextlib
import io
import re
from pathlib import Path

import pytest
import torch

from plugin import engine
from reference import cuda

REPO = Path(__file__).resolve().parent.parent
HEADER = "import torch as lib"


def lesson_blocks():
    blocks = []
    for page in sorted((REPO / "katas").glob("*/*.md")):
        for number, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S)):
            if block.startswith(HEADER):
                blocks.append(pytest.param(block, id=f"{page.parent.name}/{page.name}#{number}"))
    return blocks


def run(block, lib):
    """The block's printed output and its error (None if it ran to the end), `lib` given."""
    printed = io.StringIO()
    code = "lib = __lib__\n" + block.split("\n", 1)[1]  # the header line replaced
    with contextlib.redirect_stdout(printed):
        try:
            exec(compile(code, "<lesson>", "exec"), {"__name__": "__lesson__", "__lib__": lib})
            error = None
        except Exception as exc:  # noqa: BLE001 (some lessons end on the error they teach)
            error = f"{type(exc).__name__}: {exc}"
    return normalized(printed.getvalue()), error


def normalized(text):
    text = re.sub(r"0x[0-9a-f]+", "0x...", text)
    text = text.replace("torch::autograd::AccumulateGrad", "AccumulateGrad")
    text = text.replace("CopyBackwards", "CloneBackward0")
    text = re.sub(r"torch\.Size\(\[([^\]]*)\]\)", lambda m: repr(tuple(int(n) for n in m.group(1).split(",") if n.strip())), text)
    return text


NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?")


def same_output(theirs, mine):
    """Equal text, numbers equal to float32 precision."""
    if NUMBER.sub("#", theirs) != NUMBER.sub("#", mine):
        return False
    pairs = zip(NUMBER.findall(theirs), NUMBER.findall(mine))
    return all(abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(a))) for a, b in pairs)


def test_the_lessons_have_snippets_for_both_engines():
    assert len(lesson_blocks()) >= 30  # a glob or header that no longer matches finds none


@pytest.mark.parametrize("block", lesson_blocks())
def test_a_lesson_snippet_prints_what_torch_prints(block):
    previous = cuda.backend()
    cuda.use("sim")
    try:
        mine, my_error = run(block, engine)
    finally:
        cuda.use(previous)
    if '"cuda"' in block and not torch.cuda.is_available():
        # torch needs a GPU for this one: the engine alone, ending on no error or on the one
        # the snippet's comments announce
        assert my_error is None or my_error.split(":")[0] + ":" in block, my_error
        assert mine.strip(), "the snippet printed nothing on the engine"
        return
    theirs, their_error = run(block, torch)
    assert (their_error is None) == (my_error is None), f"torch: {their_error}\nengine: {my_error}"
    assert same_output(theirs, mine), f"torch printed:\n{theirs}\nthe engine printed:\n{mine}"
