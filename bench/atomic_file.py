"""Outputs written whole or not at all, as the C++ tools write theirs: through
a temporary file in the destination's folder, renamed over it once complete;
on any error the temporary file is removed and the destination left as it was.
The file gets mode 0644, as the C++ tools give theirs (mkstemp makes 0600)."""
import os
import tempfile


def write_atomically(path, write, binary=False):
    """Calls write(f) on a temporary file beside `path`, then renames it."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.splitext(path)[1])
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
