"""Reading a file the app did not make itself, safely: only a regular file, never more than a cap.

Every file QKV Studio reads — a session named by the user, a deck and the scenes it lists, its own
autosaves, their metadata and the settings file — goes through :func:`read_regular`:

* the file is opened with ``O_NONBLOCK`` and checked with ``fstat`` before a byte is read, so a FIFO
  (which would block ``open`` or ``read`` forever), a device such as ``/dev/zero`` (whose size reads
  0 and whose content never ends), a socket or a folder is refused at once;
* at most ``cap + 1`` bytes are read, so the cap holds even when the size ``stat`` reports is wrong
  (a file still growing, a special file system);
* every failure — no such file, permission, a name holding a NUL byte or a character the file system
  cannot encode, a name too long — is an :class:`UnreadableFile` whose ``problem`` is one line.

Pure Python (no Qt), so the core, the CLI and the reliability layer share it.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["UnreadableFile", "check_path_text", "is_regular_or_missing", "read_regular"]

_CHUNK = 1 << 20


class UnreadableFile(OSError):
    """A file that was not read; ``problem`` says why in words a user understands (no file name)."""

    def __init__(self, problem: str, err: int = 0) -> None:
        super().__init__(err, problem)
        self.problem = problem

    def __str__(self) -> str:
        return self.problem


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is not a regular file"


def _size_text(cap: int) -> str:
    mb = cap / (1024 * 1024)
    return f"{mb:g} MB" if mb >= 1 else f"{cap // 1024} KB"


def check_path_text(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot name a file at all (a NUL byte, a character that cannot be encoded), or None."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        return "the name holds a NUL byte" if b"\x00" in text else None
    if "\x00" in text:
        return "the name holds a NUL byte"
    try:
        os.fsencode(text)
    except UnicodeError:
        return "the name holds a character that is not valid text (a lone surrogate)"
    return None


def _os_problem(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, PermissionError):
        return "permission denied: the file cannot be read"
    if exc.errno == errno.ENAMETOOLONG:
        return "the name is too long for the file system"
    if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket
        return "is a socket, not a regular file"
    if exc.errno == errno.ELOOP:
        return "the name is a loop of symbolic links"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a file"
    if isinstance(exc, NotADirectoryError):
        return "a part of the path is a file, not a folder"
    return f"cannot be read ({exc.strerror or exc})"


def _open_fd(path: str | os.PathLike[str], flags: int) -> int:
    return os.open(path, flags)


def _read_chunk(fd: int, size: int) -> bytes:
    return os.read(fd, size)


def read_regular(path: str | os.PathLike[str], cap: int, *, what: str = "file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``cap`` bytes; else :class:`UnreadableFile`.

    ``what`` names the kind of file in the too-large message ("session file", "deck file" …).
    """
    problem = check_path_text(path)
    if problem is not None:
        raise UnreadableFile(problem)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = _open_fd(path, flags)
    except OSError as exc:
        raise UnreadableFile(_os_problem(exc), exc.errno or 0) from None
    try:
        try:
            st = os.fstat(fd)
        except OSError as exc:
            raise UnreadableFile(_os_problem(exc), exc.errno or 0) from None
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(_kind(st.st_mode))
        too_big = (f"the file is larger than {_size_text(cap)} ({{size:,}} bytes); "
                   f"a {what} is at most {_size_text(cap)}")
        if st.st_size > cap:
            raise UnreadableFile(too_big.format(size=st.st_size), errno.EFBIG)
        chunks = []
        total = 0
        while total <= cap:
            try:
                chunk = _read_chunk(fd, min(_CHUNK, cap + 1 - total))
            except BlockingIOError:  # (a regular file never blocks; a changed file type might)
                raise UnreadableFile("is not a regular file") from None
            except OSError as exc:
                raise UnreadableFile(_os_problem(exc), exc.errno or 0) from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise UnreadableFile(f"the file is larger than {_size_text(cap)} (it grew while it was read); "
                                 f"a {what} is at most {_size_text(cap)}", errno.EFBIG)
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_regular_or_missing(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` does not exist or is a regular file (``lstat``: a symlink is judged itself)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode)
