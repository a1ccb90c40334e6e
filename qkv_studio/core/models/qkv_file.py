"""Q/K/V captured from any model, read from a file: one more source of the model registry (NumPy only).

A ``.npz`` (NumPy) or ``.safetensors`` file holds arrays named ``q``, ``k`` and ``v`` of shape (n, d),
(heads, n, d) or (layers, heads, n, d) — ``k`` and ``v`` may have fewer heads than ``q`` when K/V heads
are shared (grouped-query attention), and ``v`` another width than ``q`` and ``k``.  Optional:

* ``tokens``: an array of strings in the ``.npz`` (in a ``.safetensors`` file: its metadata entry
  ``tokens``, a JSON list); else ``<name>.tokens.json`` or ``tokens.json`` beside the file (a JSON list of
  strings, or an object ``{"tokens": [...], "causal": true}``); else ``t0 … t{n-1}``;
* ``causal``: a 0-d boolean (or 0/1) array (metadata ``"true"``/``"false"``): each token then attends to
  itself and earlier ones only.

:func:`read_qkv_file` reads such a file without executing anything (``np.load(..., allow_pickle=False)``:
a pickled object array is refused) and with the session file's limits (file ≤ 64 MB, ≤ 1024 tokens,
widths ≤ 1024, finite numbers); every refusal is one :class:`SessionFileError` line naming the file.  It
returns a :class:`QKVFileModel`, which satisfies the registry's ``AttentionModel`` protocol: its ``run``
ignores the text (the file fixed the tokens) and gives a ``ModelRun`` whose weights are
softmax(q·kᵀ/√d) under the file's mask.  :func:`register` puts it into the registry, after the built-in
models, so the Real model panel pages through its layers and heads as for a built-in model.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from qkv_studio.core.models.run import ModelRun
from qkv_studio.core.safe_read import BadJSON, UnreadableFile, loads_json, read_regular
from qkv_studio.core.scene import MAX_TOKENS, MAX_WIDTH
from qkv_studio.core.sessionfile import MAX_BYTES, SessionFileError

SUFFIXES = (".npz", ".safetensors")
MAX_LAYERS = 256
MAX_HEADS = 256
MAX_UNPACKED = 4 * MAX_BYTES  # what the arrays of a compressed .npz may unpack to
_PICKLED = ("array {key!r} holds Python objects (a pickle); files are read without running anything: save numbers, "
            "and tokens as an array of strings")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def is_qkv_file(path: str | os.PathLike[str] | None) -> bool:
    """True for a name ending in ``.npz`` or ``.safetensors`` (what the command line opens as Q/K/V)."""
    return path is not None and Path(path).suffix.lower() in SUFFIXES


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "qkv"


def _shape(a: np.ndarray) -> str:
    return "(" + ", ".join(map(str, a.shape)) + ("," if a.ndim == 1 else "") + ")"


class QKVFileModel:
    """A file's captured q, k, v as an attention model of the registry (see the module notes).

    ``name`` is ``file-<the file's name>`` (the registry key), ``title`` the file's name, ``path`` the file;
    ``q`` is (layers, heads, n, d), ``k`` and ``v`` (layers, kv_heads, n, ·), read-only float64.
    """

    install_hint = ""
    install_note = ""

    def __init__(self, path: Path, q: np.ndarray, k: np.ndarray, v: np.ndarray, tokens: tuple[str, ...],
                 causal: bool) -> None:
        self.path = path
        self.name = f"file-{_slug(path.name)}"
        self.title = path.name
        self.label = path.stem
        self.q, self.k, self.v = q, k, v
        self.tokens = tokens
        self.causal = causal
        self.n_layers, self.n_heads, _, self.head_dim = (int(s) for s in q.shape)
        self.n_kv_heads = int(k.shape[1])
        self.description = f"q, k, v read from {path.name} ({len(tokens)} tokens)"
        self._run: ModelRun | None = None

    @property
    def text(self) -> str:
        """The file's tokens as one line (what the panel shows in place of a sentence)."""
        return " ".join(self.tokens)

    def available(self) -> bool:
        return True

    def tokenize(self, text: str) -> tuple[str, ...]:
        """The file's tokens, whatever the text (the file fixed them)."""
        return self.tokens

    def run(self, text: str = "") -> ModelRun:
        """Every layer and head of the file (computed once); ``text`` is ignored."""
        if self._run is None:
            self._run = ModelRun.from_qkv(self, self.text, self.tokens, self.q, self.k, self.v)
        return self._run


