"""Each thing a failure says, said once (issues 27 and 31, the blind walk of BLIND-WALK.md):
for the blind walk's planted mistake in each kata, graded with pytest's default options, no
long line of the failure shown in full appears twice, no words of its message are printed a
second time in the test source above it, the engine shows as the learner's, and a learner's
own error sits under the kit's sentence, not chained above it.

The check is the mechanism's (grading/shown_source.py and the hooks around it), run on a
real failure of every kata the walk tried, not on a hand-made traceback."""
import re

import pytest

from kit import PRE_ORDER_TOPOSORT, learner_source, make_checkout, pointed_message, write_learner_file

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
    return result


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
    out = graded(pytester, kata).stdout.str()
    section = failure_shown(out)
    assert not repeats(section), f"kata {kata} shows twice: {repeats(section)}\n{section}"
    assert "<module 'reference'" not in out, section  # the engine is the learner's
    assert "<engine: your pieces + the reference's>" in section or "ag =" not in section, section
    assert "The above exception was the direct cause" not in section, section
    assert "During handling of the above exception" not in section, section


def test_a_learners_error_sits_under_the_kits_sentence(pytester):
    """Kata 05: torch's error first, the learner's once under it with the line that raised
    it; the table's line cuts between words."""
    result = graded(pytester, "05")
    out = result.stdout.str()
    section = failure_shown(out)
    theirs = section.index("torch raises RuntimeError: grad can be implicitly created only for scalar outputs")
    mine = section.index("your make_root_grads raised RuntimeError: element 0 of tensors does not require grad")
    assert theirs < mine, section
    assert section.count("element 0 of tensors does not require grad") == 1, section
    assert "katas/05_seeding/seeding.py, line" in section, section
    line = pointed_message(result, first_failure_of_table(out).split(": ", 1)[1])  # the table's, with --tb=no
    for cut in re.findall(r"(\w+)…", line):  # a word cut short is not one of the message's words
        assert re.search(rf"\b{cut}\b", section), (cut, line)


def test_the_engine_a_hypothesis_test_gets_shows_once(pytester):
    """Kata 03: hypothesis's wrapper frame (the @given lines a second time) is not shown."""
    section = failure_shown(graded(pytester, "03").stdout.str())
    assert section.count("@given(") == 1, section
    assert section.count("ag = <engine: your pieces + the reference's>") == 1, section


def test_a_gpu_twin_shares_its_cpu_twins_line(pytester):
    """Kata 01: the CPU and GPU versions of one check fail alike: one table line, "(2 tests)",
    as float32/float64 twins do."""
    result = graded(pytester, "01")
    out = result.stdout.str()
    table = out[out.index("Autograd Katas"):]
    line = first_failure_of_table(out)
    assert line.startswith("first failure (2 tests): "), table
    assert pointed_message(result, line.split(": ", 1)[1]).startswith("base ** exponent with zeros in the base"), line
    assert "also:" not in table, table


def test_a_compared_value_says_what_was_compared(pytester):
    """Kata 06: retain_grad without a copy: the message names the value compared and what
    the contract asks, in the full failure and in the table's line."""
    result = graded(pytester, "06")
    out = result.stdout.str()
    line = pointed_message(result, first_failure_of_table(out).split(": ", 1)[1])
    assert "y.grad (retained), after the seed was changed in place, differs" in line and "the result" not in line, line
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


# --- the second blind walk (BLIND-WALK-2.md): its planted mistakes, on the model solutions -------

# kata: (folder, module, old, new): each mistake the second walk planted
WALK2 = {
    "01": ("01_elementwise_rules", "rules", "    (out,) = ctx.saved_tensors\n    return (grad * out * (1 - out),)",
           "    (x,) = ctx.saved_tensors\n    s = 1 / (1 + (-x).exp())\n    return (grad * s * (1 - s),)"),
    "03": ("03_toposort", "toposort", None, None),  # a pre-order walk in place of the model's
    "05": ("05_seeding", "seeding", "output.numel() != 1", "output.ndim != 0"),
    "07": ("07_retain_graph", "saved", "        self._tensors = self._versions = self._outputs = None\n        self._released = True",
           "        self._released = True"),
    "09": ("09_higher_order", "higher_order", "grad_outputs=ag.ones_like(scores), create_graph=True)",
           "grad_outputs=ag.ones_like(scores))"),
}


