"""The scoreboard page for a projector (issue 15, section 5): it fits 1024 pixels, shows every
detail without hover, says when it was made and gives the class's totals per kata."""
import datetime
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from plugin.workshop import scoreboard

SLUGS = ["01_elementwise_rules", "02_shapes", "03_toposort", "04_accumulation", "05_seeding",
         "06_backward_pass", "07_retain_graph", "08_devices", "09_higher_order", "10_capstone"]
MADE = datetime.datetime(2026, 11, 23, 16, 45, tzinfo=datetime.timezone.utc)


def entry(number, status, passed=12, ratio=None, hints=0, flags=()):
    return {"kata": SLUGS[number - 1], "number": number, "status": status, "passed": passed, "total": 35,
            "speed_ratio": ratio, "hints_used": hints, "hints_total": 7, "flags": list(flags)}


def learner(name, statuses, **extra):
    katas = [entry(n, status, **extra) for n, status in enumerate(statuses, start=1)]
    return {"learner": name, "time": "2026-11-23T10:00:00Z", "katas": katas}


def widest_class():
    """Every cell as full as it gets: in progress, a speed, hints and a flag; a long name."""
    name = "Barbara Liskov-Longname of the Back Row"
    full = learner(name, ["in progress"] * 10, passed=123, ratio=12.34, hints=7, flags=["imports torch (line 3)"])
    return {name: full, "Ada": learner("Ada", ["done"] * 10, ratio=1.5)}


class Table(HTMLParser):
    """Rows of the page's table as lists of (cell text, title); the time it says it was made."""

    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell, self.text = [], None, None, ""

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.row = []
        if tag in ("td", "th"):
            self.cell = ["", dict(attrs).get("title")]

    def handle_data(self, data):
        self.text += data
        if self.cell is not None:
            self.cell[0] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(tuple(self.cell))
            self.cell = None
        if tag == "tr":
            self.rows.append(self.row)


def parse(learners):
    table = Table()
    table.feed(scoreboard.html_page(learners, SLUGS, made=MADE))
    return table


def test_the_done_column_comes_first():
    header = [text for text, _ in parse(widest_class()).rows[0]]
    assert header[1] == "done" and header[2].startswith("01")


def test_every_detail_shows_without_hover():
    classmates = {"Ada": learner("Ada", ["done", "in progress"] + ["not started"] * 8, passed=20, ratio=1.25, hints=2,
                                 flags=["imports torch (line 3)"])}
    table = parse(classmates)
    ada = next(row for row in table.rows if row[0][0].startswith("Ada"))
    done_cell, in_progress_cell = ada[2][0], ada[3][0]
    assert "\u2713" in done_cell and "1.25x" in done_cell and "2 hints" in done_cell
    assert "20/35" in in_progress_cell
    # a flag is a footnote: marked in the cell, its words under the table
    assert "[1]" in done_cell and "[1] Ada, 01_elementwise_rules: imports torch (line 3)" in table.text
    assert "Made 2026-11-23 16:45 UTC" in table.text


def test_the_class_totals_per_kata():
    classmates = {
        "A": learner("A", ["done", "done", "in progress"] + ["not started"] * 7),
        "B": learner("B", ["done", "in progress"] + ["not started"] * 8),
        "C": learner("C", ["in progress"] + ["not started"] * 9),
    }
    totals = next(row for row in parse(classmates).rows if row[0][0].startswith("class"))
    assert totals[0][0] == "class (3)"
    assert [text for text, _ in totals[2:5]] == ["2 done1 in progress", "1 done1 in progress", "0 done1 in progress"]
    assert totals[5][0] == "0 done0 in progress"


CHROMIUM = next((shutil.which(n) for n in ("chromium-headless-shell", "chromium", "chromium-browser")
                 if shutil.which(n)), None)


@pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium to lay the page out")
def test_the_page_fits_a_1024_pixel_projector(tmp_path):
    page = scoreboard.html_page(widest_class(), SLUGS, made=MADE)
    measured = page.replace(
        "</body>", '<script>document.body.dataset.width = document.documentElement.scrollWidth</script></body>')
    path = tmp_path / "class.html"
    path.write_text(measured, encoding="utf-8")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1024,768",
         "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120,
    ).stdout
    width = int(re.search(r'data-width="(\d+)"', dom).group(1))
    assert width <= 1024, f"the page is {width} px wide"


# --- issue 27.3: the terminal's width, words a room can read ---------------------------------

def test_the_terminal_table_fits_the_terminal(monkeypatch):
    """COLUMNS=80 (and the terminal's own width) is obeyed: lines were ~200 characters."""
    classmates = widest_class()
    monkeypatch.setenv("COLUMNS", "80")
    text = scoreboard.terminal_table(classmates, SLUGS)
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert "katas: 01 elementwise_rules, 02 shapes" in text  # the numbers explained
    assert "Ada" in text and "10/10" in text
    wide = scoreboard.terminal_table(classmates, SLUGS, width=400)
    assert "01_elementwise_rules" in wide.splitlines()[0]  # full names where they fit


def test_hints_read_as_hints_not_hours():
    cell = scoreboard.html_cell({"status": "done", "speed_ratio": 1.0, "hints_used": 2})
    assert "2 hints" in cell and "2h" not in cell
    assert "1 hint<" in scoreboard.html_cell({"status": "done", "hints_used": 1})


@pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium to lay the page out")
def test_the_speed_and_counts_are_big_enough_for_the_back_of_a_room(tmp_path):
    """Every piece of text in the table, speed and hints included, at 14 px or more (they were 11)."""
    page = scoreboard.html_page(widest_class(), SLUGS, made=MADE)
    measured = page.replace("</body>", (
        "<script>document.body.dataset.smallest = Math.min(...[...document.querySelectorAll('td, th, td *, th *')]"
        ".filter(e => e.textContent.trim()).map(e => parseFloat(getComputedStyle(e).fontSize)))</script></body>"))
    path = tmp_path / "class.html"
    path.write_text(measured, encoding="utf-8")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1024,768",
         "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120).stdout
    smallest = float(re.search(r'data-smallest="([\d.]+)"', dom).group(1))
    assert smallest >= 14, f"the smallest text of the table is {smallest} px"
