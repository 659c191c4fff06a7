"""Regenerate the kit's shipped data from katas/, or check that it is current: shipped.json
(sha256 of each kata's test files and stub), its copy in the installed package's metadata
(what the grader trusts; see shipped_backend.py) and stubs/<slug>/ (a pristine copy of each
learner file). Run in the kit's repository, on the shipped stubs; a kit test
(tests/test_workshop_integrity.py) fails while they are out of date:

    python -m plugin.shipped --update     # rewrite plugin/shipped/shipped.json and stubs/
    python -m plugin.shipped --check      # exit 1 and say what is stale
"""
import argparse
import json
import shutil

from .. import manifest
from .. import shipped as record  # module attributes: a test points them at a scratch folder

FORMAT_VERSION = 1


def current_manifest():
    """The manifest as the katas folder is now."""
    entries = {}
    for kata in manifest.katas():
        entries[kata.slug] = {
            "stub": {kata.learner_file: record.file_hash(kata.path)},
            "tests": {name: record.file_hash(path) for name, path in record.graded_files(kata).items()},
        }
    return {
        "version": FORMAT_VERSION,
        "regenerate": "python -m plugin.shipped --update",
        "katas": entries,
    }


def stale():
    """Sentences naming what shipped.json and stubs/ lack or get wrong."""
    problems = []
    shipped = record.load_shipped()
    wanted = current_manifest()
    if shipped is None:
        problems.append(f"{record.SHIPPED.name} is missing or not valid JSON")
    elif shipped.get("katas") != wanted["katas"]:
        slugs = set(shipped["katas"]) | set(wanted["katas"])
        for slug in sorted(slugs):
            if shipped["katas"].get(slug) != wanted["katas"].get(slug):
                problems.append(f"{record.SHIPPED.name}: the entry of {slug} is out of date")
    for kata in manifest.katas():
        copy = record.stub_copy(kata)
        if not copy.is_file() or record.file_hash(copy) != record.file_hash(kata.path):
            problems.append(f"stubs/{kata.slug}/{kata.learner_file} differs from katas/{kata.slug}/{kata.learner_file}")
    installed = record.installed_record_path()
    if installed is not None and shipped is not None and record.anchored() != shipped:
        problems.append(f"the copy installed with the kit ({installed}) differs from {record.SHIPPED.name}: "
                        "the grader checks the test files against it")
    return problems


def update():
    """Rewrite plugin/shipped/shipped.json and plugin/shipped/stubs/ from the katas folder.
    Returns the lines to print."""
    lines = []
    for kata in manifest.katas():
        # A guard against shipping a learner's finished solution as the stub.
        if not record.stubs_left(kata):
            raise SystemExit(
                f"katas/{kata.slug}/{kata.learner_file} has no stub left (no function that only "
                "raises NotImplementedError): it is not a shipped stub (run --update in the "
                "kit's repository, on the stubs)"
            )
    for kata in manifest.katas():
        copy = record.stub_copy(kata)
        if not copy.is_file() or copy.read_bytes() != kata.path.read_bytes():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(kata.path, copy)
            lines.append(f"copied katas/{kata.slug}/{kata.learner_file} to {copy.relative_to(manifest.ROOT)}")
    text = json.dumps(current_manifest(), indent=2, sort_keys=True) + "\n"
    if not record.SHIPPED.is_file() or record.SHIPPED.read_text(encoding="utf-8") != text:
        record.SHIPPED.write_text(text, encoding="utf-8")
        lines.append(f"wrote {record.SHIPPED.relative_to(manifest.ROOT)}")
    lines.extend(refresh_installed_copy(text))
    return lines or ["already up to date"]


def refresh_installed_copy(text):
    """The copy of shipped.json that `pip install` put in the installed package's metadata
    (what the grader trusts) made the same as the new one."""
    installed = record.installed_record_path()
    if installed is None:
        return [f"note: no copy of {record.SHIPPED.name} is installed with the kit; pip install -e . makes one"]
    if installed.read_text(encoding="utf-8") == text:
        return []
    installed.write_text(text, encoding="utf-8")
    return [f"refreshed the copy installed with the kit ({installed})"]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m plugin.shipped",
        description="The kit's record of its shipped test files and stubs (plugin/shipped/shipped.json, plugin/shipped/stubs/).",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--update", action="store_true", help="regenerate them from katas/ (in the kit's repository)")
    action.add_argument("--check", action="store_true", help="exit 1 when they are out of date")
    args = parser.parse_args(argv)
    if args.update:
        for line in update():
            print(line)
        return 0
    problems = stale()
    for line in problems:
        print(line)
    if problems:
        print("run: python -m plugin.shipped --update")
        return 1
    print("plugin/shipped/shipped.json and plugin/shipped/stubs/ match the katas")
    return 0

