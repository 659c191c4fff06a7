"""Write a course edition: a student copy of the kit without the model solutions not released yet.

    katas edition OUT/ --released 01,02,03      # or 1-3, or names: rules,shapes,toposort
    katas edition OUT/                          # nothing released yet

OUT/ gets every kata's lesson, hints and graded tests, its learner file as shipped (the stub
from plugin/shipped/stubs/, whatever this checkout's file holds), the engine's core, the
plugin, the README, the docs and pyproject.toml; the model solutions (reference/solutions/)
of the released katas only; and edition.json, the record of what is released, which the
grader reads (plugin/edition.py). Not copied: the kit's own tests (tests/: they hold correct
variants of every kata), the benchmarks (they plant model solutions), CI, caches and
compiled files. OUT/ is a fresh git repository (`git init`, one commit): none of the kit's
history comes along.

It refuses an OUT/ that exists and is not empty (it never writes over anything), and a kata
that does not exist. Exit status: 0 written, 2 refused (nothing written).
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from .. import manifest
from ..edition import RECORD, record
from ..shipped import graded_files, stub_copy

EXIT_OK, EXIT_USAGE = 0, 2
# What a student copy holds at the top of the kit, besides katas/ and reference/solutions/.
TOP_FILES = ("README.md", "CONTRIBUTING.md", "pyproject.toml", "conftest.py", "autograd_katas_args.py", ".gitignore")
TOP_FOLDERS = ("docs", "examples", "plugin", "reference")
SKIPPED_NAMES = ("__pycache__", ".pytest_cache", ".hypothesis", ".benchmarks")
SKIPPED_SUFFIXES = (".pyc", ".pyo")
SOLUTIONS = Path("reference") / "solutions"


class Refused(Exception):
    """The edition cannot be written as asked: nothing was written."""


def released_katas(spec):
    """The katas named by `spec`: "01,02,03", "1-3", "rules,shapes", as --kata takes them."""
    chosen = []
    for item in (part.strip() for part in (spec or "").split(",")):
        if not item:
            continue
        first, dash, last = item.partition("-")
        if dash and first.strip().isdigit() and last.strip().isdigit():
            names = [str(n) for n in range(int(first), int(last) + 1)]
            if not names:
                raise Refused(f"the range {item!r} is empty (write the lower number first)")
        else:
            names = [item]
        for name in names:
            kata = manifest.find_kata(name)
            if kata is None:
                raise Refused(manifest.unknown_kata(name))
            if kata not in chosen:
                chosen.append(kata)
    return sorted(chosen, key=lambda k: k.number)


def files_to_copy(released, root=manifest.ROOT):
    """{path in the edition: the file to copy there}."""
    files = {}
    for name in TOP_FILES:
        if (root / name).is_file():
            files[Path(name)] = root / name
    for folder in TOP_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not _skipped(relative) and relative.parent != SOLUTIONS:
                files[relative] = path
    solutions = root / SOLUTIONS
    files[SOLUTIONS / "__init__.py"] = solutions / "__init__.py"
    for kata in released:
        files[Path(kata.reference_module)] = root / kata.reference_module
    for kata in manifest.katas():
        folder = Path("katas") / kata.slug
        for path in [kata.lesson, kata.hints, *graded_files(kata).values()]:
            if path.is_file():
                files[folder / path.name] = path
        files[folder / kata.learner_file] = stub_copy(kata)  # the stub as shipped
    return files


def _skipped(relative):
    return any(part in SKIPPED_NAMES for part in relative.parts) or relative.suffix in SKIPPED_SUFFIXES


def write(out, released):
    """Write the edition to `out` (a folder that does not exist or is empty); the number of files."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Refused(f"{out} exists and is not empty: an edition is written to a new folder, never over one")
    files = files_to_copy(released)
    out.mkdir(parents=True, exist_ok=True)
    for relative, source in files.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    (out / RECORD).write_text(record(k.number for k in released), encoding="utf-8")
    return len(files) + 1


def git_init(out, released):
    """A fresh repository with the edition as its one commit; a sentence for the instructor."""
    if shutil.which("git") is None:
        return "git is not installed: run `git init` in it before you publish it"
    names = ", ".join(f"{k.number:02d}" for k in released) or "none"
    identity = []
    if subprocess.run(["git", "config", "user.email"], cwd=out, capture_output=True).returncode != 0:
        identity = ["-c", "user.name=Autograd Katas", "-c", "user.email=autograd-katas@localhost"]
    steps = [["git", "init", "-q"], ["git", "add", "-A"],
             ["git", *identity, "commit", "-q", "-m", f"Autograd Katas, course edition (released: {names})"]]
    for step in steps:
        done = subprocess.run(step, cwd=out, capture_output=True, text=True)
        if done.returncode != 0:
            return f"`{' '.join(step)}` failed ({done.stderr.strip()}): the files are written, the repository is not"
    return "a fresh git repository, one commit"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="katas edition", description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the folder to write (new, or empty)")
    parser.add_argument("--released", default="",
                        help="the katas whose model solutions it holds: 01,02,03 or 1-3 or names (default: none)")
    args = parser.parse_args(argv)
    try:
        released = released_katas(args.released)
        count = write(args.out, released)
    except Refused as refused:
        print(f"katas edition: {refused}", file=sys.stderr)
        return EXIT_USAGE
    left_out = [k for k in manifest.katas() if k not in released]
    print(f"Wrote the course edition to {args.out}: {count} files, {git_init(Path(args.out), released)}.")
    print("  model solutions released: " + (", ".join(k.slug for k in released) or "none"))
    print("  left out: " + (", ".join(k.slug for k in left_out) or "nothing"))
    print("Next: publish it as your course's template repository (docs/instructors.md, "
          "\"Running a graded course\").")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
