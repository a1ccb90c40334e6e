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

A file that is used in place rather than read into memory (a model's GGUF source, a cached array that is
memory-mapped) is checked by :func:`check_regular` (the same refusals, nothing read) or hashed by
:func:`hash_regular` (read in blocks through the same checks, never held whole).

Every JSON text the app parses — a session, a deck, a ``tokens.json``, a safetensors header's metadata,
a model cache's settings — goes through :func:`loads_json`: its size is bounded, its nesting is measured
by a linear pre-scan *before* the recursive parser sees it (so 100 000 nested brackets are a message,
never a ``RecursionError``), and every failure is a :class:`BadJSON` whose ``problem`` is one line.

Pure Python and NumPy (no Qt), so the core, the CLI and the reliability layer share it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["BadJSON", "UnreadableFile", "check_kind", "check_path_text", "check_regular", "hash_regular",
           "is_regular_or_missing", "json_depth", "loads_json", "read_regular"]

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


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


def _open_checked(path: str | os.PathLike[str], cap: int, what: str) -> tuple[int, os.stat_result]:
    """An open descriptor of ``path`` once it is known to be a regular file of at most ``cap`` bytes."""
    problem = check_path_text(path)
    if problem is not None:
        raise UnreadableFile(problem)
    try:
        fd = _open_fd(path, _FLAGS)
    except OSError as exc:
        raise UnreadableFile(_os_problem(exc), exc.errno or 0) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(_kind(st.st_mode))
        if st.st_size > cap:
            raise UnreadableFile(f"the file is larger than {_size_text(cap)} ({st.st_size:,} bytes); "
                                 f"a {what} is at most {_size_text(cap)}", errno.EFBIG)
    except OSError as exc:
        os.close(fd)
        if isinstance(exc, UnreadableFile):
            raise
        raise UnreadableFile(_os_problem(exc), exc.errno or 0) from None
    return fd, st


def check_regular(path: str | os.PathLike[str], cap: int, *, what: str = "file") -> os.stat_result:
    """``path``'s status once it is known to be a regular file of at most ``cap`` bytes (nothing is read;
    for a file used in place: memory-mapped, or handed to a library that opens it by name)."""
    fd, st = _open_checked(path, cap, what)
    os.close(fd)
    return st


def hash_regular(path: str | os.PathLike[str], cap: int, *, what: str = "file",
                 progress: Callable[[int], None] | None = None) -> tuple[str, os.stat_result]:
    """The SHA-256 (hex) of a regular file of at most ``cap`` bytes, read in 1 MB blocks, and its status
    (taken from the open file, so it describes the bytes that were hashed); ``progress(bytes_read)``
    hears of each block."""
    fd, st = _open_checked(path, cap, what)
    try:
        h = hashlib.sha256()
        total = 0
        while True:
            try:
                chunk = _read_chunk(fd, _CHUNK * 4)
            except BlockingIOError:
                raise UnreadableFile("is not a regular file") from None
            except OSError as exc:
                raise UnreadableFile(_os_problem(exc), exc.errno or 0) from None
            if not chunk:
                break
            total += len(chunk)
            if total > cap:
                raise UnreadableFile(f"the file is larger than {_size_text(cap)} (it grew while it was read); "
                                     f"a {what} is at most {_size_text(cap)}", errno.EFBIG)
            h.update(chunk)
            if progress is not None:
                progress(total)
        return h.hexdigest(), st
    finally:
        os.close(fd)


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


def check_kind(path: str | os.PathLike[str], cap: int, *, what: str = "file") -> str | None:
    """Why ``path`` cannot be read as a regular file of at most ``cap`` bytes, judged from its status alone
    (nothing is opened, so a FIFO never blocks): "no such file", "is a named pipe …", or None if it can."""
    problem = check_path_text(path)
    if problem is not None:
        return problem
    try:
        st = os.stat(path)
    except OSError as exc:
        return _os_problem(exc)
    except ValueError:
        return "the name cannot be used as a file name"
    if not stat.S_ISREG(st.st_mode):
        return _kind(st.st_mode)
    if st.st_size > cap:
        return (f"the file is larger than {_size_text(cap)} ({st.st_size:,} bytes); "
                f"a {what} is at most {_size_text(cap)}")
    if st.st_size == 0:
        return "the file is empty"
    if not os.access(path, os.R_OK):
        return "permission denied: the file cannot be read"
    return None


def is_regular_or_missing(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` does not exist or is a regular file (``lstat``: a symlink is judged itself)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode)


# ---- JSON, bounded ----------------------------------------------------------------------------------------
MAX_JSON_DEPTH = 64  # deeper than any file the app writes; far below the recursive parser's limit
_BRACKETS_AND_QUOTES = bytes(range(256)).translate(None, b'[]{}"')


class BadJSON(ValueError):
    """A JSON text that was refused; ``problem`` says why in one line (no file name)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def json_depth(text: str | bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (0 for a bare value), without parsing it.

    Linear and fast even for 64 MB: escaped backslashes and quotes are removed, then everything but
    brackets and quotes, then the string literals (their brackets do not nest), and NumPy sums the
    running depth of the brackets that remain.  (For a text that is not valid JSON the number is only
    an estimate; the parser refuses such a text anyway.)
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(raw.translate(None, _BRACKETS_AND_QUOTES).split(b'"')[::2])
    if not outside:
        return 0
    codes = np.frombuffer(outside, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int64)
    return max(0, int(np.cumsum(steps).max()))


def loads_json(data: str | bytes, *, cap: int, max_depth: int = MAX_JSON_DEPTH, what: str = "JSON text",
               **options: Any) -> Any:
    """``json.loads`` of at most ``cap`` bytes nested at most ``max_depth`` deep; :class:`BadJSON` otherwise.

    ``options`` go to ``json.loads`` (``object_pairs_hook``, ``parse_constant`` …); a ``ValueError`` they
    raise becomes a :class:`BadJSON` with its text.  Bytes are decoded as UTF-8 (a BOM is allowed).
    """
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if size > cap:
        raise BadJSON(f"the {what} is larger than {_size_text(cap)} ({size:,} bytes)")
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise BadJSON(f"the {what} is not UTF-8 text") from None
    else:
        text = data
    if json_depth(text) > max_depth:
        raise BadJSON(f"the {what} is nested more than {max_depth} levels deep")
    try:
        return json.loads(text, **options)
    except json.JSONDecodeError as exc:
        raise BadJSON(f"the {what} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                      "it may be truncated") from None
    except RecursionError:  # (only if the pre-scan's estimate was wrong: the parser still cannot crash)
        raise BadJSON(f"the {what} is nested too deeply") from None
    except ValueError as exc:
        raise BadJSON(f"the {what}: {exc}") from None
