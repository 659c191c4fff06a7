"""Each thing a failure says, said once (issues 27 and 31, the blind walk of BLIND-WALK.md):
for the blind walk's planted mistake in each kata, graded with pytest's default options, no
long line of the failure shown in full appears twice, no words of its message are printed a
second time in the test source above it, the engine shows as the learner's, and a learner's
own error sits under the kit's sentence, not chained above it.

The check is the mechanism's (grading/shown_source.py and the hooks around it), run on a
real failure of every kata the walk tried, not on a hand-made traceback."""
import re

import pytest

from kit import learner_source, make_checkout, write_learner_file

LONG = 40  # a line (or run of words) this long that appears twice is a repeat, not chance

# kata: (folder, module, old, new, -k selector of the test that fails first): the blind
# walk's planted mistakes (BLIND-WALK.md), on the model solution as a learner writes it.
WALK = {
    "01": ("01_elementwise_rules", "rules", "grad * (out * base.log()).where(keep, 0.0)", "grad * out * base.log()", "pow_of_a_zero_base"),
    "02": ("02_shapes", "shapes", "grad_b = unbroadcast(a2.transpose(-1, -2) @ grad2, b2.shape).reshape(b.shape)",
           "grad_b = (a2.transpose(-1, -2) @ grad2).reshape(b.shape)", "test_matmul"),
    "03": ("03_toposort", "toposort", "node.sequence_nr < feeder.sequence_nr", "node.sequence_nr > feeder.sequence_nr",
           "random_graphs"),
    "04": ("04_accumulation", "accumulate", " and grad.stride() == leaf.stride()", "", "laid_out_like_the_leaf"),
    "05": ("05_seeding", "seeding", "    for index, (output, grad) in enumerate(zip(outputs, grad_outputs)):\n",
           "    for index, (output, grad) in enumerate(zip(outputs, grad_outputs)):\n"
           "        if not output.requires_grad:\n"
           "            raise RuntimeError(f\"element {index} of tensors does not require grad and does not have a grad_fn\")\n",
           "seeds_are_checked_before_requires_grad"),
    "06": ("06_backward_pass", "backward_pass", "grad.clone() if tensor._grad is None", "grad if tensor._grad is None",
           "retain_grad_keeps_a_copy"),
    "07": ("07_retain_graph", "saved", "t.detach() if out else t", "t if out else t", "does_not_keep_itself_alive"),
    "09": ("09_higher_order", "higher_order", "grad_outputs=ag.ones_like(scores), create_graph=True)",
           "grad_outputs=ag.ones_like(scores))", "penalty_gradients_reach"),
}


def graded(pytester, kata):
    folder, module, old, new, selector = WALK[kata]
    source = learner_source(module)
    assert source.count(old) == 1, f"the planted mistake no longer applies to kata {kata}: {old!r}"
    make_checkout(pytester, katas=[folder])
    write_learner_file(pytester, folder, f"{module}.py", source.replace(old, new))
    result = pytester.runpytest("--kata", str(int(kata)), "-p", "no:randomly", "-k", selector)
    assert result.ret == 1, result.stdout.str()
    return result.stdout.str()


def failure_shown(out):
    """The part of the output that shows failures in full: from pytest's FAILURES title to the
    next of its titles (the warnings summary, whose repeats are pytest's: 9.2 lists a warning's
    location twice) or the kata table."""
    start = out.index("= FAILURES =")
    ends = [out.find(title, start) for title in ("= warnings summary =", "Autograd Katas")]
    return out[start: min(end for end in ends if end != -1)]


def repeats(section):
    """The lines and runs of words that the failure shows twice, as (what, why) pairs."""
    lines = [line for line in section.splitlines() if not line.startswith(("_", "="))]  # pytest's titles
    error = [line[1:].strip() for line in lines if line.startswith("E ")]
    rest = "\n".join(line for line in lines if not line.startswith("E "))
    found = []
    seen = {}
    for line in lines:
        text = line.lstrip(">E ").strip()
        if len(text) > LONG:
            seen[text] = seen.get(text, 0) + 1
    found += [(text, "a line shown twice") for text, count in seen.items() if count > 1]
    for text in (t for t in error if len(t) >= LONG):  # the message's words, again in the source above
        for start in range(len(text) - LONG + 1):
            window = text[start: start + LONG]
            if window in rest:
                found.append((window, "the message's words in the source too"))
                break
    return found


@pytest.mark.parametrize("kata", list(WALK))
def test_no_failure_shows_a_thing_twice(pytester, kata):
    out = graded(pytester, kata)
    section = failure_shown(out)
    assert not repeats(section), f"kata {kata} shows twice: {repeats(section)}\n{section}"
    assert "<module 'reference'" not in out, section  # the engine is the learner's
    assert "<engine: your pieces + the reference's>" in section or "ag =" not in section, section
    assert "The above exception was the direct cause" not in section, section
    assert "During handling of the above exception" not in section, section


