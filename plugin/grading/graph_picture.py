"""The graph as a picture: a graph of nodes drawn by Graphviz, for a failing gradient test (the
learner's graph and torch's side by side, each node with the gradient it received and the
ones it returned, the first wrong node marked) and for the lessons that explain a graph.

Graphviz lays the graph out: its Python package writes the DOT text and runs the `dot`
program (Debian and Ubuntu: `apt-get install graphviz`; macOS: `brew install graphviz`).
Where either is missing, the page shows the text tree instead (graph_view.draw), and says
what to install.

    python -m plugin.grading.graph_picture --lessons    # redraw the lessons' pictures
"""
import hashlib
import html
import shutil
import sys
from pathlib import Path

from . import graph_view

WRONG = "#d62728"  # the first wrong node: red, in both graphs
LEAF = "#e8f0fe"
NODE = "#ffffff"


# --- the graph in DOT ---------------------------------------------------------------------------

class Drawing:
    """One graph as Graphviz's DOT text: nodes (a name, lines of notes) and the edges the
    gradients flow along, from the output down to the leaves."""

    def __init__(self, name):
        self.name = name
        self.lines = []
        self.ids = {}

    def node_id(self, node):
        return self.ids.setdefault(id(node), f"n{len(self.ids)}")

    def add(self, node, notes=(), wrong=False, label=None):
        leaf = graph_view.node_name(node) == "AccumulateGrad"
        title = label or graph_view.node_name(node)
        text = "\\n".join([_escape(title), *(_escape(n) for n in notes)])
        style = f'fillcolor="{WRONG}", fontcolor="white", class="wrong", id="wrong_{self.name}"' if wrong else (
            f'fillcolor="{LEAF if leaf else NODE}"')
        self.lines.append(f'  {self.node_id(node)} [label="{text}", {style}];')

    def edge(self, parent, child):
        self.lines.append(f"  {self.node_id(parent)} -> {self.node_id(child)};")

    def source(self):
        head = (f'digraph "{self.name}" {{\n  rankdir=TB; bgcolor="transparent";\n'
                '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];\n'
                '  edge [color="#555555", arrowsize=0.7];')
        return "\n".join([head, *self.lines, "}"]) + "\n"


def _escape(text):
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def draw_graph(roots, name="graph", notes=None, wrong=None, labels=None, limit=60):
    """The graph below `roots` (nodes) as a Drawing: `notes(node)` gives a node's extra lines,
    `wrong` is the node to mark, `labels` names leaves ({id(tensor): "x"})."""
    drawing, seen, stack = Drawing(name), set(), [r for r in roots if r is not None][::-1]
    labels = labels or {}
    while stack and len(seen) < limit:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        label = None
        if variable is not None and id(variable) in labels:
            label = f"AccumulateGrad ({labels[id(variable)]})"
        drawing.add(node, notes(node) if notes else (), wrong=node is wrong, label=label)
        for child, _ in node.next_functions:
            if child is not None:
                drawing.edge(node, child)
                stack.append(child)
    return drawing


# --- rendering -------------------------------------------------------------------------------

