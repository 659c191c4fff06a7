"""The kit's build backend: setuptools's, with a copy of plugin/shipped/shipped.json added to
the installed package's metadata (its `.dist-info` folder) at `pip install`.

That copy is the anchor of the integrity check (plugin/shipped/__init__.py): the grader
compares the kata test files with the hashes it holds, not with the shipped.json in the
clone, which learner code can rewrite together with a test file in passing. `python -m
plugin.shipped --update` refreshes it with the file; so does `pip install -e .` again.

pyproject.toml names this module (`backend-path = ["plugin/shipped"]`); it imports nothing of
the plugin.
"""
import base64
import hashlib
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook setuptools offers)

ANCHOR = "shipped.json"  # its name in the .dist-info folder
SHIPPED = Path(__file__).resolve().parent / "shipped.json"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    add_anchor(Path(wheel_directory) / name)
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    add_anchor(Path(wheel_directory) / name)
    return name


def add_anchor(wheel):
    """Add shipped.json to the wheel's .dist-info folder, and its line to the RECORD."""
    data = SHIPPED.read_bytes()
    with zipfile.ZipFile(wheel) as source:
        entries = [(info, source.read(info)) for info in source.infolist()]
    record = next(info.filename for info, _ in entries if info.filename.endswith(".dist-info/RECORD"))
    anchor = record.rsplit("/", 1)[0] + "/" + ANCHOR
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as target:
        for info, content in entries:
            if info.filename == anchor:
                continue
            if info.filename == record:
                content = content.rstrip(b"\n") + f"\n{anchor},sha256={digest},{len(data)}\n".encode()
            target.writestr(info, content)
        target.writestr(anchor, data)
