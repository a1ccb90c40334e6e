"""Session files (``*.qkv.json``, version 1): read with validation, write atomically.

Reading never executes anything: the bytes are size-checked, decoded as UTF-8 and parsed by the
standard ``json`` module with NaN/Infinity refused and nesting bounded, then every field is checked
before a :class:`SessionDocument` is built: the :class:`Scene` (content) and the :class:`View` (the
file's ``query`` and ``stage``), with the optional lecture annotations beside them (``notes`` and
``ink``, :mod:`qkv_studio.core.ink`; absent, they are empty).  Every refusal is a
:class:`SessionFileError` whose message names the file and the problem.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from qkv_studio.core.ink import (
    EMPTY_INK,
    NO_NOTES,
    Ink,
    Notes,
    ink_from_json,
    ink_to_json,
    notes_from_json,
    notes_to_json,
)
from qkv_studio.core.multihead import MAX_HEADS, MIN_HEADS
from qkv_studio.core.safe_read import UnreadableFile, json_depth, read_regular
from qkv_studio.core.scene import MAX_TOKENS, MAX_WIDTH, Scene, SceneError
from qkv_studio.core.scene_checks import present
from qkv_studio.core.stages import STAGES
from qkv_studio.core.view import View

FORMAT = "qkv-studio-session"
VERSION = 1
MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 8  # the deepest legal file is object → matrix → row → number (plus a mask)


class SessionFileError(ValueError):
    """A session file that was refused; ``str(err)`` is one line naming the file and the problem."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


class _Document(NamedTuple):
    scene: Scene
    view: View = View()


class SessionDocument(_Document):
    """What a session file holds: the scene's content and the view of it (``scene, view = read_session(p)``),
    and the presenter's ``notes`` and the slide's ``ink`` (attributes, not part of the pair: empty by
    default, and a file without them reads as before)."""

    notes: Notes
    ink: Ink

    def __new__(cls, scene: Scene, view: View = View(), notes: Notes = NO_NOTES,
                ink: Ink = EMPTY_INK) -> SessionDocument:
        doc = super().__new__(cls, scene, view)
        doc.notes = notes
        doc.ink = ink
        return doc


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def _parse_int(text: str) -> int | float:
    # More digits than any double holds: read as float (→ inf, refused later) rather than hitting
    # Python's 4300-digit int limit, whose ValueError would read as nonsense to a user.
    return int(text) if len(text) <= 400 else float(text)


def _depth_ok(text: str) -> bool:
    """Cheap pre-scan so a pathologically nested file never reaches the recursive parser."""
    return json_depth(text) <= MAX_DEPTH


class _DuplicateKey(ValueError):
    pass


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing a key given twice: the last-wins value may not be what was meant."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"the key {json.dumps(key)[:40]} appears twice in one object; "
                                    "remove one (which value was meant is unclear)")
            seen.add(key)
    return obj


def _too_big(size: int) -> str:
    return f"the file is larger than 64 MB ({size:,} bytes); session files are at most 64 MB"


def parse_bytes(data: bytes, source: str = "<data>") -> SessionDocument:
    """Validate raw file bytes and return the scene and view, or raise :class:`SessionFileError`."""
    if len(data) > MAX_BYTES:
        raise SessionFileError(source, _too_big(len(data)))
    if not data.strip():
        raise SessionFileError(source, "the file is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SessionFileError(source, "not a QKV Studio session: the file is binary, not UTF-8 JSON text") from None
    if not _depth_ok(text):
        raise SessionFileError(source, f"the JSON is nested more than {MAX_DEPTH} levels deep")
    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int, object_pairs_hook=unique_keys)
    except _DuplicateKey as exc:
        raise SessionFileError(source, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise SessionFileError(source, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                                       "the file may be truncated or not a session file") from None
    except ValueError as exc:  # NaN / Infinity constants
        raise SessionFileError(source, f"{exc}: only finite numbers are allowed") from None
    except RecursionError:
        raise SessionFileError(source, "the JSON is nested too deeply") from None
    return document_from_dict(obj, source)


def read_session(path: str | os.PathLike[str]) -> SessionDocument:
    """Read and validate a session file; raise :class:`SessionFileError` naming the file on any problem."""
    return parse_bytes(read_file(path, what="session file"), display_name(path))


def suggested_file_name(scene: Scene) -> str:
    """A file name for Save As made from the scene's title, else its tokens: "minilm-layer-3-head-5.qkv.json"
    (letters, digits and dashes, at most 60 characters before the suffix; "attention.qkv.json" if
    nothing is left)."""
    source = scene.title.strip() or " ".join(scene.tokens[:6])
    text = unicodedata.normalize("NFKD", source).encode("ascii", "ignore").decode("ascii").lower()
    stem = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:60].rstrip("-")
    return f"{stem or 'attention'}.qkv.json"


