"""Watch mode: grade a kata again each time you save a file in it.

    katas watch           # starts with the first unfinished kata (--kata next)
    katas watch 3         # only kata 03
    katas watch -- -v     # arguments after -- go to pytest

It polls the modification times of the katas' .py files (no extra dependency), and when a
file of kata K changes, clears the screen and runs `python -m pytest --kata-supervised --kata K`
again, supervised as `katas check` is (with --kata N, only kata N's folder is watched).
Ctrl-C stops it cleanly (exit status 0); so does SIGTERM (a closed terminal tab, `kill`),
which stops a pytest run in progress too.
"""
import argparse
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from .. import manifest

CLEAR = "\033[2J\033[H"
SKIPPED_PARTS = ("__pycache__", ".hypothesis", ".pytest_cache")


def snapshot(folders):
    """{path: (mtime_ns, size)} of the .py files under `folders`."""
    state = {}
    for folder in folders:
        for path in folder.rglob("*.py"):
            if any(part in SKIPPED_PARTS for part in path.parts) or path.name.startswith("."):
                continue
            try:
                info = path.stat()
            except OSError:  # removed while we looked
                continue
            state[path] = (info.st_mtime_ns, info.st_size)
    return state


def changed_kata(before, after):
    """The kata of the first file that changed, appeared or went away, or None."""
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            return manifest.kata_for_path(path)
    return None


class Terminated(Exception):
    """SIGTERM (or SIGHUP) reached the watcher: stop, and stop the pytest it started."""


def _on_terminate(signum, frame):
    raise Terminated(signal.Signals(signum).name)


SUPERVISED = "--kata-supervised"  # grade under the supervisor (plugin/supervisor/), as `katas` does


def run_pytest(spec, extra, root):
    command = [sys.executable, "-m", "pytest", SUPERVISED, "--kata", str(spec), *extra]
    if sys.stdout.isatty():
        print(CLEAR, end="", flush=True)
    else:
        print("=" * 70, flush=True)
    print("$ " + shlex.join(["pytest", SUPERVISED, "--kata", str(spec), *extra]), flush=True)
    process = subprocess.Popen(command, cwd=root)
    try:
        return process.wait()
    except KeyboardInterrupt:
        _stop(process)
        raise
    except Terminated:
        process.terminate()  # the signal was sent to the watcher only: pass it on
        _stop(process)
        raise


def _stop(process):
    try:
        process.wait(timeout=5)  # Ctrl-C reached it too (same terminal): let it finish
    except (subprocess.TimeoutExpired, KeyboardInterrupt, Terminated):
        process.kill()
        process.wait()


def watch(spec, extra, interval, max_runs=None, root=None):
    root = Path(root or Path.cwd())
    kata = None if spec == "next" else manifest.find_kata(spec)
    folders = [kata.folder] if kata else [k.folder for k in manifest.katas()]
    runs = 0
    state = snapshot(folders)
    while True:
        run_pytest(spec, extra, root)
        runs += 1
        if max_runs is not None and runs >= max_runs:
            return
        where = f"katas/{kata.slug}" if kata else "katas/"
        print(f"\nWatching {where} for saved changes (Ctrl-C to stop)", flush=True)
        while True:
            time.sleep(interval)
            now = snapshot(folders)
            if now != state:
                changed = changed_kata(state, now)
                time.sleep(min(interval, 0.2))  # let an editor finish writing
                state = snapshot(folders)
                if kata is None and changed is not None:
                    spec = changed.number  # grade the kata being edited
                break


def main(argv=None, prog="python -m plugin.workshop.watch"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Grade a kata again each time you save a file in it. Ctrl-C stops.",
    )
    parser.add_argument("--kata", default="next", metavar="NAME",
                        help="the kata to watch: a number, a name or 'next' (default: the first unfinished, "
                        "then whichever kata you edit)")
    parser.add_argument("--interval", type=float, default=0.5, metavar="SECONDS",
                        help="how often to look for changes (default 0.5)")
    parser.add_argument("--max-runs", type=int, default=None, help=argparse.SUPPRESS)  # for the kit's tests
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: arguments for pytest")
    args = parser.parse_args(argv)
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    # Ctrl-C raises KeyboardInterrupt even when started from a shell that ignored SIGINT.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _on_terminate)
    previous = manifest.use_root(Path.cwd())
    try:
        if args.kata != "next" and manifest.find_kata(args.kata) is None:
            print(manifest.unknown_kata(args.kata), file=sys.stderr)
            return 2
        watch(args.kata, extra, args.interval, args.max_runs)
    except KeyboardInterrupt:
        print("\nStopped watching. Goodbye!", flush=True)
    except Terminated as stopped:
        print(f"\nStopped watching ({stopped}).", flush=True)
        return 128 + getattr(signal, str(stopped))  # the shell's code for a process ended by it
    finally:
        manifest.use_root(previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
