"""`katas`: one front door to the kit, for learners and instructors.

    katas                        progress: every kata graded, the table and the next step
    katas next                   grade the first kata not done yet
    katas check K                grade kata K (a number, a name, or next)
    katas check K --require-done ... and exit 1 unless it is done (CI, classroom autograding)
    katas hint [K]               the next hint of kata K (else of the first kata not done)
    katas watch [K]              grade again on every save (Ctrl-C stops)
    katas show [K]               open the graph page of kata K's last wrong gradient
    katas reset K                put kata K's stub back; your file is kept as a backup
    katas report PATH            grade everything and write the JSON report to PATH
    katas report PATH --gradescope   ... as Gradescope's results.json
    katas scoreboard REPORTS... [--html FILE]   the class's reports as one table
    katas edition OUT/ [--released 01,02]       a course's student copy, without the model
                                 solutions of the katas not released yet
    katas edition --autograder OUT/              Gradescope's autograder for it: the full kit
    katas release K EDITION/     add kata K's model solution to an edition (commits it)

Each command is a thin layer over what the kit already has: grading is `pytest` with the
kit's options (the command line is printed first, so that it can be learned), the others
are the workshop modules. Arguments after `--` go to pytest. The commands that grade run
`pytest --kata-supervised`: pytest grades in a child process under a supervisor (hard time
and memory limits, a crash costs one kata; plugin/supervisor/).

Exit status: 0 done / all right, 1 not done (a test failed, or --require-done and the kata
is not done), 2 a usage error (no such kata, a bad option).
"""
import argparse
import shlex
import subprocess
import sys

EXIT_OK, EXIT_NOT_DONE, EXIT_USAGE = 0, 1, 2
# Grading commands print only what a learner acts on: no tracebacks' short summary, the
# table at the end (pytest -q still prints one dot per test).
QUIET = ("-q", "--no-header", "-rN")
SUPERVISED = "--kata-supervised"


def _pytest(args, show=True):
    """Run pytest in this folder with `args`; its exit status (pytest's own codes)."""
    command = [sys.executable, "-m", "pytest", *args]
    if show:
        print("$ pytest " + " ".join(shlex.quote(a) for a in args), flush=True)
    return subprocess.call(command)


def _graded(code):
    """pytest's exit status as the CLI's: 0 all right, 1 a test failed, 2 anything else
    (a usage error: pytest says 4 for those)."""
    if code in (0, 5):  # 5: no tests collected (a clone without katas)
        return EXIT_OK
    if code == 1:
        return EXIT_NOT_DONE
    return EXIT_USAGE


def _kata_args(kata):
    return ["--kata", kata] if kata else []


def cmd_progress(args):
    return _graded(_pytest([SUPERVISED, *QUIET, "--tb=no", *args.pytest_args]))


def cmd_next(args):
    return _graded(_pytest([SUPERVISED, "--kata", "next", *args.pytest_args]))


def cmd_check(args):
    options = [SUPERVISED, "--kata", args.kata]
    if args.require_done:
        options.append("--kata-require-done")
    return _graded(_pytest([*options, *args.pytest_args]))


def cmd_hint(args):
    return _graded(_pytest([*_kata_args(args.kata), "--hint", *QUIET, "--tb=no", *args.pytest_args]))


def cmd_report(args):
    options = [SUPERVISED, "--kata-report", args.path]
    if args.gradescope:
        options += ["--kata-report-format", "gradescope"]
    if args.per_test:
        options.append("--kata-report-per-test")
    if args.learner:
        options += ["--kata-learner", args.learner]
    return _graded(_pytest([*QUIET, "--tb=no", *options, *args.pytest_args]))


def cmd_watch(args):
    from . import watch

    interval = ["--interval", str(args.interval)] if args.interval is not None else []
    return watch.main([*(["--kata", args.kata] if args.kata else []), *interval, "--", *args.pytest_args],
                      prog="katas watch")


def cmd_show(args):
    from . import show

    return show.main([*([args.kata] if args.kata else []), *(["--no-open"] if args.no_open else [])])