def can_render():
    """Whether Graphviz can draw here: its Python package and the `dot` program."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


MISSING = ("The graph is shown as text: for a picture, install Graphviz (its `dot` program: "
           "apt-get install graphviz, or brew install graphviz) and its Python package (pip install graphviz).")


def svg(drawing):
    """The drawing as SVG text (Graphviz's layout), or None where Graphviz cannot draw."""
    if not can_render():
        return None
    import graphviz

    try:
        return graphviz.Source(drawing.source()).pipe(format="svg").decode("utf-8")
    except (graphviz.ExecutableNotFound, graphviz.CalledProcessError):
        return None


def _panel(title, drawing, text_tree):
    picture = svg(drawing)
    body = picture[picture.index("<svg"):] if picture else f"<pre>{html.escape(text_tree)}</pre>"
    return f'<section><h2>{html.escape(title)}</h2>\n{body}\n</section>'


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }}
h1 {{ font-size: 1.3em; }} h2 {{ font-size: 1.1em; }}
.panels {{ display: flex; gap: 2em; align-items: flex-start; flex-wrap: wrap; }}
section {{ border: 1px solid #ccc; border-radius: 6px; padding: 0.5em 1em; }}
pre.message {{ background: #f6f6f6; padding: 0.8em; white-space: pre-wrap; }}
.note {{ color: #666; }}
</style></head>
<body>
<h1>{title}</h1>
<pre class="message">{message}</pre>
<div class="panels">
{panels}
</div>
<p class="note">{note}</p>
</body></html>
"""


def page(title, message, panels):
    """A self-contained HTML page: `panels` is a list of (heading, Drawing, text tree)."""
    drawn = [_panel(heading, drawing, tree) for heading, drawing, tree in panels]
    note = ("Each node: torch's name, the gradient it received (of its output) and the ones it "
            "returned (for its inputs). The first node whose gradients part from torch's is red.")
    if not can_render():
        note += " " + MISSING
    return PAGE.format(title=html.escape(title), message=html.escape(message), panels="\n".join(drawn),
                       note=html.escape(note))


# --- a failing gradient test -------------------------------------------------------------------------

class Mismatch:
    """What the oracle knows when a gradient differs: both graphs, their paired nodes, the
    gradients each node received and returned, the first wrong node."""

    def __init__(self, op, message, engine_root, torch_root, pairs, ours, theirs, wrong, labels):
        self.op, self.message = op, message
        self.engine_root, self.torch_root = engine_root, torch_root
        self.pairs, self.ours, self.theirs = pairs, ours, theirs
        self.wrong, self.labels = wrong, labels

    def html(self):
        index = {id(node): i for i, pair in enumerate(self.pairs) for node in pair}
        wrong_torch = next((t for e, t in self.pairs if e is self.wrong), None)
        torch_labels = {}
        for (ours, theirs) in self.pairs:  # the leaves' names, on torch's side too
            variable, other = getattr(ours, "variable", None), getattr(theirs, "variable", None)
            if variable is not None and other is not None and id(variable) in self.labels:
                torch_labels[id(other)] = self.labels[id(variable)]

        def notes(records):
            def lines(node):
                record = records.get(index.get(id(node)))
                if record is None:
                    return ["(not run)"] if graph_view.node_name(node) != "AccumulateGrad" or index.get(id(node)) is None else []
                received, returned = record
                out = [f"received {graph_view.abbreviate(received, limit=6)}"]
                out += [f"returned[{k}] {graph_view.abbreviate(g, limit=6)}" for k, g in enumerate(returned) if g is not None]
                return out
            return lines

        yours = draw_graph([self.engine_root], "yours", notes(self.ours), self.wrong, self.labels)
        torchs = draw_graph([self.torch_root], "torch", notes(self.theirs), wrong_torch, torch_labels)
        return page(f"{self.op}: the graph", self.message, [
            ("your engine", yours, graph_view.draw(self.engine_root, self.wrong, self.labels)),
            ("torch", torchs, graph_view.draw(self.torch_root, wrong_torch)),
        ])


def write_page(mismatch, path):
    """Write the page of a mismatch to `path` (its folders made); the path written."""
    from ..files import write_atomically

    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, mismatch.html().encode("utf-8"))
    return path


# --- the lessons' pictures ----------------------------------------------------------------------------

def _gradient_notes(passes):
    """Run one backward pass per (name, root) and note on each node the gradient it received
    and returned in it (only what it received, per pass, where there are several)."""
    nodes = []
    for _, root in passes:
        nodes += [n for n in graph_view.graph_nodes(root.grad_fn) if n not in nodes]
    seen = {id(n): [] for n in nodes}
    for name, root in passes:
        records, handles = graph_view.record_gradients(nodes)
        root.backward(retain_graph=True)
        for handle in handles:
            handle.remove()
        for i, node in enumerate(nodes):
            if i in records:
                seen[id(node)].append((name, records[i]))

    def notes(node):
        runs = seen.get(id(node), [])
        if len(passes) > 1:
            return [f"{name}: received {graph_view.abbreviate(received, limit=4)}" for name, (received, _) in runs]
        lines = []
        for _, (received, returned) in runs:
            lines.append(f"received {graph_view.abbreviate(received, limit=4)}")
            lines += [f"returned {graph_view.abbreviate(g, limit=4)}" for g in returned if g is not None]
        return lines
    return notes


def lesson_drawings():
    """{lesson picture path: Drawing}: the graphs the lessons explain, drawn from the engine."""
    import numpy as np

    import reference as lib

    drawings = {}
    # kata 04: a diamond, h feeds two branches; its node gets the sum of both
    x = lib.tensor(np.array([0.5, -1.0]), requires_grad=True)
    h = x.tanh()
    y = (h * 2 + h.exp()).sum()
    notes = _gradient_notes([("y", y)])
    drawings["katas/04_accumulation/graph-diamond.svg"] = draw_graph([y.grad_fn], "diamond", notes, labels={id(x): "x"})

    # kata 07: d and e share c; the nodes that saved tensors are the ones a pass frees
    x = lib.tensor(np.array([0.3, -0.2]), requires_grad=True)
    c = (x * x).sigmoid() * x
    d = c.sum()
    e = (c * 3.0).exp().sum()

    def saved(node):
        kept = getattr(node, "_saved", None)
        count = 0 if kept is None else len([t for t in kept.unpack() if t is not None])
        return [f"saves {count} tensor{'s' if count != 1 else ''}: freed by a pass"] if count else ["saves nothing"]
    drawing = draw_graph([d.grad_fn, e.grad_fn], "shared", saved, labels={id(x): "x"})
    drawing.lines.insert(0, '  d [label="d = c.sum()", shape=plaintext]; e [label="e = (c * 3).exp().sum()", shape=plaintext];')
    drawing.lines.append(f"  d -> {drawing.node_id(d.grad_fn)}; e -> {drawing.node_id(e.grad_fn)};")
    drawings["katas/07_retain_graph/graph-shared.svg"] = drawing

    # kata 10: a trunk with two heads, the multi-task losses
    w = lib.tensor(np.array([[0.5, -1.0], [1.5, 0.2]]), requires_grad=True)
    trunk = (lib.tensor(np.array([[1.0, 2.0]])) @ w).tanh()
    loss1, loss2 = (trunk ** 2).sum(), trunk.sigmoid().mean()
    notes = _gradient_notes([("loss1", loss1), ("loss2", loss2)])
    drawing = draw_graph([loss1.grad_fn, loss2.grad_fn], "multitask", notes, labels={id(w): "W"})
    drawing.lines.insert(0, '  l1 [label="loss1", shape=plaintext]; l2 [label="loss2", shape=plaintext];')
    drawing.lines.append(f"  l1 -> {drawing.node_id(loss1.grad_fn)}; l2 -> {drawing.node_id(loss2.grad_fn)};")
    drawings["katas/10_capstone/graph-multitask.svg"] = drawing
    return drawings


def fingerprint(drawing):
    """The hash of a drawing's DOT text, written into its SVG: a kit test redraws the graph and
    compares (the layout itself may differ between Graphviz versions)."""
    return hashlib.sha256(drawing.source().encode()).hexdigest()[:16]


def lesson_svg(drawing):
    picture = svg(drawing)
    if picture is None:
        return None
    start = picture.index("<svg")
    return f"<!-- drawn by plugin/grading/graph_picture.py; dot source {fingerprint(drawing)} -->\n{picture[start:]}"


def main(argv):
    if argv != ["--lessons"]:
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    if not can_render():
        print(MISSING)
        return 1
    root = Path(__file__).resolve().parents[2]
    for path, drawing in lesson_drawings().items():
        (root / path).write_text(lesson_svg(drawing), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