def planted(pytester, kata):
    folder, module, old, new = WALK2[kata]
    source = learner_source(module)
    if old is None:
        source = source.replace("def topological_order(roots):", PRE_ORDER_TOPOSORT.strip("\n") + "\n\n\ndef _model_order(roots):")
    else:
        assert source.count(old) == 1, f"the planted mistake no longer applies to kata {kata}: {old!r}"
        source = source.replace(old, new)
    make_checkout(pytester, katas=[folder])
    write_learner_file(pytester, folder, f"{module}.py", source)


def graded2(pytester, kata, selector, *options):
    planted(pytester, kata)
    result = pytester.runpytest("--kata", str(int(kata)), "-p", "no:randomly", "-k", selector, *options)
    assert result.ret == 1, result.stdout.str()
    return result


def first_failure_of_table(out):
    table = out[out.index("Autograd Katas"):]
    return next(line.strip() for line in table.splitlines() if "first failure" in line)


@pytest.mark.parametrize("kata, selector", [("01", "test_unary and sigmoid"), ("05", "one_element_output"),
                                            ("07", "saved_arrays_die"), ("09", "penalty_gradients_reach")])
def test_the_tables_first_failure_points_to_the_one_shown_above(pytester, kata, selector):
    """The first failure is shown in full right above the table: the table's line names its
    test instead of saying its message a second time."""
    out = graded2(pytester, kata, selector).stdout.str()
    section = failure_shown(out)
    shown = re.search(r"^_+ (\S.*?) _+$", section, re.M).group(1)
    line = first_failure_of_table(out)
    assert re.fullmatch(rf"first failure( \(\d+ tests\))?: shown in full above \({re.escape(shown)}\)", line), line
    errors = [l[1:].strip() for l in section.splitlines() if l.startswith("E ") and len(l[1:].strip()) >= LONG]
    table = out[out.index("Autograd Katas"):]
    assert not any(e[:LONG] in table for e in errors), table


@pytest.mark.parametrize("options", [("--tb=no",), ("--tb=line",)], ids=["tb-no", "tb-line"])
def test_where_no_failure_is_shown_the_table_keeps_its_message(pytester, options):
    """--tb=no (katas progress/report/hint) or --tb=line print no message in full: the table's
    line is then the only place a learner reads it."""
    out = graded2(pytester, "09", "penalty_gradients_reach", *options).stdout.str()
    assert "the penalty does not require grad" in first_failure_of_table(out), out
    assert "shown in full above" not in out, out  # nor does the Next line send the learner there


def test_a_child_that_died_printed_none_of_its_failures():
    """A supervised child killed before its summary printed no failure: the table says the
    messages of the katas it graded (they are not "shown above")."""
    from plugin.grading.results import KataResult, TestResult
    from plugin.supervisor.run import ChildOutcome, Supervisor

    result = KataResult("01_elementwise_rules")
    result.add(TestResult("katas/01/test_rules.py::test_a", ("katas/01/test_rules.py", 1), "failed", "the words", printed=True))
    supervisor = Supervisor.__new__(Supervisor)
    supervisor.graded_katas, supervisor.cached, supervisor.hints, supervisor.tampered = False, {}, {}, set()
    supervisor.unreadable, supervisor.results, supervisor.crashed, supervisor.limit_s = 0, {}, {}, 60.0
    outcome = ChildOutcome(finished={result.slug: result}, returncode=-9)
    supervisor._gather(outcome, None)
    assert not supervisor.results[result.slug].tests["katas/01/test_rules.py::test_a"].printed


def test_a_learners_error_is_shown_once_under_the_kits_sentence_whatever_the_mistake(pytester):
    """Kata 05 with `ndim != 0`: the learner's RuntimeError is raised under a kata test's call,
    which raises the kit's sentence from it: no chained traceback, the learner's words once
    (the raise line quotes them as said above), the learner's file and line kept."""
    out = graded2(pytester, "05", "one_element_output").stdout.str()
    section = failure_shown(out)
    assert "The above exception was the direct cause" not in section, section
    assert section.count("grad can be implicitly created only for scalar outputs") == 1, section
    assert "at katas/05_seeding/seeding.py, line" in section and "in make_root_grads" in section, section
    assert section.index("but torch seeds this without error") < section.index("at katas/05_seeding/seeding.py"), section


