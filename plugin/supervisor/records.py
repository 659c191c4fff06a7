"""The records a supervised child hands to its supervisor: one line of JSON each.

    {"event": "plan", "katas": {slug: tests}, "cached": {...}, "hints": {...}}  after collection
    {"event": "running", "kata": slug, "test": nodeid}                          a test starts
    {"event": "tested", "kata": slug, "test": {TestResult}}                     a test finished
    {"event": "kata", "kata": slug, "result": {KataResult}, "tampered": [...]}  a kata finished
    {"event": "end", "exitstatus": n, "results": {...}, "run_flags": [...]}     the session's end
    {"event": "bye"}                                                            pytest is done

Learner code runs in the child and can write to the pipe too: a line that is not a record
is skipped. (A record it forges is no worse than the in-process tampering the guards flag.)
"""
import json
from dataclasses import asdict

from ..grading.results import KataResult, TestResult

MAX_LINE = 64 * 1024 * 1024  # a longer line is not a record


def encode(event, **fields):
    return json.dumps({"event": event, **fields}, separators=(",", ":")).encode("utf-8") + b"\n"


def decode(line):
    """The record on one line, or None when the line is not one."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("event"), str) else None


def from_test(test):
    return asdict(test)


def to_test(data):
    """A TestResult from its record; ValueError when the record is not one."""
    try:
        test = TestResult(
            nodeid=str(data["nodeid"]),
            location=(str(data["location"][0]), int(data["location"][1] or 0)),
            outcome=str(data["outcome"]),
            message=str(data.get("message") or ""),
            speed=bool(data.get("speed", False)),
            printed=bool(data.get("printed", False)),
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(f"not a test record: {exc}") from None
    return test


def from_kata(result):
    return asdict(result)


_TEXT_FIELDS = ("speed_note", "growth", "selection", "crash")


def to_kata(data):
    """A KataResult from its record; ValueError when the record is not one."""
    try:
        result = KataResult(str(data["slug"]))
        for test in data.get("tests", {}).values():
            result.add(to_test(test))
        result.speed = {str(k): float(v) for k, v in (data.get("speed") or {}).items() if v is not None}
        result.flags = [str(flag) for flag in data.get("flags") or []]
        for name in _TEXT_FIELDS:
            setattr(result, name, str(data.get(name) or ""))
        result.selected = int(data.get("selected") or 0)
    except (KeyError, AttributeError, TypeError, ValueError) as exc:
        raise ValueError(f"not a kata record: {exc}") from None
    return result
