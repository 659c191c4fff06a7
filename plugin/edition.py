"""The course edition this copy of the kit is: which katas' model solutions it holds.

`katas edition` writes a student copy of the kit for a graded course: the katas' lessons,
stubs, hints and tests, and the model solutions of the katas the course has released only.
Its record, edition.json at the copy's root, lists the released katas. The kit itself has no
record: every kata is released. A kata counts as released when the record lists it and its
model solution is there (a copy that lost a solution, or a record edited by hand, never
makes the engine look for a solution that is not there).
"""
import json

from .manifest import ALL_KATAS, ROOT

RECORD = "edition.json"
_read = {}  # root -> the released kata numbers (None: the kit itself, no record)


def released_numbers(root=ROOT):
    """The numbers of the katas the record lists as released, or None without a record."""
    if root not in _read:
        path = root / RECORD
        if not path.is_file():
            _read[root] = None
        else:
            record = json.loads(path.read_text(encoding="utf-8"))
            _read[root] = frozenset(int(n) for n in record.get("released", ()))
    return _read[root]


def is_edition(root=ROOT):
    return released_numbers(root) is not None


def has_model_solution(kata, root=ROOT):
    """Whether this copy holds the kata's model solution (released, and its module there)."""
    released = released_numbers(root)
    if released is not None and kata.number not in released:
        return False
    return (root / kata.reference_module).is_file()


def unreleased(root=ROOT):
    """The katas whose model solutions this copy does not hold (none in the kit itself)."""
    return [k for k in ALL_KATAS if not has_model_solution(k, root)]


def record(numbers):
    """The text of an edition's record for the released kata `numbers`."""
    return json.dumps({
        "released": sorted(numbers),
        "about": "The katas whose model solutions this edition of Autograd Katas holds "
                 "(written by `katas edition`; the grader reads it).",
    }, indent=2) + "\n"
