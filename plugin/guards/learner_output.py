"""What a learner's code printed: shown once per kata, cut to a few KB.

pytest shows a failing test's captured output under its failure, in full, for every failing
test; a piece that prints 5 MB on each call then fills the terminal (and a CI log) with the
same output again and again. Grading keeps the captured sections of a kata's first failure
only, each cut to a few KB with a note; `pytest -s` shows everything, uncaptured.
"""
CAPTURED = ("Captured stdout", "Captured stderr", "Captured log")
HEAD = 3000  # characters kept from the start of a long section
TAIL = 1000  # and from its end (the last lines printed before the failure)


def cut(text):
    """`text` unchanged when short, else its start and end around a note saying what was cut."""
    if len(text) <= HEAD + TAIL:
        return text
    left_out = len(text) - HEAD - TAIL
    note = (f"[... {left_out:,} characters cut here: the kit shows a few KB of a learner's "
            "output; pytest -s prints all of it ...]")
    return f"{text[:HEAD]}\n{note}\n{text[-TAIL:]}"


def _is_captured(section):
    return section[0].startswith(CAPTURED)


def cut_sections(report):
    """Cut each captured section of one test report (done where the test ran, so that
    pytest-xdist does not ship megabytes between processes)."""
    report.sections = [
        (title, cut(content)) if _is_captured((title, content)) else (title, content)
        for title, content in report.sections
    ]


def once_per_kata(reports):
    """Keep the captured sections of each kata's first report (in the order given) that has
    any; drop them from the kata's later reports."""
    shown = set()
    for report in reports:
        slug = getattr(report, "kata", None)
        if slug is None or not any(_is_captured(s) for s in report.sections):
            continue
        if slug in shown:
            report.sections = [s for s in report.sections if not _is_captured(s)]
        shown.add(slug)