def test_hypothesis_draws_go_where_the_kit_prints_the_inputs(pytester):
    """Kata 01: `inputs of this call` names the input; hypothesis's `Draw 1:` would again."""
    section = failure_shown(graded2(pytester, "01", "test_unary and sigmoid").stdout.str())
    assert "inputs of this call: x=" in section, section
    assert "Draw 1" not in section, section


def test_a_message_left_out_of_the_source_says_where_it_is(pytester):
    """Kata 09: the assert's words are in the error under the source; the source says so."""
    section = failure_shown(graded2(pytester, "09", "penalty_gradients_reach").stdout.str())
    assert '"…"' not in section, section
    assert '"(message below)"' in section, section


def test_a_wrong_gradient_inside_a_forward_result_is_said_as_one(pytester):
    """Kata 01: a result that holds a first derivative (autograd.grad inside it) differs
    because of a backward rule; the forward agrees (the model pieces give torch's result)."""
    out = graded2(pytester, "01", "float32_stays_float32").stdout.str()
    assert "the result (forward) differs" not in out, out
    line = first_failure_of_table(out) + "\n" + failure_shown(out)
    assert "to second order: the gradient taken inside it differs from torch's (the forward agrees)" in line, out


def test_the_learners_function_is_named_beside_its_node(pytester):
    """Katas 01 and 03 name the function to open, as kata 02 does."""
    section = failure_shown(graded2(pytester, "01", "test_unary and sigmoid").stdout.str())
    assert ("SigmoidBackward0 received the right gradient but returned a wrong one for its input 0 (item 0 of "
            "the tuple your sigmoid_backward (rules.py) returns)") in section, section
    section = failure_shown(graded2(pytester, "03", "diamond").stdout.str())
    assert "your topological_order (toposort.py) lists MulBackward0 (#" in section, section
    # which nodes: numbered in the learner's order, listed (several nodes share a name: the seventh walk)
    found = re.search(r"lists MulBackward0 \(#(\d+)\) after SigmoidBackward0 \(#(\d+)\)", section)
    assert found and f"#{found.group(1)} MulBackward0" in section and f"#{found.group(2)} SigmoidBackward0" in section, section


def test_a_memory_ratio_is_said_alike_everywhere(pytester):
    """Kata 07: the speed column and the failure give the same ratio, rounded alike."""
    out = graded2(pytester, "07", "memory").stdout.str()
    ratios = set(re.findall(r"(\d+\.\d+)x", out[out.index("Autograd Katas"):]))
    assert len(ratios) == 1, out


def test_long_arrays_and_sentences_are_cut_whole():
    """A one line that is too long keeps each array's first elements with its brackets closed,
    then cuts at a sentence's end or between words, never inside a word or an array."""
    from plugin.grading.one_line import one_line

    line = one_line("every rule, float32, to second order: the result differs from torch's\n"
                    "  expected [[ 6.20434, 9.49411, 5.92957], [11.72291, 6.40593, 4.24091], [1.5, 2.5, 3.5]]\n"
                    "  got      [[ 6.24483, 9.59548, 5.96515], [11.89141, 6.5, 4.3], [1.5, 2.5, 3.5]]")
    assert "(expected [[ 6.20434, 9.49411, 5.92957], …], got [[ 6.24483, 9.59548, 5.96515], …])" in line, line
    line = one_line("x.sum(dim=1) with x of shape (2, 1): your sum_backward raised RuntimeError: The expanded size of "
                    "the tensor (1) must match the existing size (2) at non-singleton dimension 1.  Target sizes: "
                    "[2, 1].  Tensor sizes: [2]")
    assert line.endswith(("dimension 1. …", "Target sizes: [2, 1]. …")), line  # at a sentence's end