def cmd_reset(args):
    from . import reset

    return reset.main([args.kata])


def cmd_scoreboard(args):
    from . import scoreboard

    return scoreboard.main([*args.reports, *(["--html", args.html] if args.html else [])])


def cmd_edition(args):
    from . import edition

    return edition.main([args.out, "--released", args.released, *(["--autograder"] if args.autograder else [])])


def cmd_release(args):
    from . import edition

    return edition.release_main([args.katas, args.edition])


def parser():
    top = argparse.ArgumentParser(
        prog="katas",
        description="Autograd Katas: build an autograd engine piece by piece, graded against PyTorch.",
        epilog="Exit status: 0 done or all right, 1 not done, 2 usage error. "
        "Arguments after -- go to pytest. `katas CMD --help` for more.",
    )
    commands = top.add_subparsers(dest="command", metavar="CMD")

    def command(name, function, text):
        sub = commands.add_parser(name, help=text, description=text)
        sub.set_defaults(run=function)
        return sub

    command("next", cmd_next, "grade the first kata not done yet")
    check = command("check", cmd_check, "grade one kata")
    check.add_argument("kata", help="a number (3), a name (toposort), or next")
    check.add_argument("--require-done", action="store_true",
                       help="exit 1 unless the kata is done (for CI and classroom autograding)")
    hint = command("hint", cmd_hint, "show the next hint of a kata (one more each time)")
    hint.add_argument("kata", nargs="?", help="the kata (default: the first one not done)")
    watch = command("watch", cmd_watch, "grade again on every save; Ctrl-C stops")
    watch.add_argument("kata", nargs="?", help="the kata to watch (default: next, then whichever you edit)")
    watch.add_argument("--interval", type=float, metavar="SECONDS", help="how often to look for saved changes (default 0.5)")
    show = command("show", cmd_show, "open the graph page of a kata's last wrong gradient in a browser")
    show.add_argument("kata", nargs="?", help="the kata (default: the page written last)")
    show.add_argument("--no-open", action="store_true", help="only print the page's address")
    reset = command("reset", cmd_reset, "put a kata's stub back; your file is kept as a backup")
    reset.add_argument("kata", help="a number (3), a name (toposort) or a folder name (03_toposort)")
    report = command("report", cmd_report, "grade every kata and write the JSON report")
    report.add_argument("path", help="where to write it (folders are created)")
    report.add_argument("--gradescope", action="store_true", help="write Gradescope's results.json instead")
    report.add_argument("--per-test", action="store_true",
                        help="Gradescope: one entry per test instead of one per kata")
    report.add_argument("--learner", help="the learner's name in the report")
    scoreboard = command("scoreboard", cmd_scoreboard, "merge reports into a class table")
    scoreboard.add_argument("reports", nargs="+", help="report files, folders of them, or glob patterns")
    scoreboard.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page")
    edition = command("edition", cmd_edition,
                      "write a course's student copy: the model solutions of the released katas only")
    edition.add_argument("out", help="the folder to write (new, or empty)")
    edition.add_argument("--released", default="", metavar="KATAS",
                         help="the katas whose model solutions it holds: 01,02,03, 1-3 or names (default: none)")
    edition.add_argument("--autograder", action="store_true",
                         help="write Gradescope's autograder instead: the full kit, setup.sh, run_autograder")
    release = command("release", cmd_release, "add katas' model solutions to a course edition, and commit them")
    release.add_argument("katas", help="the katas to release: 4, 04,05, 4-5 or names")
    release.add_argument("edition", help="the edition's folder (the course's template repository, or a student's)")
    return top


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = []
    if "--" in argv:
        split = argv.index("--")
        argv, pytest_args = argv[:split], argv[split + 1:]
    top = parser()
    try:
        args = top.parse_args(argv)
    except SystemExit as stop:  # argparse's usage error (2) or --help (0)
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    args.pytest_args = pytest_args
    run = getattr(args, "run", cmd_progress)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
