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
* **Rebuilt if corrupt**: a folder whose manifest is missing or unreadable, whose arrays are missing, do
  not parse, or have another shape, dtype or file size than the manifest says, is removed and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

MANIFEST = "manifest.json"
FORMAT = 1


class CacheError(RuntimeError):
    """The cache folder cannot be written (the model still runs, converting in memory)."""


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/qkv-studio``, or ``~/.cache/qkv-studio``."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    return (Path(base) if base.strip() else Path.home() / ".cache") / "qkv-studio"


def file_hash(path: Path) -> str:
    """The SHA-256 of a file, as hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def source_hash(name: str, path: Path, *, root: Path | None = None, rehash: bool = False) -> str:
    """The source file's SHA-256, remembered by path, size and modification time (see the module notes)."""
    root = cache_root() if root is None else root
    path = Path(path).resolve()
    st = path.stat()
    stamp = {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    memo = root / f"{name}-source.json"
    if not rehash:
        try:
            known = json.loads(memo.read_text(encoding="utf-8"))
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


def read_folder(folder: Path, digest: str) -> tuple[dict[str, np.ndarray], dict[str, str]] | None:
    """The arrays (memory-mapped, read-only) and text files of a complete cache folder, or None when
    the folder is missing, incomplete or does not match its manifest."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT or manifest.get("sha256") != digest:
            return None
        arrays: dict[str, np.ndarray] = {}
        for key, (shape, dtype, size) in manifest["arrays"].items():
            file = folder / f"{key}.npy"
            if file.stat().st_size != size:
                return None
            arr = np.load(file, mmap_mode="r", allow_pickle=False)
            if list(arr.shape) != list(shape) or arr.dtype.str != dtype:
                return None
            arrays[key] = arr
        texts = {key: (folder / key).read_text(encoding="utf-8") for key in manifest["texts"]}
        return arrays, texts
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_folder(folder: Path, digest: str, arrays: Mapping[str, np.ndarray], texts: Mapping[str, str]) -> None:
    """Write a cache folder atomically (a temporary folder renamed into place); raises CacheError."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name + ".", suffix=".tmp"))
    except OSError as exc:
        raise CacheError(f"cannot write the cache folder {folder.parent}: {exc}") from None
    try:
        entries = {}
        for key, arr in arrays.items():
            if "/" in key or key.startswith("."):
                raise ValueError(f"bad array name {key!r}")
            file = tmp / f"{key}.npy"
            np.save(file, np.ascontiguousarray(arr), allow_pickle=False)
            entries[key] = (list(arr.shape), np.dtype(arr.dtype).str, file.stat().st_size)
        for key, text in texts.items():
            (tmp / key).write_text(text, encoding="utf-8")
        (tmp / MANIFEST).write_text(json.dumps({"format": FORMAT, "sha256": digest, "arrays": entries,
                                                "texts": list(texts)}), encoding="utf-8")
        if folder.exists():  # corrupt (the caller found it unreadable): replace it
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:
            if read_folder(folder, digest) is None:  # not another process's complete folder
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise CacheError(f"cannot write the cache folder {folder}: {exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def open_cached(name: str, source: Path,
                build: Callable[[], tuple[Mapping[str, np.ndarray], Mapping[str, str]]], *,
                root: Path | None = None) -> tuple[dict[str, np.ndarray], dict[str, str], bool]:
    """The arrays and texts built from ``source``: from the cache when it holds them, else ``build()``
    is called, its result written to the cache and read back memory-mapped.

    Returns ``(arrays, texts, built)``.  When the cache cannot be written the freshly built arrays are
    returned in memory (``built`` True either way).
    """
    digest = source_hash(name, source, root=root)
    folder = folder_for(name, digest, root=root)
    found = read_folder(folder, digest)
    if found is not None:
        return found[0], found[1], False
    arrays, texts = build()
    try:
        write_folder(folder, digest, arrays, texts)
    except CacheError:
        return dict(arrays), dict(texts), True
    found = read_folder(folder, digest)
    if found is None:  # written but not readable back: use what is in memory
        return dict(arrays), dict(texts), True
    return found[0], found[1], True