@pytest.mark.parametrize("chained", ["from", "during"])
def test_any_error_raised_from_a_learners_error_shows_it_once_under_the_sentence(tmp_path, chained):
    """The mechanism, whatever the test and the mistake: a failure raised from (or while
    handling) an error of the learner's code carries that error under its own sentence (which
    piece, the file and line), and no chain is shown."""
    import importlib.util

    from plugin.grading import outcomes

    mine = tmp_path / "mine.py"
    mine.write_text("def piece(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location("mine", mine)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        try:
            module.piece("a string")
        except TypeError as error:
            if chained == "from":
                raise AssertionError("the kit's sentence: piece(x) must add one") from error
            raise AssertionError("the kit's sentence: piece(x) must add one")
    except AssertionError as failure:
        caught = failure
    assert outcomes.learners_error_under(caught, {mine.resolve()})
    message = str(caught)
    assert message.startswith("the kit's sentence: piece(x) must add one\n  your piece raised TypeError: "), message
    assert "mine.py, line 2, in piece: return x + 1" in message, message
    assert caught.__cause__ is None and caught.__suppress_context__, message


# --- the third blind walk (BLIND-WALK-3.md): mistakes that make the learner's piece raise ------

def planted3(pytester, folder, module, old, new):
    source = learner_source(module)
    assert source.count(old) == 1, f"the planted mistake no longer applies to {module}: {old!r}"
    make_checkout(pytester, katas=[folder])
    write_learner_file(pytester, folder, f"{module}.py", source.replace(old, new))


def test_a_piece_that_raises_everywhere_is_one_line_of_the_table(pytester):
    """mul_backward unpacking three saved tensors raises in every test that multiplies: the table
    says it once, with the count of tests, not once per test."""
    planted3(pytester, "01_elementwise_rules", "rules", "    a, b = ctx.saved_tensors\n    grad_a = grad * b",
             "    a, b, out = ctx.saved_tensors\n    grad_a = grad * b")
    out = pytester.runpytest("--kata", "1", "-p", "no:randomly").stdout.str()
    table = out[out.index("Autograd Katas"):]
    assert re.search(r"first failure \(\d+ tests\): shown in full above", table), table
    assert "your mul_backward raised" not in table, table


def test_a_star_argument_is_described_as_it_came(pytester):
    """save(*tensors) called with (None, x, None): the call is described with its items, not
    as a call with no arguments."""
    planted3(pytester, "07_retain_graph", "saved", "versions.append(None if t is None else t._version)",
             "versions.append(t._version)")
    out = pytester.runpytest("--kata", "7", "-p", "no:randomly").stdout.str()
    assert "your save was called with *tensors=a tuple of 3: (None, a tensor of shape" in out, out
    assert "called with no arguments" not in out, out
    # the sentence gives the learner's file, line and source: their frame is not printed again
    assert failure_shown(out).count("versions.append(t._version)") == 1, failure_shown(out)


def test_a_frame_showing_the_line_of_the_frame_above_is_left_out():
    """A list comprehension in a test's line is a frame of its own: pytest would print the
    test's line twice."""
    from types import SimpleNamespace

    from plugin.grading.outcomes import _not_the_line_above

    entries = [SimpleNamespace(path="test_x.py", lineno=10), SimpleNamespace(path="test_x.py", lineno=10),
               SimpleNamespace(path="test_x.py", lineno=12)]
    keep = _not_the_line_above(entries)
    assert [keep(e) for e in entries] == [True, False, True]


def test_torchs_words_are_not_said_again_as_the_phrase_expected(pytester):
    """Where the phrase the kit looks for is torch's whole message, it is not printed a second
    time as "(expected the phrase: ...)"."""
    planted3(pytester, "05_seeding", "seeding", "        elif not isinstance(grad, type(output)):  # a Tensor, like the output\n",
             "        elif not hasattr(grad, 'shape'):\n            raise RuntimeError('got a list')\n"
             "        elif False:\n")
    out = pytester.runpytest("--kata", "5", "-p", "no:randomly", "-k", "no_tensor").stdout.str()
    assert "torch raises TypeError: gradients can be either Tensors or None, but got" in out, out
    assert "expected the phrase" not in out, out


def test_a_learners_own_message_is_said_once_and_one_tensor_sent_twice_is_named(pytester):
    """merge_grads asserting its two arguments differ (x + x sends one tensor twice): the
    learner's words are not quoted again in the source line under them, and the call says the
    two arguments are one tensor (their shapes would not show it)."""
    planted3(pytester, "04_accumulation", "accumulate", "    return existing + incoming\n",
             "    assert existing is not incoming, \"merge_grads got the same tensor twice\"\n"
             "    return existing + incoming\n")
    out = pytester.runpytest("--kata", "4", "-p", "no:randomly", "-k", "added_to_itself").stdout.str()
    section = failure_shown(out)
    assert section.count("merge_grads got the same tensor twice") == 1, section
    assert "(existing and incoming are the same tensor)" in section, section


def test_a_scenario_keeps_the_names_of_the_api(monkeypatch):
    """A test's name said as words keeps autograd.grad and retain_grad as a learner writes them
    (the third walk read "autograd grad" and "retain grad")."""
    from plugin.grading.oracle import current_scenario

    monkeypatch.setenv("PYTEST_CURRENT_TEST", "katas/x.py::test_hooks_apply_to_what_autograd_grad_returns[cpu] (call)")
    assert current_scenario() == "hooks apply to what autograd.grad returns (cpu)"
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "katas/x.py::test_retain_grad_sees_the_final_gradient (call)")
    assert current_scenario() == "retain_grad sees the final gradient"


