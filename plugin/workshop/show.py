"""Open the graph page of a kata's last wrong gradient in a browser (`katas show`).

A grading run writes the page when a gradient differs from torch's (grading/session.py, in
pytest's cache); this finds it again, prints its address and opens it.
"""
import argparse
import sys
import webbrowser
from pathlib import Path

from .. import manifest
from ..state import GRAPH_PAGES_DIR


def pages(root):
    """The graph pages written under `root`, oldest first."""
    folder = Path(root) / ".pytest_cache" / "d" / GRAPH_PAGES_DIR
    found = folder.glob("*.html") if folder.is_dir() else []
    return sorted(found, key=lambda page: page.stat().st_mtime)


def main(argv=None, root=None, open_page=webbrowser.open):
    parser = argparse.ArgumentParser(
        prog="katas show", description="Open the graph page of a kata's last wrong gradient in a browser.")
    parser.add_argument("kata", nargs="?", help="the kata (default: the page written last)")
    parser.add_argument("--no-open", action="store_true", help="only print the page's address")
    args = parser.parse_args(argv)
    root = Path(root or Path.cwd())
    previous = manifest.use_root(root)
    try:
        kata = manifest.find_kata(args.kata) if args.kata else None
    finally:
        manifest.use_root(previous)
    if args.kata and kata is None:
        print(manifest.unknown_kata(args.kata), file=sys.stderr)
        return 2
    found = [page for page in pages(root) if kata is None or page.stem == kata.slug]
    if not found:
        which = f"kata {kata.slug}" if kata else "any kata"
        print(f"No graph page for {which} yet: a page is written when a gradient differs from "
              f"torch's (grade with: pytest{f' --kata {kata.number}' if kata else ''}).", file=sys.stderr)
        return 1
    address = found[-1].resolve().as_uri()
    print(address)
    if not args.no_open:
        open_page(address)
    return 0
