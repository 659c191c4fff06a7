"""Every mutant of the mutation suite, graded as a learner runs the kit: pytest's default
options (no --tb, no -x, no -k), serial and under -n 2 (issue 26, point 1).

The mutation suite proper (test_mutants_NN.py) stops each planted run at its first failure;
the grader crash of issue 26 needed a run that went on past it (the lesson's quadratic
toposort: the growth check's failure, then a time limit in the 100,000-deep chain). Here
every planted run goes to the end and must end as a run does: exit 1, the table printed, no
INTERNALERROR, and each planted kata not done.

To keep CI short, a checkout holds a different mutant in each kata and grades them all in one
run: batch i plants the i-th mutant of each of katas 01-09 (a kata whose mutants ran out keeps
its stub: a few to-dos). Even batches run serially in this process, odd ones under -n 2 in a
subprocess: every mutant is graded once, and both ways are exercised. The capstone runs on the
learner's whole engine, so its mutants are graded one run each, on a checkout where katas
01-08 hold correct solutions. Random cases are drawn as in the mutation suite (the `planted`
profile: fewer cases, no shrinking), which changes how many cases run, not how a run ends.
`AUTOGRAD_KATAS_MUTANTS=both` grades every batch both ways (twice the time) and every capstone
mutant (CI grades every fourth).
"""
import importlib
import os
import textwrap

import pytest

from kit import REPO, kata_row, learner_source, make_checkout, write_learner_file
from mutation import mutate
from test_kata_10 import plant_every_kata

PIECE_KATAS = range(1, 10)  # graded together; the capstone (10) needs the others done
BOTH_WAYS = os.environ.get("AUTOGRAD_KATAS_MUTANTS") == "both"


def plants(number):
    """(kata folder, learner file, [(correct source, mutant)]) of kata `number`'s suite."""
    module = importlib.import_module(f"test_mutants_{number:02d}")
    found = getattr(module, "PLANTS", None)
    if found is None:
        base = getattr(module, "SOURCE", None) or learner_source("devices")  # kata 08 names none
        found = [(base, mutant) for mutant in module.MUTANTS]
    return module.KATA, module.FILE, found


SUITES = [plants(number) for number in PIECE_KATAS]
BATCHES = [
    {kata: (filename, mutants[index]) for kata, filename, mutants in SUITES if index < len(mutants)}
    for index in range(max(len(mutants) for _, _, mutants in SUITES))
]
CAPSTONE = plants(10)
WAYS = ("serial", "-n 2")


def batch_ids():
    for index in range(len(BATCHES)):
        for way in (WAYS if BOTH_WAYS else [WAYS[index % 2]]):
            yield pytest.param(index, way, id=f"batch{index:02d}-{way.replace(' ', '')}")


# The planted profile for the subprocess runs (in this process, mutation.py registered it).
PROFILE = f"import sys\nsys.path.insert(0, {str(REPO / 'tests')!r})\nimport mutation  # noqa: F401,E402\n"


def grade(checkout, way, *options):
    if way == "serial":
        return checkout.runpytest("-p", "no:randomly", "--hypothesis-profile", "planted", *options)
    with open(checkout.path / "conftest.py", "a", encoding="utf-8") as conftest:
        conftest.write(PROFILE)
    return checkout.runpytest_subprocess("-n", "2", "-p", "no:randomly", "--hypothesis-profile", "planted",
                                         *options, timeout=900)


def assert_ends_as_a_run(result, planted):
    __tracebackhide__ = True
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out, out
    assert result.ret == 1, out
    assert "Autograd Katas" in out and "Progress: " in out, out
    for kata, name in planted.items():
        assert kata_row(result, kata)[1] != "done", f"{kata}: the mutant {name!r} came out done:\n{out}"


@pytest.mark.parametrize("index, way", list(batch_ids()))
def test_every_mutant_of_katas_01_to_09_under_default_options(pytester, index, way):
    make_checkout(pytester)
    planted = {}
    for kata, (filename, (base, mutant)) in BATCHES[index].items():
        write_learner_file(pytester, kata, filename, textwrap.dedent(mutate(base, mutant)))
        planted[kata] = mutant.name
    assert_ends_as_a_run(grade(pytester, way), planted)


# The capstone's mutants, one run each, cost more than all the batches of 01-09 per mutant:
# CI grades every fourth of them this way (each is graded by test_mutants_10 anyway);
# AUTOGRAD_KATAS_MUTANTS=both or =all grades them all.
CAPSTONE_PLANTS = CAPSTONE[2] if os.environ.get("AUTOGRAD_KATAS_MUTANTS") in ("both", "all") else CAPSTONE[2][::4]


@pytest.mark.parametrize("base, mutant", CAPSTONE_PLANTS, ids=[str(m) for _, m in CAPSTONE_PLANTS])
def test_every_capstone_mutant_under_default_options(pytester, base, mutant):
    kata, filename, _ = CAPSTONE
    make_checkout(pytester)
    plant_every_kata(pytester)
    write_learner_file(pytester, kata, filename, mutate(base, mutant))
    assert_ends_as_a_run(grade(pytester, "serial", "--kata", "10"), {kata: mutant.name})
