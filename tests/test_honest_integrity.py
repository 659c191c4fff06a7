"""Integrity beyond imports (issue 13, section 2): a learner piece that hands its work to the
reference's own piece, by any road, is flagged (statically where the file says so, at run
time however it got there); a learner file that replaces the grader's own functions flags
the whole run. On a copy of kata 03."""
import json
import textwrap

import pytest

from kit import kata_row, write_learner_file
from test_plugin import KAHN

from plugin import manifest
from plugin.guards import integrity
from plugin.grading.oracle import Oracle

KATA = "03_toposort"
ENGINE = "from plugin import engine as ag\n"

# Each hands the work to the reference; the static check names the road.
STATIC = {
    "the seam's table": (ENGINE + "def topological_order(roots):\n"
                         "    return ag.pieces.REFERENCE['topological_order'](roots)\n",
                         "reaches the reference's pieces (pieces.REFERENCE, line 3)"),
    "the active piece kept at import": (ENGINE + "mine = ag.pieces.active.topological_order\n"
                                        "def topological_order(roots):\n    return mine(roots)\n",
                                        "reaches the reference's own topological_order (pieces.active.topological_order, line 2)"),
    "getattr on the active pieces": (ENGINE + "def topological_order(roots):\n"
                                     "    return getattr(ag.pieces.active, 'topological_order')(roots)\n",
                                     "reaches the reference's own topological_order (pieces.active.topological_order, line 3)"),
    "importlib": ("import importlib\ndef topological_order(roots):\n"
                  "    return importlib.import_module('reference.solutions.toposort').topological_order(roots)\n",
                  "imports reference.solutions.toposort (line 3)"),
    "__import__ of torch": ("def topological_order(roots):\n    torch = __import__('torch')\n    return []\n",
                            "imports torch (line 2)"),
    "a computed name": ("import importlib\nNAME = 'refer' + 'ence'\ndef topological_order(roots):\n"
                        "    return importlib.import_module(NAME).pieces\n",
                        "imports a module by a computed name (import_module, line 4)"),
    "exec": ("def topological_order(roots):\n    scope = {}\n"
             "    exec('from reference.solutions.toposort import topological_order as t', scope)\n"
             "    return scope['t'](roots)\n",
             "runs code from a string (exec, line 3)"),
}


@pytest.mark.parametrize("road", sorted(STATIC))
def test_a_file_that_reaches_the_reference_is_flagged(tmp_path, monkeypatch, road):
    source, flag = STATIC[road]
    folder = tmp_path / "katas" / KATA
    folder.mkdir(parents=True)
    (folder / "toposort.py").write_text(source)
    monkeypatch.setattr(manifest, "KATAS_DIR", tmp_path / "katas")
    assert flag in integrity.import_flags(manifest.find_kata("3"))


def test_the_other_katas_pieces_through_active_are_not_flagged(tmp_path, monkeypatch):
    folder = tmp_path / "katas" / "06_backward_pass"
    folder.mkdir(parents=True)
    (folder / "backward_pass.py").write_text(
        ENGINE + "def run_backward(roots, grads, retain_graph, create_graph, inputs=None):\n"
        "    order = ag.pieces.active.topological_order([r.grad_fn for r in roots])\n"
        "    return ag.pieces.active.merge_grads(order, order)\n"
        "import re\nPATTERN = re.compile('cuda:[0-9]+')  # not the builtin compile\n")
    monkeypatch.setattr(manifest, "KATAS_DIR", tmp_path / "katas")
    assert integrity.import_flags(manifest.find_kata("6")) == []


# Roads the static check cannot see: only the run-time tripwire finds them.
HIDDEN = {
    "the seam's table, by a computed name": (
        ENGINE + "def topological_order(roots):\n"
        "    table = getattr(ag.pieces, 'REF'.lower().upper() + 'ERENCE'.lower().upper())\n"
        "    return table['topological' + '_order'](roots)\n"),
    "the active piece kept at import, by a computed name": (
        ENGINE + "theirs = getattr(ag.pieces.active, 'topological' + '_order')\n"
        "def topological_order(roots):\n    return theirs(roots)\n"),
}


def test_a_piece_that_runs_the_reference_is_flagged_at_run_time(checkout):
    for road, source in HIDDEN.items():
        write_learner_file(checkout, KATA, "toposort.py", source)
        assert integrity.import_flags(manifest.find_kata("3")) == [], road  # hidden from the static check
        result = checkout.runpytest("--kata", "3", "-p", "no:randomly", "--kata-report", "r.json")
        assert kata_row(result, KATA)[1] == "in progress", (road, result.stdout.str())
        assert "flagged: runs the reference's own topological_order" in result.stdout.str(), road
        entry = next(e for e in json.loads((checkout.path / "r.json").read_text())["katas"] if e["kata"] == KATA)
        assert entry["status"] != "done" and any("topological_order" in f for f in entry["flags"])


# Roads past the seam's tables (issue 26, point 4), each hidden from the static check: the
# reference's functions themselves are wired, katas 09 and 10 included.
RULES = ("add_backward sub_backward mul_backward div_backward neg_backward pow_backward exp_backward "
         "log_backward sigmoid_backward tanh_backward relu_backward").split()
