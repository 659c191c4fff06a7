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
