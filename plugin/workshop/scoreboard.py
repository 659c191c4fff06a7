"""The class scoreboard: many learners' JSON reports merged into one table.

    katas scoreboard reports/*.json               # a table in the terminal
    katas scoreboard reports/ --html class.html   # and a self-contained HTML page

One row per learner (their latest report wins, by its `time`), one column per kata: done,
in progress or not started, with the speed ratio beside it and integrity flags marked `!`
(the HTML page fits a 1024-pixel projector and shows every detail without hover, with the
class's totals per kata). A file that is not a kata report is skipped
with a warning naming it, and so is anything in a shared folder that is not a regular file
(a FIFO, a link to a device) or is larger than a report can be. Each row names the report it
shows; a learner with several reports, and a report dated in the future (which never wins
over one that is not, and counts no kata as done), are noted under the table. Exit status:
0 when at least one report was merged, 1 when none was (or the HTML page could not be
written), 2 for a usage error.
"""
import argparse
import datetime
import glob
import html
import json
import os
import re
import shutil
import stat
import sys
import textwrap
from pathlib import Path

from ..reports.json_report import FORMAT, MAX_REPORT_BYTES

VERSIONS = (1,)
MARK = {"done": "done", "in progress": "in progress", "not started": "-"}


def load(path):
    """A report from `path`, or raise ValueError saying why it is not one. Only a learner's
    run is a report of their progress (not one on the reference solution); a kata entry that
    is partial, flagged or whose learner file is missing is never counted as done."""
    try:
        data = json.loads(read_capped(path).decode("utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ValueError("is not text (UTF-8)") from None
    except RecursionError:
        raise ValueError("is nested too deep to be a report") from None
    except ValueError as exc:
        raise ValueError(f"is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("is not an Autograd Katas report (no \"format\": \"autograd-katas-report\")")
    if data.get("version") not in VERSIONS:
        raise ValueError(f"has report version {data.get('version')!r}; this scoreboard reads {VERSIONS}")
    if not isinstance(data.get("learner"), str) or not isinstance(data.get("katas"), list):
        raise ValueError("lacks a learner name or a list of katas")
    if data.get("solution") != "learner":
        raise ValueError(
            f"is a run on the {data.get('solution')!r} solution (pytest --solution reference), "
            "not a learner's progress")
    _parse_time(data.get("time"))
    if not _is_list_of(data.get("flags", []), str):
        raise ValueError("has run flags that are not a list of sentences")
    for entry in data["katas"]:
        _check_entry(entry)
    return data


def read_capped(path):
    """The bytes of the regular file at `path`, at most MAX_REPORT_BYTES; ValueError for
    anything else. The file is opened without waiting (a FIFO would block the scoreboard for
    ever) and checked once open (no race between a look and the read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("is not a regular file (a FIFO, a device, a folder?)")
        chunks, size = [], 0
        while size <= MAX_REPORT_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_REPORT_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_REPORT_BYTES:
        raise ValueError(f"is larger than a report can be ({MAX_REPORT_BYTES // (1024 * 1024)} MB)")
    return b"".join(chunks)


STATUSES = ("not started", "in progress", "done")


def _check_entry(entry):
    """Raise ValueError unless `entry` has the fields the scoreboard reads, of their types;
    a "done" that the entry itself contradicts (partial, flagged, file missing) is corrected."""
    if not isinstance(entry, dict) or not isinstance(entry.get("kata"), str):
        raise ValueError("has a kata entry without a kata name")
    name = entry["kata"]
    wanted = {"number": int, "passed": int, "total": int, "hints_used": int, "hints_total": int}
    for field, kind in wanted.items():
        value = entry.get(field, 0)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"has a {field!r} of kata {name!r} that is not a whole number ({value!r})")
    if entry.get("status", "not started") not in STATUSES:
        raise ValueError(f"has a status of kata {name!r} that is none of {STATUSES}")
    ratio = entry.get("speed_ratio")
    if ratio is not None and (not isinstance(ratio, (int, float)) or isinstance(ratio, bool)):
        raise ValueError(f"has a speed ratio of kata {name!r} that is not a number")
    if not _is_list_of(entry.get("flags", []), str):
        raise ValueError(f"has flags of kata {name!r} that are not a list of sentences")
    if entry.get("status") == "done" and (entry.get("flags") or entry.get("partial") or entry.get("file_missing")):
        entry["status"] = "in progress"  # never shown as done: the entry says why not
    if entry.get("ran") is False and entry.get("status") != "not started":
        entry["status"] = "not started"  # a status remembered from an earlier run counts for nothing


def _is_list_of(value, kind):
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def _parse_time(text):
    try:
        moment = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"has no valid time ({text!r})") from None
    if moment.tzinfo is None:  # reports say UTC; a time without a zone cannot be ordered
        raise ValueError(f"has a time without a timezone ({text!r})")
    return moment


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


FUTURE_SLACK = datetime.timedelta(minutes=10)  # clocks differ a little; a report from 2099 is not that


def merge(paths, warn, now=None):
    """{learner: the report shown for them}; `warn(line)` hears about every file skipped.
    The report shown is the latest by its `time` among those not dated in the future; each
    keeps where it came from (`_path`), the learner's other reports (`_others`) and whether
    it is dated in the future (`_future`: then none of its katas counts as done)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    found = {}
    for path in paths:
        try:
            data = load(path)
        except ValueError as why:
            warn(printable(f"warning: skipped {path}: it {why}"))
            continue
        data["_path"] = str(path)
        data["_future"] = _parse_time(data["time"]) > now + FUTURE_SLACK
        found.setdefault(data["learner"], []).append(data)
    shown = {}
    for name, reports in found.items():
        data = max(reports, key=lambda d: (not d["_future"], _parse_time(d["time"])))
        data["_others"] = [d["_path"] + (" (dated in the future)" if d["_future"] else "")
                           for d in reports if d is not data]
        if data["_future"]:
            for entry in data["katas"]:
                if entry.get("status") == "done":
                    entry["status"] = "in progress"
        shown[name] = data
    return dict(sorted(shown.items(), key=lambda item: item[0].lower()))


def notes(learners):
    """Lines about the reports themselves: dated in the future, several for one learner."""
    lines = []
    for name, data in learners.items():
        if data.get("_future"):
            lines.append(f"{name}: the report {data['_path']} is dated in the future ({data['time']}): "
                         "none of its katas counts as done")
        if data.get("_others"):
            lines.append(f"{name}: {1 + len(data['_others'])} reports; shown: {data['_path']} ({data['time']}); "
                         f"not shown: {', '.join(data['_others'])}")
    return lines


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


def cell_text(entry, speed=True):
    """A short cell: status, speed ratio (unless `speed` is False), `!` when flagged."""
    status = entry.get("status", "not started")
    text = MARK.get(status, str(status))
    if status == "in progress" and entry.get("total"):
        # in a narrow table the count alone says "in progress" (P/T)
        text = f"{entry.get('passed', 0)}/{entry['total']}" if not speed else f"{text} {entry.get('passed', 0)}/{entry['total']}"
    ratio = entry.get("speed_ratio")
    if isinstance(ratio, (int, float)) and speed:
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


# Control characters (newlines, ANSI escapes, ...): a report's text must not redraw a terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text):
    """`text` with every control character replaced by `?`: one line, no escape sequences."""
    return _CONTROL.sub("?", str(text))


def terminal_table(learners, slugs, width=None):
    """The class as a table that fits the terminal (`width`, else its width, else $COLUMNS):
    full kata names where they fit, else kata numbers with a legend, short times, and at last
    no speed ratios and shortened names."""
    width = width or terminal_width()
    for style in ("full", "numbers", "compact"):
        lines = _table_lines(learners, slugs, style)
        if max(len(line) for line in lines) <= width:
            break
    else:  # too many katas for one line each: a block per learner
        lines = _stacked_lines(learners, slugs, width)
    if style != "full":
        legend = ", ".join(f"{slug[:2]} {slug[3:]}" for slug in slugs)
        lines += [""] + textwrap.wrap(f"katas: {legend}", width)
    flags = flagged(learners)
    if flags:
        lines.append("")
        lines.append("Flagged (not counted as done):")
        for name, slug, flag in flags:
            lines += textwrap.wrap(printable(f"{name}, {slug}: {flag}"), width, initial_indent="  ",
                                   subsequent_indent="    ")
    about = notes(learners)
    if about:
        lines.append("")
        lines.append("About the reports:")
        lines.extend(printable(f"  {line}") for line in about)  # whole: each names a report's path
    return "\n".join(lines)


def terminal_width(out=None):
    """$COLUMNS, else the terminal's width; no limit when the table goes to a file or a pipe."""
    out = out or sys.stdout
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    if hasattr(out, "isatty") and out.isatty():
        return shutil.get_terminal_size((100, 24)).columns
    return 10**6


def _stacked_lines(learners, slugs, width):
    """One block per learner: the name, done count and time, then each kata's cell, wrapped."""
    lines = []
    for name, data in learners.items():
        future = " (in the future!)" if data.get("_future") else ""
        lines += textwrap.wrap(printable(f"{name}: {done_count(data, slugs)}/{len(slugs)} done, report "
                                         f"{_short_time(data['time'])}{future}"), width)
        cells = [printable(f"{slug[:2]} {cell_text(_entry(data, slug), speed=False)}") for slug in slugs]
        lines += textwrap.wrap("   ".join(c.replace(" ", "\u00a0") for c in cells), width, initial_indent="  ",
                               subsequent_indent="  ")
    return [line.replace("\u00a0", " ") for line in lines]


def _table_lines(learners, slugs, style):
    short = style != "full"
    header = ["learner", *(slug[:2] if short else slug for slug in slugs), "done", "report time",
              *([] if short else ["report"])]
    rows = [header]
    for name, data in learners.items():
        cells = [cell_text(_entry(data, slug), speed=style != "compact") for slug in slugs]
        shown = name if style != "compact" or len(name) <= 14 else name[:13] + "\u2026"
        future = " (in the future!)" if data.get("_future") else ""
        time = (_short_time(data["time"]) if short else str(data["time"])) + future
        rows.append([shown, *cells, f"{done_count(data, slugs)}/{len(slugs)}", time,
                     *([] if short else [Path(data.get("_path", "?")).name])])
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


CSS = """
body { font-family: system-ui, sans-serif; margin: .5em; color: #222; font-size: 17px; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: .2em .25em; text-align: center; }
thead th { background: #f0f0f0; font-size: .92em; vertical-align: bottom; }
th.learner { text-align: left; min-width: 7em; max-width: 9em; overflow-wrap: break-word; }
td.done { background: #c8f0c8; }
td.in-progress { background: #fff2b3; }
td.not-started { color: #999; }
td.flagged { outline: 3px solid #d33; outline-offset: -3px; }
td.total { font-weight: bold; }
tfoot td, tfoot th { background: #f0f0f0; font-size: .92em; }
.name { font-weight: normal; display: block; font-size: .92em; }
.small { display: block; font-size: .92em; color: #333; }
.flag { color: #d33; font-weight: bold; }
a.flag.small { color: #d33; }
"""

STATUS_MARK = {"done": "\u2713", "not started": "\u2013"}  # a check mark, a dash


def html_cell(entry, footnote=None):
    """What a cell shows, all of it (no hover on a projector or a touch screen): the status
    (a check mark, tests passed/total, a dash), then the speed and hints used; a flagged
    cell points to its footnote below the table."""
    e = html.escape
    status = entry.get("status", "not started")
    main = STATUS_MARK.get(status, "")
    if status == "in progress":
        main = f"{entry.get('passed', 0)}/{entry['total']}" if entry.get("total") else "started"
    details = []
    ratio = entry.get("speed_ratio")
    if isinstance(ratio, (int, float)):
        details.append(f"{ratio:.2f}x")
    if entry.get("hints_used"):
        count = entry["hints_used"]
        details.append(f"{count} hint{'s' if count != 1 else ''}")
    text = e(main)
    if footnote is not None:
        text += f'<a class="flag small" href="#flag-{footnote}">[{footnote}]</a>'
    for detail in details:  # each on its own line: a narrow column, words a room can read
        text += f'<span class="small">{e(detail)}</span>'
    return text


def _kata_header(slug):
    number, _, name = slug.partition("_")
    return f'<th>{html.escape(number)}<span class="name">{html.escape(name.replace("_", " "))}</span></th>'


def class_totals(learners, slugs):
    """{slug: (done, in progress)}: how many learners are at each stage of each kata."""
    totals = {}
    for slug in slugs:
        statuses = [_entry(data, slug).get("status") for data in learners.values()]
        totals[slug] = (statuses.count("done"), statuses.count("in progress"))
    return totals


def html_page(learners, slugs, title="Autograd Katas: class scoreboard", made=None):
    """A self-contained page (inline CSS, no scripts); every text from a report is escaped.
    It fits a 1024-pixel projector: the done column first, narrow kata columns, every detail
    in the cells or in footnotes (nothing on hover only), the class's totals at the bottom."""
    e = html.escape
    made = made or datetime.datetime.now(datetime.timezone.utc)
    flags = flagged(learners)
    numbered = {}  # (learner, slug) -> footnote number
    for name, slug, _ in flags:
        numbered.setdefault((name, slug), len(numbered) + 1)
    body = []
    for name, data in learners.items():
        cells = []
        for slug in slugs:
            entry = _entry(data, slug)
            status = str(entry.get("status", "not started"))
            classes = status.replace(" ", "-") + (" flagged" if entry.get("flags") else "")
            cell = html_cell(entry, numbered.get((name, slug)))
            cells.append(f'<td class="{e(classes)}" title="{e(cell_title(entry))}">{cell}</td>')
        when = _short_time(data["time"]) + (" (future!)" if data.get("_future") else "")
        body.append(
            f'<tr><th class="learner">{e(name)}<span class="small">{e(when)} {e(Path(data.get("_path", "")).name)}</span></th>'
            f'<td class="total">{done_count(data, slugs)}/{len(slugs)}</td>{"".join(cells)}</tr>'
        )
    totals = class_totals(learners, slugs)
    total_cells = "".join(
        f'<td>{done} done<span class="small">{busy} in progress</span></td>'
        for done, busy in (totals[slug] for slug in slugs)
    )
    every_kata = sum(1 for data in learners.values() if done_count(data, slugs) == len(slugs))
    foot = (
        f'<tfoot><tr><th class="learner">class ({len(learners)})</th>'
        f'<td>{every_kata}<span class="small">all done</span></td>{total_cells}</tr></tfoot>'
    )
    items = [
        f'<li id="flag-{numbered[(name, slug)]}">[{numbered[(name, slug)]}] {e(name)}, {e(slug)}: '
        f'<span class="flag">{e(str(flag))}</span></li>'
        for name, slug, flag in flags
    ]
    flags_html = f"<h2>Flagged (not counted as done)</h2><ul>{''.join(items)}</ul>" if items else ""
    about = notes(learners)
    if about:
        flags_html += f"<h2>About the reports</h2><ul>{''.join(f'<li>{e(line)}</li>' for line in about)}</ul>"
    head = "".join(_kata_header(slug) for slug in slugs)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{e(title)}</h1><p>Made {e(made.strftime('%Y-%m-%d %H:%M %Z'))} from the latest report "
        f"of each of {len(learners)} learners. In a cell: \u2713 done, tests passed/total in "
        "progress, \u2013 not started; below it the speed against the reference (1.00x is as fast) "
        "and the hints used; [n] is a flag, listed under the table.</p>"
        f'<table><thead><tr><th class="learner">learner<span class="small">report time, file</span></th>'
        f"<th>done</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody>{foot}</table>{flags_html}</body></html>\n"
    )


def _short_time(text):
    """A report's time, in UTC to the minute."""
    try:
        moment = _parse_time(text)
    except ValueError:
        return str(text)
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc)
    return moment.strftime("%m-%d %H:%M")


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
    print(terminal_table(learners, slugs, width=terminal_width(out)), file=out)
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
