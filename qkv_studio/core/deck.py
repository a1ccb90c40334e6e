"""Lecture decks: an ordered list of scenes (presets or session files) saved as a small JSON file.

```json
{"format": "qkv-studio-deck", "version": 1,
 "scenes": ["preset:lesson", "preset:causal", "my-example.qkv.json"]}
```

File entries are relative to the deck's folder (absolute paths are allowed).  An entry may also be an
object with the presenter's notes for that scene (optional; they take the place of the scene file's
``notes``, :mod:`qkv_studio.core.ink`)::

    {"scene": "preset:lesson", "notes": {"weights": "Each row sums to 1"}}

Reading a deck checks
what it says (format, version, each entry's text and preset name) but reads no scene file: a scene is
read — through :mod:`qkv_studio.core.safe_read`, never blocking on a FIFO — when it is first asked for
(:meth:`Deck.document`), so a deck of sixty large scenes opens at once.  :meth:`Deck.unreadable` checks
every file entry cheaply when the deck is opened (that it exists and is a regular, readable, non-empty
file of at most 64 MB: one ``stat`` each, nothing parsed), so the lecture (``ui/window/lecture.py``) says
in one message which entries cannot be read before the hall sees them.  A file that still cannot be read
when it is reached raises a :class:`SessionFileError` naming the deck, the entry's number and its file;
the lecture says so and goes on with the next scene.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkv_studio.core.ink import Notes, notes_from_json, notes_to_json
from qkv_studio.core.presets import preset_document, preset_names
from qkv_studio.core.safe_read import check_kind, check_path_text
from qkv_studio.core.scene import Scene
from qkv_studio.core.sessionfile import (
    MAX_BYTES,
    SessionDocument,
    SessionFileError,
    display_name,
    read_file,
    read_session,
    unique_keys,
)
from qkv_studio.core.view import View

DECK_FORMAT = "qkv-studio-deck"
DECK_VERSION = 1
MAX_ENTRIES = 200
MAX_DECK_BYTES = 1024 * 1024  # 200 entries of a few hundred characters each fit many times over


@dataclass(frozen=True, eq=False)
class Deck:
    """A deck's entries as written in its file and the folder they are relative to; each entry's scene
    (and the view it opens with) is read when first asked for, and the last few read are kept."""

    entries: tuple[str, ...]
    folder: str
    source: str = ""  # (the deck file, as messages name it)
    notes: tuple[Notes | None, ...] = ()  # (the entries' own notes; None: the scene file's)
    _kept: OrderedDict[int, SessionDocument] = field(default_factory=OrderedDict, repr=False)

    KEEP = 3  # scenes kept after reading: the one shown and its neighbours, for stepping back and forth

    def __len__(self) -> int:
        return len(self.entries)

    def path_of(self, i: int) -> str:
        """The file behind entry i ("" for a preset)."""
        entry = self.entries[i]
        if entry.startswith("preset:"):
            return ""
        p = Path(entry)
        return str(p if p.is_absolute() else Path(self.folder) / p)

    def document(self, i: int) -> SessionDocument:
        """Entry i's scene and view, read now (or kept from a recent read).  Raises
        :class:`SessionFileError` naming the deck, the entry's number and its file, and the problem."""
        doc = self._kept.pop(i, None)
        if doc is None:
            try:
                doc = load_entry(self.entries[i], self.folder)
            except SessionFileError as exc:
                raise SessionFileError(self.source, f"scene {i + 1} ({display_name(self.entries[i])}): "
                                                    f"{exc.problem}") from None
        self._kept[i] = doc
        while len(self._kept) > self.KEEP:
            self._kept.popitem(last=False)
        out: SessionDocument = doc
        return out

    def unreadable(self) -> list[tuple[int, str]]:
        """The entries that cannot be read, judged without reading them (existence and kind: one ``stat``
        each): ``(index, message)`` with the message :meth:`document` would give."""
        found = []
        for i, entry in enumerate(self.entries):
            if entry.startswith("preset:"):
                continue  # (checked when the deck was read)
            problem = check_kind(self.path_of(i), MAX_BYTES, what="session file")
            if problem is not None:
                found.append((i, f"{self.source}: scene {i + 1} ({display_name(entry)}): {problem}"))
        return found

    def scene(self, i: int) -> Scene:
        """Entry i's scene (read as :meth:`document` reads it)."""
        return self.document(i).scene

    def view_of(self, i: int) -> View:
        """The view entry i's file opens with (read as :meth:`document` reads it)."""
        return self.document(i).view

    def notes_of(self, i: int) -> Notes:
        """The presenter's notes for entry i: the deck entry's, else its scene file's (else none, also when
        the file cannot be read: the lecture says so where it reads the scene)."""
        own = self.notes[i] if i < len(self.notes) else None
        if own is not None:
            return own
        try:
            return self.document(i).notes
        except SessionFileError:
            return Notes()