def test_a_rules_shape_that_no_broadcast_gives_is_the_rules_mistake(pytester):
    """matmul_backward returning (3, 1) for a (3,) b: no broadcast of (3,) is (3, 1), so the
    rule is blamed, not the unbroadcast that could not sum it away (the fourth walk)."""
    planted3(pytester, "02_shapes", "shapes", "grad_b = unbroadcast(a2.transpose(-1, -2) @ grad2, b2.shape).reshape(b.shape)",
             "grad_b = unbroadcast(a2.transpose(-1, -2) @ grad2, b2.shape)")
    out = pytester.runpytest("--kata", "2", "-p", "no:randomly", "-k", "test_matmul").stdout.str()
    section = failure_shown(out)
    assert "your matmul_backward returned a gradient of shape (3, 1)" in section, section
    assert "your unbroadcast returned" not in section, section


def test_an_error_the_engine_raises_on_a_learners_value_points_back_to_the_pieces(pytester):
    """unpack reattaching to the weak reference, not the node: the engine's own walk then fails
    on it. The message says the engine's code is the model's and to look at the learner's pieces
    (the fourth walk read "the engine's _walk raised" as a piece it had not written)."""
    planted3(pytester, "07_retain_graph", "saved", "unpacked.append(reattach(t, owner) if is_output else t)",
             "unpacked.append(reattach(t, self._owner) if is_output else t)")
    out = pytester.runpytest("--kata", "7", "-p", "no:randomly", "--tb=no").stdout.str()
    assert "(toposort.py, the model's code) raised AttributeError" in out and "look at what your pieces" in out, out


def test_a_matrix_printed_over_lines_is_one_line_with_its_brackets_closed():
    """numpy prints a matrix over several lines, without commas: the one line keeps expected
    and got, each cut after its first elements (the fourth walk read a line cut at the
    matrix's first newline, with no "got")."""
    import numpy as np

    from plugin.grading.one_line import one_line

    expected, got = np.arange(12.0).reshape(3, 4) / 7, np.arange(12.0).reshape(3, 4) / 9
    line = one_line(f"gradient_penalty differs from torch's\n  expected {expected}\n  got      {got}")
    assert "expected [[0. 0.14285714" in line and "got [[0. 0.11111111" in line, line
    assert line.count("[") == line.count("]") and "\n" not in line, line


def test_a_literal_the_test_computes_with_is_kept_in_the_source():
    """`expected = (MODIFIED + "...")` is data, not the test's message: replaced, it read as
    the value expected (the fourth walk); an assert's message is still left out."""
    from plugin.grading.shown_source import SAID, without_said

    message = "torch says: one of the variables needed for gradient computation has been modified by an inplace operation"
    lines = ['    expected = (MODIFIED + "one of the variables needed for gradient computation")',
             '    assert ok, "one of the variables needed for gradient computation has been modified"']
    shown = without_said(lines, message)
    assert shown[0] == lines[0] and shown[1] == f"    assert ok, {SAID}", shown


