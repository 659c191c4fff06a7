"""Kata 10 (capstone) through the grading plugin, on a copy of every kata (pytester): on the
stubs it names the katas to finish first; with every other kata's reference source planted as
the learner's it runs on learner pieces and passes."""
from kit import REPO, RECURSIVE_TOPOSORT, assert_done, kata_row, learner_source, pointed_message, write_learner_file

SLUG = "10_capstone"  # not KATA: the checkout fixture then copies every kata

# the learner file and reference module of each kata with engine pieces
PIECE_KATAS = {
    "01_elementwise_rules": ("rules.py", "rules"),
    "02_shapes": ("shapes.py", "shapes"),
    "03_toposort": ("toposort.py", "toposort"),
    "04_accumulation": ("accumulate.py", "accumulate"),
    "05_seeding": ("seeding.py", "seeding"),
    "06_backward_pass": ("backward_pass.py", "backward_pass"),
    "07_retain_graph": ("saved.py", "saved"),
    "08_devices": ("devices.py", "devices"),
}


def plant_every_kata(checkout):
    for folder, (filename, module) in PIECE_KATAS.items():
        if (checkout.path / "katas" / folder).is_dir():
            write_learner_file(checkout, folder, filename, learner_source(module))


def capstone_reference():
    return learner_source("capstone")


def test_on_the_stubs_every_capstone_test_names_the_katas_to_finish(checkout):
    result = checkout.runpytest("--kata", "10", "-rs")
    out = result.stdout.str()
    assert result.ret == 0, out
    outcomes = result.parseoutcomes()
    assert not {"passed", "failed", "error", "errors"} & set(outcomes), outcomes
    assert outcomes.get("todo", 0) >= 10
    tests, status = kata_row(result, SLUG)
    assert status == "not started" and tests.startswith("0/") and int(tests[2:]) >= 10, (tests, status)
    assert "the capstone runs on your whole engine: finish katas 01, 02, 03, 04, 05, 06, 07" in out
    assert "(stubs left: 01, 02, 03, 04, 05, 06, 07" in out
    assert "Traceback" not in out


def test_the_reference_solution_is_done(checkout):
    assert_done(checkout.runpytest("--kata", "10", "--solution", "reference", "-p", "no:randomly"), SLUG)


def test_on_every_learner_piece_the_capstone_runs_and_passes(checkout):
    plant_every_kata(checkout)
    write_learner_file(checkout, SLUG, "capstone.py", capstone_reference())
    result = checkout.runpytest("--kata", "10", "-p", "no:randomly")
    assert_done(result, SLUG)
    assert "flagged: " not in result.stdout.str()


def test_one_kata_left_is_named_and_a_sequential_backward_without_retain_fails(checkout):
    plant_every_kata(checkout)
    # 04 still a stub: the capstone waits for it alone
    (checkout.path / "katas" / "04_accumulation" / "accumulate.py").write_text(
        (REPO / "katas" / "04_accumulation" / "accumulate.py").read_text())
    wrong = capstone_reference().replace("loss1.backward(retain_graph=True)", "loss1.backward()")
    assert "loss1.backward()\n" in wrong
    write_learner_file(checkout, SLUG, "capstone.py", wrong)
    result = checkout.runpytest("--kata", "10")
    out = result.stdout.str()
    assert result.ret == 0
    assert "finish katas 04 first (stubs left: 04)" in out
    # 04 finished: now the capstone runs, and the missing retain_graph is told
    write_learner_file(checkout, "04_accumulation", "accumulate.py", learner_source("accumulate"))
    result = checkout.runpytest("--kata", "10", "-v", "-p", "no:randomly")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, SLUG)[1] == "in progress"
    assert "test_multitask_gradients_equal_torchs[multitask_sequential] FAILED" in out
    assert "the first backward must keep them (retain_graph=True)" in out
    assert "test_multitask_gradients_equal_torchs[multitask_summed] PASSED" in out




def test_a_recursive_toposort_fails_the_deep_chain_then_blocks_once_graded(checkout):
    plant_every_kata(checkout)
    write_learner_file(checkout, SLUG, "capstone.py", capstone_reference())
    write_learner_file(checkout, "03_toposort", "toposort.py", RECURSIVE_TOPOSORT)
    # never graded, no stubs: trusted, and the capstone's deep chain finds the recursion
    result = checkout.runpytest("--kata", "10", "-k", "deep_chain")
    assert result.ret == 1
    assert "use an explicit stack or queue instead of recursion" in result.stdout.str()  # in full, above
    line = next(l for l in result.outlines if "first failure" in l).split(": ", 1)[1]
    assert pointed_message(result, line).startswith("recursed too deep (RecursionError): use an explicit stack")
    # graded in progress (its own deep-chain test fails): the capstone now waits for kata 03
    assert kata_row(checkout.runpytest("--kata", "3", "-k", "not speed"), "03_toposort")[1] == "in progress"
    result = checkout.runpytest("--kata", "10", "-k", "deep_chain or loss_curve")
    assert result.ret == 0
    assert "finish katas 03 first (in progress at the last grading: 03)" in result.stdout.str()


def test_a_written_capstone_waiting_for_other_katas_says_blocked(checkout):
    """Issue 31.2: kata 10 showed "not started" while its file was written and waited for
    katas 01, 03, 06."""
    write_learner_file(checkout, "10_capstone", "capstone.py", capstone_reference())
    result = checkout.runpytest("--kata", "10", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    assert kata_row(result, "10_capstone")[1] == "blocked", result.stdout.str()
    assert "finish katas 01" in result.stdout.str()
