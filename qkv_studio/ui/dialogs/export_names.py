"""The export dialogs' file names and what they remember: proposed names, the folder, the file filters,
and how a typed name and the chosen format agree.

The formats offered are the registry :mod:`qkv_studio.export.formats`'s.  A typed name's ending picks
the format (as on the command line); an ending made of letters that no format has (``fig.txt``) is
refused with a message naming the formats; a name with no ending, or with a dot inside it (``fig.v2``),
gets the format's ending added.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from PySide6.QtCore import QSettings

from qkv_studio.core import Scene
from qkv_studio.export import formats

# QSettings keys (all under export/)
K_FOLDER = "export/folder"
K_FORMAT = "export/format"
K_SIZE_MODE = "export/size_mode"
K_WIDTH = "export/width"
K_SCALE = "export/scale"
K_BACKGROUND = "export/background"
K_ALL_STAGES = "export/all_stages"
K_PICTURE = "export/picture"

#: The registry's kinds *Export heatmap…* offers: one stage's figure, the stages animated, a deck of them.
PICTURE_KINDS = ("figure", "animation", "deck", "page")


def figure_formats() -> tuple[formats.ExportFormat, ...]:
    return tuple(f for f in formats.formats() if f.kind in PICTURE_KINDS)


def figure_suffixes() -> tuple[str, ...]:
    return tuple(f.suffix for f in figure_formats())


def number_formats() -> tuple[formats.ExportFormat, ...]:
    return formats.formats("numbers")


def settings_of(window) -> QSettings | None:
    """The app's settings, or None for a window told not to use them (offscreen screenshots)."""
    if window is not None and not getattr(window, "_use_settings", True):
        return None
    return QSettings()


def as_bool(value, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def as_int(value, default: int, lo: int, hi: int) -> int:
    try:
        return min(hi, max(lo, int(value)))
    except (TypeError, ValueError):
        return default


def as_float(value, default: float, lo: float, hi: float) -> float:
    try:
        return min(hi, max(lo, float(value)))
    except (TypeError, ValueError):
        return default


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:1].upper() + text[1:]


def last_folder(settings: QSettings | None) -> str:
    """The folder of the last export (if it still exists), else the home folder."""
    if settings is not None:
        folder = settings.value(K_FOLDER)
        if folder and os.path.isdir(str(folder)):
            return str(folder)
    return os.path.expanduser("~")


def remember_folder(settings: QSettings | None, path: Path) -> None:
    if settings is not None:
        settings.setValue(K_FOLDER, str(Path(path).resolve().parent))


def base_name(scene: Scene, session_path: str = "") -> str:
    """A file name stem for a scene: its file's name, else its title, else ``attention``."""
    if session_path:
        name = Path(session_path).name
        for ending in (".qkv.json", ".json"):
            if name.lower().endswith(ending):
                name = name[: -len(ending)]
                break
        if name:
            return name
    slug = re.sub(r"[^\w]+", "-", re.sub(r"['’]", "", scene.title or "").lower()).strip("-_")
    return slug[:60] or "attention"


def default_file_name(scene: Scene, session_path: str, stage: str, suffix: str, *, all_stages: bool = False) -> str:
    """``lesson-weights.png``; for all stages just ``lesson.png`` (the stages are numbered onto it)."""
    stem = base_name(scene, session_path)
    return f"{stem}{suffix}" if all_stages else f"{stem}-{stage}{suffix}"


def figure_filter() -> str:
    """The save dialog's filters for figures: ``PNG image (*.png);;SVG (vector) (*.svg);;…``."""
    return ";;".join(f.file_filter for f in figure_formats())


def number_filter() -> str:
    """The save dialog's filters for numbers: ``CSV — current stage (*.csv);;JSON — all stages (*.json)``."""
    return ";;".join(f.file_filter for f in number_formats())


def filter_suffix(chosen_filter: str, offered: tuple[formats.ExportFormat, ...], default: str) -> str:
    """The suffix of the format whose filter the user picked (``default`` if none matches)."""
    for fmt in offered:
        if chosen_filter == fmt.file_filter:
            return fmt.suffix
    for fmt in offered:  # a platform dialog may hand back the label alone
        if chosen_filter.startswith(fmt.label):
            return fmt.suffix
    return default


def typed_suffix(text: str) -> str:
    """The ending a typed name gives a file type by: ``.svg`` of ``fig.svg``; ``""`` for ``fig`` and for
    ``fig.v2`` (a dot inside a name, not a file type: only letters make one — or a format's own ending,
    such as ``.mp4``)."""
    suffix = Path(text.strip()).suffix.lower() if text.strip() else ""
    return suffix if re.fullmatch(r"\.[a-z]+", suffix) or suffix in figure_suffixes() else ""


def suffix_problem(text: str, offered: tuple[str, ...]) -> str:
    """Why a typed name cannot be written ("" when it can): an ending no offered format has."""
    suffix = typed_suffix(text)
    if not suffix or suffix in offered:
        return ""
    return f"{suffix!r} is not a format the export writes: use {formats.spelled(list(offered))}"


def target_path(text: str, folder: str, suffix: str, offered: tuple[str, ...]) -> Path | None:
    """The file a typed name means (None when empty or only a folder): a relative name in ``folder``, the format's
    ``suffix`` in place of an offered one, added to a name without one; an unknown ending is kept (see
    :func:`suffix_problem`)."""
    text = text.strip()
    if not text:
        return None
    p = Path(os.path.expanduser(text))
    if not p.is_absolute():
        p = Path(folder) / p
    if not p.name or text.endswith(("/", os.sep)):  # (a folder, not a file: "/" while typing "/home/…")
        return None
    typed = typed_suffix(text)
    if typed in offered:
        return p.with_suffix(suffix)
    if typed:
        return p
    return p.with_name(p.name + suffix)
