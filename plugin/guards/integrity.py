"""Integrity: a kata is the learner's own work, graded by the shipped tests.

These flag a kata (it is then not counted as done):

- its learner file imports torch or the reference engine (`reference`,
  `reference.solutions.rules`, ...), which could hand the work to the answer key; the one import learner files need is
  `from plugin import engine as ag`. Imports by name count too (`importlib.import_module`,
  `__import__`; a computed name is flagged as such), and so does code run from a string
  (`exec`, `eval`, `compile`);
- its learner file reaches the reference's own pieces through the engine: the seam's table
  `pieces.REFERENCE`, or `pieces.active.NAME` for one of the kata's own pieces (before the
  swap that is the reference's; during it, the piece itself). tripwire.py catches
  the same at run time, however the reference piece was reached;
- its test files (`test_*.py`, `conftest.py` in the kata's folder) differ from the shipped
  ones: plugin/shipped/shipped.json holds their sha256 (line endings normalised, so a Windows
  checkout is not flagged), and the check trusts the copy of it that `pip install` put in the
  installed package's metadata (shipped/shipped_backend.py): learner code that rewrites a
  test file and the clone's shipped.json alike stays flagged until the test file is restored.

This is a signpost for honest learners and their instructor, not a lock: a learner can edit
the plugin too. (The hashes and the stubs are the kit's shipped data: plugin/shipped/.)
"""
import ast

from ..shipped import anchored, file_hash, graded_files

FORBIDDEN = ("torch", "reference")
IMPORT_ADVICE = "the kata counts once it uses the engine's API (from plugin import engine as ag)"
TESTS_ADVICE = ("the kata counts once its test files are the shipped ones (after updating the kit itself: "
                "pip install -e . again)")
PATCH_ADVICE = "the kata counts once its file changes nothing outside itself"
DELEGATION_ADVICE = "the kata counts once its pieces are your own code, not the reference's"
TAMPER_ADVICE = "no kata counts in a run whose grader was changed: remove what replaces it and run again"
TRACER_ADVICE = "the kata counts once its code installs no profile or trace function"
STACK_ADVICE = "the kata counts once its pieces do the same work wherever they are called from"
BY_NAME = ("__import__", "import_module")  # imports by name
FROM_STRING = ("exec", "eval", "compile")  # code run from a string


# --- the learner's imports ------------------------------------------------------------------

def import_flags(kata):
    """Sentences naming each forbidden import in the kata's learner file, and each way it
    reaches the reference's own pieces."""
    try:
        tree = ast.parse(kata.path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []  # a file that does not parse fails its tests anyway
    flags = []
    own = set(kata.pieces) | set(kata.functions)
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in FORBIDDEN:
                flags.append(f"imports {name} (line {node.lineno})")
        flags.extend(_dynamic_flags(node))
        flags.extend(_delegation_flags(node, own))
    return flags


def _called_name(call):
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _dynamic_flags(node):
    """Imports by name and code run from a string."""
    if not isinstance(node, ast.Call):
        return []
    name = _called_name(node)
    if name in FROM_STRING + ("__import__",) and not _is_builtin(node.func):
        return []  # re.compile, a method of the learner's own: not the builtin
    if name in FROM_STRING:
        return [f"runs code from a string ({name}, line {node.lineno})"]
    if name not in BY_NAME:
        return []
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        module = first.value
        return [f"imports {module} (line {node.lineno})"] if module.split(".")[0] in FORBIDDEN else []
    return [f"imports a module by a computed name ({name}, line {node.lineno})"]


def _is_builtin(func):
    """`exec(...)` or `builtins.exec(...)`, not `re.compile(...)`."""
    return isinstance(func, ast.Name) or (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "builtins")


def _delegation_flags(node, own):
    """`pieces.REFERENCE` anywhere; `pieces.active.NAME` (or getattr) for a piece of the kata."""
    if isinstance(node, ast.Attribute) and node.attr == "REFERENCE" or (
            isinstance(node, ast.Constant) and node.value == "REFERENCE"):
        return [f"reaches the reference's pieces (pieces.REFERENCE, line {node.lineno})"]
    target = None
    if isinstance(node, ast.Attribute) and _is_active(node.value):
        target = node.attr
    elif isinstance(node, ast.Call) and _called_name(node) == "getattr" and len(node.args) >= 2 and \
            _is_active(node.args[0]) and isinstance(node.args[1], ast.Constant):
        target = node.args[1].value
    if target in own:
        return [f"reaches the reference's own {target} (pieces.active.{target}, line {node.lineno})"]
    return []


def _is_active(node):
    return isinstance(node, ast.Attribute) and node.attr == "active" or isinstance(node, ast.Name) and node.id == "active"


# --- the shipped test files -------------------------------------------------------------------

def tests_flags(kata, shipped=None):
    """Sentences naming the kata's test files that differ from the shipped ones; none for a
    kata the manifest does not know (a kata added since: the kit's own test catches that)."""
    shipped = anchored() if shipped is None else shipped
    expected = ((shipped or {}).get("katas", {}).get(kata.slug) or {}).get("tests")
    if not isinstance(expected, dict):
        return []
    present = graded_files(kata)
    changed = [n for n, p in present.items() if n in expected and file_hash(p) != expected[n]]
    added = [n for n in present if n not in expected]
    missing = [n for n in expected if n not in present]
    flags = []
    for words, names in (("changed", changed), ("added", added), ("missing", missing)):
        if names:
            flags.append(f"test files {words}: {', '.join(sorted(names))}")
    return flags


def flags(kata, shipped=None):
    """Every integrity flag of a kata, as short sentences (the table and the report show them)."""
    return import_flags(kata) + tests_flags(kata, shipped)


def advice(flag):
    if flag.startswith("test files"):
        return TESTS_ADVICE
    if " patches " in flag:  # see patches.py
        return PATCH_ADVICE
    if flag.startswith(("reaches the reference", "runs the reference")):
        return DELEGATION_ADVICE
    if flag.startswith("the grader's own"):
        return TAMPER_ADVICE
    if flag.startswith("installs a profile"):
        return TRACER_ADVICE
    if flag.startswith("looks at the call stack"):
        return STACK_ADVICE
    return IMPORT_ADVICE
