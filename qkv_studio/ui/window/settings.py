"""What the window remembers between runs, read back through one validated reader.

The settings file is the user's (and any program's) to edit, so nothing read from it is trusted: a
file that is not a regular file (a FIFO would block ``QSettings`` for ever) or is larger than
``MAX_FILE_BYTES`` is moved aside and a fresh one started, and every value is type- and range-checked
here.  A bad value is ignored — the default is used — and logged once per key; it never stops the app
(``geometry=hello`` used to raise a ``TypeError`` in ``restoreGeometry`` on every start).

To add a remembered setting: add its key and check to :data:`CHECKS` (a function returning the valid
value or raising ``ValueError`` with the reason), its default to :data:`DEFAULTS`, and — if the window
reads it before it is built — a field to :class:`Remembered`.  The window reads and writes through
:class:`WindowSettings`; with ``enabled`` False (tests, screenshots) nothing is read or written.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings

from qkv_studio.core.safe_read import is_regular_or_missing

log = logging.getLogger("qkv_studio.settings")

MAX_FILE_BYTES = 4 * 1024 * 1024  # a real settings file is a few kilobytes (the window state ~2 KB)
MAX_RECENT = 8
MAX_PATH_CHARS = 4096
MAX_STATE_BYTES = 1024 * 1024
ZOOM_RANGE = (0.5, 4.0)

_logged: set[str] = set()
_checked_files: set[tuple[str, str]] = set()  # (organisation, application) names checked


# ---- the file -------------------------------------------------------------------------------------------
def _settings_file() -> Path | None:
    """The file ``QSettings()`` reads (ini format only: Linux/BSD); None when it cannot be named.

    Constructing ``QSettings()`` reads the file, so its name comes from a probe under another
    organisation name, whose file does not exist.
    """
    org = QCoreApplication.organizationName() or "Unknown Organization"
    app = QCoreApplication.applicationName()
    if not app:
        return None
    probe = QSettings(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, "qkv-studio-probe", "probe")
    name = probe.fileName()
    if not name.endswith((".conf", ".ini")):
        return None  # the registry or a property list: no file of ours to check
    base = Path(name).parent.parent
    return base / org / (app + Path(name).suffix)


def _move_aside(path: Path, why: str) -> None:
    dest = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, dest)
        log.warning("settings: %s %s; moved to %s, starting with default settings", path, why, dest)
    except OSError as exc:
        log.warning("settings: %s %s and cannot be moved aside (%s)", path, why, exc)


def check_file() -> None:
    """Before the first ``QSettings()``: a settings file that is not a regular file or is too large is
    moved aside (kept, with a note in the log), so reading it can neither block nor exhaust memory."""
    names = (QCoreApplication.organizationName(), QCoreApplication.applicationName())
    if names in _checked_files:
        return
    _checked_files.add(names)
    path = _settings_file()
    if path is None:
        return
    if not is_regular_or_missing(path):
        if path.is_symlink() and is_regular_or_missing(path.resolve()) and path.resolve().exists():
            target = path.resolve()
            try:
                size = target.stat().st_size
            except OSError:
                size = 0
            if size <= MAX_FILE_BYTES:
                return  # a symlink to a regular file of a sane size (a dotfiles repository)
        _move_aside(path, "is not a regular file")
        return
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size > MAX_FILE_BYTES:
        _move_aside(path, f"is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")


def open_settings() -> QSettings:
    """``QSettings()``, after :func:`check_file`."""
    check_file()
    return QSettings()


# ---- the values -----------------------------------------------------------------------------------------
def _bytes(value: Any) -> QByteArray:
    if isinstance(value, (bytes, bytearray)):
        value = QByteArray(bytes(value))
    if not isinstance(value, QByteArray):
        raise ValueError(f"must be saved window data, found {type(value).__name__}")
    if value.isEmpty() or value.size() > MAX_STATE_BYTES:
        raise ValueError(f"has {value.size()} bytes")
    return value


def _choice(options: Callable[[], Any]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in options():
            raise ValueError(f"{str(value)[:40]!r} is not one of {', '.join(options())}")
        return value

    return check


def _zoom(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("must be a number")
    try:
        zoom = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"must be a number, found {str(value)[:40]!r}") from None
    lo, hi = ZOOM_RANGE
    if not (math.isfinite(zoom) and lo <= zoom <= hi):
        raise ValueError(f"{zoom} is outside {lo}–{hi}")
    return zoom


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError(f"must be true or false, found {str(value)[:40]!r}")


def _path_text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a file name, found {type(value).__name__}")
    if len(value) > MAX_PATH_CHARS or "\x00" in value:
        raise ValueError("is not a usable file name")
    try:
        os.fsencode(value)
    except UnicodeError:
        raise ValueError("is not valid text") from None
    return value


def _recent(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"must be a list of file names, found {type(value).__name__}")
    out: list[str] = []
    for item in value[: MAX_RECENT * 4]:  # (a list of a million entries is not walked)
        try:
            path = _path_text(item)
        except ValueError:
            continue
        if path not in out:
            out.append(path)
        if len(out) == MAX_RECENT:
            break
    return out


def _themes():
    from qkv_studio.render.theme import THEMES

    return tuple(THEMES)


def _colormaps():
    from qkv_studio.render.colormaps import SEQUENTIAL

    return tuple(SEQUENTIAL)


CHECKS: dict[str, Callable[[Any], Any]] = {
    "geometry": _bytes,
    "window_state": _bytes,
    "theme": _choice(_themes),
    "colormap": _choice(_colormaps),
    "zoom": _zoom,
    "animate": _flag,
    "maximized": _flag,
    "show_all_stages": _flag,
    "recent_files": _recent,
    "last_folder": _path_text,
}
DEFAULTS: dict[str, Any] = {
    "geometry": None,
    "window_state": None,
    "theme": "light",
    "colormap": None,  # (the window's own)
    "zoom": 1.0,
    "animate": True,
    "maximized": False,
    "show_all_stages": False,  # (a lecture reveals each stage's results at that stage)
    "recent_files": [],
    "last_folder": None,  # (the home folder)
}


def ignored(key: str, reason: str) -> None:
    """Log a bad stored value, once per key and process."""
    if key not in _logged:
        _logged.add(key)
        log.warning("settings: ignoring %s (%s); using the default", key, reason)


def read(settings: QSettings, key: str) -> Any:
    """The stored value of ``key`` if it passes its check, else its default (a bad one is logged once)."""
    default = DEFAULTS[key]
    try:
        value = settings.value(key)
    except Exception as exc:  # noqa: BLE001 - a value Qt cannot even convert
        ignored(key, f"unreadable: {type(exc).__name__}")
        return default
    if value is None:
        return default
    try:
        return CHECKS[key](value)
    except ValueError as exc:
        ignored(key, str(exc))
        return default


def read_all(settings: QSettings, keys: tuple[str, ...]) -> dict[str, Any]:
    """:func:`read` for each key."""
    return {key: read(settings, key) for key in keys}


def restore_geometry(window, geometry: QByteArray | None, state: QByteArray | None) -> bool:
    """Apply checked geometry and dock state; data Qt refuses is logged and ignored.  True when the
    dock state was restored."""
    if geometry is not None and not window.restoreGeometry(geometry):
        ignored("geometry", "Qt could not restore it")
    restored = False
    if state is not None:
        restored = bool(window.restoreState(state))
        if not restored:
            ignored("window_state", "Qt could not restore it")
    return restored


# ---- what the window reads -------------------------------------------------------------------------------
REMEMBERED = ("geometry", "window_state", "theme", "colormap", "zoom", "animate", "maximized", "show_all_stages")


@dataclass(frozen=True)
class Remembered:
    """The window's remembered settings, checked: each field valid or its default."""

    geometry: QByteArray | None = None
    window_state: QByteArray | None = None
    theme: str = "light"
    colormap: str = "viridis"
    zoom: float = 1.0
    animate: bool = True
    maximized: bool = False
    show_all_stages: bool = False


