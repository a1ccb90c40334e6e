"""The normal window's default layout of the docks (View → Reset layout makes it again).

What goes where is decided from the window's size class
(:func:`~qkv_studio.ui.widgets.size_classes.size_class`: how many characters and lines of its text fit),
and from what the content asks for (the calculation table's columns, the docks' minimum sizes):

* ``columns`` (a wide class): the editors, the calculation table over the blend, and the heatmap side by
  side;
* ``folded`` (a narrow class): the calculation table and the blend in one column (the table above the
  blend where it shows whole, else tabs), the View menu's panels tabs of it;
* ``under`` (a narrow class where the editors at their narrowest, the whole table and the heatmap at its
  floor do not fit side by side, or a View-menu panel is in front): the editors go under the table,
  tabs with the blend and the plane.

The height class says whether the vector plane stands under the editors or is a tab.  Every share of
the width or height comes from the size-class table; the tabs' titles are shortened by
:class:`~qkv_studio.ui.window.tab_titles.TabTitles`.  Presentation mode composes its slides itself
(:mod:`qkv_studio.ui.window.presentation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QDockWidget, QStatusBar, QTabBar, QWidget

from qkv_studio.core import STAGES
from qkv_studio.ui.widgets.size_classes import SizeClass, size_class

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


SEPARATORS = 12  # (the dock separators between the three columns, px)
_SLACK = 10  # (px the table's dock is given beyond its rows: no scroll bar for a pixel's rounding)
#: The least size the default layout is made for (a window shown smaller scrolls its docks).
LEAST_SIZE = QSize(800, 500)


@dataclass(frozen=True)
class Plan:
    """What :meth:`DockLayout.arrange` does for the window's size now."""

    form: Literal["columns", "folded", "under"]
    #: the calculation table above the blend (else a tab of its group)
    split: bool
    #: the widths of the editors' and the calculation's columns
    editors: int
    calc: int
    sizes: SizeClass
    width: int
    height: int


def _activate(widget: QWidget) -> None:
    """Lay ``widget`` out now (its docks placed: what follows measures them)."""
    lay = widget.layout()
    if lay is not None:
        lay.activate()


