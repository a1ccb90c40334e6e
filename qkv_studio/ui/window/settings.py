"""What the window remembers between runs (QSettings): geometry and dock layout, theme, colour map, zoom,
animation, the recent files and the last folder.

Values come back from QSettings as whatever the file held (an INI file may hand back strings for
anything, a damaged one garbage): each is type-checked here and replaced by its default when it does
not fit, so a bad settings file never stops the window from opening.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QSettings

from qkv_studio.render.colormaps import SEQUENTIAL
from qkv_studio.render.theme import THEMES

MAX_RECENT = 8
ZOOM_RANGE = (0.5, 4.0)
REMEMBERED = ("geometry", "window_state", "theme", "colormap", "zoom", "animate")


@dataclass(frozen=True)
class Remembered:
    """The window's remembered settings, checked: each field valid or its default."""

    geometry: QByteArray | None = None
    window_state: QByteArray | None = None
    theme: str = "light"
    colormap: str = "viridis"
    zoom: float = 1.0
    animate: bool = True


def _bytes(value: object) -> QByteArray | None:
    if isinstance(value, QByteArray):
        return value if not value.isEmpty() else None
    if isinstance(value, (bytes, bytearray)) and value:
        return QByteArray(bytes(value))
    return None


def _zoom(value: object) -> float:
    if value is None:
        return 1.0
    try:
        zoom = float(value)
    except (TypeError, ValueError):
        return 1.0
    if not math.isfinite(zoom):
        return 1.0
    return max(ZOOM_RANGE[0], min(ZOOM_RANGE[1], zoom))


def _flag(value: object, default: bool) -> bool:
    if value is None:
        return default
    return value not in (False, "false", "0", 0)


def check(values: dict) -> Remembered:
    """Raw QSettings values (``key → value``) as :class:`Remembered`."""
    theme = str(values.get("theme") or "light")
    cmap = values.get("colormap")
    cmap = "viridis" if cmap is None else str(cmap)
    return Remembered(
        geometry=_bytes(values.get("geometry")),
        window_state=_bytes(values.get("window_state")),
        theme=theme if theme in THEMES else "light",
        colormap=cmap if cmap in SEQUENTIAL else "viridis",
        zoom=_zoom(values.get("zoom")),
        animate=_flag(values.get("animate"), True),
    )


class WindowSettings:
    """The window's settings; with ``enabled`` False (tests, screenshots) nothing is read or written."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def qsettings(self) -> QSettings:
        return QSettings()

    def read(self) -> Remembered:
        """Every remembered value, read in one go (defaults when disabled)."""
        if not self.enabled:
            return Remembered()
        st = self.qsettings()
        return check({key: st.value(key) for key in REMEMBERED})

    def store(self, key: str, value: object) -> None:
        if self.enabled:
            self.qsettings().setValue(key, value)

    def store_layout(self, geometry: QByteArray, state: QByteArray) -> None:
        if self.enabled:
            st = self.qsettings()
            st.setValue("geometry", geometry)
            st.setValue("window_state", state)

    def last_folder(self) -> str:
        home = os.path.expanduser("~")
        if not self.enabled:
            return home
        value = self.qsettings().value("last_folder", home)
        return value if isinstance(value, str) and value else home

    def recent(self) -> list[str]:
        """The recent files, newest first."""
        if not self.enabled:
            return []
        value = self.qsettings().value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            return []
        return [str(v) for v in value if v][:MAX_RECENT]

    def add_recent(self, path: str) -> None:
        if not self.enabled:
            return
        recent = [p for p in self.recent() if p != path]
        recent.insert(0, path)
        self.qsettings().setValue("recent_files", recent[:MAX_RECENT])


def restore(window, values: Remembered) -> bool:
    """Geometry, dock layout, colour map and animation on the built ``window``; True when a saved dock
    layout was restored (the default layout is then not made)."""
    from PySide6.QtCore import QTimer

    if values.geometry is not None:
        window.restoreGeometry(values.geometry)
    restored = values.window_state is not None and bool(window.restoreState(values.window_state))
    QTimer.singleShot(0, lambda: window.apply_colormap(values.colormap))
    window.heatmap.animate = values.animate
    return restored