def display_name(path: str | os.PathLike[str]) -> str:
    """The file's name for a message (a name that cannot be printed is shown escaped)."""
    text = str(Path(os.fsdecode(path)))
    return text.replace("\x00", "\\0").encode("utf-8", "backslashreplace").decode("utf-8")


def read_file(path: str | os.PathLike[str], *, what: str = "session file", cap: int = MAX_BYTES) -> bytes:
    """The bytes of a file the user named (a regular file, at most ``cap`` bytes, never blocking on a
    FIFO or a device); raise :class:`SessionFileError` naming the file on any problem."""
    try:
        return read_regular(path, cap, what=what)
    except UnreadableFile as exc:
        problem = exc.problem
        if problem == "is a folder, not a file":
            problem = f"is a folder, not a {what}"
        raise SessionFileError(display_name(path), problem) from None


# ---- dict ⇄ Scene --------------------------------------------------------------------------------------
def _number(v: Any, where: str, source: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        kind = "text" if isinstance(v, str) else "true/false" if isinstance(v, bool) else type(v).__name__
        if v is None:
            kind = "null"
        raise SessionFileError(source, f"{where} must be a number, found {kind} ({json.dumps(v)[:30]})")
    f = float(v) if not isinstance(v, int) or abs(v) < 2**1023 else math.inf
    if not math.isfinite(f):
        raise SessionFileError(source, f"{where} is not a finite number")
    return f


def _brief(number: int) -> str:
    """A whole number for a message, shortened when a file holds hundreds of digits."""
    text = str(number)
    return text if len(text) <= 20 else f"{text[:8]}…({len(text)} digits)"


def _matrix(obj: dict[str, Any], name: str, source: str, rows_expected: int | None) -> np.ndarray:
    rows = obj[name]
    if not isinstance(rows, list) or not rows:
        raise SessionFileError(source, f"{name} must be a non-empty list of rows")
    if rows_expected is not None and len(rows) != rows_expected:
        raise SessionFileError(source, f"{name} has {len(rows)} rows but there are {rows_expected} tokens")
    width = None
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, list):
            raise SessionFileError(source, f"row {i + 1} of {name} must be a list of numbers")
        if width is None:
            width = len(row)
            if not 1 <= width <= MAX_WIDTH:
                raise SessionFileError(source, f"{name} rows must have 1–{MAX_WIDTH} numbers, row 1 has {width}")
        elif len(row) != width:
            plural = "" if len(row) == 1 else "s"
            raise SessionFileError(source, f"row {i + 1} of {name} has {len(row)} number{plural} "
                                           f"but row 1 has {width}")
        out.append([_number(v, f"{name} row {i + 1}, column {j + 1}", source) for j, v in enumerate(row)])
    return np.array(out, dtype=np.float64)


def scene_from_dict(obj: Any, source: str = "<data>") -> Scene:
    """Validate a parsed session object and build its Scene (raises :class:`SessionFileError`)."""
    return document_from_dict(obj, source).scene


