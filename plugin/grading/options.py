"""Command-line options, grouped under "autograd-katas" in `pytest --help`."""
import argparse
import os
from pathlib import Path

from .assembly import SOLUTIONS


def pytest_addoption(parser):
    group = parser.getgroup("autograd-katas", "Autograd Katas grading")
    group.addoption(
        "--solution",
        choices=SOLUTIONS,
        default="learner",
        help="whose pieces the katas run on: the learner's files (default) or the reference "
        "engine's (what CI does to check the kit itself)",
    )
    group.addoption(
        "--kata",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this kata: a number (3), a name (toposort, 03_toposort) or 'next' "
        "(the first kata not done yet); repeatable",
    )
    group.addoption(
        "--hint",
        action="store_true",
        default=False,
        help="show the next hint of the kata chosen with --kata (else the first kata not done); "
        "one more each time",
    )
    group.addoption(
        "--kata-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="time limit of one kata test, so that an endless loop fails that test only (default 30)",
    )
    group.addoption(
        "--cuda",
        choices=("sim", "cupy", "auto"),
        default=None,
        help="the CUDA backend of 'cuda' tensors: the simulated GPU (the default, also set by "
        "AUTOGRAD_KATAS_CUDA), CuPy on a real GPU, or auto (CuPy when it works)",
    )
    group.addoption(
        "--kata-report",
        default=None,
        metavar="PATH",
        help="write this run's JSON report (for an instructor's scoreboard) to PATH; "
        "its folders are created, a file already there is replaced",
    )
    group.addoption(
        "--kata-report-format",
        choices=("json", "gradescope"),
        default="json",
        help="the report's format: the kit's JSON (default) or Gradescope's results.json "
        "(points per kata from [tool.autograd-katas] in pyproject.toml; see plugin/reports/gradescope.py)",
    )
    group.addoption(
        "--kata-report-per-test",
        action="store_true",
        default=False,
        help="with --kata-report-format gradescope: one entry per test instead of one per kata",
    )
    group.addoption(
        "--kata-require-done",
        action="store_true",
        default=False,
        help="exit 1 unless every kata graded in this run (the ones chosen with --kata, else all) "
        "is done: for CI and classroom autograding",
    )
    group.addoption(
        "--kata-html",
        default=None,
        metavar="PATH",
        help="where to write the page that draws the graph of a kata's first wrong gradient, "
        "yours and torch's side by side (default: in pytest's cache; the failure gives its address)",
    )
    group.addoption(
        "--kata-keep-workers",
        action="store_true",
        default=False,
        help="keep -n's workers even when fewer than two katas are started (the kit runs those "
        "in one process: a kata's tests share a worker, so workers only add their start-up)",
    )
    group.addoption(
        "--kata-supervised",
        action="store_true",
        default=False,
        help="grade in a child process under a supervisor (what `katas` does; --kata-report and "
        "--kata-require-done imply it): a hard time limit per kata (--kata-hard-limit) and a "
        "memory limit (--kata-memory-limit), a crash costs one kata, and the table, the report "
        "and the exit status come from the supervisor",
    )
    group.addoption(
        "--kata-in-process",
        action="store_true",
        default=False,
        help="grade in this process even with --kata-report or --kata-require-done (the kit's own "
        "tests, a debugger): without the supervisor's limits",
    )
    group.addoption(
        "--kata-hard-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help="supervised runs: the wall-clock time one kata may take before its process is "
        "stopped (default: 10 times --kata-timeout, at least 120)",
    )
    group.addoption(
        "--kata-memory-limit",
        type=int,
        default=4096,
        metavar="MB",
        help="supervised runs: the address space the grading process may use, in MB (default "
        "4096; 0: no limit)",
    )
    group.addoption("--kata-child-fd", type=int, default=None, help=argparse.SUPPRESS)  # the supervisor's pipe
    group.addoption(
        "--kata-learner",
        default=None,
        metavar="NAME",
        help="the learner's name in the report (else $AUTOGRAD_KATAS_LEARNER, else git's user.name)",
    )


def apply_cuda_option(config):
    """Switch the engine's CUDA backend when --cuda is given (else the environment decides)."""
    choice = config.getoption("cuda", None)
    if choice is not None:
        import pytest

        from reference import cuda

        try:
            cuda.use(choice)
        except RuntimeError as error:
            raise pytest.UsageError(f"--cuda {choice}: {error}") from None


def check_report_path(config):
    """Refuse, before any test runs, a --kata-report PATH that can never be written: a
    folder, or a path under a file or a folder we may not write in."""
    import pytest

    text = config.getoption("kata_report", None)
    if not text:
        return
    path = Path(text)
    if path.is_dir():
        raise pytest.UsageError(
            f"--kata-report {text}: that is a folder; give a file in it, such as {path / 'ada.json'}")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the folders that do not exist yet are created
    if not folder.is_dir():
        raise pytest.UsageError(f"--kata-report {text}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"--kata-report {text}: no permission to write in {folder}")
    from ..reports.json_report import not_a_report

    why = not_a_report(path)
    if why:
        raise pytest.UsageError(
            f"--kata-report {text}: a file is there and {why}: the kit does not write over it; "
            "give the path of a new file, or of an earlier report")
