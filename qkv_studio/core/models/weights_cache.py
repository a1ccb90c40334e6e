"""A folder of memory-mapped arrays in the user's cache, keyed by a source file's hash (NumPy only).

A model that must convert its weights before it can run (SmolLM2's GGUF file is 4-bit quantized;
dequantizing it takes seconds) converts them once and keeps the result here:
``$XDG_CACHE_HOME/qkv-studio/<name>-<hash>/`` (``~/.cache/qkv-studio/…`` without ``XDG_CACHE_HOME``), one
``.npy`` file per array plus ``manifest.json`` (every array's shape and dtype, the source's hash) and any
extra text files the model wants (a tokenizer).  :func:`open_cached` opens the arrays memory-mapped
(read-only: a load in a fresh process reads only the headers; pages come in as a run touches them).

* **Keyed by the source's hash**: the folder name holds the SHA-256 of the source file, so a changed or
  different file gets its own folder.  Hashing 100 MB costs ≈ 0.4 s, so the hash is remembered in
  ``<name>-source.json`` beside the folders together with the file's path, size and modification time;
  while those three are unchanged the remembered hash is used (``rehash=True`` always recomputes it).
* **Written atomically**: everything is written into a temporary folder next to the final one, which is
  then renamed into place, so a crash or a concurrent process never leaves a half-written folder under
  the final name.
* **Proven before use**: the manifest records, for every array file and every text, its SHA-256 as
  written, and the converter's version (``converter``: a new conversion gets a new version).  Loading
  checks all of it: the texts are small and hashed every time; an array file is hashed the first time
  it is read and the result remembered in ``verified.json`` by the file's size, modification time,
  change time and inode (so a cached load of 540 MB stays a few stats; any write to a file changes its
  change time, which no program can set back).  The model then checks what it reads (shapes, settings,
  tokenizer: the ``check`` of :func:`open_checked`).
* **Rebuilt if damaged**: a folder whose manifest is missing or unreadable, whose files are missing, are
  not regular files, do not parse, or differ from the manifest in shape, dtype, size or hash — or whose
  contents the model's ``check`` refuses — is removed and rebuilt from the source (:class:`CacheDamaged`
  says why; the reason is logged).  Nothing read from a damaged folder is ever returned.
* **One converter at a time**: converting takes an exclusive lock (``fcntl.flock``, released by the
  kernel if the process dies) on ``<name>-<hash>.lock``; a second process waits for it and then finds
  the first one's folder complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from qkv_studio.core.safe_read import BadJSON, UnreadableFile, hash_regular, loads_json, read_regular

MANIFEST = "manifest.json"
VERIFIED = "verified.json"  # what was hashed already: {file name: [size, mtime_ns, ctime_ns, inode, sha256]}
FORMAT = 2
MAX_ARRAY_BYTES = 4 * 1024 ** 3  # one cached array file
MAX_TEXT_BYTES = 64 * 1024 * 1024  # the manifest, a tokenizer, settings
MAX_SOURCE_BYTES = 16 * 1024 ** 3

log = logging.getLogger("qkv_studio.weights_cache")
T = TypeVar("T")
Arrays = dict[str, np.ndarray]
Texts = dict[str, str]
Progress = Callable[[float, str], None]


class CacheError(RuntimeError):
    """The cache folder cannot be written (the model still runs, converting in memory)."""


class CacheDamaged(ValueError):
    """What was read from a cache folder does not match what made it; ``str(err)`` says what (one line)."""


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/qkv-studio``, or ``~/.cache/qkv-studio``."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    return (Path(base) if base.strip() else Path.home() / ".cache") / "qkv-studio"


def file_hash(path: Path) -> str:
    """The SHA-256 of a regular file, as hex (raises :class:`~qkv_studio.core.safe_read.UnreadableFile`)."""
    return hash_regular(path, MAX_SOURCE_BYTES, what="model file")[0]


def _read_json(path: Path) -> Any:
    return loads_json(read_regular(path, MAX_TEXT_BYTES, what="cache file"), cap=MAX_TEXT_BYTES, max_depth=8,
                      what=path.name)


def source_hash(name: str, path: Path, *, root: Path | None = None, rehash: bool = False) -> str:
    """The source file's SHA-256, remembered by path, size and modification time (see the module notes)."""
    root = cache_root() if root is None else root
    path = Path(path).resolve()
    st = path.stat()
    stamp = {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    memo = root / f"{name}-source.json"
    if not rehash:
        try:
            known = _read_json(memo)
            if {k: known.get(k) for k in stamp} == stamp and isinstance(known.get("sha256"), str) \
                    and len(known["sha256"]) == 64:
                return str(known["sha256"])
        except (OSError, ValueError, AttributeError):
            pass
    digest = file_hash(path)
    try:
        root.mkdir(parents=True, exist_ok=True)
        _write_atomic_text(memo, json.dumps({**stamp, "sha256": digest}))
    except OSError:
        pass  # a read-only cache only costs the hash next time
    return digest


def _write_atomic_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def folder_for(name: str, digest: str, *, root: Path | None = None) -> Path:
    """The cache folder of ``name`` built from a source with this hash."""
    return (cache_root() if root is None else root) / f"{name}-{digest[:32]}"


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _verified(folder: Path) -> dict[str, list[Any]]:
    try:
        memo = _read_json(folder / VERIFIED)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in memo.items() if isinstance(v, list) and len(v) == 5} if isinstance(memo, dict) else {}


