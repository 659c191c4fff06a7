"""The documents a learner and an instructor read: every link leads somewhere, every module
path they name exists, and the README starts with the learner."""
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A path to a file of the kit in backquotes: `plugin/grading/oracle.py`, `reference/solutions/`.
KIT_PATH = re.compile(r"`((?:plugin|reference|katas|tests|benchmarks|docs|examples)/[\w./-]*)`")


def documents():
    tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], cwd=REPO, capture_output=True, text=True).stdout.split()
    found = [REPO / name for name in tracked if (REPO / name).is_file()]
    return found or sorted(p for p in REPO.rglob("*.md") if ".venv" not in p.parts and ".git" not in p.parts)


def test_there_are_documents_to_check():
    names = {p.relative_to(REPO).as_posix() for p in documents()}
    assert {"README.md", "CONTRIBUTING.md", "docs/instructors.md", "docs/architecture.md",
            "docs/known-differences.md"} <= names


def test_every_relative_link_leads_to_a_file_of_the_repository():
    broken = []
    for doc in documents():
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a web address or an anchor
            if not (doc.parent / target.split("#")[0]).exists():
                broken.append(f"{doc.relative_to(REPO)}: {target}")
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_every_kit_path_a_document_names_exists():
    missing = []
    for doc in documents():
        for path in KIT_PATH.findall(doc.read_text(encoding="utf-8")):
            if any(mark in path for mark in ("NN", "*", "<", "...")):
                continue  # a pattern, not a path
            if not (REPO / path.rstrip("/")).exists():
                missing.append(f"{doc.relative_to(REPO)}: {path}")
    assert not missing, "paths that are not in the repository:\n" + "\n".join(missing)


def test_no_document_refers_to_the_specification_outside_the_repository():
    for doc in documents():
        assert "SPEC" not in doc.read_text(encoding="utf-8"), doc


def test_the_readme_opens_with_the_two_commands():
    """Its first screen: what the kit is, then one command that installs everything (CPU
    torch from torch's own index included) and one that grades."""
    first_screen = "\n".join((REPO / "README.md").read_text(encoding="utf-8").splitlines()[:40])
    blocks = re.findall(r"```bash\n(.*?)```", first_screen, re.S)
    assert blocks, first_screen
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(commands) == 2, commands
    install, grade = commands
    assert "pip install -e ." in install and "download.pytorch.org/whl/cpu" in install
    assert grade.strip() == "pytest"


def test_kata_02s_lesson_names_each_rules_nodes_as_the_engine_does():
    """Issue 31.2: a message names a node (SelectBackward0); the lesson says whose rule it is.
    Every node the engine records for a kata 02 rule is in the table, under that rule."""
    import reference.ops as ops
    from reference.graph import NodeKind

    lesson = (REPO / "katas" / "02_shapes" / "README.md").read_text(encoding="utf-8")
    table = {}
    for rule, nodes in re.findall(r"^\| `(\w+_backward)` \| (.*`\w+Backward\d`.*) \|$", lesson, re.M):
        table[rule] = set(re.findall(r"`(\w+Backward\d)`", nodes))
    shapes_rules = {"sum_backward", "mean_backward", "max_backward", "reshape_backward",
                    "transpose_backward", "matmul_backward", "getitem_backward"}
    engine = {}
    kinds = [v for v in vars(ops).values() if isinstance(v, NodeKind)]
    kinds += [v for table_ in vars(ops).values() if isinstance(table_, dict) for v in table_.values() if isinstance(v, NodeKind)]
    for kind in kinds:
        if kind.rule in shapes_rules:
            engine.setdefault(kind.rule, set()).add(kind.name)
    assert table == engine, f"the lesson's table {table}\nthe engine's nodes {engine}"
