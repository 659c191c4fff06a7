"""The torch a new user gets (issue 31.7): pyproject.toml names the supported range, the
installed torch is in it, and where 2.13 and 2.14 differ the reference follows the installed
one (reference/torch_version.py); CI runs the kit's tests on the oldest and the newest."""
import importlib
import re
from importlib import metadata

import pytest

from kit import REPO
from reference import torch_version

SUPPORTED = [(2, 13), (2, 14)]


def test_pyproject_names_the_supported_range():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"torch>=2.13,<2.15"' in pyproject
    ci = (REPO / ".ci" / "run").read_text()
    assert "torch==2.13.0" in ci and "torch==2.14.1" in ci, "CI tests the oldest and the newest supported torch"


def test_the_installed_torch_is_a_supported_one():
    assert torch_version.installed() in SUPPORTED, metadata.version("torch")


@pytest.mark.parametrize("version, refused, counts_first", [
    ("2.13.0+cpu", RuntimeError, False), ("2.14.1+cu130", NotImplementedError, True), ("2.14.0", NotImplementedError, True),
])
def test_the_reference_follows_the_installed_version(monkeypatch, version, refused, counts_first):
    monkeypatch.setattr(metadata, "version", lambda name: version)
    try:
        reloaded = importlib.reload(torch_version)
        assert reloaded.installed() == tuple(int(n) for n in re.match(r"(\d+)\.(\d+)", version).groups())
        assert reloaded.BOOL_REFUSED is refused
        assert reloaded.ARANGE_COUNTS_BEFORE_CASTING is counts_first
    finally:
        monkeypatch.undo()
        importlib.reload(torch_version)


def test_the_engine_raises_what_the_installed_torch_raises():
    import torch

    import reference

    for lib in (torch, reference):
        with pytest.raises(RuntimeError) as caught:
            -lib.tensor([True])
        if lib is torch:
            theirs = type(caught.value)
        else:
            assert type(caught.value) is theirs and "Negation, the `-` operator" in str(caught.value)
    theirs = torch.arange(0.0, 2.0, 0.5, dtype=torch.int64).tolist() if torch_version.ARANGE_COUNTS_BEFORE_CASTING else None
    if theirs is not None:
        assert reference.arange(0.0, 2.0, 0.5, dtype=reference.int64).numpy().tolist() == theirs


def test_ci_runs_the_whole_suite_once_and_the_version_switch_on_the_newest():
    """The newest torch reruns what the version can change (the katas on the model solutions,
    the engine-against-torch tests), not the whole suite a second time (CI's time budget)."""
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.count("-m pytest tests -n 2") == 1, "the whole kit suite runs once"
    newest = ci[ci.index("torch==2.14.1"):]
    assert "--solution reference" in newest
    for name in ("test_torch_versions.py", "test_fuzz_api.py", "test_reference_semantics.py"):
        assert f"tests/{name}" in newest


def test_ci_goes_on_when_the_system_packages_cannot_be_installed(tmp_path):
    """No network to Debian: apt-get fails, CI says so and goes on (the browser tests skip)."""
    import subprocess

    ci = (REPO / ".ci" / "run").read_text()
    apt_block = ci[ci.index("if command -v apt-get"):ci.index("\nfi\n") + 4]
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, body in (("apt-get", "echo 'E: Temporary failure resolving deb.debian.org' >&2; exit 100"),
                       ("id", "echo 0")):
        (fake / name).write_text(f"#!/bin/sh\n{body}\n")
        (fake / name).chmod(0o755)
    script = f"set -euo pipefail\n{apt_block}\necho CI went on\n"
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                         env={"PATH": f"{fake}:/usr/bin:/bin"})
    assert ran.returncode == 0 and "CI went on" in ran.stdout, ran.stdout + ran.stderr
    assert "will skip" in ran.stdout
