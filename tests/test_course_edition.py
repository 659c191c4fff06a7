"""A course edition (`katas edition`): a student copy of the kit without the model solutions
of the katas not released yet, graded on the student's own pieces where they are missing.

An edition with katas 01-03 released is written once for the module; each grading test
works on a copy of it and runs pytest in that copy's folder, with its own rootdir, as a
student's clone runs it.
"""
import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kit import REPO, learner_source, table_rows
from plugin import manifest
from plugin.edition import RECORD
from plugin.shipped import stub_copy
from plugin.workshop import edition as writer

RELEASED = (1, 2, 3)
UNRELEASED = [k for k in manifest.ALL_KATAS if k.number not in RELEASED]
PIECE_FILES = {k.slug: k for k in manifest.ALL_KATAS}
MIN_LINE = 20  # shorter body lines (`return grad`, `else:`) say nothing of a solution
# Lines of unreleased solutions that the kit's own learner-facing files or core share on
# purpose, each with where and why; any other line found fails the test.
SHARED_ON_PURPOSE = {
    "if node.retained is not None:": "kata 06's last hint shows the retained-gradient step",
    "with set_grad_enabled(create_graph):": "the core's grad() does it too (reference/autograd.py)",
    "scores = critic(mixed)": "kata 09's lesson shows the gradient penalty's formula on a small critic",
    "for _ in range(steps):": "the capstone's tests train the same way",
    "loss1.backward(retain_graph=True)": "kata 07's tests show the two-losses pattern",
    "losses.append(loss.item())": "kata 08's transfer test trains the same way",
    "params = [ag.tensor(w, requires_grad=True) for w in weights]": "the capstone's tests make their weights so",
}


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("course") / "edition"
    assert writer.main([str(out), "--released", "01-03"]) == 0
    return out


# --- what an edition holds ---------------------------------------------------------------------

def test_the_edition_holds_the_katas_and_the_released_solutions_only(edition):
    solutions = sorted(p.name for p in (edition / "reference" / "solutions").iterdir())
    assert solutions == ["__init__.py", "rules.py", "shapes.py", "toposort.py"]
    for kata in manifest.ALL_KATAS:
        folder = edition / "katas" / kata.slug
        assert (folder / "README.md").is_file() and (folder / "hints.md").is_file()
        assert sorted(p.name for p in folder.glob("test_*.py")) == sorted(
            p.name for p in kata.folder.glob("test_*.py"))
        assert (folder / kata.learner_file).read_bytes() == stub_copy(kata).read_bytes()  # as shipped
    for present in ("README.md", "pyproject.toml", "conftest.py", "docs/instructors.md", "plugin/__init__.py",
                    "reference/tensor.py"):
        assert (edition / present).is_file(), present
    for absent in ("tests", "benchmarks", ".ci"):
        assert not (edition / absent).exists(), absent
    assert not [p for p in edition.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"
                if ".git" not in p.parts]
    assert '"released": [\n    1,\n    2,\n    3\n  ]' in (edition / RECORD).read_text()


def test_the_edition_is_a_fresh_repository(edition):
    log = subprocess.run(["git", "log", "--format=%s"], cwd=edition, capture_output=True, text=True, check=True)
    assert log.stdout.splitlines() == ["Autograd Katas, course edition (released: 01, 02, 03)"]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=edition, capture_output=True, text=True, check=True)
    assert status.stdout == ""


def solution_lines(kata):
    """The normalised body lines of every function of the kata's model solution (methods too),
    docstrings left out: what an edition must not contain anywhere."""
    source = (REPO / kata.reference_module).read_text(encoding="utf-8")
    lines = source.splitlines()
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
            body = body[1:]  # the docstring
        if not body:
            continue
        for line in lines[body[0].lineno - 1: body[-1].end_lineno]:
            text = " ".join(line.split())
            if len(text) > MIN_LINE:
                found.add(text)
    return found