def _remember(folder: Path, memo: Mapping[str, list[Any]]) -> None:
    try:
        _write_atomic_text(folder / VERIFIED, json.dumps(dict(memo)))
    except OSError:
        pass  # a read-only cache: the files are hashed again next time


def _array_hash(file: Path, memo: dict[str, list[Any]]) -> str:
    """The file's SHA-256: remembered while its size, times and inode are unchanged, else read now."""
    st = os.stat(file)
    known = memo.get(file.name)
    if known is not None and known[:4] == _stamp(st) and isinstance(known[4], str):
        return known[4]
    digest, st = hash_regular(file, MAX_ARRAY_BYTES, what="cached array")
    memo[file.name] = [*_stamp(st), digest]
    return digest


def verify_folder(folder: Path, digest: str, converter: str = "", *,
                  progress: Progress | None = None) -> tuple[Arrays, Texts]:
    """The arrays (memory-mapped, read-only) and texts of a cache folder, each proven against its manifest
    (see the module notes); raises :class:`CacheDamaged` saying what does not match."""
    try:
        manifest = _read_json(folder / MANIFEST)
    except FileNotFoundError as exc:
        raise CacheDamaged("no manifest (the folder is missing or incomplete)") from exc
    except (UnreadableFile, BadJSON) as exc:
        raise CacheDamaged(f"the manifest cannot be read: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CacheDamaged("the manifest is of another format")
    if manifest.get("sha256") != digest:
        raise CacheDamaged("the manifest names another source file")
    if manifest.get("converter", "") != converter:
        raise CacheDamaged(f"converted by {manifest.get('converter')!r}, not {converter!r}")
    entries, text_hashes = manifest.get("arrays"), manifest.get("texts")
    if not isinstance(entries, dict) or not isinstance(text_hashes, dict):
        raise CacheDamaged("the manifest lists no arrays or texts")
    memo = _verified(folder)
    before = dict(memo)
    arrays: Arrays = {}
    texts: Texts = {}
    try:
        for i, (key, entry) in enumerate(entries.items()):
            if progress is not None and not i % 16:
                progress(i / max(len(entries), 1), "checking the cached weights")
            if not isinstance(entry, dict) or not _plain_name(key):
                raise CacheDamaged(f"the manifest's entry {str(key)[:40]!r} is malformed")
            file = folder / f"{key}.npy"
            if _array_hash(file, memo) != entry.get("sha256"):
                raise CacheDamaged(f"{file.name} does not hold what was written (its hash differs)")
            arr = np.load(file, mmap_mode="r", allow_pickle=False)
            if list(arr.shape) != entry.get("shape") or arr.dtype.str != entry.get("dtype"):
                raise CacheDamaged(f"{file.name} has shape {arr.shape} and dtype {arr.dtype.str}, not what the "
                                   "manifest says")
            arrays[key] = arr
        for key, want in text_hashes.items():
            if not _plain_name(key):
                raise CacheDamaged(f"the manifest's text {str(key)[:40]!r} is malformed")
            data = read_regular(folder / key, MAX_TEXT_BYTES, what="cached text")
            if hashlib.sha256(data).hexdigest() != want:
                raise CacheDamaged(f"{key} does not hold what was written (its hash differs)")
            texts[key] = data.decode("utf-8")
    except UnreadableFile as exc:
        raise CacheDamaged(f"a cached file cannot be read: {exc}") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, CacheDamaged):
            raise
        raise CacheDamaged(f"a cached file cannot be read: {type(exc).__name__}: {exc}") from None
    finally:
        if memo != before:
            _remember(folder, memo)
    return arrays, texts


def _plain_name(key: object) -> bool:
    return isinstance(key, str) and bool(key) and "/" not in key and "\\" not in key and not key.startswith(".")


def read_folder(folder: Path, digest: str, converter: str = "") -> tuple[Arrays, Texts] | None:
    """The arrays and texts of a complete, proven cache folder, or None (see :func:`verify_folder`)."""
    try:
        return verify_folder(folder, digest, converter)
    except CacheDamaged:
        return None


