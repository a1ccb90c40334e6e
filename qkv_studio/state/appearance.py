"""The Appearance: how everything is drawn (theme, colour map, text scale, screen scale), in one QObject.

The window owns one and its View menu (theme, colour map, zoom) and presentation mode set it; every
panel binds to it as it binds to the Session (see ``qkv_studio.ui.widgets.appearance_binding``) and
restyles itself when it changes, so no widget can be left in an old theme's colours.

Each value is validated, stored, then announced (napari's setter order): its ``<noun>_changed``
signal fires only on a real change, followed by one ``changed()``.  Setting the same value again is
free — panels are never told to redraw what they already show.

``screen_scale`` is the screen's share of the sizes (1.0 on a ~96-dpi screen of ordinary size; the
layouts for every screen derive it from the logical size and device-pixel ratio).  ``scale`` — text
scale × screen scale — is the factor every font and pen width is sized by.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QObject, Signal

from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, SEQUENTIAL
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme

MIN_SCALE = 0.25
MAX_SCALE = 8.0

#: The screen the sizes are drawn for at screen scale 1: 1080 logical pixels high (and a slide of it
#: 1600 wide before its width, not its height, limits it: a 4:3 projector).
REFERENCE_HEIGHT = 1080
REFERENCE_SLIDE_WIDTH = 1600
#: The clamps: on the desktop the text never shrinks below the platform's own size (the layout
#: yields first) and grows at most 2× on a large screen at 100 %; a slide follows its screen further.
DESKTOP_SCALE_RANGE = (1.0, 2.0)
SLIDE_SCALE_RANGE = (0.5, 3.0)


def screen_scale_for(width: float, height: float, dpr: float = 1.0, *, slide: bool = False) -> float:
    """The screen scale for a screen (or a presentation slide) of ``width`` × ``height`` logical pixels.

    Logical pixels already include the device-pixel ratio ``dpr`` (a 3840×2160 panel at 200 % is a
    1920×1080 screen to the layout, and its text is as tall as there); ``dpr`` only keeps a HiDPI
    laptop's desktop text at the platform size (a small, dense screen is held close to the eyes).
    The desktop scale is the height against the 1080-px reference, clamped to
    :data:`DESKTOP_SCALE_RANGE`; a slide (presentation mode: the whole screen is one picture seen from
    the back of a hall) keeps the reference's proportions — height against 1080, or width against
    1600 on a screen narrower than 16:10 — clamped to :data:`SLIDE_SCALE_RANGE`.
    """
    w, h, r = float(width), float(height), float(dpr)
    if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
        return 1.0
    if slide:
        lo, hi = SLIDE_SCALE_RANGE
        s = min(h / REFERENCE_HEIGHT, w / REFERENCE_SLIDE_WIDTH)
    else:
        lo, hi = DESKTOP_SCALE_RANGE
        s = 1.0 if (math.isfinite(r) and r > 1.0) else h / REFERENCE_HEIGHT
    return round(max(lo, min(hi, s)), 3)


def _checked_scale(value: float, what: str) -> float:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, not {value!r}") from None
    if not (math.isfinite(f) and MIN_SCALE <= f <= MAX_SCALE):
        raise ValueError(f"{what} must be between {MIN_SCALE:g} and {MAX_SCALE:g}, not {value!r}")
    return f


def check_colormap(name: str) -> str:
    """``name`` if it is one of the weights' colour maps; ValueError naming the known ones otherwise."""
    if name not in SEQUENTIAL:
        raise ValueError(f"unknown colormap {name!r} for weights (use {', '.join(SEQUENTIAL)})")
    return name


class Appearance(QObject):
    """Theme, colour map of the weights, text scale and screen scale of the app.

    Signals
    -------
    theme_changed(Theme): a different theme (its colours and line widths) was set.
    colormap_changed(str): a different sequential colour map for the weights was set.
    font_scale_changed(float): the text scale (zoom × presentation) changed; the new value.
    screen_scale_changed(float): the screen's scale changed; the new value.
    scale_changed(float): :attr:`scale` changed (after either of the two above); the new value.
    changed(): after any of the above, once per change.
    """

    theme_changed = Signal(object)
    colormap_changed = Signal(str)
    font_scale_changed = Signal(float)
    screen_scale_changed = Signal(float)
    scale_changed = Signal(float)
    changed = Signal()

    def __init__(self, theme: Theme | str = DEFAULT_THEME, colormap: str = DEFAULT_SEQUENTIAL,
                 font_scale: float = 1.0, screen_scale: float = 1.0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._theme = self._checked_theme(theme)
        self._colormap = check_colormap(colormap)
        self._font_scale = _checked_scale(font_scale, "font scale")
        self._screen_scale = _checked_scale(screen_scale, "screen scale")

    # ---- values ----------------------------------------------------------------------------------
    @property
    def theme(self) -> Theme:
        return self._theme

    @property
    def colormap(self) -> str:
        return self._colormap

    @property
    def font_scale(self) -> float:
        return self._font_scale

    @property
    def screen_scale(self) -> float:
        return self._screen_scale

    @property
    def scale(self) -> float:
        """The factor fonts and pen widths are sized by: text scale × screen scale."""
        return self._font_scale * self._screen_scale

    # ---- setters ---------------------------------------------------------------------------------
    def set_theme(self, theme: Theme | str) -> None:
        """A theme, by name or as a :class:`Theme`; ValueError for an unknown name."""
        theme = self._checked_theme(theme)
        if theme == self._theme:
            return
        self._theme = theme
        self.theme_changed.emit(theme)
        self.changed.emit()

    def set_colormap(self, name: str) -> None:
        """The weights' colour map (one of ``render.colormaps.SEQUENTIAL``); ValueError otherwise."""
        check_colormap(name)
        if name == self._colormap:
            return
        self._colormap = name
        self.colormap_changed.emit(name)
        self.changed.emit()

    def set_font_scale(self, f: float) -> None:
        """The text scale (0.25–8); ValueError outside."""
        f = _checked_scale(f, "font scale")
        if f == self._font_scale:
            return
        self._font_scale = f
        self.font_scale_changed.emit(f)
        self.scale_changed.emit(self.scale)
        self.changed.emit()

    def set_screen_scale(self, s: float) -> None:
        """The screen's scale (0.25–8); ValueError outside."""
        s = _checked_scale(s, "screen scale")
        if s == self._screen_scale:
            return
        self._screen_scale = s
        self.screen_scale_changed.emit(s)
        self.scale_changed.emit(self.scale)
        self.changed.emit()

    @staticmethod
    def _checked_theme(theme: Theme | str) -> Theme:
        if isinstance(theme, Theme):
            return theme
        if isinstance(theme, str):
            return get_theme(theme)
        raise ValueError(f"a theme is a Theme or a theme's name, not {theme!r}")
