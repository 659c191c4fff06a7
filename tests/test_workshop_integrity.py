"""The kit's record of its shipped test files and stubs, and the flags it raises."""
import hashlib

from kit import kata_row, write_learner_file
from plugin import manifest
from plugin import shipped as shipped_data
from plugin.guards import integrity
from plugin.shipped import regenerate as shipped
from test_plugin import KAHN

KATA = "03_toposort"


def test_the_shipped_hashes_and_stubs_match_the_katas():
    """Fails after a kata's tests or stub changed, or a kata was added, until
    `python -m plugin.shipped --update` is run."""
    problems = shipped.stale()
    assert not problems, "\n".join(problems + ["run: python -m plugin.shipped --update"])
    record = shipped_data.load_shipped()
    assert set(record["katas"]) == {k.slug for k in manifest.katas()}
    for kata in manifest.katas():
        assert shipped_data.stub_copy(kata).read_bytes() == kata.path.read_bytes()
        for name, digest in record["katas"][kata.slug]["tests"].items():
            assert hashlib.sha256((kata.folder / name).read_bytes()).hexdigest() == digest


def test_stale_records_are_named(tmp_path, monkeypatch):
    record = shipped.current_manifest()
    record["katas"]["03_toposort"]["tests"]["test_toposort.py"] = "0" * 64
    fake = tmp_path / "shipped.json"
    fake.write_text(__import__("json").dumps(record))
    monkeypatch.setattr(shipped_data, "SHIPPED", fake)
    monkeypatch.setattr(shipped_data, "installed_record_path", lambda: None)  # (its own test: test_honest_verdicts)
    assert shipped.stale() == ["shipped.json: the entry of 03_toposort is out of date"]
    kata = manifest.find_kata("3")
    assert integrity.tests_flags(kata, record) == ["test files changed: test_toposort.py"]


def test_windows_line_endings_are_not_a_change(tmp_path):
    unix, windows = tmp_path / "a.py", tmp_path / "b.py"
    unix.write_bytes(b"x = 1\ny = 2\n")
    windows.write_bytes(b"x = 1\r\ny = 2\r\n")
    assert shipped_data.file_hash(unix) == shipped_data.file_hash(windows)


def test_added_and_missing_test_files_are_flagged_in_the_table(checkout):
    folder = checkout.path / "katas" / "03_toposort"
    write_learner_file(checkout, "03_toposort", "toposort.py", KAHN)  # right, but graded by other tests
    (folder / "test_toposort_speed.py").unlink()
    write_learner_file(checkout, "03_toposort", "test_mine.py", "def test_mine():\n    pass\n")
    result = checkout.runpytest("--kata", "3", "-k", "single or mine")
    out = result.stdout.str()
    assert "flagged: test files added: test_mine.py" in out
    assert "flagged: test files missing: test_toposort_speed.py" in out
    assert kata_row(result, "03_toposort") == ("2/2", "in progress")


def test_update_refuses_to_ship_a_finished_solution_as_the_stub(tmp_path, monkeypatch):
    """Run on a learner's clone by mistake, --update would make their solution the "stub"."""
    import shutil

    import pytest

    shutil.copytree(manifest.KATAS_DIR, tmp_path / "katas",
                    ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    (tmp_path / "katas" / KATA / "toposort.py").write_text(KAHN)
    # The record goes to tmp_path: even if the guard failed, the kit's own stays as it is.
    record, stubs = tmp_path / "shipped.json", tmp_path / "stubs"
    monkeypatch.setattr(shipped_data, "SHIPPED", record)
    monkeypatch.setattr(shipped_data, "STUBS_DIR", stubs)
    previous = manifest.use_root(tmp_path)
    try:
        with pytest.raises(SystemExit, match="toposort.py has no stub left"):
            shipped.update()
    finally:
        manifest.use_root(previous)
    assert not record.exists() and not stubs.exists()  # refused before writing anything