def document_from_dict(obj: Any, source: str = "<data>") -> SessionDocument:
    """Validate a parsed session object and build its scene and view (raises :class:`SessionFileError`)."""
    if not isinstance(obj, dict):
        raise SessionFileError(source, "not a QKV Studio session: the top level must be a JSON object")
    if obj.get("format") != FORMAT:
        found = obj.get("format")
        told = f", found {json.dumps(found)[:40]}" if found is not None else ", it is missing"
        raise SessionFileError(source, f"not a QKV Studio session: 'format' must be {FORMAT!r}" + told)
    version = obj.get("version")
    if "version" not in obj:
        raise SessionFileError(source, "missing field 'version'")
    if isinstance(version, bool) or not isinstance(version, int):
        raise SessionFileError(source, f"'version' must be a whole number, found {json.dumps(version)[:30]}")
    if version != VERSION:
        raise SessionFileError(source,
                               f"session file version {_brief(version)} is not supported (this QKV Studio reads "
                                       f"version {VERSION}); it may come from a newer release")
    if "tokens" not in obj:
        raise SessionFileError(source, "missing field 'tokens'")
    tokens = obj["tokens"]
    if not isinstance(tokens, list):
        raise SessionFileError(source, "'tokens' must be a list of names")
    if not 1 <= len(tokens) <= MAX_TOKENS:
        raise SessionFileError(source, f"'tokens' must hold 1–{MAX_TOKENS} names, it holds {len(tokens)}")
    for i, t in enumerate(tokens):
        if not isinstance(t, str):
            raise SessionFileError(source, f"token {i + 1} must be text, found {json.dumps(t)[:30]}")
    n = len(tokens)
    kwargs: dict[str, Any] = {}
    if "X" in obj:
        for name in ("Wq", "Wk", "Wv"):
            if name not in obj:
                raise SessionFileError(source, f"projection mode (X given) needs field {name!r}")
        kwargs["x"] = _matrix(obj, "X", source, n)
        for name in ("Wq", "Wk", "Wv"):
            kwargs[name.lower()] = _matrix(obj, name, source, None)
    else:
        for name in ("Q", "K", "V"):
            if name not in obj:
                raise SessionFileError(source, f"missing field {name!r} (give Q, K and V, or X with Wq, Wk, Wv)")
        for name in ("Q", "K", "V"):
            kwargs[name.lower()] = _matrix(obj, name, source, n)
    mask = obj.get("mask", "none")
    if isinstance(mask, list):
        if len(mask) != n or not all(isinstance(r, list) and len(r) == n for r in mask):
            raise SessionFileError(source, f"'mask' must be {n}×{n} (one row and column per token)")
        if not all(isinstance(b, bool) for r in mask for b in r):
            raise SessionFileError(source, "'mask' rows must hold true (blocked) or false")
        mask = np.array(mask, dtype=bool)
    elif mask not in ("none", "causal"):
        raise SessionFileError(source, f"unknown mask {json.dumps(mask)[:30]}: use \"none\", \"causal\" "
                                       "or a boolean matrix")
    scale = obj.get("scale", True)
    if not isinstance(scale, bool):
        raise SessionFileError(source, "'scale' must be true or false")
    query = obj.get("query", 0)
    if isinstance(query, bool) or not isinstance(query, int):
        raise SessionFileError(source, f"'query' must be a token index, found {json.dumps(query)[:30]}")
    if not 0 <= query < n:
        raise SessionFileError(source, f"'query' {_brief(query)} is out of range: there are {n} tokens (0–{n - 1})")
    stage = obj.get("stage", "weights")
    if stage not in STAGES:
        raise SessionFileError(source, f"unknown stage {json.dumps(stage)[:30]}: use one of {', '.join(STAGES)}")
    title = obj.get("title", "")
    description = obj.get("description", "")
    if not isinstance(title, str) or not isinstance(description, str):
        raise SessionFileError(source, "'title' and 'description' must be text")
    heads = obj.get("heads", 1)
    if isinstance(heads, bool) or not isinstance(heads, int):
        raise SessionFileError(source, f"'heads' must be a whole number of heads, found {json.dumps(heads)[:30]}")
    if not MIN_HEADS <= heads <= MAX_HEADS:
        raise SessionFileError(source, f"'heads' must be {MIN_HEADS}–{MAX_HEADS}, found {_brief(heads)}")
    if "Wo" in obj:
        kwargs["wo"] = _matrix(obj, "Wo", source, None)
    try:
        notes, ink = notes_from_json(obj.get("notes")), ink_from_json(obj.get("ink"))
    except ValueError as exc:
        raise SessionFileError(source, str(exc)) from None
    try:
        scene = Scene.create(tokens, mask=mask, scale=scale, title=title, description=description, heads=heads,
                             **kwargs)
    except SceneError as exc:
        raise SessionFileError(source, str(exc)) from None
    return SessionDocument(scene, View(query=query, stage=stage), notes, ink)