ANY_ROAD = {
    "sys.modules": ("03_toposort", "toposort.py", ENGINE + "import sys\n\n\ndef topological_order(roots):\n"
                    "    return sys.modules['reference.solutions.toposort'].topological_order(roots)\n",
                    "topological_order"),
    "sys.modules by a name computed from the engine": ("01_elementwise_rules", "rules.py", ENGINE + textwrap.dedent(f'''
        import sys

        _rules = sys.modules[ag.Tensor.__module__.split(".")[0] + ".solutions.rules"]
        for _name in {RULES!r}:
            globals()[_name] = lambda ctx, grad, _name=_name: getattr(_rules, _name)(ctx, grad)
        '''), "add_backward"),
    "the builtin import, by computed names": ("09_higher_order", "higher_order.py", textwrap.dedent('''
        import builtins

        _theirs = getattr(builtins, "__imp" + "ort__")("refer" + "ence.solutions.higher_order", fromlist=["x"])


        def jacobian(f, x):
            return _theirs.jacobian(f, x)


        def hessian_vector_product(f, x, v):
            return _theirs.hessian_vector_product(f, x, v)


        def gradient_penalty(critic, real, fake, alpha):
            return _theirs.gradient_penalty(critic, real, fake, alpha)
        '''), "jacobian"),
    "the reference's piece as the learner's": ("03_toposort", "toposort.py", ENGINE + "import sys\n\n"
                                               "topological_order = sys.modules['reference.solutions.toposort'].topological_order\n",
                                               "topological_order"),
    "a class that extends the reference's": ("07_retain_graph", "saved.py", ENGINE + "import sys\n\n\n"
                                             "class SavedTensors(sys.modules['reference.solutions.saved'].SavedTensors):\n"
                                             "    pass\n", "SavedTensors"),
}


@pytest.mark.parametrize("road", sorted(ANY_ROAD))
def test_the_reference_reached_by_any_road_is_flagged(pytester, road):
    from kit import make_checkout

    kata, filename, source, name = ANY_ROAD[road]
    make_checkout(pytester, katas=[kata])
    write_learner_file(pytester, kata, filename, source)
    assert integrity.import_flags(manifest.find_kata(kata)) == [], road  # hidden from the static check
    result = pytester.runpytest("-p", "no:randomly", "-k", "not speed", "--kata-in-process", "--kata-report", "r.json")
    out = result.stdout.str()
    assert kata_row(result, kata)[1] == "in progress", out
    assert f"flagged: runs the reference's own {name}" in out, out
    entry = next(e for e in json.loads((pytester.path / "r.json").read_text())["katas"] if e["kata"] == kata)
    assert entry["status"] != "done" and any(name in f for f in entry["flags"]), entry


def test_the_kits_own_use_of_the_reference_trips_nothing(pytester):
    """A correct kata 03 that fails a case (the oracle's diagnosis sorts with the reference's
    toposort) and whose speed is timed against the reference's: no flag."""
    from kit import learner_source, make_checkout

    make_checkout(pytester, katas=["03_toposort", "09_higher_order"])
    write_learner_file(pytester, "03_toposort", "toposort.py", learner_source("toposort"))
    write_learner_file(pytester, "09_higher_order", "higher_order.py", learner_source("higher_order"))
    result = pytester.runpytest("-p", "no:randomly", "--kata-in-process")
    out = result.stdout.str()
    assert kata_row(result, "03_toposort")[1] == "done" and kata_row(result, "09_higher_order")[1] == "done", out
    assert "flagged" not in out, out


def test_a_file_that_replaces_the_graders_functions_flags_the_run(checkout):
    original = Oracle.check_grads
    write_learner_file(checkout, KATA, "toposort.py", KAHN + textwrap.dedent('''
        from plugin.grading.oracle import Oracle
        Oracle.check_grads = lambda *args, **kwargs: None
    '''))
    result = checkout.runpytest("--kata", "3", "-p", "no:randomly", "--kata-report", "r.json")
    out = result.stdout.str()
    assert kata_row(result, KATA)[1] == "in progress", out
    assert "This run is flagged: the grader's own functions or settings were changed: plugin.grading.oracle.Oracle.check_grads" in out
    data = json.loads((checkout.path / "r.json").read_text())
    assert data["flags"] == ["the grader's own functions or settings were changed: plugin.grading.oracle.Oracle.check_grads"]
    assert data["summary"]["done"] == 0
    assert Oracle.check_grads is original  # put back when the run ended


def test_a_correct_file_is_neither_flagged_nor_tripped(checkout):
    write_learner_file(checkout, KATA, "toposort.py", ENGINE + KAHN)
    result = checkout.runpytest("--kata", "3", "-p", "no:randomly", "--kata-report", "r.json")
    assert kata_row(result, KATA)[1] == "done", result.stdout.str()
    assert not [line for line in result.outlines if "flagged:" in line or "is flagged" in line], result.stdout.str()
    assert json.loads((checkout.path / "r.json").read_text())["flags"] == []


def test_under_xdist_the_controller_hears_both_run_time_checks(checkout, monkeypatch):
    from kit import REPO

    monkeypatch.setenv("PYTHONPATH", str(REPO))
    write_learner_file(checkout, KATA, "toposort.py", HIDDEN["the seam's table, by a computed name"] + textwrap.dedent('''
        from plugin.grading.oracle import Oracle
        Oracle.check_grads = lambda *args, **kwargs: None
    '''))
    result = checkout.runpytest_subprocess("-n", "2", "--kata-keep-workers", "--kata", "3", "--kata-report", "r.json",
                                           timeout=300)
    assert kata_row(result, KATA)[1] == "in progress", result.stdout.str()
    data = json.loads((checkout.path / "r.json").read_text())
    entry = next(e for e in data["katas"] if e["kata"] == KATA)
    assert "runs the reference's own topological_order" in entry["flags"]
    assert data["flags"] == ["the grader's own functions or settings were changed: plugin.grading.oracle.Oracle.check_grads"]