class DockLayout:
    """The default layout of a :class:`MainWindow`'s docks for the size the window has."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window

    def _size(self) -> tuple[int, int, SizeClass]:
        win = self._window
        w, h = max(win.width(), LEAST_SIZE.width()), max(win.height(), LEAST_SIZE.height())
        return w, h, size_class(QSize(w, h), win.font())

    def plan(self) -> Plan:
        """The layout for the window's size and content now (the table's compact form chosen on the way)."""
        w, h, sizes = self._size()
        folded = sizes.width.folded
        front = self._front()
        editors, calc = self._column_widths(w, sizes)
        under = folded and (bool(front) or self._editors_under_table(w, sizes))
        if under:
            return Plan("under", True, editors, self._under_width(w, sizes, front), sizes, w, h)
        # (a table the folded column shows whole stands above the blend: as a tab it was a short table in
        # a column-high box; so does one above a View-menu panel in front)
        split = not folded or bool(front) or calc >= self._table_width()
        return Plan("folded" if folded else "columns", split, editors, calc, sizes, w, h)

    def arrange(self) -> None:
        """Place the docks for the window's size (the default layout): see the module's docstring."""
        plan = self.plan()
        self._window.tokens_panel.set_most_rows(plan.sizes.height.token_rows)
        if plan.form == "under":
            self._arrange_under(plan)
            return
        win = self._window
        if plan.form == "folded":
            if not plan.split:
                win.tabifyDockWidget(win.dock_calc, win.dock_blend)
            for dock in self._lazy_docks():
                win.tabifyDockWidget(win.dock_blend, dock)
        tall = plan.sizes.height.plane_under_editors
        if not tall:
            self._plane_as_tab(plan)
        win.dock_calc.raise_()
        for dock in self._front():
            dock.raise_()
        self.hide_stale_tab_bars()
        win.resizeDocks([win.dock_editors, win.dock_calc], [plan.editors, plan.calc], Qt.Horizontal)
        if tall:
            share = plan.sizes.height.editors_share
            win.resizeDocks([win.dock_editors, win.dock_plane],
                            [int(plan.height * share), int(plan.height * (1 - share))], Qt.Vertical)
        if plan.split:
            self._share_right_column(plan.height, plan.sizes.height.calc_share)
        _activate(win)
        win.panel_host.titles.fit_all()

    def _plane_as_tab(self, plan: Plan) -> None:
        """Too short for the editors and the plane one above the other: the plane is a tab of the
        right-hand column (the wider one), beside the blend, where that column's tabs keep their whole
        titles; else a tab of the editors."""
        win, host = self._window, self._window.panel_host
        fm = QFontMetrics(win.font())
        right = ([win.dock_blend] if plan.split else [win.dock_calc, win.dock_blend]) + self._front()
        if self._tabs_fit(fm, [host.spec_of(d).title for d in right + [win.dock_plane]], plan.calc):
            win.tabifyDockWidget(win.dock_blend, win.dock_plane)
        else:
            win.tabifyDockWidget(win.dock_editors, win.dock_plane)
            win.dock_editors.raise_()
        if plan.split:
            win.dock_blend.raise_()

    def _under_width(self, w: int, sizes: SizeClass, front: list[QDockWidget]) -> int:
        """The table's column with the editors under it: as wide as the table at its last stage (the
        blend's w·vⱼ in view), or at the current stage's where that left the heatmap less than its floor;
        a table that scrolls anyway, or one above a View-menu panel, keeps the column's most; never
        narrower than the docks under it need."""
        win = self._window
        wc = sizes.width
        room = w - int(w * wc.heatmap_floor) - SEPARATORS
        calc = self._table_width()
        if calc > w - int(w * wc.heatmap_floor_under) - SEPARATORS:
            calc = self._table_width(None)
        if front or calc > room:
            calc = min(calc, int(w * wc.calc_most))
        return max([calc] + [d.minimumSizeHint().width() for d in front + [win.dock_editors]])

    def _arrange_under(self, plan: Plan) -> None:
        """The editors under the table, tabs of its column with the blend, the plane and the View menu's
        panels; the table whole above them, the heatmap the rest of the width."""
        win = self._window
        # (the table above the blend, then the editors into the blend's tabs: split under the table first —
        # the editors, the blend and the Real model one above the other were taller than a short screen)
        if win.dock_calc in win.tabifiedDockWidgets(win.dock_blend):
            win.splitDockWidget(win.dock_calc, win.dock_blend, Qt.Vertical)
        for dock in [win.dock_editors, win.dock_plane] + self._lazy_docks():
            win.tabifyDockWidget(win.dock_blend, dock)
        win.dock_editors.raise_()
        for dock in self._front():
            dock.raise_()
        self.hide_stale_tab_bars()
        win.resizeDocks([win.dock_calc], [plan.calc], Qt.Horizontal)
        # (the editors scroll: the table keeps its rows, up to almost half the height; twice: once at that
        # width the table knows whether a scroll bar takes a line of it)
        for _ in range(2):
            _activate(win)
            self._share_right_column(plan.height, plan.sizes.height.calc_share_under)
        win.panel_host.titles.fit_all()

    def bring_forward(self, view: str) -> None:
        """A stage step in the normal window: the stage's main view (the vector plane at Vectors, the
        blend at the last stage; see StageSpec.slide_view) in front when it is a tab behind another
        shown dock — in a short window the plane is a tab behind the blend, and the Vectors stage showed
        the blend's empty bars.  A view already in view, or closed by the user, is left as it is."""
        if view == "heatmap":
            return
        win = self._window
        dock = win.dock(view)
        if dock.isHidden() or dock.isFloating() or not win.tabifiedDockWidgets(dock):
            return
        if dock.visibleRegion().isEmpty():
            dock.raise_()

    def behind(self) -> set[QDockWidget]:
        """The core docks :meth:`arrange` will put behind another's tab at the window's size now, as far as
        that is known before anything is laid out: the plane in a window too short for it under the
        editors, the blend and the plane in one too narrow for the editors beside the table (the editors'
        tab, or a View-menu panel's, in front of them).  Where it would take the calculation table's
        column widths (a folded window whose table does not fit its column: the blend behind the
        table's tab) the blend is not counted."""
        win = self._window
        w, _, sizes = self._size()
        if sizes.width.folded and (bool(self._front()) or self._editors_under_table(w, sizes, placed=False)):
            return {win.dock_plane, win.dock_blend}
        return set() if sizes.height.plane_under_editors else {win.dock_plane}

    def _lazy_docks(self) -> list[QDockWidget]:
        """The docks of the View menu's panels (tabs of the blend's place)."""
        host = self._window.panel_host
        return [host.docks[s.name] for s in host.specs() if s.docked and s.lazy]

    def _front(self) -> list[QDockWidget]:
        """The View menu's panels shown (opened before the window showed, or since)."""
        return [d for d in self._lazy_docks() if not d.isHidden()]

    def make_room_for(self, dock: QDockWidget) -> None:
        """A View-menu panel just opened as a tab of the calculation table (a narrow window's folded
        column): the table goes under it, as wide as the column, and keeps no more than its rows — the
        panel took the column's whole height, larger than the heatmap."""
        win = self._window
        calc = win.dock_calc
        if calc.isHidden() or calc.isFloating() or calc not in win.tabifiedDockWidgets(dock):
            return
        # (a dock split from a tab group would only be tabbed again: out of the group, then back into
        # the column, under it)
        win.removeDockWidget(calc)
        win.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, calc, Qt.Orientation.Vertical)
        calc.show()
        dock.raise_()
        _activate(win)
        _, h, sizes = self._size()
        self._share_right_column(h, sizes.height.calc_share)

    def hide_stale_tab_bars(self) -> None:
        """Qt leaves tab bars of groups of docks that are no more on the window: the normal layout's
        Tokens | Vector plane tabs over the slide's table when all but one of them are hidden, and the
        first group's Calculation | Blend over the stepper when the default layout tabs more docks into
        it.  A tab bar whose tabs are not those of a group of shown docks goes."""
        w = self._window
        shown = [d for d in w.findChildren(QDockWidget) if not d.isHidden() and not d.isFloating()]
        groups = set()
        for dock in shown:
            group = [dock] + [d for d in w.tabifiedDockWidgets(dock) if not d.isHidden()]
            if len(group) > 1:
                groups.add(tuple(sorted(d.windowTitle() for d in group)))
        for bar in w.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if not bar.isHidden() and tuple(sorted(bar.tabText(i) for i in range(bar.count()))) not in groups:
                bar.hide()

    @staticmethod
    def _tabs_fit(fm: QFontMetrics, titles: list[str], width: int) -> bool:
        """Whether a dock column ``width`` wide shows tabs of these titles without eliding one."""
        return sum(fm.horizontalAdvance(t) + 2 * fm.height() for t in titles) <= width

    def _table_width(self, through: str | None = STAGES[-1], *, placed: bool = True) -> int:
        """The calculation dock's width that shows every column of the table up to stage ``through``
        (None: the current one) — by default its last, the blend's w·vⱼ (sized to the stage it opened
        at, the table kept a scroll bar once stepped there).  ``placed`` False: the dock's frame told from
        its and the table's minimum sizes, nothing laid out."""
        win = self._window
        if placed:
            win.dock_calc.layout().activate()  # (before the first show: nothing inside a dock is placed yet)
            chrome = max(0, win.dock_calc.width() - win.calc.width())
        else:
            chrome = max(0, win.dock_calc.minimumSizeHint().width() - win.calc.minimumSizeHint().width())
        # (no room kept for a vertical scroll bar where the rows fit the table's share of the height)
        _, h, sizes = self._size()
        height, wanted = self._table_height(h, sizes.height.calc_share)
        return win.calc.content_width(through=through, scroll_bar=height < wanted) + chrome + 4

    def _editors_under_table(self, w: int, sizes: SizeClass, *, placed: bool = True) -> bool:
        """Whether a window ``w`` wide is too narrow for the editors at their narrowest, the whole
        table and the heatmap at its floor side by side."""
        win = self._window
        wc = sizes.width
        least = max(win.dock_editors.minimumSizeHint().width(), int(w * wc.editors_least))
        return least + self._table_width(placed=placed) + int(w * wc.heatmap_floor) + SEPARATORS > w

    def _column_widths(self, w: int, sizes: SizeClass) -> tuple[int, int]:
        """The widths of the editors' and the calculation's columns in a window ``w`` wide.

        The calculation column is as wide as its table's shown columns up to its most share (else the
        weights, its last column, would sit behind a scroll bar); too wide for that, the table's headings
        break onto two lines and its columns are as wide as their numbers.  Where the column would take
        the heatmap below its floor, the editors give up width for it, down to their least — only if the
        whole table then fits (a table that scrolls anyway leaves the editors as they are, and a folded
        one keeps its scrolling share).
        """
        win, wc = self._window, sizes.width
        win.calc.set_compact(False)
        need = self._table_width()
        room = w - int(w * wc.heatmap_floor) - SEPARATORS
        if need > min(int(w * wc.calc_most), room - int(w * wc.editors_least)):
            win.calc.set_compact(True)
            need = self._table_width()
        calc = max(int(w * wc.calc_least), min(int(w * wc.calc_most), need))
        editors = int(w * wc.editors_share)
        if editors + calc <= room:
            return editors, calc
        # (the editors' minimum before the first show is less than they keep once shown)
        least = max(win.dock_editors.minimumSizeHint().width(), int(w * wc.editors_least))
        if calc >= need and room - calc >= least:
            editors = room - calc
        elif wc.folded:
            calc = int(w * wc.calc_scrolling)  # (it scrolls anyway: the heatmap keeps the width)
        return editors, calc

    def _share_right_column(self, h: int, calc_share: float) -> None:
        """The calculation table gets up to ``calc_share`` of the height — no more than its rows need,
        so a short scene's table does not leave an empty box while the blend view is squeezed."""
        win = self._window
        calc, _ = self._table_height(h, calc_share)
        # (the two share the docks' height, the window's less its menu and status bars: asked for the
        # window's, each got its share of the difference taken off and the table scrolled both ways)
        bars = [b for b in (win.menuBar(), win.findChild(QStatusBar)) if b is not None and not b.isHidden()]
        area = h - sum(max(b.height(), b.sizeHint().height()) for b in bars if b.parentWidget() is win)
        win.resizeDocks([win.dock_calc, win.dock_blend], [calc, max(1, area - calc)], Qt.Vertical)

    def _table_height(self, h: int, calc_share: float) -> tuple[int, int]:
        """The calculation dock's height in a window ``h`` tall when it may take ``calc_share`` of it,
        and the height its rows want."""
        win = self._window
        # (before the first show the dock's title bar is not placed yet: its minimum says how tall it is)
        chrome = max(0, win.dock_calc.height() - win.calc.height(),
                     win.dock_calc.minimumSizeHint().height() - win.calc.minimumSizeHint().height())
        wanted = win.calc.content_height() + chrome + _SLACK
        # (the docks under it keep their minimum: the Real model's, taller than the rest, grew the window
        # past the screen when the table took its rows)
        under = [d for d in (win.dock_blend, *win.tabifiedDockWidgets(win.dock_blend)) if not d.isHidden()]
        least = max((d.minimumSizeHint().height() for d in under), default=0) + SEPARATORS
        share = size_class(QSize(win.width(), h), win.font()).height.calc_least
        height = max(int(h * share), min(int(h * calc_share), wanted, h - least))
        return self._whole_rows(height, wanted), wanted

    def _whole_rows(self, height: int, wanted: int) -> int:
        """``height`` less the part of a row it would cut, where the table's rows do not all fit."""
        table = self._window.calc
        rows = table.calc_model.rowCount()
        row = table.rowHeight(0) if rows else 0
        if height >= wanted or row <= 0:
            return height
        chrome = wanted - _SLACK - sum(table.rowHeight(r) for r in range(rows))
        return max(chrome + row, chrome + (height - chrome) // row * row)
