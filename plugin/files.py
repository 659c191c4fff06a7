"""Writing a file so that a crash or a full disk never leaves half of one: the data goes to a
temporary file beside it, then a rename replaces the file in one step. Used for a learner's
file (reset) and for reports."""
import os
import tempfile
from pathlib import Path


def default_mode():
    """The mode a new file gets from open(): 0o666 less the process's umask."""
    umask = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path, data, mode=None):
    """Replace `path` with `data` (bytes) in one step; on failure the old file is untouched
    and the temporary file is gone. The file gets `mode`, else the umask's usual mode
    (mkstemp alone would give 0600: other users of a shared folder could not read it)."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, default_mode() if mode is None else mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)  # our own half-written file, never the target
        raise