def leaks(folder, katas):
    """{(kata, line): a file of `folder` holding it}: lines of the katas' solutions found."""
    wanted = {line: kata.slug for kata in katas for line in solution_lines(kata) if line not in SHARED_ON_PURPOSE}
    found = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or ".git" in path.relative_to(folder).parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            text = path.read_bytes().decode("latin-1")
        for line in text.splitlines():
            normal = " ".join(line.split())
            if normal in wanted:
                found.setdefault((wanted[normal], normal), str(path.relative_to(folder)))
    return found


def test_no_line_of_an_unreleased_solution_is_anywhere_in_the_edition(edition):
    assert all(solution_lines(k) for k in UNRELEASED)  # the grep has something to look for
    found = leaks(edition, UNRELEASED)
    assert not found, "unreleased solution lines in the edition:\n" + "\n".join(
        f"  {kata}: {line!r} in {where}" for (kata, line), where in sorted(found.items()))


def test_the_grep_finds_a_solution_left_in(edition, tmp_path):
    """The check above can fail: a solution of kata 06 left anywhere (here under docs/) is found."""
    copy = tmp_path / "edition"
    shutil.copytree(edition / "docs", copy / "docs")
    shutil.copy(REPO / "reference" / "solutions" / "backward_pass.py", copy / "docs" / "notes.py")
    kata = PIECE_FILES["06_backward_pass"]
    assert {k for k, _ in leaks(copy, UNRELEASED)} == {kata.slug}
    assert len(leaks(copy, [kata])) == len(solution_lines(kata) - set(SHARED_ON_PURPOSE))


# --- refusals ----------------------------------------------------------------------------------------

def test_an_edition_is_never_written_over_a_folder_that_is_not_empty(tmp_path, capsys):
    out = tmp_path / "course"
    out.mkdir()
    (out / "mine.txt").write_text("my notes")
    assert writer.main([str(out), "--released", "1"]) == 2
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    assert (out / "mine.txt").read_text() == "my notes"
    assert "exists and is not empty" in capsys.readouterr().err


def test_a_kata_that_does_not_exist_is_refused_before_anything_is_written(tmp_path, capsys):
    for spec in ("01,42", "elementwise_rules,nosuch", "3-1"):
        assert writer.main([str(tmp_path / "course"), "--released", spec]) == 2
        assert not (tmp_path / "course").exists()
    err = capsys.readouterr().err
    assert "no such kata '42'" in err and "no such kata 'nosuch'" in err and "01_elementwise_rules" in err
    assert "the range '3-1' is empty" in err


def test_ranges_names_and_numbers_name_the_same_katas():
    assert writer.released_katas("1-3") == writer.released_katas("01,02,03") == writer.released_katas(
        "elementwise_rules, shapes,03_toposort")
    assert [k.number for k in writer.released_katas("1-2,5,2")] == [1, 2, 5]
    assert writer.released_katas("") == []


# --- the core without kata 08's model solution --------------------------------------------------------

def test_ag_device_is_the_active_device_piece_and_tensors_keep_the_cores_record():
    """The core imports no model solution: `ag.device` is whichever Device piece is active (the
    model solution's in the kit, a learner's while it is graded), and the engine keeps the
    core's own record of a tensor's device. `t.device` is a device of the active piece (as
    torch's is a torch.device: equal to `ag.device(...)` both ways, whatever the piece's
    __eq__ knows), the record itself while the piece is a stub."""
    import reference as ag
    from plugin import engine
    from reference.device_record import DeviceRecord

    model = ag.pieces.REFERENCE["Device"]
    assert ag.device is engine.device is model

    class Mine(model):
        pass

    with ag.pieces.swapped({"Device": Mine}):
        assert ag.device is Mine and engine.device is Mine
        moved = ag.tensor([1.0]).to(Mine("cuda:1"))
        assert type(moved._device) is DeviceRecord and type(moved.device) is Mine
        assert moved._device == "cuda:1" and moved._device == Mine("cuda", 1) and moved._device != "cuda:0"
        assert Mine("cuda", 1) == moved.device and moved.device == Mine("cuda", 1) and moved.device != "cuda:0"
        assert moved._device != "gpu"  # no device at all: not equal, no error
        assert hash(moved._device) == hash(Mine("cuda:1"))
        assert (str(moved._device), repr(moved._device)) == ("cuda:1", "device(type='cuda', index=1)")
        assert repr(ag.tensor([1.0]).device) == "device(type='cpu')"

    class Stub:  # kata 08 not written yet
        def __init__(self, spec, index=None):
            raise NotImplementedError("Device.__init__: see katas/08_devices/README.md")

    with ag.pieces.swapped({"Device": Stub}):
        assert type(ag.tensor([1.0]).device) is DeviceRecord and str(ag.tensor([1.0]).device) == "cpu"
    assert ag.device is model