def test_a_drawn_case_is_shown_once_by_its_arguments(pytester):
    """A @given test's failing case: pytest shows its arguments above the test's source, and
    hypothesis's "Falsifying example" said them again (the fourth walk, kata 03)."""
    out = graded2(pytester, "03", "random_graphs").stdout.str()
    section = failure_shown(out)
    assert "Falsifying example" not in section, section
    assert re.search(r"^\w+ = ", section, re.M), section  # the arguments, as pytest shows them


def test_a_statement_over_several_lines_is_quoted_whole(tmp_path):
    """`raise RuntimeError(` and its words on the next line: the line quoted under the sentence
    is the whole statement (the fourth walk read only `raise RuntimeError(`)."""
    from plugin.grading.blame import _Frame

    path = tmp_path / "piece.py"
    path.write_text('def piece():\n    raise RuntimeError(\n        f"element {index} of tensors"\n    )\n')
    frame = _Frame.__new__(_Frame)
    frame.path, frame.line = path, 2
    assert frame.source == 'raise RuntimeError(f"element {index} of tensors")', frame.source


def test_a_tests_docstring_is_kept_whole():
    """A docstring that quotes torch's words is the test's explanation: `torch: "(message
    below)".` read as a placeholder (the fifth walk); the assert's words are still left out."""
    from plugin.grading.shown_source import SAID, without_said

    message = "element 0 of tensors does not require grad and does not have a grad_fn"
    lines = ['        """torch: "element 0 of tensors does not require grad and does not have a grad_fn"."""',
             '        """Or over lines:',
             '        "element 0 of tensors does not require grad and does not have a grad_fn"',
             '        """',
             '>       assert ok, "element 0 of tensors does not require grad and does not have a grad_fn"']
    shown = without_said(lines, message)
    assert shown[:4] == lines[:4] and shown[4] == f">       assert ok, {SAID}", shown


def test_a_learners_line_quoting_the_words_said_keeps_their_start():
    """The learner's raise line under the sentence that says its words: still recognizably the
    line they wrote (`"(the words above)"` read as a misquote: the fifth walk), not the words
    twice; an f-string's words too, whatever values filled them."""
    from plugin.grading.shown_source import its_start, without_said

    words = "grad can be implicitly created only for scalar outputs"
    (shown,) = without_said([f'  at seeding.py, line 3: raise RuntimeError("{words}")'], words, its_start)
    assert 'raise RuntimeError("grad can be implicitly …")' in shown and words not in shown, shown
    said = "element 1 of tensors does not require grad and does not have a grad_fn"
    (shown,) = without_said(['  at seeding.py, line 5: raise RuntimeError(f"element {i} of tensors does not '
                             'require grad and does not have a grad_fn")'], said, its_start)
    assert 'raise RuntimeError(f"element {i} of tensors …")' in shown and "does not have" not in shown, shown


def test_a_method_of_self_alone_is_not_said_to_be_called_with_nothing(pytester):
    """unpack() without its released check raises on a freed graph: the sentence names unpack
    and its line, and no filler about its (absent) arguments (the fifth walk)."""
    planted3(pytester, "07_retain_graph", "saved", "        if self._released:\n            raise RuntimeError(FREED_MESSAGE)\n", "")
    out = pytester.runpytest("--kata", "7", "-p", "no:randomly", "-k", "not speed").stdout.str()
    assert "your unpack raised TypeError" in out, out
    assert "called with no arguments" not in out and "was called with \n" not in out, out


def test_a_piece_run_by_its_own_node_is_not_named_again_as_the_caller(pytester):
    """accumulate_grad raising (its None case left out) is called by its own AccumulateGrad
    node: 'by your accumulate_grad (AccumulateGrad)' only said its name a third time (the
    sixth walk)."""
    planted3(pytester, "04_accumulation", "accumulate",
             "    if leaf._grad is None:\n", "    if create_graph:\n        leaf.grad = leaf.grad + grad\n    elif leaf._grad is None:\n")
    out = pytester.runpytest("--kata", "4", "-p", "no:randomly", "-k", "not speed").stdout.str()
    assert "your accumulate_grad raised TypeError" in out or "in your accumulate_grad" in out, out
    assert "by your accumulate_grad" not in out, out
