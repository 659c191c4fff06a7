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