# --- grading in the edition ------------------------------------------------------------------------

def grade(folder, *args):
    """pytest in the edition's folder, as a student runs it: its own rootdir, the engine and
    plugin of the edition (not this checkout's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--rootdir", str(folder), "-p", "no:randomly", "-p", "no:cacheprovider",
         *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )
    rows = {slug: (tests, status) for slug, tests, status in table_rows(result.stdout.splitlines())}
    return result, rows


@pytest.fixture
def student(edition, tmp_path):
    """A copy of the edition, as a student's clone."""
    folder = tmp_path / "student"
    shutil.copytree(edition, folder, ignore=shutil.ignore_patterns(".git"))
    return folder


def write_pieces(folder, *slugs):
    """The model solutions of katas `slugs` written as the student's files (a student who
    has written those katas)."""
    for slug in slugs:
        kata = PIECE_FILES[slug]
        module = Path(kata.reference_module).stem
        (folder / "katas" / slug / kata.learner_file).write_text(learner_source(module), encoding="utf-8")


ENGINE_PASS = ("05_seeding", "06_backward_pass", "07_retain_graph", "08_devices")  # what kata 04's tests run on
WRONG_MERGE = ("    return existing + incoming\n", "    return incoming\n")  # forgets the gradient already there


def test_the_engine_of_the_edition_is_its_own(student):
    check = subprocess.run([sys.executable, "-c", "import reference, plugin; print(reference.__file__, plugin.__file__)"],
                           cwd=student, capture_output=True, text=True, check=True)
    assert check.stdout.split() == [str(student / "reference" / "__init__.py"), str(student / "plugin" / "__init__.py")]


def test_a_correct_kata_04_is_done_on_the_students_own_pieces(student):
    write_pieces(student, "04_accumulation", *ENGINE_PASS)
    result, rows = grade(student, "--kata", "4")
    out = result.stdout
    assert result.returncode == 0, out
    tests, status = rows["04_accumulation"]
    assert status == "done", out
    assert tests.split("/")[0] == tests.split("/")[1]
    row = next(line for line in result.stdout.splitlines() if line.startswith("  04_accumulation"))
    assert row.rstrip().endswith("timed by the autograder"), row  # no model solution to time against
    assert "graded with your own pieces of katas 05, 06, 07, 08" in out
    assert "done: its model solution comes with a later release of the course" in out


def test_a_wrong_kata_04_is_not_done(student):
    write_pieces(student, "04_accumulation", *ENGINE_PASS)
    path = student / "katas" / "04_accumulation" / "accumulate.py"
    source = path.read_text()
    assert WRONG_MERGE[0] in source  # the mistake is planted where the model solution sums
    path.write_text(source.replace(WRONG_MERGE[0], WRONG_MERGE[1]))
    result, rows = grade(student, "--kata", "4")
    assert result.returncode == 1, result.stdout
    assert rows["04_accumulation"][1] == "in progress", result.stdout
    assert "INTERNALERROR" not in result.stdout + result.stderr


