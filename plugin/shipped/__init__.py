"""What the kit ships besides code: a pristine copy of every learner file (`stubs/<slug>/`,
what `katas reset` restores) and `shipped.json`, the sha256 of each kata's stub and test
files, against which a run tells a changed test file (guards/integrity.py) or a kata not
started (grading/parallel.py).

Both are made from katas/ by one command, run in the kit's repository on the shipped stubs,
after changing a kata's tests or stub or adding a kata; a kit test fails while they are out
of date (see regenerate.py):

    python -m plugin.shipped --update     # rewrite shipped.json and stubs/
    python -m plugin.shipped --check      # exit 1 and say what is stale

`pip install` copies shipped.json into the installed package's metadata (shipped_backend.py):
that copy, which learner code does not rewrite in passing with a test file, is what the
integrity check trusts (`anchored()`); `--update` refreshes it too.

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
        return _checked(json.loads(Path(path or SHIPPED).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def _checked(data):
    return data if isinstance(data, dict) and isinstance(data.get("katas"), dict) else None


DISTRIBUTION = "autograd-katas"
ANCHOR = "shipped.json"  # its name in the installed package's .dist-info folder


def installed_record_path():
    """Where `pip install` put the copy of shipped.json, in this interpreter's site-packages
    (None when the kit is not installed there, or was installed without one). Only there: the
    clone's own `autograd_katas.egg-info` (a build leaves one) comes first on sys.path."""
    import sysconfig
    from importlib import metadata

    installed = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    for distribution in metadata.distributions(name=DISTRIBUTION):
        folder = getattr(distribution, "_path", None)
        if folder is None or Path(folder).resolve().parent not in installed:
            continue
        path = Path(folder) / ANCHOR
        if path.is_file():
            return path
    return None


def anchored():
    """The shipped manifest the integrity check trusts: the copy installed with the kit, else
    (a kit installed before it had one) the clone's shipped.json."""
    path = installed_record_path()
    if path is not None:
        try:
            return _checked(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None
    return load_shipped()



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
