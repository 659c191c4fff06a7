"""The class scoreboard merges reports into a terminal table and an HTML page."""
import html
import io
import json
from html.parser import HTMLParser

from plugin.workshop import scoreboard


def a_report(learner, time, statuses, flags=(), ratio=None):
    katas = []
    for number, (slug, status) in enumerate(statuses.items(), start=1):
        katas.append({
            "kata": slug, "number": number, "status": status, "ran": True, "passed": 1, "total": 2,
            "speed_ratio": ratio, "growth": "", "hints_used": 0, "hints_total": 3,
            "flags": list(flags) if number == 1 else [], "tests": [],
        })
    return {"format": "autograd-katas-report", "version": 1, "kit_version": "0.1.0", "learner": learner,
            "time": time, "solution": "learner", "environment": {}, "katas": katas}


class Cells(HTMLParser):
    """The page's table as {row header: [(cell text, title)]} (without the small print)."""

    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell, self.scripts, self.small = {}, None, None, 0, False

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
        if tag in ("td", "th"):
            self.cell = ["", dict(attrs).get("title")]
        self.small = self.small or dict(attrs).get("class") == "small"

    def handle_data(self, data):
        if self.cell is not None and not self.small:
            self.cell[0] += data

    def handle_endtag(self, tag):
        self.small = self.small and tag != "span"
        if tag in ("td", "th") and self.cell is not None:
            self.row = (self.row or []) + [tuple(self.cell)]
            self.cell = None
        if tag == "tr":
            self.rows[self.row[0][0]] = self.row[1:]
            self.row = None


def run(args):
    out, err = io.StringIO(), io.StringIO()
    code = scoreboard.main(args, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_latest_report_per_learner_wins_and_bad_files_are_skipped_by_name(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # the full table: its width is tested elsewhere
    reports = tmp_path / "reports"
    reports.mkdir()
    older = a_report("Ada", "2026-11-23T09:00:00Z", {"01_a": "in progress", "02_b": "not started"})
    newer = a_report("Ada", "2026-11-23T10:00:00+00:00", {"01_a": "done", "02_b": "in progress"}, ratio=1.234)
    evil = a_report("<script>alert(1)</script>", "2026-11-23T09:30:00Z", {"01_a": "in progress", "02_b": "done"},
                    flags=["imports torch (line 1)"])
    for name, data in (("2.json", newer), ("1.json", older), ("3.json", evil)):
        (reports / name).write_text(json.dumps(data))
    (reports / "foreign.json").write_text(json.dumps({"results": []}))
    (reports / "broken.json").write_text("{not json")
    page = tmp_path / "site" / "class.html"

    code, out, err = run([str(reports), str(tmp_path / "missing.json"), "--html", str(page)])

    assert code == 0
    for bad in ("foreign.json", "broken.json", "missing.json"):
        assert any(line.startswith("warning: skipped") and bad in line for line in err.splitlines()), err
    lines = out.splitlines()
    assert len([line for line in lines if line.startswith("Ada ")]) == 1
    ada = next(line for line in lines if line.startswith("Ada "))
    assert "done 1.23x" in ada and "1/2" in ada
    assert "imports torch (line 1)" in out

    text = page.read_text()
    assert "<script>" not in text and html.escape("<script>alert(1)</script>") in text
    cells = Cells()
    cells.feed(text)
    assert cells.scripts == 0
    assert set(cells.rows) == {"learner", "Ada", "<script>alert(1)</script>", "class (2)"}
    assert [c[0] for c in cells.rows["learner"]] == ["done", "01a", "02b"]  # done first
    (done, _), (a1, a1_title), (a2, _) = cells.rows["Ada"]
    assert a1.startswith("\u2713") and "speed: 1.23x the reference" in a1_title
    assert a2.startswith("1/2") and done == "1/2"
    flagged, flagged_title = cells.rows["<script>alert(1)</script>"][1]
    assert "[1]" in flagged and "flagged: imports torch (line 1)" in flagged_title


def test_no_report_at_all_exits_1_with_a_warning(tmp_path):
    (tmp_path / "x.json").write_text("[]")
    code, out, err = run([str(tmp_path / "x.json")])
    assert code == 1 and "skipped" in err and "x.json" in err and out == ""
