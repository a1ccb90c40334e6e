"""How a widget binds to the :class:`~qkv_studio.state.appearance.Appearance` (as ndv's views bind a model).

A widget that draws in the theme's colours mixes in :class:`FollowsAppearance` and overrides the hooks
it needs — ``_restyle_theme(theme)``, ``_restyle_colormap(name)``, ``_restyle_scale(f)`` — with its own
restyling.  :meth:`FollowsAppearance.bind_appearance` disconnects the old Appearance, connects the new
one, then synchronises once.  A hook runs only when its value differs from the one the widget draws in
now, so a widget built in the default look (light theme, default colour map, scale 1) and bound to a
default Appearance does no work at all.  Widgets inside a bound widget that follow the look too are
named by ``_appearance_parts()`` and bound with it.

    class Legend(FollowsAppearance, QWidget):
        def __init__(self, appearance=None):
            super().__init__()
            ...                                  # built in the default look
            self.bind_appearance(appearance)
        def _restyle_theme(self, theme):
            self.label.setStyleSheet(f"color: {theme.text}")
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtGui import QColor, QPalette

from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL
from qkv_studio.render.theme import DEFAULT_THEME, THEMES, Theme
from qkv_studio.state.appearance import Appearance


class _HasPalette(Protocol):
    """What :meth:`FollowsAppearance._take_theme_colours` needs of the widget it is mixed into."""

    def palette(self) -> QPalette: ...

    def setPalette(self, palette: QPalette, /) -> None: ...  # noqa: N802 - Qt's name

    def setAutoFillBackground(self, enabled: bool, /) -> None: ...  # noqa: N802 - Qt's name


class FollowsAppearance:
    """Mixin for widgets drawn in the app's look; put it before the Qt class in the bases."""

    _appearance: Appearance | None = None
    # What the widget draws in now (as built: the default look).
    _drawn_theme: Theme = THEMES[DEFAULT_THEME]
    _drawn_colormap: str = DEFAULT_SEQUENTIAL
    _drawn_scale: float = 1.0

    @property
    def appearance(self) -> Appearance | None:
        """The Appearance this widget follows (None: it keeps the look it has)."""
        return self._appearance

    def bind_appearance(self, appearance: Appearance | None) -> None:
        """Follow ``appearance`` (None: unbind); the widget restyles at once to what differs."""
        old = self._appearance
        if old is not appearance:
            if old is not None:
                old.theme_changed.disconnect(self._follow_theme)
                old.colormap_changed.disconnect(self._follow_colormap)
                old.scale_changed.disconnect(self._follow_scale)
            self._appearance = appearance
            if appearance is not None:
                appearance.theme_changed.connect(self._follow_theme)
                appearance.colormap_changed.connect(self._follow_colormap)
                appearance.scale_changed.connect(self._follow_scale)
        for part in self._appearance_parts():
            part.bind_appearance(appearance)
        if appearance is not None:
            self.synchronize_appearance()

    def synchronize_appearance(self) -> None:
        """Restyle to the bound Appearance's look wherever it differs from the drawn one."""
        a = self._appearance
        if a is None:
            return
        self._follow_theme(a.theme)
        self._follow_colormap(a.colormap)
        self._follow_scale(a.scale)

    def _take_theme_colours(self: _HasPalette, theme: Theme, *, fill: bool = True) -> None:
        """Put ``theme``'s background and text colours in the widget's palette (for a ``_restyle_theme``);
        ``fill``: the widget paints its background in it too."""
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, QColor(theme.background))
        pal.setColor(QPalette.ColorRole.WindowText, QColor(theme.text))
        self.setPalette(pal)
        if fill:
            self.setAutoFillBackground(True)

    # ---- hooks: the widget's own restyling ---------------------------------------------------------
    def _appearance_parts(self) -> tuple[FollowsAppearance, ...]:
        """Child widgets that follow the same Appearance (bound and unbound with this one)."""
        return ()

    def _restyle_theme(self, theme: Theme) -> None:
        """Draw in ``theme``'s colours and line widths."""

    def _restyle_colormap(self, name: str) -> None:
        """Colour the weights with colour map ``name``."""

    def _restyle_scale(self, f: float) -> None:
        """Size fonts and pens by ``f``."""

    # ---- slots --------------------------------------------------------------------------------------
    def _follow_theme(self, theme: Theme) -> None:
        if theme != self._drawn_theme:
            self._drawn_theme = theme
            self._restyle_theme(theme)

    def _follow_colormap(self, name: str) -> None:
        if name != self._drawn_colormap:
            self._drawn_colormap = name
            self._restyle_colormap(name)

    def _follow_scale(self, f: float) -> None:
        if f != self._drawn_scale:
            self._drawn_scale = f
            self._restyle_scale(f)
