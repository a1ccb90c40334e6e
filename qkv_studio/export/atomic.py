"""Writing export files all at once: a temporary file in the same folder, then ``os.replace``.

On any failure nothing partial is left behind and the ``OSError`` says, in one line, which path and why.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def reason(exc: BaseException) -> str:
    """The one-line reason of a failure: an OSError's ``strerror``, else its text or its type."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_temp(path: Path, data: bytes) -> str:
    """Write ``data`` to a new temporary file next to ``path``; returns its name (removed on failure)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        unlink_quietly(tmp)
        raise
    return tmp


def unlink_quietly(name: str | os.PathLike[str]) -> None:
    """Remove a file if it is there; never raises."""
    try:
        os.unlink(name)
    except OSError:
        pass


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once; OSError "cannot write PATH: reason" otherwise."""
    path = Path(path)
    tmp = None
    try:
        tmp = write_temp(path, data)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            unlink_quietly(tmp)
        raise OSError(f"cannot write {path}: {reason(exc)}") from exc
