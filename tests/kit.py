"""Helpers for the kit's own tests: a copy of the kata tree that a test may change freely."""
import re
import shutil
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def make_checkout(pytester, katas=None):
    """Copy the katas (all, or the named folders) into pytester's directory, as a learner's
    clone has them, with the root conftest that registers the plugin."""
    for folder in sorted((REPO / "katas").iterdir()):
        if folder.is_dir() and (katas is None or folder.name in katas):
            shutil.copytree(folder, pytester.path / "katas" / folder.name,
                            ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    shutil.copy(REPO / "conftest.py", pytester.path / "conftest.py")
    pytester.makeini("[pytest]\ntestpaths = katas\n")
    return pytester.path


def write_learner_file(pytester, kata_folder, filename, source):
    path = pytester.path / "katas" / kata_folder / filename
    path.write_text(textwrap.dedent(source))
    return path


def reference_source(module):
    """A kata's model solution (`rules`, `capstone`), as it is in reference/solutions/
    (relative imports and all)."""
    return (REPO / "reference" / "solutions" / f"{module}.py").read_text()


def as_learner(source):
    """A reference module as a learner writes it: the engine only through `plugin.engine`
    (relative imports and `import reference` would be flagged, and fail outside the package)."""
    source = source.replace("from ..pieces import active\n", "from plugin.engine import pieces as _seam\nactive = _seam.active\n")
    source = re.sub(r"from \.+(\w*) import ", lambda m: "from plugin.engine import ", source)
    source = source.replace("import reference as ag\n", "from plugin import engine as ag\n")
    assert "from ." not in source and "import reference" not in source, source
    return source


def learner_source(module):
    """The model solution of a piece module (`saved`) or of a kata of functions
    (`capstone`), to plant as a learner's correct file."""
    return as_learner(reference_source(module))


ROW = re.compile(r"^  (\d\d_\w+)\s+(\d+/\d+|not run)\s+(not started|in progress|done|blocked|crashed|timed out)")


def table_rows(output_lines):
    """The kata rows of the feedback table, as (slug, tests, status) tuples."""
    return [m.groups() for m in map(ROW.match, output_lines) if m]


def row_line(result, slug):
    """The whole table line of one kata (with its speed column)."""
    return next(line for line in result.outlines if line.startswith(f"  {slug} "))


def kata_row(result, slug):
    """(tests, status) of one kata's row in a run's table."""
    rows = {name: (tests, status) for name, tests, status in table_rows(result.outlines)}
    assert slug in rows, "\n".join(result.outlines)
    return rows[slug]


def assert_stubs_all_todo(result, slug):
    """On the shipped stubs: exit 0, nothing passed or failed, every graded test a to-do,
    no traceback. Returns the run's outcome counts for further checks."""
    __tracebackhide__ = True
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()
    assert not {"passed", "failed", "error", "errors"} & set(outcomes), outcomes
    assert kata_row(result, slug) == (f"0/{outcomes.get('todo', 0)}", "not started")
    assert "Traceback" not in result.stdout.str()
    return outcomes


def assert_done(result, slug):
    """Exit 0 and the kata done, every graded test passed."""
    __tracebackhide__ = True
    assert result.ret == 0, result.stdout.str()
    tests, status = kata_row(result, slug)
    assert status == "done", result.stdout.str()
    passed, total = tests.split("/")
    assert passed == total, tests


# Pre-order: a node is listed when first met, so in a diamond the shared node can come before
# one of the nodes that feed it.
PRE_ORDER_TOPOSORT = '''
def topological_order(roots):
    order, seen, stack = [], set(), [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return order
'''

# The lesson's first answer to kata 03, which most learners write: a depth-first search,
# post-order, reversed, with an explicit stack (the model solution sorts the nodes newest
# first instead, for torch's order). A correct learner's file, and a base for planted mistakes.
DEPTH_FIRST_TOPOSORT = '''
def topological_order(roots):
    """Every node reachable from `roots` once, each before the nodes in its next_functions."""
    visited = set()
    post_order = []
    for root in roots:
        if root is None or root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, edges = stack[-1]
            for child, _ in edges:
                if child is not None and child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child.next_functions)))
                    break
            else:  # every child is done: the node is done
                stack.pop()
                post_order.append(node)
    post_order.reverse()
    return post_order
'''

# A toposort that recurses: right on small graphs, a RecursionError on a 100,000-deep chain.
RECURSIVE_TOPOSORT = '''
def topological_order(roots):
    order, seen = [], set()

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        for child, _ in node.next_functions:
            visit(child)
        order.append(node)

    for root in roots:
        visit(root)
    return order[::-1]
'''


# The lesson's warning, written as a learner would: an iterative depth-first search that
# keeps the nodes it has seen in a list (`in` on a list looks at every element).
VISITED_LIST_TOPOSORT = '''
def topological_order(roots):
    visited, order = [], []
    for root in roots:
        if root is None or root in visited:
            continue
        stack = [(root, False)]
        while stack:
            node, finished = stack.pop()
            if finished:
                order.append(node)
                continue
            if node in visited:
                continue
            visited.append(node)
            stack.append((node, True))
            for child, _ in node.next_functions:
                if child is not None and child not in visited:
                    stack.append((child, False))
    order.reverse()
    return order
'''


def pointed_message(result, said):
    """The one line of the failure a table line points to ("shown in full above (test_x)"):
    the message the table says where pytest prints no failure (--tb=no, the JSON report), read
    from the run's reports; `said` as it is when it is a message itself. The test named must
    be the one shown in full above the table."""
    from plugin.grading.table import SHOWN_ABOVE

    if not said.startswith(SHOWN_ABOVE):
        return said
    name = said[len(SHOWN_ABOVE):].strip()[1:-1]
    out = "\n".join(result.outlines)
    assert re.search(rf"^_+ {re.escape(name)} _+$", out, re.M), f"{name} is not shown in full above:\n{out}"
    reports = result.reprec.getreports("pytest_runtest_logreport")  # an in-process run's
    return next(r.kata_message for r in reports if r.failed and r.nodeid.split("::")[-1] == name)
