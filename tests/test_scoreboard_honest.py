"""The scoreboard skips, with a warning naming it, every file it cannot trust: malformed
fields, times without a zone, absurd nesting, runs on the reference solution; its terminal
table prints no control character a report holds; it never shows a contradicted "done"."""
import io
import json

import pytest

from test_workshop_scoreboard import a_report

from plugin.workshop import scoreboard


def run(args):
    out, err = io.StringIO(), io.StringIO()
    code = scoreboard.main(args, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _write(folder, name, data):
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _broken(field, value):
    data = a_report("Eve", "2026-11-23T09:00:00Z", {"01_a": "done"})
    data["katas"][0][field] = value
    return data


BAD = {
    "naive-time.json": a_report("Bob", "2026-11-23T11:00:00", {"01_a": "done"}),
    "number.json": _broken("number", "one"),
    "flags.json": _broken("flags", 5),
    "status.json": _broken("status", ["done"]),
    "ratio.json": _broken("speed_ratio", "fast"),
    "deep.json": "[" * 200_000 + "]" * 200_000,
    "reference.json": {**a_report("Ref", "2026-11-23T09:00:00Z", {"01_a": "done"}), "solution": "reference"},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_file_it_cannot_trust_is_skipped_with_a_warning_naming_it(tmp_path, name):
    good = _write(tmp_path, "ada.json", a_report("Ada", "2026-11-23T10:00:00Z", {"01_a": "done"}))
    bad = _write(tmp_path, name, BAD[name])
    code, out, err = run([str(good), str(bad), "--html", str(tmp_path / "class.html")])
    assert code == 0, err
    assert f"warning: skipped {bad}" in err
    assert "Traceback" not in err
    assert "Ada" in out and (tmp_path / "class.html").is_file()
    assert not any(who in out for who in ("Bob", "Eve", "Ref"))


def test_a_reference_run_is_never_a_learners_progress(tmp_path):
    data = a_report("Ada", "2026-11-23T10:00:00Z", {"01_a": "done"})
    data["solution"] = "reference"
    path = _write(tmp_path, "ada.json", data)
    code, out, err = run([str(path)])
    assert code == 1 and "done" not in out
    assert f"skipped {path}: it is a run on the 'reference' solution" in err


def test_a_done_that_its_own_entry_contradicts_is_not_shown_as_done(tmp_path):
    data = a_report("Ada", "2026-11-23T10:00:00Z", {"01_a": "done", "02_b": "done", "03_c": "done"})
    data["katas"][0]["partial"] = True
    data["katas"][1]["file_missing"] = True
    data["katas"][2]["flags"] = ["the grader's own functions were replaced: Oracle.check_grads"]
    code, out, err = run([str(_write(tmp_path, "ada.json", data))])
    row = next(line for line in out.splitlines() if line.startswith("Ada"))
    assert code == 0 and "done" not in row.split("0/3")[0], out
    assert "0/3" in row


def test_the_terminal_table_prints_no_control_character_from_a_report(tmp_path):
    name = "Mallory\n\x1b[2J\x1b[31mroot\rX\x07"
    data = a_report(name, "2026-11-23T10:00:00Z", {"01_a": "in progress"}, flags=["imports torch\x1b[0m\nfake row"])
    code, out, err = run([str(_write(tmp_path, "m.json", data))])
    assert code == 0
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    assert "Mallory" in out and "fake row" in out
    lines = out.splitlines()
    assert not any(line.startswith(("root", "fake row")) for line in lines), out  # no line of its own


# --- which report counts (issue 26, point 5) ------------------------------------------------------

def test_a_report_dated_in_the_future_never_wins_and_is_noted(tmp_path):
    real = _write(tmp_path, "mallory.json", a_report("Mallory", "2026-11-23T09:00:00Z", {"01_a": "in progress"}))
    forged = _write(tmp_path, "mallory-2099.json", a_report("Mallory", "2099-01-01T00:00:00Z", {"01_a": "done"}))
    code, out, err = run([str(real), str(forged)])
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("Mallory"))
    assert "in progress 1/2" in row and "0/1" in row and "mallory.json" in row, out
    assert f"Mallory: 2 reports; shown: {real} " in out and f"not shown: {forged} (dated in the future)" in out


def test_a_report_dated_in_the_future_alone_counts_no_kata_as_done(tmp_path):
    forged = _write(tmp_path, "m.json", a_report("Mallory", "2099-01-01T00:00:00Z", {"01_a": "done"}))
    code, out, _ = run([str(forged)])
    row = next(line for line in out.splitlines() if line.startswith("Mallory"))
    assert code == 0 and "0/1" in row and "(in the future!)" in row, out
    assert "is dated in the future (2099-01-01T00:00:00Z): none of its katas counts as done" in out


# --- a shared reports folder (issue 30, point 5) --------------------------------------------------

@pytest.mark.timeout(120)
def test_a_fifo_or_a_device_in_the_folder_is_skipped_not_read(tmp_path):
    import os

    _write(tmp_path, "ada.json", a_report("Ada", "2026-11-23T09:00:00Z", {"01_a": "done"}))
    os.mkfifo(tmp_path / "x.json")  # reading it would wait for a writer for ever
    os.symlink("/dev/zero", tmp_path / "zero.json")  # reading it would fill the memory
    _write(tmp_path, "huge.json", " " * (17 * 1024 * 1024))
    code, out, err = run([str(tmp_path)])
    assert code == 0 and "Ada" in out, err
    for name in ("x.json", "zero.json"):
        assert any(name in line and "is not a regular file" in line for line in err.splitlines()), err
    assert any("huge.json" in line and "larger than a report can be" in line for line in err.splitlines()), err
