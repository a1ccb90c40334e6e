"""Presentation mode and the default layout of the docks.

Presentation mode (F5, Esc leaves): the window goes full screen and becomes a slide composed for that
screen (:meth:`Presentation.compose_slide`): the stage bar, formula and caption sized from the screen,
the current stage's main view (``StageSpec.slide_view``: the heatmap, the vector plane or the blend)
taking the rest, no dock title bars; P brings a side panel.  Leaving it puts the layout back as it was.
The default layout (:meth:`Presentation.layout_docks`) shares the window between the docks in
proportion to its size, the heatmap the largest share: below a width or height measured in lines of
text the side panels fold into tabs (their View-menu entries bring each forward).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSize, Qt, QTimer
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QDockWidget, QStatusBar, QTabBar, QWidget

from qkv_studio.core.stages import stage_spec

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
        self._fullscreen = False
        self._slide_view: str | None = None  # the main view the slide is composed for
        self._side = False  # P: a side panel beside the main view
        self._bare_docks: list[QDockWidget] = []  # docks whose title bars the slide hides
        window.session.stage_changed.connect(self._on_stage)

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
            w.menuBar().hide()
            w.statusBar().hide()
            self._fullscreen = fullscreen
            if fullscreen:
                w.showFullScreen()
        else:
            w.menuBar().show()
            w.statusBar().show()
            self.leave_slide()
            self._restore_window()
        w.screen_fit.update_scale()  # (the slide's scale, or the desktop's again)
        w._apply_font_scale()
        if on:
            self.compose_slide()
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
        """Show or hide the vector plane; in presentation mode (P) the slide's side panel: the plane
        beside the heatmap, or the calculation table beside a slide of the plane or the blend."""
        w = self._window
        if self.on:
            self._side = not self._side
            self.compose_slide()
            return
        w.dock_plane.setVisible(not w.dock_plane.isVisible())

    # ---- the slide (presentation mode) ---------------------------------------------------------------
    def slide_size(self) -> QSize:
        """The slide's size: the screen's when full screen, else the window's."""
        w = self._window
        screen = w.screen()
        if self._fullscreen and screen is not None:
            return screen.geometry().size()
        return w.size()

    def screen_changed(self) -> None:
        """The window moved to another screen: a slide is composed again for it."""
        if self.on:
            self._window._apply_font_scale()
            self.compose_slide()

    def _on_stage(self, *_: object) -> None:
        # (only when the slide's main view changes: a step between the score stages moves nothing)
        if self.on and stage_spec(self._window.session.stage).slide_view != self._slide_view:
            self.compose_slide()

    def compose_slide(self) -> None:
        """The slide for the current stage: its main view below the stage bar, as large as the screen
        allows; the calculation table under the heatmap at the score stages; P's side panel
        on the right; every other panel folded away; no dock title bars."""
        w = self._window
        view = stage_spec(w.session.stage).slide_view
        self._slide_view = view
        size = self.slide_size()
        width, height = size.width(), size.height()
        main = None if view == "heatmap" else w.dock(view)
        below = w.dock_calc if main is None else main
        side = (w.dock_plane if main is None else w.dock_calc) if self._side else None
        w.centre_stack.setVisible(main is None)
        for dock in (w.dock_editors, w.dock_calc, w.dock_blend, w.dock_plane):
            if dock is not below and dock is not side:
                dock.hide()
        for dock in (below, side):
            if dock is None:
                continue
            dock.setFloating(False)
            area = Qt.BottomDockWidgetArea if dock is below else Qt.RightDockWidgetArea
            if w.dockWidgetArea(dock) != area:
                w.addDockWidget(area, dock)
            dock.show()
        self._hide_title_bars()
        w.layout().activate()
        self._hide_stale_tab_bars()
        stepper = w.stepper.sizeHint().height()
        if main is None:
            chrome = max(0, w.dock_calc.height() - w.calc.height())
            rows = w.calc.content_height() + chrome + 10
            # (a table with more rows than fit scrolls anyway: a quarter of the slide then, not more)
            # (on a short slide — a 1366×768 projector or a HiDPI laptop's 540 logical px — the table
            # yields first: it scrolls, the heatmap keeps its rows tall enough for their numbers)
            limit = 0.36 if height >= 720 else 0.22
            w.resizeDocks([below], [rows if rows <= height * limit else int(height * min(limit, 0.25))],
                          Qt.Vertical)
        else:
            w.resizeDocks([below], [max(1, height - stepper)], Qt.Vertical)
        if side is not None:
            w.resizeDocks([side], [int(width * 0.26)], Qt.Horizontal)

    def _hide_stale_tab_bars(self) -> None:
        """Qt leaves the tab bar of a group of docks on screen when all but one of them are hidden (the
        normal layout's Tokens | Vector plane tabs over the slide's table): a tab bar with fewer than
        two shown docks goes."""
        w = self._window
        shown = {d.windowTitle() for d in w.findChildren(QDockWidget) if not d.isHidden() and not d.isFloating()}
        for bar in w.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if bar.isVisible() and sum(bar.tabText(i) in shown for i in range(bar.count())) < 2:
                bar.hide()

    def _hide_title_bars(self) -> None:
        w = self._window
        for dock in w.findChildren(QDockWidget):
            if dock not in self._bare_docks and not dock.isHidden():
                dock.setTitleBarWidget(QWidget(dock))
                self._bare_docks.append(dock)

    def leave_slide(self) -> None:
        """What the slide changed that a saved dock state does not hold: the title bars, the heatmap."""
        w = self._window
        for dock in self._bare_docks:
            bar = dock.titleBarWidget()
            dock.setTitleBarWidget(None)
            if bar is not None:
                bar.deleteLater()
        self._bare_docks.clear()
        w.centre_stack.show()
        self._slide_view = None
        self._side = False

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
        self._fit_stage_bar()

    def _fit_stage_bar(self) -> None:
        """The stage bar's form (one row or two, whole or short labels) for the width it will have, before
        the first show: chosen after it, it changed the stepper's height and resized the plots again."""
        w = self._window
        w.layout().activate()
        w.centralWidget().layout().activate()
        w.stepper.fit_bar()

    def layout_docks(self) -> None:
        """Share the width and height between the panels in proportion to the window (default layout)."""
        win = self._window
        if self.on:
            self.compose_slide()
            return
        w, h = max(win.width(), 800), max(win.height(), 500)
        fm = QFontMetrics(win.font())
        folded = w < 180 * fm.averageCharWidth()
        if folded:
            # Too narrow for the calculation and the blend beside the heatmap and the editors: they
            # fold into tabs of one column (the heatmap keeps its width; View brings each forward).
            win.tabifyDockWidget(win.dock_calc, win.dock_blend)
            win.dock_calc.raise_()
        if h < 900:
            # Too short for editors and plane one above the other: make them tabs of one column.
            win.tabifyDockWidget(win.dock_editors, win.dock_plane)
            win.dock_editors.raise_()
        # The calculation column is as wide as its table when that fits in 36 % (in a narrow window the
        # weights, its last column, would otherwise sit behind a scroll bar).
        win.dock_calc.layout().activate()  # (before the first show: nothing inside a dock is placed yet)
        chrome = max(0, win.dock_calc.width() - win.calc.width())
        calc = max(int(w * 0.28), min(int(w * 0.36), win.calc.content_width() + chrome + 4))
        if folded:
            calc = int(w * 0.28)
        win.resizeDocks([win.dock_editors, win.dock_calc], [int(w * 0.22), calc], Qt.Horizontal)
        if h >= 900:
            # (the editors need all of a short scene's rows — three tables and the token list; the plane keeps room)
            win.resizeDocks([win.dock_editors, win.dock_plane], [int(h * 0.65), int(h * 0.35)], Qt.Vertical)
        if not folded:
            self._share_right_column(h, 0.36)

    def _share_right_column(self, h: int, calc_share: float) -> None:
        """The calculation table gets up to ``calc_share`` of the height — no more than its rows need,
        so a short scene's table does not leave an empty box while the blend view is squeezed."""
        win = self._window
        chrome = max(0, win.dock_calc.height() - win.calc.height())
        wanted = win.calc.content_height() + chrome + 10  # (a few px of slack: no scroll bar for them)
        calc = max(int(h * 0.18), min(int(h * calc_share), wanted))
        win.resizeDocks([win.dock_calc, win.dock_blend], [calc, h - calc], Qt.Vertical)
