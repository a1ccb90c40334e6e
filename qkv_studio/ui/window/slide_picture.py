"""The presentation slide as a picture: a window of its own, offscreen, in presentation mode.

What the audience sees (the stage bar, formula and caption, the stage's main view, the calculation table
under the heatmap) is the window's presentation mode composed for a screen (:mod:`.presentation`).  To
export it, :class:`SlideComposer` keeps one more window, never shown on a screen, looking at the scene
as asked (query, stage, theme, colour map) in presentation mode at the slide's size, and paints it
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

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication, QWidget

from qkv_studio.core import Scene, View


@dataclass
class ComposedSlide:
    """The composed slide of a :class:`SlideComposer`: ``size`` in pixels, ``paint`` draws it."""

    window: QWidget
    size: tuple[int, int]

    def paint(self, painter: QPainter) -> None:
        self.window.render(painter, QPoint())


class SlideComposer:
    """One offscreen window in presentation mode, made on the first :meth:`compose` and reused."""

    def __init__(self) -> None:
        self._window = None

    def compose(self, scene: Scene, view: View, *, size: tuple[int, int], theme: str = "light",
                colormap: str | None = None) -> ComposedSlide:
        """The slide of ``scene`` looked at with ``view``, laid out for a ``size`` screen."""
        from qkv_studio.export.slide import check_size
        from qkv_studio.ui.widgets.frame_throttle import flush_pending
        from qkv_studio.ui.window.main_window import MainWindow

        size = check_size(size)
        app = QApplication.instance()
        window = self._window
        if window is not None and window.session.stage != view.stage:
            # (a slide composed after another stage's is laid out a little differently — the table beside
            # the heatmap keeps the widths it was fitted to — so each stage gets a window of its own and
            # its picture is the slide F5 shows at that stage, where its ink was drawn)
            self.close()
            window = None
        if window is None:
            window = MainWindow(scene, "", use_settings=False, view=view)
            window.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
            self._window = window
        elif not window.session.scene.same_as(scene) or window.session.view != view:
            window.session.load(scene, "", view)
        if window.appearance.theme.name != theme:
            window.apply_theme(theme)
        if colormap is not None and window.appearance.colormap != colormap:
            window.apply_colormap(colormap)
        window.resize(*size)
        if not window.isVisible():
            window.show()
        window.set_presentation(True, fullscreen=False)
        window.resize(*size)
        app.processEvents()
        window.layout_docks()  # (in presentation mode: the slide composed again for this size)
        window.session.flush()
        flush_pending()  # (the panels that follow an edit one frame later are drawn now)
        app.processEvents()
        return ComposedSlide(window, size)

    def close(self) -> None:
        """Let the offscreen window go (nothing to save: it never held an edit)."""
        window, self._window = self._window, None
        if window is not None:
            window.session.undo_stack.setClean()
            window.close()
            window.deleteLater()
