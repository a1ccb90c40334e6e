"""The slide's Appearance: the window's theme and colour map, the slide's own text and screen scale.

The slide is read from the back of a hall: its text is the window's zoom × :data:`PRESENTATION_SCALE`,
and its screen scale the slide's (:func:`~qkv_studio.state.appearance.screen_scale_for` with
``slide=True``).  Giving the slide views an Appearance of their own keeps the window behind the slide
exactly as it was: its fonts never grow, so its layout never changes and nothing needs restoring.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from qkv_studio.state.appearance import MAX_SCALE, Appearance, screen_scale_for

#: The slide's text against the window's (at the same zoom).
PRESENTATION_SCALE = 2.2


class SlideLook(Appearance):
    """An Appearance that follows ``source``'s theme and colour map and has the slide's scale."""

    def __init__(self, source: Appearance, parent: QObject | None = None) -> None:
        super().__init__(source.theme, source.colormap, parent=parent)
        self._source = source
        source.theme_changed.connect(self.set_theme)
        source.colormap_changed.connect(self.set_colormap)

    def fit(self, width: int, height: int, zoom: float = 1.0, dpr: float = 1.0) -> None:
        """The scale for a slide of ``width`` × ``height`` logical pixels at the window's ``zoom``."""
        self.set_screen_scale(screen_scale_for(width, height, dpr, slide=True))
        self.set_font_scale(min(MAX_SCALE, max(0.5, zoom) * PRESENTATION_SCALE))
