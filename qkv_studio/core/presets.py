"""Built-in scenes: ordinary session files shipped in ``qkv_studio.resources.presets``.

They are read through :func:`read_session`, exactly like a user's file, so a preset can never be
something a user could not have saved.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from qkv_studio.core.scene import Scene
from qkv_studio.core.sessionfile import SessionDocument, SessionFileError, parse_bytes

SUFFIX = ".qkv.json"
# The order a lecture goes in; any other preset files follow alphabetically.
_ORDER = ("lesson", "causal", "padding", "saturation", "projection", "multihead", "long")


@dataclass(frozen=True)
class Preset:
    """A built-in scene: its name (as typed on the command line) and one-line description."""

    name: str
    description: str


def _folder() -> Traversable:
    return resources.files("qkv_studio.resources.presets")


def _names() -> list[str]:
    names = [p.name[: -len(SUFFIX)] for p in _folder().iterdir() if p.name.endswith(SUFFIX)]
    return sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n))


def preset_names() -> list[str]:
    """The built-in scenes' names, in lecture order (nothing is parsed)."""
    return _names()


def load_preset(name: str) -> Scene:
    """The preset's scene (its content); raises :class:`SessionFileError` for an unknown name."""
    return preset_document(name).scene


def preset_document(name: str) -> SessionDocument:
    """The preset's scene and the view it opens with; raises :class:`SessionFileError` for an unknown name."""
    names = _names()
    if name not in names:
        raise SessionFileError(f"preset {name!r}", f"no such preset (available: {', '.join(names)})")
    entry = _folder() / f"{name}{SUFFIX}"
    return parse_bytes(entry.read_bytes(), f"preset {name!r}")


def list_presets() -> list[Preset]:
    """Every built-in scene with its description, in lecture order."""
    return [Preset(n, load_preset(n).description) for n in _names()]


@functools.lru_cache(maxsize=1)
def preset_names_by_text() -> dict[tuple[str, str], str]:
    """Each preset's name by its (title, description): which preset a scene still is (read once, no
    numbers parsed)."""
    found = {}
    for name in _names():
        obj = json.loads((_folder() / f"{name}{SUFFIX}").read_bytes())
        found[(obj.get("title", ""), obj.get("description", ""))] = name
    return found


def preset_path(name: str) -> Path:
    """Filesystem path of a preset file (for "open as file" and tests)."""
    return Path(str(_folder() / f"{name}{SUFFIX}"))


def description_note(scene: Scene) -> str:
    """The scene's description as what it is: "Preset “lesson”: …" for a built-in scene, "“title”: …"
    otherwise; empty when there is none (an edit that made it false has dropped it, see
    :func:`~qkv_studio.core.captions.keep_description_true`)."""
    if not scene.description:
        return ""
    name = preset_names_by_text().get((scene.title, scene.description))
    if name is not None:
        return f"Preset “{name}”: {scene.description}"
    return f"“{scene.title}”: {scene.description}" if scene.title else scene.description
