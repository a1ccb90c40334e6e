"""Presentation mode, and the window's first layout (the default one: :mod:`.dock_layout`).

Presentation mode (F5, Esc leaves): the window goes full screen and becomes a slide composed for that
screen (:meth:`Presentation.compose_slide`): the stage bar, formula and caption sized from the screen,
the current stage's main view (``StageSpec.slide_view``: the heatmap, the vector plane or the blend)
taking the rest — at the score stages the calculation table beside the heatmap where it fits whole,
else under it — no dock title bars; P brings a side panel.  Leaving it puts the window back as it was,
inside its screen.  :meth:`Presentation.layout_docks` (again by View → Reset layout) is the slide
when presenting, else the normal window's default layout (:class:`~.dock_layout.DockLayout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSize, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QLayout, QStatusBar, QStyle, QWidget

from qkv_studio.core import STAGES
from qkv_studio.core.stages import stage_spec
from qkv_studio.ui.widgets.view_caches import fit_pixmap_cache
from qkv_studio.ui.window.dock_layout import DockLayout

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


#: The column of a slide that a language model writing the next token keeps (a share of its width;
#: the panel's narrowest if wider): less than the blend beside it.
WRITER_WIDTH = 0.3
#: The column of a slide that a View-menu panel opened on the slides keeps.
KEPT_WIDTH = 0.36
#: The widest the calculation table may be beside the heatmap on a slide (a share of its width).
BESIDE_MAX_WIDTH = 0.45
#: The width it keeps to when its text may be smaller (the heatmap's cells stay wide enough for their
#: numbers: at 1024×768 a table of 40 % left them 65 px; at 37.7 % in the caption's text, the softmax's
#: cells were 1.3 times the table's area, not 1.5).
BESIDE_WIDTH = 0.36
#: The most of the slide (below the stage bar) the table beside the heatmap may cover: the heatmap's
#: cells, the slide's subject, keep at least 1.5 times its area on the lesson's slides from 960×540@2 to
#: 2560×1440 (the table in the caption's text at 1920×1080 and up, 0.9 of it at 1280×720 and 1366×768,
#: 0.7–0.8 at 1024×768 and 960×540@2).
BESIDE_MAX_AREA = 0.18
#: The table's text beside the heatmap, as shares of the caption's text (the slide's body text, read
#: from the last row, from the same Appearance scale), tried in turn until it fits: as shares of the
#: window's smaller text, the table read at 0.65–0.7 of the caption beside it on every slide.  (0.65 of
#: the caption is 0.75 of the window's, the least before.)
BESIDE_TEXT_STEPS = (1.0, 0.9, 0.8, 0.75, 0.7, 0.65)
BESIDE_MIN_TEXT = BESIDE_TEXT_STEPS[-1]
QWIDGETSIZE_MAX = (1 << 24) - 1


class Presentation:
    """Whether the window is presenting, entering and leaving it, and the layout of the docks."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self.docks = DockLayout(window)  # (the normal window's default layout)
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
        self._row: QHBoxLayout | None = None  # the heatmap and the table beside it (made when first needed)
        self._placeholder: QWidget | None = None  # the calculation dock's widget while its table is beside
        # the table's text and headings in its dock before the first slide changed them (see
        # _table_fits_beside), until the slides are left
        self._dock_look: tuple[QFont, bool] | None = None
        self._follows_table = False  # (the table's content_changed is connected at the first slide)
        self._composing = False
        self._writes = False  # the slide keeps a column for a language model writing (see _writer_dock)
        self._writer_open = False  # the Real model's panel was open as presentation began (or opened since)
        self._follows_writer = False  # (the model panel's model_changed is connected once it is built)
        self._kept: QDockWidget | None = None  # a View-menu panel opened on the slides: their column
        self._held: list[QLayout] = []  # (layouts waiting while the slide's docks change: _hold_layout)
        self._below: tuple[QDockWidget, int] | None = None  # (the dock under the stage bar, its height)
        # what _table_fits_beside found for what it measured (see _fit_inputs), and the look it left the
        # table in: (fits, font, compact)
        self._fits_found: dict[tuple, tuple[bool, QFont, bool]] = {}
        window.session.stage_changed.connect(self._on_stage)
        window.appearance.scale_changed.connect(self._on_scale)

    def set(self, on: bool, *, fullscreen: bool = True) -> None:
        """Enter (``on``) or leave presentation mode; ``fullscreen`` False keeps the window's size."""
        w = self._window
        if on == self.on:
            return
        self.on = on
        w.panel_host.build_deferred()  # (the slides lay out every panel as it is: built)
        w.panels.blend.set_on_slide(on)  # (the slide's caption says what the blend's header would)
        w.acts.presentation.setChecked(on)
        w.acts.leave.setEnabled(on)
        if on:
            model = w.panel_host.docks.get("model")
            self._writer_open = model is not None and not model.isHidden()
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
        w.screen_fit.update_scale()  # (the slide's scale, or the desktop's again)
        w._apply_font_scale()
        if on:
            fit_pixmap_cache(w.screen())  # (the slides' plots keep their cached pictures: view_caches)
            self.compose_slide()
        else:
            # (after the text is the desktop's again: with the slide's large text the window's minimum
            # size was larger than the screen, and the window manager kept the window that tall)
            self._restore_window()
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
                w.screen_fit.keep_inside()
                # (a window manager places the window again once it is no longer full screen)
                QTimer.singleShot(250, w, lambda: None if self.on or not w.isVisible() else w.screen_fit.keep_inside())
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
        w.docks.plane.setVisible(not w.docks.plane.isVisible())

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
            fit_pixmap_cache(self._window.screen())
            self._window._apply_font_scale()
            self.compose_slide()

    def _on_stage(self, *_: object) -> None:
        # (only when the slide's main view changes: a step between the score stages moves nothing)
        view = stage_spec(self._window.session.stage).slide_view
        if self.on and view != self._slide_view:
            self.compose_slide()
        elif not self.on:
            self.docks.bring_forward(view)

    def _on_scale(self, *_: object) -> None:
        # A zoom on a heatmap's slide: the table, beside it or under it, is placed for its new text
        # size (once its fonts are in).
        if self.on and self._slide_view == "heatmap":
            QTimer.singleShot(0, self._window, lambda: self.on and self.compose_slide())

    def compose_slide(self) -> None:
        """The slide for the current stage: its main view below the stage bar, as large as the screen
        allows; the calculation table beside the heatmap at the score stages where it fits there (a
        slide is wider than the table: below it, it took a third of the height and left half its
        width empty), else under it; P's side panel on the right; every other panel folded away; no
        dock title bars."""
        w = self._window
        if not self._follows_table:
            self._follows_table = True
            w.panels.calc.content_changed.connect(self._on_table_content)
        view = stage_spec(w.session.stage).slide_view
        self._slide_view = view
        size = self.slide_size()
        width, height = size.width(), size.height()
        main = None if view == "heatmap" else w.dock(view)
        self._composing = True
        try:
            self._compose(main, width, height)
            w.layout().activate()
        finally:
            self._release_layout()
            self._composing = False

    def _compose(self, main: QDockWidget | None, width: int, height: int) -> None:
        w = self._window
        # A View-menu panel opened on the slides, or a language model writing the next token: the panel
        # keeps a column of the slide's whole height on the right, in the slide's text (the model's
        # next-token bars were hidden — PageDown wrote tokens unseen — and a panel opened on a slide
        # squeezed beside the stage bar cut the caption and flattened the heatmap).
        writer = self._writer_dock()
        aside = self._writer_width(writer, width)
        self._writes = writer is not None
        w.setCorner(Qt.Corner.BottomRightCorner,
                    Qt.DockWidgetArea.RightDockWidgetArea if writer else Qt.DockWidgetArea.BottomDockWidgetArea)
        width -= aside
        # The stage bar as tall as its text across the slide, and the main view below it the rest (its
        # size hint lays the caption out at a reading width, lines taller than it will be: the blend's
        # slide gave the stage bar ~90 px of gaps between its formulas at 1280×720).
        across = w.stepper.heightForWidth(width) if w.stepper.hasHeightForWidth() else -1
        room = height - (across if across > 0 else w.stepper.sizeHint().height())
        # (a dock under it: the separator between them too — else the dock was laid out 6 px taller first)
        separator = w.style().pixelMetric(QStyle.PixelMetric.PM_DockWidgetSeparatorExtent, None, w)
        stepper = height - room + max(0, separator)
        fits = main is None and self._table_fits_beside(width, room)
        beside = fits and not self._side
        if not beside:
            self._table_to_dock()
        # P on the heatmap's slide: the plane on the right, and the table above it in that column when
        # it fits there whole (under the heatmap, across the slide, it was larger than the heatmap)
        stacked = fits and self._side
        below = None if beside or stacked else (w.docks.calc if main is None else main)
        if below is w.docks.calc and self._table_flattens_heatmap(room, height):
            # (a table that scrolls under the heatmap — long vectors, ten tokens of a real model — showed
            # three rows to the hall and flattened the heatmap's rows to a strip: the slide leaves it out)
            below = None
        side = (w.docks.plane if main is None else w.docks.calc) if self._side else None
        self._hold_layout(below, height, stepper)
        w.centre_stack.setVisible(main is None)
        for dock in w.panel_host.docks.values():  # (the View menu's panels too: the Real model's)
            if dock is not below and dock is not side and dock is not writer \
                    and not (stacked and dock is w.docks.calc):
                dock.hide()
        if writer is not None:
            writer.setFloating(False)
            if w.tabifiedDockWidgets(writer) or w.dockWidgetArea(writer) != Qt.RightDockWidgetArea:
                w.removeDockWidget(writer)  # (out of its tab group: a column of its own)
                w.addDockWidget(Qt.RightDockWidgetArea, writer)
            writer.show()
        for dock in (below, side):
            if dock is None:
                continue
            dock.setFloating(False)
            area = Qt.BottomDockWidgetArea if dock is below else Qt.RightDockWidgetArea
            if w.dockWidgetArea(dock) != area:
                w.addDockWidget(area, dock)
            dock.show()
        if beside:
            self._table_beside(room)
        if stacked:
            w.docks.calc.setFloating(False)
            w.addDockWidget(Qt.RightDockWidgetArea, w.docks.calc)
            w.splitDockWidget(w.docks.calc, w.docks.plane, Qt.Vertical)
            w.docks.calc.show()
        self._hide_title_bars()
        w.stepper.release_height()
        self._release_layout()
        w.layout().activate()
        self.docks.hide_stale_tab_bars()
        if below is not None:
            w.resizeDocks([below], [self._below_height(below, height, stepper)], Qt.Vertical)
        if stacked:
            chrome = max(0, w.docks.calc.height() - w.panels.calc.height())
            w.resizeDocks([w.docks.calc], [self._beside_width() + 4], Qt.Horizontal)
            w.resizeDocks([w.docks.calc, w.docks.plane], [w.panels.calc.content_height() + chrome + 10,
                                                       max(1, room - w.panels.calc.content_height() - chrome - 10)],
                          Qt.Vertical)
        elif side is not None and writer is None:
            w.resizeDocks([side], [int(width * 0.26)], Qt.Horizontal)
        if writer is not None:
            w.resizeDocks([writer], [aside], Qt.Horizontal)
        # (the stage bar, formula and caption whole at the width the docks leave them: below their
        # hint, the centre's layout shared the shortfall with the heatmap and cut the caption)
        w.layout().activate()
        w.stepper.hold_height()  # (and it follows its text: a step's caption comes a frame later)

    def _writer_dock(self) -> QDockWidget | None:
        """The dock a slide keeps in a column: the View-menu panel opened on the slides, else the Real
        model's on the slide where the clicker's PageDown asks it for the next token (the last stage's)
        when it is open on a model that writes one (a causal model)."""
        w = self._window
        if self._kept is not None and not self._kept.isFloating():
            return self._kept
        panel, dock = w.built_panel("model"), w.panel_host.docks.get("model")
        if panel is None or dock is None or not self._writer_open or dock.isFloating() or w.can_step(+1):
            return None
        return dock if panel.state.can_generate else None

    def _writer_width(self, writer: QDockWidget | None, width: int) -> int:
        """The width of the kept panel's column on a slide ``width`` wide (0 without one)."""
        if writer is None:
            return 0
        share = KEPT_WIDTH if writer is self._kept else WRITER_WIDTH
        return max(int(width * share), writer.minimumSizeHint().width())

    def _on_writer(self, *_: object) -> None:
        # (the model panel chose another model: a slide keeps its column, or gives it back)
        if self.on and not self._composing and (self._writer_dock() is not None) != self._writes:
            self.compose_slide()

    def _below_height(self, below: QDockWidget, height: int, stepper: int) -> int:
        """The height of the dock under the stage bar on a slide ``height`` tall: the slide's main view
        (the plane, the blend) all of it, the calculation table its rows."""
        w = self._window
        if below is not w.docks.calc:
            return max(1, height - stepper)
        rows, limit = self._table_rows_height(), self._table_limit(height)
        # (a table with more rows than fit scrolls anyway: a quarter of the slide then, not more)
        return rows if rows <= height * limit else int(height * min(limit, 0.25))

    def _table_rows_height(self) -> int:
        """The calculation dock's height that shows every row of its table."""
        w = self._window
        chrome = max(0, w.docks.calc.height() - w.panels.calc.height())
        return w.panels.calc.content_height() + chrome + 10

    @staticmethod
    def _table_limit(height: int) -> float:
        """The most of a slide ``height`` tall the table under the heatmap may take. (On a short slide —
        a 1366×768 projector or a HiDPI laptop's 540 logical px — the table yields first, the heatmap
        keeps its rows tall enough for their numbers.)"""
        return 0.36 if height >= 720 else 0.22

    def _table_flattens_heatmap(self, room: int, height: int) -> bool:
        """Whether the table, under the heatmap on a slide ``height`` tall with ``room`` below the stage
        bar, would scroll and leave the heatmap's rows (up to 32, each labelled) lower than a row read
        from the back of a hall — a 30th of the slide, about the text of its caption — which they would
        have without it.  (64 rows are not legible one by one either way: their table stays, the
        selected query's numbers in a scroll.)"""
        w = self._window
        n = w.heatmap.displayed_matrix().shape[0]
        if n > 32 or self._table_rows_height() <= height * self._table_limit(height):
            return False
        chrome = room / 4  # (the heatmap's title, key labels and axis titles: about a quarter of it)
        table = self._below_height(w.docks.calc, height, height - room)
        legible = height / 30
        return (room - table - chrome) / n < legible <= (room - chrome) / n

    def _hold_layout(self, below: QDockWidget | None, height: int, stepper: int) -> None:
        """Before the slide's docks are hidden and shown (a step into or out of the plane's or the
        blend's slide): the window's layouts wait until every dock is in place and the dock under the
        stage bar has its height (:meth:`_release_layout`).  (Each show laid the window out at once: the
        new dock came at the old one's height, or the bottom's last, and was then resized, the stage bar
        and the heatmap laid out for an empty bottom first — each view laid out twice, its pictures
        and caches drawn again for the second size: most of such a step.)"""
        w = self._window
        self._below = None if below is None else (below, self._below_height(below, height, stepper))
        self._held = [lay for lay in (w.layout(), w.centralWidget().layout()) if lay.isEnabled()]
        for lay in self._held:
            lay.setEnabled(False)

    def _release_layout(self) -> None:
        """The layouts :meth:`_hold_layout` held work again, the dock under the stage bar at its
        height, and the window laid out at once (the centre at its size on the new slide before
        anything in it is laid out)."""
        if self._held:
            w = self._window
            if self._below is not None and not self._below[0].isHidden():
                w.resizeDocks([self._below[0]], [self._below[1]], Qt.Vertical)
            for lay in self._held:
                lay.setEnabled(True)
            self._held = []
            # (the centre's new minimum — the heatmap shown or not — told to the window's layout, which
            # else squeezed the new dock by the old one until the next layout)
            w.centralWidget().updateGeometry()
            w.layout().activate()
            w.centralWidget().layout().activate()
        self._below = None

    # ---- the calculation table beside the heatmap (the score stages' slide) ----------------------------
    def _beside_width(self) -> int:
        """The table's width beside the heatmap: every column of the stages a heatmap slide shows (a step
        between them shows a column more, never one cut); with "show all stages", every column."""
        table = self._window.panels.calc
        return table.content_width(through=self._last_table_stage()) + 4

    def _last_table_stage(self) -> str:
        """The last stage the slide shows the table at: the last heatmap slide's, unless every stage's
        columns show at once."""
        if self._window.panels.calc.calc_model.shows_all_stages:
            return STAGES[-1]
        return [s for s in STAGES if stage_spec(s).slide_view == "heatmap"][-1]

    def _table_fits_beside(self, width: int, room: int) -> bool:
        """Whether the table, whole, fits beside the heatmap on a slide ``width`` wide with ``room``
        below the stage bar, leaving the heatmap the larger part of the width.

        Beside the heatmap its headings break onto two lines where they are wider than their numbers,
        and its text is the caption's, or smaller (down to :data:`BESIDE_MIN_TEXT` of it) until it is no
        wider than :data:`BESIDE_WIDTH` of the slide and covers no more than :data:`BESIDE_MAX_AREA` of
        it — on a 960×540 or 1280×720 slide it was as large as the heatmap's cells; at 1024×768 it went
        under a flattened heatmap."""
        w = self._window
        table = w.panels.calc
        inputs = self._fit_inputs(width, room)
        found = self._fits_found.get(inputs)
        if found is not None:
            # Nothing it is measured from changed since a step found this: the table in the look that
            # step left it in, and measured in it once (a step back from the plane's or the blend's
            # slide measured the table at up to four text sizes again: 4K@2, 64 tokens, ~6 ms).
            fits, font, compact = found
            if (table.font(), table.compact) != (font, compact):
                table.set_compact(compact)
                table.setFont(font)
                table.fit_columns(even_hidden=True)
            return fits
        # (measured now, in the slide's text, hidden or not: the slide before — the vectors' — hid it)
        if self._dock_look is None:  # (its look in its dock, as the first slide found it)
            self._dock_look = (QFont(table.font()), table.compact)
        table.set_compact(True)
        base = w.stepper.caption.font()  # (the slide's body text, sized from the same scale)
        fits = False
        for f in BESIDE_TEXT_STEPS:
            font = QFont(base)
            font.setPointSizeF(base.pointSizeF() * f)
            if table.font() != font:
                table.setFont(font)
            table.fit_columns(even_hidden=True)  # (the slide's text size: measured now, not after the step)
            tw, th = self._beside_width(), table.content_height()
            fits = tw <= width * BESIDE_MAX_WIDTH and th <= room
            if fits and tw <= width * BESIDE_WIDTH and tw * th <= BESIDE_MAX_AREA * width * (room + 1):
                break
        if not fits and self._placeholder is None:
            table.setFont(self._dock_look[0])  # (under the heatmap, in its dock: as it was)
            table.set_compact(self._dock_look[1])
            table.fit_columns(even_hidden=True)
        if len(self._fits_found) >= 8:  # (the slide's sizes and the table's numbers of the last steps)
            self._fits_found.clear()
        self._fits_found[inputs] = (fits, QFont(table.font()), table.compact)
        return fits

    def _fit_inputs(self, width: int, room: int) -> tuple:
        """What :meth:`_table_fits_beside` finds on a slide ``width`` × ``room``: the slide's text, the
        table's numbers, columns and rows (:meth:`CalcTable.measure_key`) and its width, whether it
        is beside the heatmap now, and its look in its dock."""
        w = self._window
        return (width, room, w.font().toString(), w.panels.calc.measure_key(), self._placeholder is None,
                None if self._dock_look is None else (self._dock_look[0].toString(), self._dock_look[1]))

    def _table_beside(self, room: int) -> None:
        """The table out of its dock into the slide, on the heatmap's right, as large as its rows."""
        w = self._window
        table = w.panels.calc
        lay = w.centralWidget().layout()
        if self._row is None:
            # (the centre — the heatmap or a centre panel — into a row of its own; it keeps its parent)
            self._row = QHBoxLayout()
            self._row.setContentsMargins(0, 0, 0, 0)
            index = lay.indexOf(w.centre_stack)
            lay.removeWidget(w.centre_stack)
            self._row.addWidget(w.centre_stack, 1)
            lay.insertLayout(index, self._row, 1)
        if table.parentWidget() is not w.centralWidget():
            self._placeholder = QWidget()
            self._placeholder.setFont(self._dock_look[0] if self._dock_look else table.font())
            w.docks.calc.setWidget(self._placeholder)  # (the dock keeps a widget: its font is still set)
            self._row.addWidget(table, 0, Qt.AlignmentFlag.AlignVCenter)
            # (its text is the slide's, or smaller: set by _table_fits_beside)
        table.set_last_stage(self._last_table_stage())  # (no scroll bar kept for the blend's column)
        table.setFixedWidth(self._beside_width())
        table.show()
        lay.activate()
        table.setFixedHeight(min(room, table.content_height() + 2))

    def _on_table_content(self) -> None:
        # The table needs another size (a deck's next scene, a token more, wider numbers after edits;
        # a refit says so only when its width or rows changed): a heatmap's slide is composed again —
        # the table beside the heatmap or under it, as it now fits.
        if self.on and self._slide_view == "heatmap" and not self._composing:
            table = self._window.panels.calc
            beside = self._placeholder is not None
            if not beside or (self._beside_width(), table.content_height() + 2) != (table.width(), table.height()):
                QTimer.singleShot(0, self._window, lambda: self.on and self.compose_slide())

    def _table_to_dock(self) -> None:
        """The table back in its dock (the slide leaves the heatmap, or the heatmap's slide is left)."""
        w = self._window
        table = w.panels.calc
        if self._placeholder is None:
            return
        font = self._placeholder.font()
        table.setMinimumSize(0, 0)
        table.setMaximumSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX)
        w.docks.calc.setWidget(table)
        table.setFont(font)
        if self._dock_look is not None:
            table.set_compact(self._dock_look[1])
        table.set_last_stage(None)
        table.show()
        self._placeholder.deleteLater()
        self._placeholder = None

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
        self._table_to_dock()
        self._fits_found.clear()
        if self._dock_look is not None:  # (a slide's table in the dock — P's column — had the slide's look)
            w.panels.calc.setFont(self._dock_look[0])
            w.panels.calc.set_compact(self._dock_look[1])
            self._dock_look = None
        w.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.BottomDockWidgetArea)
        w.stepper.release_height()
        self._writes = False
        self._kept = None
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
            w.panels.calc.fit_columns(even_hidden=True)  # (the calculation dock is sized to it)
            # The deferred panels the layout will show are built before it lays anything out (the sizes
            # it makes follow the panels' own: built after it, they were laid out otherwise).
            w.panel_host.build_deferred(behind=self.docks.behind())
            w.layout().activate()  # (resizeDocks shares out the sizes the docks have now)
            self.layout_docks()
            w.layout().activate()
            if w.screen_fit.placed and w.screen_fit.keep_inside():
                # (the first activation, before the docks were shared out, grew the window to the
                # minimum of a layout not yet made — the multihead scene's four editors: taller than
                # a 1280×720 screen — and nothing shrank it back)
                w.layout().activate()
                self.layout_docks()
        # (a restored layout's deferred docks in front too; the others are built after the first paint)
        self._window.panel_host.build_shown()
        self._fit_stage_bar()

    def _fit_stage_bar(self) -> None:
        """The stage bar's form (one row or two, whole or short labels) for the width it will have, before
        the first show: chosen after it, it changed the stepper's height and resized the plots again."""
        w = self._window
        w.layout().activate()
        w.centralWidget().layout().activate()
        w.stepper.fit_bar()

    def reset_layout(self) -> None:
        """View → Reset layout: the docks as the window lays them out by default for the size it has now
        — floating ones docked, closed ones shown, the View menu's panels folded away again."""
        w = self._window
        w.panel_host.build_deferred()  # (every panel laid out as it is)
        if self.on:
            self.compose_slide()
            return
        w.panel_host.arrange(show=True)
        w.layout().activate()
        w.screen_fit.keep_inside()  # (a layout of the user's own may have made the window taller than the screen)
        w.panels.calc.fit_columns(even_hidden=True)
        w.layout().activate()
        self.layout_docks()

    def layout_docks(self) -> None:
        """The default layout for the window's size (:class:`DockLayout`), or the slide when presenting."""
        if self.on:
            self.compose_slide()
        else:
            self.docks.arrange()

    def make_room_for(self, dock: QDockWidget) -> None:
        """A View-menu panel was just opened: on a slide the slides keep it in a column of its own (the
        Real model's: its next token read from the back row); in the normal window
        :meth:`DockLayout.make_room_for`."""
        win = self._window
        panel = win.built_panel("model")
        if panel is not None and not self._follows_writer:
            self._follows_writer = True
            panel.model_changed.connect(self._on_writer)
        if self.on:
            if dock is win.panel_host.docks.get("model"):
                self._writer_open = True
            if not dock.isFloating():
                self._kept = dock  # (opened on a slide: the slides keep it in a column)
                self.compose_slide()
            return
        self.docks.make_room_for(dock)