def register(model: QKVFileModel) -> QKVFileModel:
    """Put ``model`` into the registry (after the built-in models; a file opened again replaces its entry)."""
    from qkv_studio.core.models import registry

    registry.MODELS[model.name] = model
    return model


def unregister(model: QKVFileModel) -> None:
    """Take ``model`` out of the registry again (nothing happens if it is not there)."""
    from qkv_studio.core.models import registry

    if registry.MODELS.get(model.name) is model:
        del registry.MODELS[model.name]


# ---- reading -------------------------------------------------------------------------------------------
def read_qkv_file(path: str | os.PathLike[str]) -> QKVFileModel:
    """Read a ``.npz``/``.safetensors`` file of q, k, v (see the module notes); raises SessionFileError."""
    p = Path(path)
    source = str(path)
    if p.suffix.lower() not in SUFFIXES:
        raise SessionFileError(source, f"a Q/K/V file must end in {' or '.join(SUFFIXES)}")
    data = _read(p, source, "Q/K/V file")  # (never blocks on a FIFO, never reads past 64 MB)
    if p.suffix.lower() == ".npz":
        arrays, meta = _read_npz(data, source)
    else:
        arrays, meta = _read_safetensors(data, source)
    q, k, v = _qkv(arrays, source)
    side = _beside(p, source)
    tokens = _tokens(arrays.get("tokens", meta.get("tokens", side.get("tokens"))), q.shape[2], source)
    causal = _causal(arrays.get("causal", meta.get("causal", side.get("causal", False))), source)
    return QKVFileModel(p, q, k, v, tokens, causal)


def _read(p: Path, source: str, what: str) -> bytes:
    """The bytes of a regular file of at most 64 MB (:func:`~qkv_studio.core.safe_read.read_regular`)."""
    try:
        return read_regular(p, MAX_BYTES, what=what)
    except UnreadableFile as exc:
        raise SessionFileError(source, exc.problem) from None


