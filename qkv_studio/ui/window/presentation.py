"""Presentation mode and the default layout of the docks.

Presentation mode (F5, Esc leaves): the editing panels fold away, the text grows for the back row, the
window goes full screen; leaving it puts the layout back as it was.  The default layout shares the
window between the docks in proportion to its size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtWidgets import QStatusBar

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


class Presentation:
    """Whether the window is presenting, entering and leaving it, and the layout of the docks."""

    def __init__(self, window: "MainWindow") -> None:
        self._window = window
        self.on = False
        self._saved_state: QByteArray | None = None  # (the docks)
        self._saved_geometry = QByteArray()
        self._saved_window_state = Qt.WindowState.WindowNoState
        self._had_status_bar = True
        self._laid_out = False

    def set(self, on: bool, *, fullscreen: bool = True) -> None:
        """Enter (``on``) or leave presentation mode; ``fullscreen`` False keeps the window's size."""
        w = self._window
        if on == self.on:
            return
        self.on = on
        w.act_presentation.setChecked(on)
        w.act_leave.setEnabled(on)
        if on:
            self._save_window()
            w.dock_editors.hide()
            w.dock_plane.hide()
            w.dock_calc.show()
            w.dock_blend.show()
            w.menuBar().hide()
            w.statusBar().hide()
            self.layout_docks()
            if fullscreen:
                w.showFullScreen()
        else:
            w.menuBar().show()
            w.statusBar().show()
            self._restore_window()
        w._apply_font_scale()
        self._focus_stage()
        w.presentation_changed.emit(on)

    # ---- entering and leaving: the window as it was, the keyboard on the stage -----------------------
    def _save_window(self) -> None:
        """Remember the window presentation mode leaves: maximised or not, its geometry and its docks."""
        w = self._window
        self._saved_window_state = w.windowState() & ~Qt.WindowState.WindowActive
        self._saved_geometry = w.saveGeometry()
        self._saved_state = w.saveState()
        # (QMainWindow makes its status bar when first asked for one: presentation's asking must not
        # leave one behind, 23 px taken from the docks)
        bar = w.findChild(QStatusBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
        self._had_status_bar = bar is not None and not bar.isHidden()

    def _restore_window(self) -> None:
        """The window exactly as presentation mode found it (Esc): its state, geometry and docks — the
        docks once more after the window has its size back and the text its size (a window manager
        resizes the window later)."""
        w = self._window
        state = self._saved_window_state
        if w.isFullScreen() and not state & Qt.WindowState.WindowFullScreen:
            if state & Qt.WindowState.WindowMaximized:
                w.showMaximized()
            else:
                w.showNormal()
                w.restoreGeometry(self._saved_geometry)
        if not self._had_status_bar:
            w.setStatusBar(None)  # (the next message makes a new one)
        docks = self._saved_state
        if docks is not None:
            w.restoreState(docks)
            for delay in (0, 250):
                QTimer.singleShot(delay, w, lambda: None if self.on else w.restoreState(docks))

    def _focus_stage(self) -> None:
        """The keyboard on the stage (the stepper): not in a spin box that the arrow keys would change."""
        w = self._window
        w.stepper.setFocus(Qt.FocusReason.OtherFocusReason)

    def toggle_plane(self) -> None:
        """Show or hide the vector plane (in presentation mode it comes back beside the heatmap)."""
        w = self._window
        w.dock_plane.setVisible(not w.dock_plane.isVisible())
        if w.dock_plane.isVisible() and self.on:
            w.dock_plane.setFloating(False)
            w.resizeDocks([w.dock_plane], [int(w.width() * 0.3)], Qt.Horizontal)

    def first_show(self, restored_state: bool) -> None:
        """Called just before the window first shows: make the default layout, unless one was restored.

        The default layout is made while every panel is still hidden: geometry given to a hidden widget
        is only stored.  Made in showEvent (after Qt's own first layout had shown and resized every
        panel), it resized the four plots and the tables a second time before the first paint (~25 ms
        of start-up).
        """
        if self._laid_out:
            return
        self._laid_out = True
        if not restored_state:
            w = self._window
            w.ensurePolished()  # (fonts and styles, as the panels will show: the tables measure their text)
            w.calc.fit_columns(even_hidden=True)  # (the calculation dock is sized to it)
            w.layout().activate()  # (resizeDocks shares out the sizes the docks have now)
            self.layout_docks()

    def layout_docks(self) -> None:
        """Share the width and height between the panels in proportion to the window (default layout)."""
        win = self._window
        w, h = max(win.width(), 800), max(win.height(), 500)
        if self.on:
            win.resizeDocks([win.dock_calc], [int(w * 0.40)], Qt.Horizontal)
            self._share_right_column(h, 0.40)
            return
        if h < 900:
            # Too short for editors and plane one above the other: make them tabs of one column.
            win.tabifyDockWidget(win.dock_editors, win.dock_plane)
            win.dock_editors.raise_()
        # The calculation column is as wide as its table when that fits in 36 % (in a narrow window the
        # weights, its last column, would otherwise sit behind a scroll bar).
        win.dock_calc.layout().activate()  # (before the first show: nothing inside a dock is placed yet)
        chrome = max(0, win.dock_calc.width() - win.calc.width())
        calc = max(int(w * 0.28), min(int(w * 0.36), win.calc.content_width() + chrome + 4))
        win.resizeDocks([win.dock_editors, win.dock_calc], [int(w * 0.22), calc], Qt.Horizontal)
        if h >= 900:
            # (the editors need all of a short scene's rows — three tables and the token list; the plane keeps room)
            win.resizeDocks([win.dock_editors, win.dock_plane], [int(h * 0.65), int(h * 0.35)], Qt.Vertical)
        self._share_right_column(h, 0.36)

    def _share_right_column(self, h: int, calc_share: float) -> None:
        """The calculation table gets up to ``calc_share`` of the height — no more than its rows need,
        so a short scene's table does not leave an empty box while the blend view is squeezed."""
        win = self._window
        chrome = max(0, win.dock_calc.height() - win.calc.height())
        wanted = win.calc.content_height() + chrome + 10  # (a few px of slack: no scroll bar for them)
        calc = max(int(h * 0.18), min(int(h * calc_share), wanted))
        win.resizeDocks([win.dock_calc, win.dock_blend], [calc, h - calc], Qt.Vertical)