def write_folder(folder: Path, digest: str, arrays: Mapping[str, np.ndarray], texts: Mapping[str, str],
                 converter: str = "") -> None:
    """Write a cache folder atomically (a temporary folder renamed into place); raises CacheError."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name + ".", suffix=".tmp"))
    except OSError as exc:
        raise CacheError(f"cannot write the cache folder {folder.parent}: {exc}") from None
    try:
        entries: dict[str, dict[str, Any]] = {}
        memo: dict[str, list[Any]] = {}
        for key, arr in arrays.items():
            if not _plain_name(key):
                raise ValueError(f"bad array name {key!r}")
            file = tmp / f"{key}.npy"
            np.save(file, np.ascontiguousarray(arr), allow_pickle=False)
            sha, st = hash_regular(file, MAX_ARRAY_BYTES, what="cached array")
            entries[key] = {"shape": list(arr.shape), "dtype": np.dtype(arr.dtype).str, "size": st.st_size,
                            "sha256": sha}
        text_hashes: dict[str, str] = {}
        for key, text in texts.items():
            if not _plain_name(key) or key in (MANIFEST, VERIFIED):
                raise ValueError(f"bad text name {key!r}")
            data = text.encode("utf-8")
            (tmp / key).write_bytes(data)
            text_hashes[key] = hashlib.sha256(data).hexdigest()
        (tmp / MANIFEST).write_text(json.dumps({"format": FORMAT, "sha256": digest, "converter": converter,
                                                "arrays": entries, "texts": text_hashes}), encoding="utf-8")
        if folder.exists():  # damaged (the caller found it so, holding the converter's lock): replace it
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:
            if read_folder(folder, digest, converter) is None:  # not another process's complete folder
                raise
            shutil.rmtree(tmp, ignore_errors=True)
            return
        for key, entry in entries.items():  # the files as they now lie, hashed as they were written
            memo[f"{key}.npy"] = [*_stamp(os.stat(folder / f"{key}.npy")), entry["sha256"]]
        _remember(folder, memo)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise CacheError(f"cannot write the cache folder {folder}: {exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def converting(folder: Path) -> Iterator[None]:
    """Hold the exclusive lock of converting into ``folder`` (``<folder>.lock``; waits for another process's
    conversion to end).  Without ``fcntl`` (Windows) or where the lock cannot be made, nothing is held:
    the atomic rename still keeps a half-written folder from ever being seen."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder.parent / f"{folder.name}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # a file system without locks: as without fcntl
        yield
    finally:
        os.close(fd)  # (closing releases the lock)


def open_checked(name: str, source: Path, build: Callable[[], tuple[Mapping[str, np.ndarray], Mapping[str, str]]],
                 check: Callable[[Arrays, Texts], T], *, converter: str = "", root: Path | None = None,
                 progress: Progress | None = None) -> tuple[T, bool]:
    """``check(arrays, texts)`` of what was built from ``source``: from the cache when it holds them and
    both the proof (:func:`verify_folder`) and ``check`` accept them, else rebuilt by ``build()``,
    written to the cache and read back memory-mapped.  ``check`` raises :class:`CacheDamaged` (or
    ``ValueError``/``KeyError``/``TypeError``) for what it refuses; refused in a fresh build, the error
    is raised.  Returns ``(check's result, built)``."""
    digest = source_hash(name, source, root=root)
    folder = folder_for(name, digest, root=root)

    told: list[str] = []

    def cached() -> T | None:
        try:
            arrays, texts = verify_folder(folder, digest, converter, progress=progress)
            return check(arrays, texts)
        except (CacheDamaged, ValueError, KeyError, TypeError, IndexError) as exc:
            if folder.exists() and str(exc) not in told:  # (said once, not again under the lock)
                told.append(str(exc))
                log.warning("the cache %s is damaged (%s); converting again from %s", folder, exc, source)
            return None

    found = cached()
    if found is not None:
        return found, False
    with converting(folder):
        found = cached()  # (another process may have converted it meanwhile)
        if found is not None:
            return found, False
        arrays, texts = build()
        try:
            write_folder(folder, digest, arrays, texts, converter)
        except CacheError as exc:
            log.warning("%s; the converted arrays are kept in memory only", exc)
            return check(dict(arrays), dict(texts)), True
        found = cached()
        if found is None:  # written but not readable back: use what is in memory
            return check(dict(arrays), dict(texts)), True
        return found, True


def open_cached(name: str, source: Path,
                build: Callable[[], tuple[Mapping[str, np.ndarray], Mapping[str, str]]], *,
                root: Path | None = None, converter: str = "") -> tuple[Arrays, Texts, bool]:
    """The arrays and texts built from ``source`` (:func:`open_checked` with no check of its own).

    Returns ``(arrays, texts, built)``.  When the cache cannot be written the freshly built arrays are
    returned in memory (``built`` True either way).
    """
    (arrays, texts), built = open_checked(name, source, build, lambda a, t: (a, t), converter=converter, root=root)
    return arrays, texts, built