def _read_npz(data: bytes, source: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            unpacked = sum(info.file_size for info in zf.infolist())
            if unpacked > MAX_UNPACKED:
                raise SessionFileError(source, f"its arrays unpack to {unpacked:,} bytes; at most {MAX_UNPACKED:,}")
            for info in zf.infolist():
                _check_header(zf, info, source)
    except (zipfile.BadZipFile, OSError, EOFError):
        raise SessionFileError(source, "is not a NumPy .npz file (not a zip archive)") from None
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            for key in npz.files:
                try:
                    arrays[key] = npz[key]
                except ValueError as exc:
                    if "allow_pickle" in str(exc) or "pickle" in str(exc).lower():
                        raise SessionFileError(source, _PICKLED.format(key=key)) from None
                    raise SessionFileError(source, f"array {key!r} cannot be read: {exc}") from None
    except SessionFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged archive: one line
        raise SessionFileError(source, f"is not a readable .npz file ({type(exc).__name__}: {exc})") from None
    return arrays, {}


def _check_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> None:
    """Refuse an array whose header promises more data than the archive holds, before any is allocated."""
    if not info.filename.endswith(".npy"):
        return
    key = info.filename[:-4]
    try:
        with zf.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(fh)
    except ValueError as exc:
        raise SessionFileError(source, f"array {key!r} is not a NumPy array ({_one_line(exc)})") from None
    if dtype.hasobject:
        raise SessionFileError(source, _PICKLED.format(key=key))
    size = int(np.prod(shape, dtype=object)) * max(dtype.itemsize, 1)
    if size > info.file_size:
        raise SessionFileError(source, f"array {key!r} of shape {shape} needs {size:,} bytes but the archive holds "
                                       f"{info.file_size:,}")


def _safetensors_metadata(data: bytes, source: str) -> dict[str, Any]:
    """The ``__metadata__`` of a safetensors file's JSON header, read with the app's bounded JSON parser."""
    if len(data) < 8:
        raise SessionFileError(source, "is not a readable .safetensors file (shorter than its header)")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8:
        raise SessionFileError(source, f"is not a readable .safetensors file (its header claims {size:,} bytes; "
                                       f"the file holds {len(data) - 8:,} after the length)")
    try:
        header = loads_json(data[8:8 + size], cap=MAX_BYTES, max_depth=8, what="safetensors header")
    except BadJSON as exc:
        raise SessionFileError(source, f"is not a readable .safetensors file ({exc.problem})") from None
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise SessionFileError(source, "is not a readable .safetensors file (its __metadata__ must map names to "
                                       "strings)")
    return dict(meta or {})


def _read_safetensors(data: bytes, source: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    try:
        from safetensors.numpy import load
    except ImportError:
        raise SessionFileError(source, "reading .safetensors needs the safetensors package: "
                                       "pip install 'qkv-studio[model]'") from None
    meta: dict[str, Any] = dict(_safetensors_metadata(data, source))  # (its texts, then read as JSON)
    try:
        arrays = dict(load(data))
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own types: one line
        raise SessionFileError(source, f"is not a readable .safetensors file ({_one_line(exc)})") from None
    if "tokens" in meta:
        try:
            meta["tokens"] = loads_json(meta["tokens"], cap=MAX_BYTES, max_depth=4, what="metadata 'tokens'")
        except BadJSON as exc:
            raise SessionFileError(source, f"its metadata 'tokens' must be a JSON list of strings ({exc.problem})") \
                from None
    if "causal" in meta:
        value = str(meta["causal"]).strip().lower()
        if value not in ("true", "false", "1", "0"):
            raise SessionFileError(source, f"its metadata 'causal' must be true or false, not {meta['causal']!r}")
        meta["causal"] = value in ("true", "1")
    return arrays, meta


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _qkv(arrays: dict[str, np.ndarray], source: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    missing = [name for name in ("q", "k", "v") if name not in arrays]
    if missing:
        found = ", ".join(sorted(arrays)) or "none"
        raise SessionFileError(source, f"needs arrays named q, k and v; {', '.join(missing)} missing (found: {found})")
    out = []
    for name in ("q", "k", "v"):
        a = arrays[name]
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise SessionFileError(source, f"{name} must hold real numbers, not {a.dtype} values")
        if a.ndim not in (2, 3, 4):
            raise SessionFileError(source, f"{name} has shape {_shape(a)}; it must be (n, d), (heads, n, d) or "
                                           f"(layers, heads, n, d)")
        out.append(a)
    q, k, v = out
    if not q.ndim == k.ndim == v.ndim:
        raise SessionFileError(source, f"q has shape {_shape(q)}, k {_shape(k)} and v {_shape(v)}: all three need "
                                       f"the same number of dimensions")
    q4, k4, v4 = (a.reshape((1,) * (4 - a.ndim) + a.shape) for a in (q, k, v))
    layers, heads, n, d = q4.shape
    if k4.shape[0] != layers or k4.shape[2:] != (n, d):
        raise SessionFileError(source, f"q has shape {_shape(q)} but k has shape {_shape(k)}: k needs the same "
                                       f"layers, tokens and width")
    if v4.shape[:3] != k4.shape[:3]:
        raise SessionFileError(source, f"k has shape {_shape(k)} but v has shape {_shape(v)}: v needs the same "
                                       f"layers, heads and tokens")
    kv = k4.shape[1]
    if kv == 0 or heads % kv:
        raise SessionFileError(source, f"q has {heads} heads but k and v have {kv}: K/V heads must divide the "
                                       f"query heads")
    for what, count, top in (("layers", layers, MAX_LAYERS), ("heads", heads, MAX_HEADS)):
        if not 1 <= count <= top:
            raise SessionFileError(source, f"q has shape {_shape(q)}: {count} {what}, files hold 1–{top}")
    if not 1 <= n <= MAX_TOKENS:
        raise SessionFileError(source, f"q has shape {_shape(q)}: {n} tokens, files hold 1–{MAX_TOKENS}")
    for name, a in (("q", q4), ("v", v4)):
        if not 1 <= a.shape[3] <= MAX_WIDTH:
            raise SessionFileError(source, f"{name} rows have {a.shape[3]} numbers; widths are 1–{MAX_WIDTH}")
    result = []
    for name, a, given in (("q", q4, q), ("k", k4, k), ("v", v4, v)):
        f = np.array(a, dtype=np.float64)
        bad = np.argwhere(~np.isfinite(f))
        if bad.size:
            where = ", ".join(str(int(i)) for i in bad[0][4 - given.ndim:])
            raise SessionFileError(source, f"{name}[{where}] is not a finite number")
        f.flags.writeable = False
        result.append(f)
    return result[0], result[1], result[2]


def _beside(p: Path, source: str) -> dict[str, Any]:
    """``<name>.tokens.json`` or ``tokens.json`` next to the file, as {"tokens": …, "causal": …} ({} if none)."""
    for side in (p.with_name(p.stem + ".tokens.json"), p.with_name("tokens.json")):
        if not (side.exists() or side.is_symlink()):
            continue
        where = f"{source} ({side.name})"
        try:
            obj = loads_json(read_regular(side, MAX_BYTES, what="tokens file"), cap=MAX_BYTES, max_depth=4,
                             what="tokens file")
        except UnreadableFile as exc:
            raise SessionFileError(where, f"the tokens file cannot be read: {exc.problem}") from None
        except BadJSON as exc:
            raise SessionFileError(where, exc.problem) from None
        if isinstance(obj, list):
            return {"tokens": obj}
        if isinstance(obj, dict):
            return {key: obj[key] for key in ("tokens", "causal") if key in obj}
        raise SessionFileError(where, "the tokens file must hold a list of strings or {\"tokens\": [...]}")
    return {}


def _clean(token: str) -> str:
    """A token as a label: control characters spelled out (a tokenizer's "\\n"), lone surrogates as "?"."""
    token = _CONTROL.sub(lambda m: {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(m.group(), f"\\x{ord(m.group()):02x}"),
                         token)
    return _SURROGATE.sub("?", token)


def _tokens(value: object, n: int, source: str) -> tuple[str, ...]:
    if value is None:
        return tuple(f"t{i}" for i in range(n))
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "S":
            value = np.char.decode(value, "utf-8", "replace")
        if value.dtype.kind != "U" or value.ndim != 1:
            raise SessionFileError(source, f"tokens must be a 1-D array of strings, not {value.dtype} of shape "
                                           f"{_shape(value)}")
        value = value.tolist()
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise SessionFileError(source, "tokens must be a list of strings")
    if len(value) != n:
        raise SessionFileError(source, f"there are {len(value)} tokens but q has {n} rows (one per token)")
    return tuple(_clean(t) for t in value)


def _causal(value: object, source: str) -> bool:
    if isinstance(value, np.ndarray):
        if value.size != 1 or value.dtype.kind not in "biu" or value.item() not in (0, 1):
            raise SessionFileError(source, "causal must be one true/false (or 0/1) value")
        return bool(value.item())
    if isinstance(value, bool):
        return value
    raise SessionFileError(source, f"causal must be true or false, not {value!r}")
