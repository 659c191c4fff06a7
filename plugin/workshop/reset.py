"""Reset a kata: put its shipped stub back, keeping the learner's file as a backup beside it.

    katas reset 3                     # or: toposort, 03_toposort

The learner's file is first copied to NAME.py.bak-YYYYmmdd-HHMMSS (a suffix -2, -3, ...
when that name is taken); only once the copy is written and read back equal is the stub
written over the file. Nothing is ever deleted. It refuses, changing nothing, when the
backup cannot be written or when an editor holds unsaved changes of the file (a vim swap
file `.NAME.py.swp`, an emacs lock `.#NAME.py`). A file that is already the stub is left
alone. The stub comes from the kit's pristine copy (plugin/shipped/stubs/), so no git history is
needed. Exit status: 0 reset or nothing to do, 1 refused, 2 no such kata.
"""
import argparse
import datetime
import json
import os
import stat
import sys
from pathlib import Path

from .. import manifest
from ..files import write_atomically
from ..shipped import stub_copy
from ..state import STATUS_CACHE_KEY

STATUS_CACHE = Path(".pytest_cache") / "v" / STATUS_CACHE_KEY  # where pytest's cache keeps that key


class Refused(Exception):
    """Reset would lose or clobber something: nothing was changed."""


def unsaved_changes_marker(path):
    """An editor's sign that `path` has unsaved changes (vim swap, emacs lock), or None."""
    folder, name = path.parent, path.name
    candidates = [folder / f".{name}.{ext}" for ext in ("swp", "swo", "swn")] + [folder / f".#{name}"]
    return next((c for c in candidates if c.exists() or c.is_symlink()), None)


def backup_path(path, now=None):
    """NAME.py.bak-YYYYmmdd-HHMMSS beside `path`, never one that exists."""
    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    suffix = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{suffix}")
        suffix += 1
    return candidate


def reset(kata, now=None):
    """Restore the kata's stub. Returns the lines to print; raises Refused."""
    stub = stub_copy(kata)
    if not stub.is_file():
        raise Refused(f"the kit has no shipped copy of {kata.learner_file} (plugin/shipped/stubs/{kata.slug}/)")
    original = stub.read_bytes()
    target = kata.path
    where = f"katas/{kata.slug}/{kata.learner_file}"
    if not target.exists():
        write_atomically(target, original)
        return [f"{where} was missing: the stub is back."]
    current = target.read_bytes()
    if current == original:
        return [f"{where} is already the shipped stub: nothing to do."]
    marker = unsaved_changes_marker(target)
    if marker is not None:
        raise Refused(
            f"{marker.name} beside {where} says an editor has unsaved changes of it: save or "
            "close it in the editor first (or remove the stale swap/lock file), then reset again"
        )
    mode = stat.S_IMODE(target.stat().st_mode)  # the learner's file keeps its own mode
    backup = backup_path(target, now)
    try:
        with open(backup, "xb") as handle:  # "x": never clobber a file that appeared meanwhile
            handle.write(current)
        os.chmod(backup, mode)
        if backup.read_bytes() != current:
            raise OSError("the backup reads back different")
    except OSError as exc:
        raise Refused(f"could not write the backup {backup.name} ({exc.strerror or exc}): nothing changed") from None
    write_atomically(target, original, mode=mode)
    _forget_status(kata)
    return [
        f"Your file is kept as katas/{kata.slug}/{backup.name}",
        f"{where} is the shipped stub again. Grade it with: pytest --kata {kata.number}",
    ]


def _forget_status(kata):
    """The remembered status of the kata (pytest's cache) would still say "done"."""
    cache = manifest.KATAS_DIR.parent / STATUS_CACHE
    try:
        statuses = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(statuses, dict) and statuses.pop(kata.slug, None) is not None:
            cache.write_text(json.dumps(statuses, indent=2, sort_keys=True), encoding="utf-8")
    except (OSError, ValueError):
        pass  # no cache yet: nothing remembered


def main(argv=None, root=None):
    parser = argparse.ArgumentParser(
        prog="python -m plugin.workshop.reset",
        description="Restore a kata's shipped stub; your file is kept as NAME.py.bak-YYYYmmdd-HHMMSS beside it.",
    )
    parser.add_argument("kata", help="a number (3), a name (toposort) or a folder name (03_toposort)")
    args = parser.parse_args(argv)
    previous = manifest.use_root(root or Path.cwd())
    try:
        return _run(args.kata)
    finally:
        manifest.use_root(previous)


def _run(spec):
    kata = manifest.find_kata(spec)
    if kata is None:
        print(manifest.unknown_kata(spec), file=sys.stderr)
        return 2
    try:
        lines = reset(kata)
    except Refused as why:
        print(f"Not reset: {why}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