def load_entry(entry: str, folder: str) -> SessionDocument:
    """One deck entry: ``preset:NAME`` or a session file path (relative to the deck's folder)."""
    if entry.startswith("preset:"):
        return preset_document(entry[len("preset:"):])
    p = Path(entry)
    return read_session(p if p.is_absolute() else Path(folder) / p)


def read_deck(path: str | os.PathLike[str]) -> Deck:
    """Read and check a deck file (its scenes are read later, see :class:`Deck`); raises
    :class:`SessionFileError` naming the file and the problem."""
    p = Path(path)
    data = read_file(p, what="deck file", cap=MAX_DECK_BYTES)
    source = display_name(p)
    try:
        obj = json.loads(data.decode("utf-8-sig"), object_pairs_hook=unique_keys)
    except ValueError as exc:
        if "appears twice" in str(exc):
            raise SessionFileError(source, f"not a QKV Studio deck: {exc}") from None
        raise SessionFileError(source, "not a QKV Studio deck: the file is not valid JSON") from None
    except RecursionError:
        raise SessionFileError(source, "not a QKV Studio deck: the file is not valid JSON") from None
    if not isinstance(obj, dict) or obj.get("format") != DECK_FORMAT:
        raise SessionFileError(source, f"not a QKV Studio deck: 'format' must be {DECK_FORMAT!r}")
    if obj.get("version") != DECK_VERSION:
        raise SessionFileError(source, f"deck version {obj.get('version')!r} is not supported (this QKV Studio "
                                       f"reads version {DECK_VERSION})")
    entries = obj.get("scenes")
    if not isinstance(entries, list) or not entries:
        raise SessionFileError(source, "'scenes' must be a non-empty list of preset names (\"preset:lesson\") "
                                       "or session file paths")
    entries, own_notes = _entries(entries, source)
    if len(entries) > MAX_ENTRIES:
        raise SessionFileError(source, f"a deck holds at most {MAX_ENTRIES} scenes")
    for i, entry in enumerate(entries):
        problem = check_path_text(entry)
        if problem is not None:
            raise SessionFileError(source, f"scene {i + 1} ({display_name(entry)[:80]}): {problem}")
    presets = None
    for i, entry in enumerate(entries):
        if entry.startswith("preset:"):  # (a preset's name is checked now: it costs no file read)
            presets = preset_names() if presets is None else presets
            if entry[len("preset:"):] not in presets:
                raise SessionFileError(source, f"scene {i + 1} ({entry}): no such preset (available: "
                                               f"{', '.join(presets)})")
    try:
        folder = str(p.resolve().parent)
    except (OSError, RuntimeError) as exc:
        raise SessionFileError(source,
                               f"its folder cannot be found ({getattr(exc, 'strerror', None) or exc})") from None
    return Deck(tuple(entries), folder, source, tuple(own_notes))


def _entries(raw: list[Any], source: str) -> tuple[list[str], list[Notes | None]]:
    """The deck's entries as scene names, and each entry's own notes (None where it has none)."""
    names: list[str] = []
    notes: list[Notes | None] = []
    for i, entry in enumerate(raw):
        own = None
        if isinstance(entry, dict):
            unknown = set(entry) - {"scene", "notes"}
            if unknown:
                raise SessionFileError(source, f"scene {i + 1} has an unknown field {sorted(unknown)[0][:30]!r} "
                                               "(an entry object has 'scene' and 'notes')")
            try:
                own = notes_from_json(entry["notes"]) if "notes" in entry else None
            except ValueError as exc:
                raise SessionFileError(source, f"scene {i + 1}: {exc}") from None
            entry = entry.get("scene")
        if not isinstance(entry, str) or not entry:
            raise SessionFileError(source, "'scenes' must be a non-empty list of preset names (\"preset:lesson\") "
                                           "or session file paths (or objects with 'scene' and 'notes')")
        names.append(entry)
        notes.append(own)
    return names, notes


def write_deck(entries: list[str], path: str | os.PathLike[str], notes: list[Notes | None] | None = None) -> None:
    """Write a deck file atomically (temporary file, then rename); ``notes`` (one per entry, None for
    none) makes the entries with notes objects."""
    p = Path(path)
    scenes: list[Any] = list(entries)
    for i, own in enumerate(notes or ()):
        if own is not None and i < len(scenes):
            scenes[i] = {"scene": scenes[i], "notes": notes_to_json(own) or ""}
    text = json.dumps({"format": DECK_FORMAT, "version": DECK_VERSION, "scenes": scenes}, indent=2,
                      ensure_ascii=False) + "\n"
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SessionFileError(str(p), f"cannot be written ({exc.strerror or exc})") from None
