"""What the kit ships besides code: a pristine copy of every learner file (`stubs/<slug>/`,
what `katas reset` restores) and `shipped.json`, the sha256 of each kata's stub and test
files, against which a run tells a changed test file (guards/integrity.py) or a kata not
started (grading/parallel.py).

Both are made from katas/ by one command, run in the kit's repository on the shipped stubs,
after changing a kata's tests or stub or adding a kata; a kit test fails while they are out
of date (see regenerate.py):

    python -m plugin.shipped --update     # rewrite shipped.json and stubs/
    python -m plugin.shipped --check      # exit 1 and say what is stale

This module reads the record, and imports nothing of the plugin.
"""
import ast
import hashlib
import json
from pathlib import Path

SHIPPED_DIR = Path(__file__).resolve().parent
SHIPPED = SHIPPED_DIR / "shipped.json"
STUBS_DIR = SHIPPED_DIR / "stubs"


def file_hash(path):
    """sha256 of a text file with its line endings normalised to \\n."""
    data = Path(path).read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha256(data).hexdigest()


def graded_files(kata):
    """{name: path} of the files in the kata's folder that decide its grade."""
    if not kata.folder.is_dir():
        return {}
    found = sorted(kata.folder.glob("test_*.py")) + sorted(kata.folder.glob("conftest.py"))
    return {p.name: p for p in found if p.is_file()}


def load_shipped(path=None):
    """The shipped manifest ({"katas": {slug: {"tests": {...}, "stub": {...}}}}), or None
    when it is missing or unreadable."""
    try:
        data = json.loads(Path(path or SHIPPED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("katas"), dict) else None



def stub_copy(kata):
    """Where the kit keeps the pristine learner file of `kata`."""
    return STUBS_DIR / kata.slug / kata.learner_file


def stubs_left(kata):
    """Names of the functions in kata's learner file still a stub: a body that is only a
    docstring and `raise NotImplementedError(...)` (methods of classes too)."""
    try:
        tree = ast.parse(kata.path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ["(the file does not parse)"]
    left = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
                getattr(node.body[0], "value", None), ast.Constant) else node.body
            if len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0]):
                left.append(node.name)
    return left
