"""Where torch's versions differ, the reference follows the torch installed beside it: the
oracle compares the two, and a learner reads torch's behaviour in the lessons.

The version is read from the installed package's metadata, without importing torch (the
engine runs without it); with no torch installed, the newest supported behaviour holds.
The kit supports torch 2.13 and 2.14 (pyproject.toml); docs/known-differences.md lists
what changed between them.
"""
import re
from importlib import metadata


def installed():
    """(major, minor) of the installed torch, or None."""
    try:
        found = re.match(r"(\d+)\.(\d+)", metadata.version("torch"))
    except metadata.PackageNotFoundError:
        return None
    return (int(found.group(1)), int(found.group(2))) if found else None


_AT_LEAST_2_14 = (installed() or (99, 0)) >= (2, 14)

# torch 2.14 raises NotImplementedError (a RuntimeError) where 2.13 raised RuntimeError for
# an operation refused on bools: `-` on bools, relu of a bool tensor.
BOOL_REFUSED = NotImplementedError if _AT_LEAST_2_14 else RuntimeError

# torch 2.14 counts an integer arange's elements from the float arguments, then steps by the
# step cast to the dtype (a step of 0.5 steps by 0: zeros); 2.13 cast all three first, and
# refused a step cast to 0 ("step must be nonzero").
ARANGE_COUNTS_BEFORE_CASTING = _AT_LEAST_2_14
