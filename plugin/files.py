"""Writing a file so that a crash or a full disk never leaves half of one: the data goes to a
temporary file beside it, then a rename replaces the file in one step. Used for a learner's
file (reset) and for reports."""
import os
import tempfile
from pathlib import Path


def write_atomically(path, data):
    """Replace `path` with `data` (bytes) in one step; on failure the old file is untouched
    and the temporary file is gone."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)  # our own half-written file, never the target
        raise