def _rows(a: np.ndarray) -> list[list[float | int]]:
    # Integral values are written as ints (readable files); everything else keeps full precision.
    return [[int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x) for x in row] for row in a.tolist()]


def scene_to_dict(scene: Scene, view: View, notes: Notes = NO_NOTES, ink: Ink = EMPTY_INK) -> dict[str, Any]:
    """The session-file object for a scene and its view (version 1), with its notes and ink if any."""
    obj: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    if scene.title:
        obj["title"] = scene.title
    if scene.description:
        obj["description"] = scene.description
    obj["tokens"] = list(scene.tokens)
    if scene.mode == "projection":
        obj.update(X=_rows(present(scene.x, "X")), Wq=_rows(present(scene.wq, "Wq")),
                   Wk=_rows(present(scene.wk, "Wk")), Wv=_rows(present(scene.wv, "Wv")))
    else:
        obj.update(Q=_rows(present(scene.q, "Q")), K=_rows(present(scene.k, "K")), V=_rows(present(scene.v, "V")))
    if scene.heads != 1:  # the defaults (one head, no W^O) are left out
        obj["heads"] = scene.heads
    if scene.wo is not None:
        obj["Wo"] = _rows(scene.wo)
    obj["mask"] = scene.mask if isinstance(scene.mask, str) else scene.mask.tolist()
    obj.update(scale=scene.scale, query=int(view.query), stage=view.stage)
    for key, value in (("notes", notes_to_json(notes)), ("ink", ink_to_json(ink))):
        if value is not None:  # (the defaults — none — are left out)
            obj[key] = value
    return obj


def dumps(scene: Scene, view: View, notes: Notes = NO_NOTES, ink: Ink = EMPTY_INK) -> str:
    """The file text: one matrix row per line, readable in a text editor and in diffs."""
    obj = scene_to_dict(scene, view, notes, ink)
    parts = []
    for key, val in obj.items():
        if isinstance(val, list) and val and isinstance(val[0], list):
            rows = ",\n    ".join(json.dumps(r, ensure_ascii=False) for r in val)
            parts.append(f"  {json.dumps(key)}: [\n    {rows}\n  ]")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(val, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _new_file_mode(target: Path) -> int:
    """Permissions for the renamed file: the old file's, else what the umask gives a new file.

    ``mkstemp`` creates 0600 files; without this a saved session could not be read by anyone else.
    """
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        pass
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, flushed and fsynced,
    then renamed over the target.  Raises ``OSError``; on any failure (or interruption) the old file is
    untouched and the temporary file is removed.
    """
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    mode = _new_file_mode(p)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_session(path: str | os.PathLike[str], scene: Scene, view: View, *, notes: Notes = NO_NOTES,
                  ink: Ink = EMPTY_INK) -> None:
    """Write ``scene`` and ``view`` (and ``notes`` and ``ink`` when given) to ``path`` atomically: a
    temporary file in the same folder, flushed, then renamed over the target.

    On any failure the old file (if any) is untouched and no temporary file is left behind; the
    failure is raised as :class:`SessionFileError` naming the file.
    """
    if not isinstance(scene, Scene) or not isinstance(view, View):
        raise TypeError("write_session(path, scene, view)")
    view.check(scene)
    data = dumps(scene, view, notes, ink).encode("utf-8")
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise SessionFileError(str(Path(path)), f"cannot be written ({exc.strerror or exc})") from None


def save(scene: Scene, path: str | os.PathLike[str], view: View | None = None) -> None:
    """``qkv_studio.save(scene, path)``: write ``scene`` as a session file (``*.qkv.json``), atomically,
    looked at with ``view`` (default: the first query, the weights); the app and the command line open
    it.  The Python API's side of :func:`write_session` (a Scene is content only and knows no file
    format: the format builds on the Scene, not the other way round).  Raises :class:`SessionFileError`
    (one line naming the file) when the file cannot be written."""
    write_session(path, scene, View() if view is None else view)
