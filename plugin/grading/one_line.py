"""The one line a failure is summed up in (the table's "first failure", the other failures,
the JSON report's message): the first line of its message that says something.

A failure's full message is several lines: a heading, then torch's words and the learner's,
or expected and got. Its first line alone can be empty (numpy's assertions start with a
newline), a bare heading ("torch says:"), or a class name. The one line keeps the heading
and adds what it announces: expected against got, torch's words against the learner's at
the first place they differ, the words a regex wanted against the ones it got.
"""
import re

LIMIT = 200

# Exception classes that say nothing a learner needs: the sentence after them is the message.
_SILENT_CLASSES = re.compile(r"^(?:[\w.]*\.)?(?:KataMismatch|AssertionError|Failed)(?::\s*|$)")


def one_line(message, limit=LIMIT):
    """The failure `message` (an exception's text, class name first or not) in one line."""
    text = _SILENT_CLASSES.sub("", str(message).strip(), count=1)
    lines = _arrays_joined([line.strip() for line in text.splitlines()])
    for summary in (_numpy_summary, _regex_summary, _words_summary, _heading_summary):
        found = summary(lines)
        if found:
            return shorten(found, limit)
    return shorten(lines[0], limit) if lines and lines[0] else "failed (no message)"


def shorten(line, limit=LIMIT):
    """`line` on one line, at most `limit` characters: long arrays first keep their first
    elements (`[[1., 2.], …]`), then the line is cut between words, at a sentence's end
    where one is near, never inside a word or an array."""
    line = " ".join(line.split())
    if len(line) <= limit:
        return line
    line = _ARRAY.sub(lambda found: _first_elements(found.group(0)), line)
    if len(line) <= limit:
        return line
    spaces = [i for i in range(limit - 60, limit) if i > 0 and line[i] == " " and _depth(line, i) == 0]
    ends = [i for i in spaces if line[i - 1] == "." and i >= limit - 30]  # a sentence's end, near
    cut = (ends or spaces or [line.rfind(" ", 0, limit)])[-1]
    kept = line[: cut if cut > 0 else limit - 1].rstrip(" ,;:")
    return kept + (" …" if kept.endswith(".") else "…")


ARRAY_KEPT = 30
# an array of numbers, as numpy prints it, longer than what a cut one keeps: when a line is too
# long, every such array is cut alike (expected cut and got in full read as a mismatch: the
# seventh walk)
_ARRAY = re.compile(r"\[[-\d\s.,\[\]e+infa]{%d,}\]" % (ARRAY_KEPT + 2))


def _first_elements(array):
    """A long printed array cut after an element near its start: `[[1., 2.], [3., …]]`."""
    cut = max((i for i in range(1, min(ARRAY_KEPT, len(array))) if array[i] == "," and array[i + 1] == " "), default=None)
    if cut is None:  # numpy's str(): elements apart by spaces, no commas
        cut = max((i for i in range(1, min(ARRAY_KEPT, len(array))) if array[i] == " " and array[i - 1] not in "[ "),
                  default=None)
        if cut is None:
            return array
        return f"{array[:cut]} …{']' * _depth(array, cut)}"
    return f"{array[:cut]}, …{']' * _depth(array, cut)}"


def _depth(text, at):
    """How many brackets are open at `at` in `text`."""
    return sum(1 if c in "[(" else -1 if c in "])" else 0 for c in text[:at])


def _arrays_joined(lines):
    """A printed matrix spans lines (`[[1. 2.]` then ` [3. 4.]]`): its lines joined into one,
    so that a line cut never ends inside it."""
    joined = []
    for line in lines:
        if joined and _depth(joined[-1], len(joined[-1])) > 0:
            joined[-1] = f"{joined[-1]} {line}"
        else:
            joined.append(line)
    return joined


def _said(lines):
    return [line for line in lines if line]


def _heading_summary(lines):
    """The first line that says something, with the lines it announces: a heading that ends
    with ":" takes the next one; expected/got lines right after it come along."""
    said = _said(lines)
    if not said:
        return None
    parts = [said[0]]
    rest = said[1:]
    while parts[-1].endswith(":") and rest:
        parts.append(rest.pop(0))
    pair = _expected_got(rest)
    if pair:
        parts.append(pair)
    return " ".join(parts).replace(": :", ":")


def _expected_got(lines):
    """'expected X, got Y' from the first two lines after a heading, when that is what they are."""
    if len(lines) >= 2 and lines[0].startswith("expected") and lines[1].startswith("got"):
        return f"({lines[0]}, {lines[1]})"
    return None


