"""The class scoreboard: many learners' JSON reports merged into one table.

    python -m plugin.scoreboard reports/*.json               # a table in the terminal
    python -m plugin.scoreboard reports/ --html class.html   # and a self-contained HTML page

One row per learner (their latest report wins, by its `time`), one column per kata: done,
in progress or not started, with the speed ratio beside it and integrity flags marked `!`
(in the HTML page the details are on hover). A file that is not a kata report is skipped
with a warning naming it. Exit status: 0 when at least one report was merged, 1 when none
was (or the HTML page could not be written), 2 for a usage error.
"""
import argparse
import datetime
import glob
import html
import json
import sys
from pathlib import Path

from ..report import FORMAT

VERSIONS = (1,)
MARK = {"done": "done", "in progress": "in progress", "not started": "-"}


def load(path):
    """A report from `path`, or raise ValueError saying why it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("is not an Autograd Katas report (no \"format\": \"autograd-katas-report\")")
    if data.get("version") not in VERSIONS:
        raise ValueError(f"has report version {data.get('version')!r}; this scoreboard reads {VERSIONS}")
    if not isinstance(data.get("learner"), str) or not isinstance(data.get("katas"), list):
        raise ValueError("lacks a learner name or a list of katas")
    _parse_time(data.get("time"))
    for entry in data["katas"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("kata"), str):
            raise ValueError("has a kata entry without a kata name")
    return data


def _parse_time(text):
    try:
        return datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"has no valid time ({text!r})") from None


def expand(arguments):
    """Files from the command line: files, folders (their *.json) and glob patterns (for
    shells that do not expand them)."""
    paths = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            paths.extend(sorted(path.glob("*.json")))
        elif path.exists():
            paths.append(path)
        else:
            matches = sorted(glob.glob(argument))
            paths.extend([Path(m) for m in matches] or [path])  # a missing file: skipped, named
    return paths


def merge(paths, warn):
    """{learner: their latest report}; `warn(line)` hears about every file skipped."""
    latest = {}
    for path in paths:
        try:
            data = load(path)
        except ValueError as why:
            warn(f"warning: skipped {path}: it {why}")
            continue
        name = data["learner"]
        if name not in latest or _parse_time(data["time"]) >= _parse_time(latest[name]["time"]):
            latest[name] = data
    return dict(sorted(latest.items(), key=lambda item: item[0].lower()))


def columns(learners):
    """The katas of every report, in kata order."""
    numbers = {}
    for data in learners.values():
        for entry in data["katas"]:
            numbers.setdefault(entry["kata"], entry.get("number", 0))
    return sorted(numbers, key=lambda slug: (numbers[slug], slug))


def _entry(data, slug):
    return next((e for e in data["katas"] if e.get("kata") == slug), {})


def done_count(data, slugs):
    return sum(1 for slug in slugs if _entry(data, slug).get("status") == "done")


def flagged(learners):
    """(learner, kata, flag) for every integrity flag of every report."""
    return [(name, entry["kata"], flag) for name, data in learners.items()
            for entry in data["katas"] for flag in (entry.get("flags") or [])]


def cell_text(entry):
    """A short cell: status, speed ratio, `!` when flagged."""
    status = entry.get("status", "not started")
    text = MARK.get(status, str(status))
    if status == "in progress" and entry.get("total"):
        text += f" {entry.get('passed', 0)}/{entry['total']}"
    ratio = entry.get("speed_ratio")
    if isinstance(ratio, (int, float)):
        text += f" {ratio:.2f}x"
    if entry.get("flags"):
        text += " !"
    return text


def cell_title(entry):
    """What the HTML page shows on hover."""
    parts = [f"status: {entry.get('status', 'not started')}"]
    if entry.get("total"):
        parts.append(f"tests: {entry.get('passed', 0)}/{entry['total']} passed")
    ratio = entry.get("speed_ratio")
    if isinstance(ratio, (int, float)):
        parts.append(f"speed: {ratio:.2f}x the reference")
    parts.append(f"hints: {entry.get('hints_used', 0)} of {entry.get('hints_total', 0)}")
    parts.extend(f"flagged: {flag}" for flag in entry.get("flags") or [])
    return "\n".join(parts)


def terminal_table(learners, slugs):
    header = ["learner", *slugs, "done", "report time"]
    rows = [header]
    for name, data in learners.items():
        cells = [cell_text(_entry(data, slug)) for slug in slugs]
        rows.append([name, *cells, f"{done_count(data, slugs)}/{len(slugs)}", str(data["time"])])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    flags = flagged(learners)
    if flags:
        lines.append("")
        lines.append("Flagged (not counted as done):")
        lines.extend(f"  {name}, {slug}: {flag}" for name, slug, flag in flags)
    return "\n".join(lines)


CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; white-space: nowrap; }
th { background: #f0f0f0; }
td.done { background: #c8f0c8; }
td.in-progress { background: #fff2b3; }
td.not-started { color: #999; }
td.flagged { outline: 3px solid #d33; outline-offset: -3px; }
.flag { color: #d33; font-weight: bold; }
"""


def html_page(learners, slugs, title="Autograd Katas: class scoreboard"):
    """A self-contained page (inline CSS, no scripts); every text from a report is escaped."""
    e = html.escape
    head = "".join(f"<th>{e(slug)}</th>" for slug in slugs)
    body = []
    for name, data in learners.items():
        cells = []
        for slug in slugs:
            entry = _entry(data, slug)
            status = str(entry.get("status", "not started"))
            classes = status.replace(" ", "-") + (" flagged" if entry.get("flags") else "")
            cells.append(f'<td class="{e(classes)}" title="{e(cell_title(entry))}">{e(cell_text(entry))}</td>')
        body.append(
            f'<tr><th title="report of {e(str(data["time"]))}">{e(name)}</th>{"".join(cells)}'
            f"<td>{done_count(data, slugs)}/{len(slugs)}</td></tr>"
        )
    items = [
        f"<li>{e(name)}, {e(slug)}: <span class=\"flag\">{e(str(flag))}</span></li>"
        for name, slug, flag in flagged(learners)
    ]
    flags_html = f"<h2>Flagged (not counted as done)</h2><ul>{''.join(items)}</ul>" if items else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{e(title)}</h1><p>{len(learners)} learners; the latest report of each. "
        "Hover a cell for its tests, speed, hints and flags.</p>"
        f"<table><thead><tr><th>learner</th>{head}<th>done</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>{flags_html}</body></html>\n"
    )


def main(argv=None, out=sys.stdout, err=sys.stderr):
    parser = argparse.ArgumentParser(
        prog="python -m plugin.workshop.scoreboard",
        description="Merge learners' JSON reports (pytest --kata-report) into a class table.",
    )
    parser.add_argument("reports", nargs="+", help="report files, folders of them, or glob patterns")
    parser.add_argument("--html", metavar="OUT.html", help="also write a self-contained HTML page")
    args = parser.parse_args(argv)
    learners = merge(expand(args.reports), lambda line: print(line, file=err))
    if not learners:
        print("no report to show", file=err)
        return 1
    slugs = columns(learners)
    print(terminal_table(learners, slugs), file=out)
    if args.html:
        try:
            Path(args.html).parent.mkdir(parents=True, exist_ok=True)
            Path(args.html).write_text(html_page(learners, slugs), encoding="utf-8")
        except OSError as exc:
            print(f"could not write {args.html}: {exc.strerror or exc}", file=err)
            return 1
        print(f"HTML page written to {args.html}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
