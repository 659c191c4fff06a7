"""Write a course edition: a student copy of the kit without the model solutions not released yet.

    katas edition OUT/ --released 01,02,03      # or 1-3, or names: elementwise_rules,shapes
    katas edition OUT/                          # nothing released yet
    katas edition --autograder OUT/             # Gradescope's autograder: the full kit
    katas release 4 EDITION/                    # release kata 04's model solution into it

OUT/ gets every kata's lesson, hints and graded tests, its learner file as shipped (the stub
from plugin/shipped/stubs/, whatever this checkout's file holds), the engine's core, the
plugin, the README, the docs and pyproject.toml; the model solutions (reference/solutions/)
of the released katas only; and edition.json, the record of what is released, which the
grader reads (plugin/edition.py). Not copied: the kit's own tests (tests/: they hold correct
variants of every kata), the benchmarks (they plant model solutions), CI, caches and
compiled files. It has the GitHub Classroom workflow (`.github/workflows/classroom.yml`, a step
per kata). OUT/ is a fresh git repository (`git init`, one commit): none of the kit's history
comes along.

`--autograder` writes the content of Gradescope's autograder zip instead: the full kit (every
model solution: the autograder grades a submission's learner files against the reference,
speed included), with `setup.sh` and `run_autograder` (examples/gradescope/) at its top.

`katas release N EDITION/`, run in the kit, adds kata N's model solution to an edition (the
course's template repository, or a student's) and its number to edition.json, and commits
those two files alone when the folder is a git repository; a student's katas/ files are never
touched.

They refuse an OUT/ that exists and is not empty (they never write over anything), a kata
that does not exist, a folder that is not an edition. Exit status: 0 written, 2 refused
(nothing written).
"""
import argparse
import json
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
CLASSROOM = (Path("examples") / "github-classroom" / "classroom.yml", Path(".github") / "workflows" / "classroom.yml")
GRADESCOPE = [Path("examples") / "gradescope" / name for name in ("setup.sh", "run_autograder")]


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


def write(out, released, autograder=False):
    """Write the edition (or with `autograder`, the autograder's copy of the full kit) to
    `out`, a folder that does not exist or is empty; the number of files."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Refused(f"{out} exists and is not empty: an edition is written to a new folder, never over one")
    root = manifest.ROOT
    if autograder:
        files = files_to_copy(manifest.katas())
        files.update({Path(path.name): root / path for path in GRADESCOPE})
    else:
        files = files_to_copy(released)
        files[CLASSROOM[1]] = root / CLASSROOM[0]
    out.mkdir(parents=True, exist_ok=True)
    for relative, source in files.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    if autograder:
        return len(files)
    (out / RECORD).write_text(record(k.number for k in released), encoding="utf-8")
    return len(files) + 1


def release(spec, folder):
    """Add the model solutions of the katas `spec` names to the edition in `folder`, and their
    numbers to its record; the paths written (relative to `folder`)."""
    folder = Path(folder)
    if not (folder / RECORD).is_file():
        raise Refused(f"{folder} is not a course edition (no {RECORD}): make one with `katas edition`")
    before = json.loads((folder / RECORD).read_text(encoding="utf-8")).get("released", [])
    katas = released_katas(spec)
    if not katas:
        raise Refused("name the katas to release (a number, a range like 4-5, or names)")
    written = []
    for kata in katas:
        target = folder / kata.reference_module
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(manifest.ROOT / kata.reference_module, target)
        written.append(Path(kata.reference_module))
    (folder / RECORD).write_text(record({int(n) for n in before} | {k.number for k in katas}), encoding="utf-8")
    return written + [Path(RECORD)]


def _commit(folder, paths, message):
    """Commit `paths` alone (a student's other changes stay as they are); a sentence."""
    if shutil.which("git") is None or not (Path(folder) / ".git").exists():
        return "not a git repository: commit them yourself"
    identity = []
    if subprocess.run(["git", "config", "user.email"], cwd=folder, capture_output=True).returncode != 0:
        identity = ["-c", "user.name=Autograd Katas", "-c", "user.email=autograd-katas@localhost"]
    names = [str(p) for p in paths]
    for step in (["git", "add", "--", *names], ["git", *identity, "commit", "-q", "-m", message, "--", *names]):
        done = subprocess.run(step, cwd=folder, capture_output=True, text=True)
        if done.returncode != 0:
            return f"`{' '.join(step[:3])} ...` failed ({done.stderr.strip()}): commit them yourself"
    return "committed"


def git_init(out, released):
    """A fresh repository with the edition as its one commit; a sentence for the instructor."""
    if shutil.which("git") is None:
        return "git is not installed: run `git init` in it before you publish it"
    done = subprocess.run(["git", "init", "-q"], cwd=out, capture_output=True, text=True)
    if done.returncode != 0:
        return f"`git init` failed ({done.stderr.strip()}): the files are written, the repository is not"
    names = ", ".join(f"{k.number:02d}" for k in released) or "none"
    outcome = _commit(out, ["."], f"Autograd Katas, course edition (released: {names})")
    return "a fresh git repository, one commit" if outcome == "committed" else outcome


def main(argv=None):
    parser = argparse.ArgumentParser(prog="katas edition", description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the folder to write (new, or empty)")
    parser.add_argument("--released", default="",
                        help="the katas whose model solutions it holds: 01,02,03 or 1-3 or names (default: none)")
    parser.add_argument("--autograder", action="store_true",
                        help="write Gradescope's autograder (the full kit, setup.sh, run_autograder) instead")
    args = parser.parse_args(argv)
    try:
        released = released_katas(args.released)
        count = write(args.out, released, autograder=args.autograder)
    except Refused as refused:
        print(f"katas edition: {refused}", file=sys.stderr)
        return EXIT_USAGE
    if args.autograder:
        print(f"Wrote Gradescope's autograder to {args.out}: {count} files, the full kit. Zip its content "
              f"(cd {args.out} && zip -r ../autograder.zip .) and upload it as the assignment's autograder.")
        return EXIT_OK
    left_out = [k for k in manifest.katas() if k not in released]
    print(f"Wrote the course edition to {args.out}: {count} files, {git_init(Path(args.out), released)}.")
    print("  model solutions released: " + (", ".join(k.slug for k in released) or "none"))
    print("  left out: " + (", ".join(k.slug for k in left_out) or "nothing"))
    print("Next: publish it as your course's template repository (docs/instructors.md, "
          "\"Running a graded course\").")
    return EXIT_OK


def release_main(argv=None):
    parser = argparse.ArgumentParser(prog="katas release",
                                     description="release katas' model solutions into a course edition")
    parser.add_argument("katas", help="the katas to release: 4, 04,05, 4-5 or names")
    parser.add_argument("edition", help="the edition's folder (the course's template repository, or a student's)")
    args = parser.parse_args(argv)
    try:
        written = release(args.katas, args.edition)
    except Refused as refused:
        print(f"katas release: {refused}", file=sys.stderr)
        return EXIT_USAGE
    names = ", ".join(f"{k.number:02d}" for k in released_katas(args.katas))
    outcome = _commit(args.edition, written, f"Release the model solution of kata {names}")
    print(f"Released kata {names} into {args.edition}: " + ", ".join(map(str, written)) + f" ({outcome}).")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