def _checked(key: str, value: Any) -> Any:
    if value is None:
        return DEFAULTS[key]
    try:
        return CHECKS[key](value)
    except ValueError as exc:
        ignored(key, str(exc))
        return DEFAULTS[key]


def check(values: dict) -> Remembered:
    """Raw QSettings values (``key → value``) as :class:`Remembered` (a bad one: its default, logged once)."""
    kept = {f.name: _checked(f.name, values.get(f.name)) for f in fields(Remembered)}
    return Remembered(**{k: v for k, v in kept.items() if v is not None or k in ("geometry", "window_state")})


class WindowSettings:
    """The window's settings; with ``enabled`` False (tests, screenshots) nothing is read or written."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def qsettings(self) -> QSettings:
        return open_settings()

    def read(self) -> Remembered:
        """Every remembered value, read in one go (defaults when disabled)."""
        if not self.enabled:
            return Remembered()
        return Remembered(**{k: v for k, v in read_all(self.qsettings(), REMEMBERED).items()
                             if v is not None or k in ("geometry", "window_state")})

    def store(self, key: str, value: object) -> None:
        if self.enabled:
            self.qsettings().setValue(key, value)

    def store_layout(self, geometry: QByteArray, state: QByteArray, maximized: bool | None = None) -> None:
        """The window's geometry and dock layout, and whether it was maximised (None: not stored)."""
        if self.enabled:
            st = self.qsettings()
            st.setValue("geometry", geometry)
            st.setValue("window_state", state)
            if maximized is not None:
                st.setValue("maximized", bool(maximized))

    def last_folder(self) -> str:
        home = os.path.expanduser("~")
        if not self.enabled:
            return home
        return read(self.qsettings(), "last_folder") or home

    def recent(self) -> list[str]:
        """The recent files, newest first (at most :data:`MAX_RECENT`)."""
        if not self.enabled:
            return []
        return read(self.qsettings(), "recent_files")

    def add_recent(self, path: str) -> None:
        if not self.enabled:
            return
        recent = [p for p in self.recent() if p != path]
        recent.insert(0, path)
        self.qsettings().setValue("recent_files", recent[:MAX_RECENT])


def restore(window, values: Remembered) -> bool:
    """Geometry, dock layout, colour map, animation and View → Show all stages at once on the built
    ``window``; True when a saved dock layout was restored (the default layout is then not made)."""
    from PySide6.QtCore import Qt, QTimer

    restored = restore_geometry(window, values.geometry, values.window_state)
    if values.maximized:  # (shown maximised: the geometry saved with it is the normal one to go back to)
        window.setWindowState(window.windowState() | Qt.WindowState.WindowMaximized)
    QTimer.singleShot(0, lambda: window.apply_colormap(values.colormap))
    window.heatmap.animate = values.animate
    if values.show_all_stages and not window.acts.show_all_stages.isChecked():
        window.acts.show_all_stages.trigger()
    return restored
