"""Integrity: a kata is the learner's own work on the engine's API.

A learner file that imports torch or the reference engine (`reference`, `reference.rules`,
...) could hand the work to the answer key; such a kata is flagged and not counted as done.
The one import learner files need is `from plugin import engine as ag`.
"""
import ast

FORBIDDEN = ("torch", "reference")


def import_flags(kata):
    """Sentences naming each forbidden import in the kata's learner file."""
    try:
        tree = ast.parse(kata.path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []  # a file that does not parse fails its tests anyway
    flags = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in FORBIDDEN:
                flags.append(f"imports {name} (line {node.lineno})")
    return flags
