"""The presentation slide as a picture: a slide of its own, offscreen.

What the audience sees is a :class:`~qkv_studio.ui.slide.SlideWidget` (the stage bar, formula and
caption over the stage's main view, laid out by the slide's one rule).  To export it,
:class:`SlideComposer` keeps one more slide, never shown on a screen, bound to a Session of its own that
looks at the scene as asked (query, stage, theme, colour map) at the slide's size, and paints it
(:class:`qkv_studio.export.slide.SlidePainter`): the export writes what it paints as PNG, SVG or PDF.
The command line's ``export --slide`` and the export dialog's *The slide as the audience sees it* both
use it; the window the lecturer works in is never changed.

Public API::

    composer = SlideComposer()
    slide = composer.compose(scene, view, size=(1280, 720), theme="light", colormap="viridis")
    slide.size, slide.paint(painter)
    composer.close()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QWidget

from qkv_studio.core import Scene, View

if TYPE_CHECKING:
    from qkv_studio.ui.slide import SlideWidget


@dataclass
class ComposedSlide:
    """The composed slide of a :class:`SlideComposer`: ``size`` in pixels, ``paint`` draws it."""

    window: QWidget
    size: tuple[int, int]

    def paint(self, painter: QPainter) -> None:
        self.window.render(painter, QPoint())


class SlideComposer:
    """One offscreen slide with a Session of its own, made on the first :meth:`compose` and reused."""

    def __init__(self) -> None:
        self._slide: SlideWidget | None = None

    def compose(self, scene: Scene, view: View, *, size: tuple[int, int], theme: str = "light",
                colormap: str | None = None) -> ComposedSlide:
        """The slide of ``scene`` looked at with ``view``, laid out for a ``size`` screen."""
        from qkv_studio.export.slide import check_size
        from qkv_studio.state.appearance import Appearance
        from qkv_studio.state.session import Session
        from qkv_studio.ui.slide import SlideLook, SlideWidget
        from qkv_studio.ui.update_policy import settle

        size = check_size(size)
        slide = self._slide
        if slide is None:
            session = Session(scene, "", view=view)
            look = SlideLook(Appearance(theme, colormap or Appearance().colormap))
            slide = SlideWidget(session, look)
            session.setParent(slide)
            look.setParent(slide)
            slide.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
            self._slide = slide
        elif not slide.session.scene.same_as(scene) or slide.session.view != view:
            slide.session.load(scene, "", view)
        appearance = slide.look
        appearance.set_theme(theme)
        if colormap is not None:
            appearance.set_colormap(colormap)
        appearance.fit(*size)
        slide.resize(*size)
        if not slide.isVisible():
            slide.show()
        slide.session.flush()
        settle(slide)
        return ComposedSlide(slide, size)

    def close(self) -> None:
        """Let the offscreen slide go (nothing to save: its Session never held an edit)."""
        slide, self._slide = self._slide, None
        if slide is not None:
            slide.close()
            slide.deleteLater()