def _numpy_summary(lines):
    """numpy.testing's assertions: a blank line, 'Not equal to tolerance ...', the test's own
    words (err_msg), the counts, then ACTUAL and DESIRED."""
    said = _said(lines)
    if not said or not said[0].startswith(("Not equal to tolerance", "Arrays are not equal", "Arrays are not almost equal")):
        return None
    actual = next((l.split(":", 1)[1].strip() for l in said if l.startswith("ACTUAL:")), "?")
    desired = next((l.split(":", 1)[1].strip() for l in said if l.startswith("DESIRED:")), "?")
    words = said[1] if len(said) > 1 and not _numpys_own(said[1]) else ""
    what = f"{words}: " if words else ""
    where = next((l.rstrip(":") + "; " for l in said[1:3] if "location mismatch" in l), "")  # nan, +inf
    return f"{what}expected {_array(desired)}, got {_array(actual)} ({where}{said[0].lower()})"


def _numpys_own(line):
    """A line numpy writes under its heading (not a test's err_msg)."""
    return line.startswith(("Mismatched", "x and y", "(shapes", "ACTUAL", "DESIRED")) or "location mismatch" in line


def _array(text):
    return re.sub(r"^array\((.*?)(, dtype=\w+)?\)$", r"\1", text)


def _regex_summary(lines):
    """pytest.raises(match=...): the words a test looked for, and the error's own words."""
    said = _said(lines)
    if not said or not said[0].startswith("Regex pattern did not match"):
        return None
    wanted = next((l.split(":", 1)[1].strip() for l in said if l.startswith(("Expected regex", "Regex:"))), "?")
    got = next((l.split(":", 1)[1].strip() for l in said if l.startswith(("Actual message", "Input:"))), "?")
    return f"the error's words are not torch's: torch's contain {wanted}, yours are {got}"


_TORCH = re.compile(r"^(torch(?: says| raises| gives)?)(?:\s*:\s*|\s+|$)(.*)$")
_YOURS = re.compile(r"^(yours|your \w+ raised|the engine(?: raised| says| gives))(?:\s*:\s*|\s+|$)(.*)$")


# A heading that ends with torch's label: "a saved leaf: torch says" (the words on the next line).
_HEADING_THEN_TORCH = re.compile(r"^(.*?\S)\s*:\s*(torch(?: says| raises| gives)?)\s*:?$")


def _labels_apart(lines):
    """Each line that ends with torch's label split in two: the heading, then the label."""
    apart = []
    for line in lines:
        found = _HEADING_THEN_TORCH.match(line)
        apart.extend(found.groups() if found else (line,))
    return apart


def _words_summary(lines):
    """A heading, torch's words and the learner's (on their own lines or after a label): the
    heading and the two, cut around the first character where they differ."""
    said = _labels_apart(_said(lines))
    torch_at = next((i for i, l in enumerate(said) if _TORCH.match(l)), None)
    if torch_at is None:
        return None
    yours_at = next((i for i, l in enumerate(said) if i > torch_at and _YOURS.match(l)), None)
    if yours_at is None:
        return None
    theirs = _labelled(said, torch_at, _TORCH)
    mine = _labelled(said, yours_at, _YOURS)
    if not theirs or not mine:
        return None
    heading = " ".join(said[:torch_at]).rstrip(":")
    first, second = around_difference(theirs, mine)
    lead = f"{heading}: " if heading else ""
    return f"{lead}torch: {first} | yours: {second}"


def _labelled(lines, at, pattern):
    """The words after a label, or on the line after a label that stands alone."""
    words = pattern.match(lines[at]).group(2).strip()
    if words:
        return words
    following = lines[at + 1] if at + 1 < len(lines) else ""
    return "" if _TORCH.match(following) or _YOURS.match(following) else following


def around_difference(theirs, mine, before=25, after=45):
    """Both texts cut to a window around the first character where they differ."""
    start = next((i for i, (a, b) in enumerate(zip(theirs, mine)) if a != b), min(len(theirs), len(mine)))
    cut = max(0, start - before)
    lead = "…" if cut else ""

    def window(text):
        begin = _word_start(text, cut) if cut else 0
        end = _word_end(text, start + after)
        return f"{lead if begin else ''}{text[begin:end]}{'…' if end < len(text) else ''}"

    return window(theirs) or "(nothing)", window(mine) or "(nothing)"


def _word_start(text, at):
    """`at`, moved on to the start of the next word where it falls inside one."""
    if at <= 0 or at >= len(text) or text[at - 1].isspace():
        return at
    space = text.find(" ", at)
    return space + 1 if space != -1 and space - at < 15 else at


def _word_end(text, at):
    """`at`, moved on to the end of the word it falls inside (a cut between words, not in one)."""
    if at >= len(text) or text[at].isspace() or text[at - 1].isspace():
        return min(at, len(text))
    space = text.find(" ", at)
    return space if space != -1 and space - at < 15 else at