def test_a_kata_that_needs_a_piece_not_written_yet_is_blocked_naming_it(student):
    """A student who wrote kata 04 only, graded as a fresh clone runs it (plain `pytest`,
    every kata): no failure, the table, kata 04 not done but blocked, naming the piece."""
    write_pieces(student, "04_accumulation")  # kata 04 is right, but 05-08 are still stubs
    result, rows = grade(student)
    out = result.stdout
    assert result.returncode == 0, out  # to-dos, not failures
    assert "failed" not in out.splitlines()[-1] and "INTERNALERROR" not in out + result.stderr, out
    assert sorted(rows) == [k.slug for k in manifest.ALL_KATAS], out
    assert rows["04_accumulation"][1] != "done", out
    assert all(status == "not started" for slug, (_, status) in rows.items() if slug != "04_accumulation"), out
    blocked = next(line.strip() for line in out.splitlines() if line.strip().startswith("blocked: needs "))
    piece, kata = blocked.split()[2], blocked.split()[5]
    assert kata in ENGINE_PASS, blocked
    assert piece.split(".")[0] in PIECE_FILES[kata].pieces, blocked  # a piece of that kata, by name
    assert "not written yet" in blocked and "Traceback" not in out


# --- the autograder side, and releases --------------------------------------------------------------

def test_the_autograder_copy_grades_a_submission_against_the_full_reference(tmp_path):
    """`katas edition --autograder`: the full kit with setup.sh and run_autograder at its top,
    as Gradescope unpacks the zip in /autograder/source; a student's kata 04 alone is graded on
    the reference for the rest (no blocked kata), and results.json follows the schema."""
    from test_workshop_cli import SCHEMA, validate

    root = tmp_path / "autograder"
    assert writer.main([str(root / "source"), "--autograder"]) == 0
    source = root / "source"
    assert (source / "setup.sh").is_file() and os.access(source / "run_autograder", os.X_OK)
    assert sorted(p.name for p in (source / "reference" / "solutions").glob("*.py")) == sorted(
        [Path(k.reference_module).name for k in manifest.ALL_KATAS] + ["__init__.py"])
    assert not (source / "tests").exists() and not (source / RECORD).exists()
    submitted = root / "submission" / "katas" / "04_accumulation"
    submitted.mkdir(parents=True)
    (submitted / "accumulate.py").write_text(learner_source("accumulate"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    subprocess.run([str(source / "run_autograder")], env=dict(env, AUTOGRADER_ROOT=str(root), PYTHON=sys.executable,
                                                             PYTHONPATH=str(source)),
                   capture_output=True, text=True, timeout=600, check=True)
    results = json.loads((root / "results" / "results.json").read_text())
    validate(results, SCHEMA)
    scores = {t["name"]: (t["score"], t["max_score"]) for t in results["tests"]}
    assert scores["04_accumulation"] == (10, 10), results
    assert scores["05_seeding"] == (0, 10)


def test_a_release_adds_the_model_solution_and_never_touches_the_students_files(edition, tmp_path):
    folder = tmp_path / "student"
    shutil.copytree(edition, folder)
    mine = folder / "katas" / "04_accumulation" / "accumulate.py"
    mine.write_text("# my own work in progress\n")
    before = {p: p.read_bytes() for p in (folder / "katas").rglob("*") if p.is_file()}
    assert writer.release_main(["4", str(folder)]) == 0
    assert {p: p.read_bytes() for p in (folder / "katas").rglob("*") if p.is_file()} == before
    assert (folder / "reference" / "solutions" / "accumulate.py").read_bytes() == (
        REPO / "reference" / "solutions" / "accumulate.py").read_bytes()
    assert json.loads((folder / RECORD).read_text())["released"] == [1, 2, 3, 4]
    log = subprocess.run(["git", "log", "--format=%s", "--name-only", "-1"], cwd=folder, capture_output=True,
                         text=True, check=True).stdout.split()
    assert "reference/solutions/accumulate.py" in log and "edition.json" in log and len(log) == 9, log
    status = subprocess.run(["git", "status", "--porcelain"], cwd=folder, capture_output=True, text=True).stdout
    assert status.strip() == "M katas/04_accumulation/accumulate.py"  # the student's change, left as it was
    assert writer.release_main(["42", str(folder)]) == 2
    assert writer.release_main(["5", str(tmp_path)]) == 2  # not an edition
    assert not (folder / "reference" / "solutions" / "seeding.py").exists()
