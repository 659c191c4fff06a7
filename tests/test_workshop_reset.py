"""Reset restores a kata's shipped stub and keeps the learner's file as a backup."""
import datetime
import shutil

import pytest

from kit import REPO
from plugin.workshop import reset
from plugin.state import STATUS_CACHE_KEY

KATA = "03_toposort"
STUB = (REPO / "katas" / KATA / "toposort.py").read_bytes()
MINE = b"def topological_order(roots):\n    return []  # my work\n"


@pytest.fixture
def clone(tmp_path):
    shutil.copytree(REPO / "katas" / KATA, tmp_path / "katas" / KATA,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_reset_keeps_a_backup_and_restores_the_stub(clone, capsys, pytester):
    # In pytester's folder, so that the statuses the grader remembers are written and read
    # by pytest's own cache, not by a path this test would share with reset.
    shutil.copytree(clone / "katas", pytester.path / "katas")
    learner = pytester.path / "katas" / KATA / "toposort.py"
    learner.write_bytes(MINE)
    pytester.makeini("[pytest]\n")
    cache = pytester.parseconfigure().cache
    cache.set(STATUS_CACHE_KEY, {KATA: "done", "01_elementwise_rules": "done"})

    assert reset.main(["toposort"], root=pytester.path) == 0
    backups = sorted(learner.parent.glob("toposort.py.bak-*"))
    assert [b.read_bytes() for b in backups] == [MINE]
    assert learner.read_bytes() == STUB
    assert cache.get(STATUS_CACHE_KEY, None) == {"01_elementwise_rules": "done"}  # no longer remembered done
    assert backups[0].name in capsys.readouterr().out

    # Already the stub: nothing to do, nothing written.
    assert reset.main(["3"], root=pytester.path) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert sorted(learner.parent.glob("toposort.py.bak-*")) == backups


def test_a_backup_never_clobbers_another(clone, monkeypatch):
    from plugin import manifest

    monkeypatch.setattr(manifest, "KATAS_DIR", clone / "katas")  # a kata's paths follow the root
    kata = manifest.find_kata("3")
    assert kata.path == clone / "katas" / KATA / "toposort.py"
    moment = datetime.datetime(2026, 1, 2, 3, 4, 5)
    for text in (b"first\n", b"second\n"):
        kata.path.write_bytes(text)
        reset.reset(kata, now=moment)
    first = kata.path.with_name("toposort.py.bak-20260102-030405")
    second = kata.path.with_name("toposort.py.bak-20260102-030405-2")
    assert (first.read_bytes(), second.read_bytes()) == (b"first\n", b"second\n")


def test_reset_refuses_unsaved_editor_changes_and_an_unwritable_backup(clone, monkeypatch, capsys):
    learner = clone / "katas" / KATA / "toposort.py"
    learner.write_bytes(MINE)
    swap = learner.with_name(".toposort.py.swp")
    swap.write_bytes(b"vim")
    assert reset.main(["3"], root=clone) == 1
    assert ".toposort.py.swp" in capsys.readouterr().err
    swap.unlink()
    monkeypatch.setattr(reset, "backup_path", lambda path, now=None: clone / "no" / "such" / "folder" / "x.bak-1")
    assert reset.main(["3"], root=clone) == 1
    assert "could not write the backup" in capsys.readouterr().err
    assert learner.read_bytes() == MINE  # nothing changed either time
    assert sorted(p.name for p in learner.parent.iterdir()) == sorted(
        p.name for p in (REPO / "katas" / KATA).iterdir() if p.name != "__pycache__")


def test_an_unknown_kata_is_a_usage_error(clone, capsys):
    assert reset.main(["nope"], root=clone) == 2
    assert "03_toposort" in capsys.readouterr().err

