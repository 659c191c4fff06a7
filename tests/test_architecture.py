"""The plugin's layout: every import points one way (docs/architecture.md).

The imports are read from the source (module level and inside functions alike), so a
circle shows here even where Python would tolerate it at run time because one side imports
late. Then each module is imported alone, in a fresh interpreter, so that none relies on
another having been imported first.
"""
import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "plugin"

# Each folder of the plugin, and the folders its modules may import (besides their own).
# The shared base (manifest, state, files, engine) imports nothing of the plugin.
BASE = ("plugin.manifest", "plugin.state", "plugin.files", "plugin.engine", "plugin.edition")
MAY_IMPORT = {
    "base": set(),
    "shipped": {"base"},
    "reports": {"base"},
    "guards": {"shipped", "base"},
    "grading": {"guards", "reports", "shipped", "base"},
    "supervisor": {"grading", "guards", "reports", "shipped", "base"},
    "workshop": {"reports", "shipped", "base"},
    "entry": {"grading", "guards", "reports", "shipped", "supervisor", "workshop", "base"},  # plugin/__init__.py
}


def module_name(path):
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def plugin_modules():
    return {module_name(path): path for path in sorted(PLUGIN.rglob("*.py")) if "stubs" not in path.parts}


def imports_of(name, path, known):
    """The plugin modules that `name` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from pkg import mod` imports the module mod; `from mod import name`, mod itself.
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
                       for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def import_graph():
    known = plugin_modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def room(name):
    if name == "plugin":
        return "entry"
    if name in BASE:
        return "base"
    return name.split(".")[1]


def find_cycle(graph):
    """One circle of imports as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_reader_finds_imports_and_circles():
    """The graph reader itself: it must see a late import and a circle, or the tests below
    could pass on a plugin full of them."""
    graph = import_graph()
    assert "plugin.grading.oracle" in graph["plugin.grading.fixtures"]  # imported inside a function
    assert "plugin.state" in graph["plugin.guards.time_limit"]  # ditto
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle_in_the_plugin():
    cycle = find_cycle(import_graph())
    assert cycle is None, "an import circle: " + " -> ".join(cycle)


def test_every_module_sits_in_a_known_room():
    unknown = sorted(name for name in plugin_modules() if room(name) not in MAY_IMPORT)
    assert not unknown, f"modules outside the plugin's folders (see MAY_IMPORT): {unknown}"


def test_imports_point_one_way():
    wrong = []
    for name, targets in import_graph().items():
        for target in targets:
            if room(target) != room(name) and room(target) not in MAY_IMPORT[room(name)]:
                wrong.append(f"{name} ({room(name)}) imports {target} ({room(target)})")
    assert not wrong, "imports against the layout of docs/architecture.md:\n" + "\n".join(sorted(wrong))


def test_every_module_imports_alone():
    """Each module in a fresh interpreter, with nothing of the kit imported before it."""
    names = sorted(name for name in plugin_modules() if not name.endswith("__main__"))
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    for loaded in [m for m in sys.modules if m.split('.')[0] in ('plugin', 'reference')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, *names], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_module_says_its_job_in_its_first_line():
    missing = []
    for name, path in plugin_modules().items():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not doc or len(doc.splitlines()[0].split()) < 4:
            missing.append(name)
    assert not missing, f"modules without a first line that says their job: {missing}"