def test_a_learners_error_sits_under_the_kits_sentence(pytester):
    """Kata 05: torch's error first, the learner's once under it with the line that raised
    it; the table's line cuts between words."""
    out = graded(pytester, "05")
    section = failure_shown(out)
    theirs = section.index("torch raises RuntimeError: grad can be implicitly created only for scalar outputs")
    mine = section.index("your make_root_grads raised RuntimeError: element 0 of tensors does not require grad")
    assert theirs < mine, section
    assert section.count("element 0 of tensors does not require grad") == 1, section
    assert "katas/05_seeding/seeding.py, line" in section, section
    table = out[out.index("Autograd Katas"):]
    line = next(l for l in table.splitlines() if "first failure" in l)
    for cut in re.findall(r"(\w+)…", line):  # a word cut short is not one of the message's words
        assert re.search(rf"\b{cut}\b", section), (cut, line)


def test_the_engine_a_hypothesis_test_gets_shows_once(pytester):
    """Kata 03: hypothesis's wrapper frame (the @given lines a second time) is not shown."""
    section = failure_shown(graded(pytester, "03"))
    assert section.count("@given(") == 1, section
    assert section.count("ag = <engine: your pieces + the reference's>") == 1, section


def test_a_gpu_twin_shares_its_cpu_twins_line(pytester):
    """Kata 01: the CPU and GPU versions of one check fail alike: one table line, "(2 tests)",
    as float32/float64 twins do."""
    out = graded(pytester, "01")
    table = out[out.index("Autograd Katas"):]
    assert "first failure (2 tests): base ** exponent with zeros in the base" in table, table
    assert "also:" not in table, table


def test_a_compared_value_says_what_was_compared(pytester):
    """Kata 06: retain_grad without a copy: the message names the value compared and what
    the contract asks, in the full failure and in the table's line."""
    out = graded(pytester, "06")
    line = next(l for l in out.splitlines() if "first failure" in l)
    assert "y.grad after retain_grad" in line and "the result" not in line, line
    assert "retain_grad must keep a copy of the first gradient" in failure_shown(out), out


def test_an_unnamed_result_is_named_by_the_tests_scenario():
    """A check whose result carries no labels is named by the running test, in words."""
    import reference
    from plugin.grading.oracle import KataMismatch, Oracle

    def differs(lib, x):
        return x * (2.0 if lib.__name__ == "torch" else 3.0)

    with pytest.raises(KataMismatch) as caught:
        Oracle(reference).compare(differs, x=[0.5, -1.0])
    assert str(caught.value).startswith(
        "an unnamed result is named by the tests scenario: the result differs from torch's"), str(caught.value)


RELU_MULTIPLIES = ("    return ((0 * out + 0.0).where(out <= 0, grad),)", "    return (grad * (out > 0),)")


def test_relu_as_a_product_with_its_mask_is_caught_by_name(pytester):
    """Kata 01: `grad * (out > 0)` differs from torch (log(relu(x)) at x <= 0 gives nan, torch
    0; a nan output is blocked); a named test says so, not only the random programs."""
    source = learner_source("rules")
    assert source.count(RELU_MULTIPLIES[0]) == 1
    make_checkout(pytester, katas=["01_elementwise_rules"])
    write_learner_file(pytester, "01_elementwise_rules", "rules.py", source.replace(*RELU_MULTIPLIES))
    result = pytester.runpytest("--kata", "1", "-p", "no:randomly", "-k", "relu and not random")
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "log(relu(x)) with x <= 0 (relu_backward must select: `grad * (out > 0)` gives inf * 0 = nan)" in out, out
    assert "relu of nan (relu_backward must select" in out, out


def test_a_random_programs_report_says_each_difference_once():
    """Lines that only restate a difference beside them go: the state after a step that
    raised on one side only, and a .grad key that one side lacks."""
    from types import SimpleNamespace

    from plugin.grading.fuzz.graded import failure_message
    from plugin.manifest import find_kata

    kata = find_kata("02_shapes")
    program = [SimpleNamespace(code="g4 = x.mean()"), SimpleNamespace(code="g4.mul_(2)")]
    raised = ["error: torch None, reference ('RuntimeError', 'unsupported operation')",
              "g4.values: torch array([1.33]), reference array([0.67])"]
    text = failure_message(kata, program, raised, ["mean_backward"], "program seed 1")
    assert "error: torch None, yours ('RuntimeError', 'unsupported operation')" in text, text
    assert "g4.values" not in text, text
    absent = ["g12.grad: torch '(absent)', reference None",
              "g12.grad is the same object: torch '(absent)', reference False",
              "g12.is_leaf: torch False, reference True"]
    text = failure_message(kata, program, absent, ["relu_backward"], "program seed 1")
    assert "(absent)" not in text and "g12.is_leaf: torch False, yours True" in text, text


def test_a_long_one_line_is_cut_between_words():
    from plugin.grading.one_line import one_line

    words = "the penalty does not require grad because the inner gradient was taken without a graph " * 4
    line = one_line(words)
    assert line.endswith("…") and len(line) <= 200, line
    assert line[:-1].split()[-1] in words.split(), line  # the last word is whole
    torch_words = one_line("torch raises RuntimeError: grad can be implicitly created only for scalar outputs\n"
                           "  the engine raised RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn")
    for cut in re.findall(r"(\w+)…", torch_words):
        assert cut in ("scalar", "and", "grad", "require", "does", "not", "have", "a"), torch_words
