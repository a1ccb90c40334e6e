"""The window on its screen: opening inside it, and the Appearance's screen scale following it.

The window opens inside the screen's available geometry (never larger than it, centred), or where it
was left when that still fits; whenever it is shown or moves to another screen the Appearance's
``screen_scale`` follows that screen (:func:`~qkv_studio.state.appearance.screen_scale_for`), and in
presentation mode the slide has a scale of its own (:mod:`qkv_studio.ui.slide.look`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QScreen, QWindow
from PySide6.QtWidgets import QApplication

from qkv_studio.state.appearance import screen_scale_for

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow

#: The window's preferred size on a screen with room for it (logical pixels, without its frame).
PREFERRED_SIZE = QSize(1600, 950)
#: Room kept for a window manager's frame and title bar until the real frame is known.
FRAME_ALLOWANCE = QSize(8, 40)


def fitted_geometry(available: QRect, preferred: QSize = PREFERRED_SIZE,
                    frame: QSize = FRAME_ALLOWANCE) -> QRect:
    """The window's geometry (without its frame) for a screen whose available area is ``available``:
    ``preferred`` where it fits, else as large as the area minus the ``frame``; centred."""
    w = max(1, min(preferred.width(), available.width() - frame.width()))
    h = max(1, min(preferred.height(), available.height() - frame.height()))
    rect = QRect(0, 0, w, h)
    rect.moveCenter(available.center())
    return rect


class ScreenFit:
    """Keeps ``window`` inside its screen and the Appearance's screen scale that screen's."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self._connected: QWindow | None = None
        self._shown = False
        self.placed = False  # the window's first geometry was chosen here (not asked for before it showed)

    def screen(self) -> QScreen | None:
        w = self._window
        return w.screen() or QApplication.primaryScreen()

    def first_show(self, restored: bool) -> None:
        """Just before the window first shows (before its default layout is made): a window still at its
        preferred size goes inside the screen, centred (one given a size or place before is left as it is)."""
        if self._shown:
            return
        self._shown = True
        w, screen = self._window, self.screen()
        if screen is None or w.isMaximized() or w.isFullScreen():
            return
        if not (w.testAttribute(Qt.WidgetAttribute.WA_Resized) or w.testAttribute(Qt.WidgetAttribute.WA_Moved)):
            self.update_scale()  # (a larger screen's larger text gets a window as much larger)
            f = w.appearance.screen_scale
            preferred = QSize(round(PREFERRED_SIZE.width() * f), round(PREFERRED_SIZE.height() * f))
            w.setGeometry(fitted_geometry(screen.availableGeometry(), preferred))
            self.placed = True

    def keep_inside(self) -> bool:
        """A remembered geometry from a larger or another screen: back inside this one.  True when
        the window was moved or resized."""
        w, screen = self._window, self.screen()
        if screen is None or w.isMaximized() or w.isFullScreen():
            return False
        avail = screen.availableGeometry()
        frame = QSize(w.frameGeometry().width() - w.width(), w.frameGeometry().height() - w.height())
        frame = frame.expandedTo(FRAME_ALLOWANCE)
        g = w.geometry()
        if avail.contains(w.frameGeometry()) and g.width() <= avail.width() - frame.width() \
                and g.height() <= avail.height() - frame.height():
            return False
        w.setGeometry(fitted_geometry(avail, g.size(), frame))
        return w.geometry() != g

    def after_show(self) -> None:
        """Once shown: follow the screen the window is on (and any it moves to)."""
        handle = self._window.windowHandle()
        if handle is not None and self._connected is not handle:
            self._connected = handle
            handle.screenChanged.connect(self._on_screen_changed)
        self.update_scale()

    def _on_screen_changed(self, *_: object) -> None:
        self.update_scale()
        self._window.presentation.screen_changed()

    def update_scale(self) -> None:
        """The Appearance's screen scale for the screen now (the slide has its own: ui.slide.look)."""
        w = self._window
        screen = self.screen()
        if screen is None:
            return
        avail = screen.availableGeometry()
        w.appearance.set_screen_scale(screen_scale_for(avail.width(), avail.height(), self._ratio()))

    def _ratio(self) -> float:
        screen = self.screen()
        return float(screen.devicePixelRatio()) if screen is not None else 1.0
