"""The normal window's default layout of the docks (View → Reset layout makes it again).

:meth:`DockLayout.arrange` shares the window between the docks in proportion to its size, the heatmap
the largest share: below a width or height measured in lines of text the side panels fold into tabs
(their View-menu entries bring each forward); too narrow for the editors, the whole calculation table
and the heatmap side by side (1024×768, a HiDPI laptop's 960×540), the editors go under the table.
Presentation mode composes its slides itself (:mod:`qkv_studio.ui.window.presentation`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QDockWidget, QStatusBar, QTabBar

from qkv_studio.core import STAGES

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


#: The heatmap's floor in the default layout: the share of the window's width it keeps when the side
#: columns ask for more (the calculation table for its weights column).
HEATMAP_MIN_WIDTH = 0.47
EDITORS_MIN_WIDTH = 0.18  # (and the editors', when they yield to it)
#: With the editors under the table (a narrow window) the heatmap keeps this share of the width for the
#: table to show its last stage's columns (the blend's w·vⱼ) — else the table is as wide as the current
#: stage's: at 960×540@2 the whole table left the heatmap under 30 % of a window whose caption took a third
#: of its height.
UNDER_HEATMAP_MIN_WIDTH = 0.53
SEPARATORS = 12  # (the dock separators between the three columns, px)
#: The height, in lines of the window's text, from which the vector plane sits under the editors: the
#: token list and three editors with every row (~37 lines) and a plane that can be read (~18 lines).
#: Below it the plane is a tab (at 1600×950, 53 lines, it was a 200-px strip under editors that hid
#: their 4th rows behind scroll bars).
TALL_LINES = 57
FOLD_CHARS = 180  # a window narrower than this many characters folds its side panels into tabs


class DockLayout:
    """The default layout of a :class:`MainWindow`'s docks for the size the window has."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window

    def arrange(self) -> None:
        """Share the width and height between the panels in proportion to the window (default layout)."""
        win = self._window
        w, h = max(win.width(), 800), max(win.height(), 500)
        fm = QFontMetrics(win.font())
        folded = w < FOLD_CHARS * fm.averageCharWidth()
        host = win.panel_host
        lazy = self._lazy_docks()
        front = [d for d in lazy if not d.isHidden()]  # (opened before the window showed: the Real model's)
        editors, calc = self._column_widths(w, folded)
        # Too narrow for the editors, the whole table and the heatmap side by side (1024×768, a HiDPI
        # laptop's 960×540): the editors go under the table, tabs of its column with the blend and the
        # plane — the table whole above them, the heatmap the rest of the width.
        # So do they with a View-menu panel in front (the Real model's, ~320 px at its narrowest): beside
        # the editors and it, the heatmap kept 23 % of a 1024×768 window.
        under = folded and (bool(front) or self._editors_under_table(w))
        # A panel of the View menu in front (the Real model's) keeps the table above it: the whole
        # column's height, a panel that cannot be narrower than ~320 px was larger than the heatmap.
        # So does a table the folded column shows whole (1280×720): as a tab it was a short table in a
        # column-high box, most of it empty, with the blend hidden behind it.
        split = not folded or bool(front) or under or calc >= self._table_width()
        if under:
            # (as wide as the table at its last stage, its headings shortened: the blend's w·vⱼ in view
            # — else as wide as the stage's columns, where the heatmap would keep less than
            # UNDER_HEATMAP_MIN_WIDTH (960×540@2); a table wider than the heatmap's floor leaves — long
            # vectors — scrolls in 36 %, as one does above a
            # View-menu panel in front; the column as wide as the editors and that panel need)
            room = w - int(w * HEATMAP_MIN_WIDTH) - SEPARATORS
            calc = self._table_width()
            if calc > w - int(w * UNDER_HEATMAP_MIN_WIDTH) - SEPARATORS:
                calc = self._table_width(None)
            if front or calc > room:
                calc = min(calc, int(w * 0.36))
            calc = max([calc] + [d.minimumSizeHint().width() for d in front + [win.docks.editors]])
            # (the table above the blend, then the editors into the blend's tabs: split under the table
            # first, the editors, the blend and the Real model one above the other were taller than a
            # 1280×720 screen, and the window grew to that)
            if win.docks.calc in win.tabifiedDockWidgets(win.docks.blend):
                win.splitDockWidget(win.docks.calc, win.docks.blend, Qt.Vertical)
            for dock in [win.docks.editors, win.docks.plane] + lazy:
                win.tabifyDockWidget(win.docks.blend, dock)
            titles = [host.spec_of(d).title for d in [win.docks.editors, win.docks.blend, win.docks.plane] + front]
            host.set_short_titles(set() if self._tabs_fit(fm, titles, calc)
                                  else {"editors", "plane", "blend"})
            win.docks.editors.raise_()
            for dock in front:
                dock.raise_()
            self.hide_stale_tab_bars()
            win.resizeDocks([win.docks.calc], [calc], Qt.Horizontal)
            # (the editors scroll: the table keeps its rows, up to almost half a short window's height;
            # twice: once at that width the table knows whether a scroll bar takes a line of it)
            for _ in range(2):
                win.layout().activate()
                self._share_right_column(h, 0.45)
            return
        if folded:
            # Too narrow for the calculation and the blend beside the heatmap and the editors: they
            # fold into tabs of one column (the heatmap keeps its width; View brings each forward),
            # and the View menu's panels, tabs of the blend's place, go with the blend.
            if not split:
                win.tabifyDockWidget(win.docks.calc, win.docks.blend)
            for dock in lazy:
                win.tabifyDockWidget(win.docks.blend, dock)
        short: set[str] = set()
        tall = self._tall(h, fm)
        if not tall:
            # Too short for editors and plane one above the other: the plane becomes a tab of the
            # right-hand column, beside the blend (under the editors it was a strip of 280 × 600 px at
            # 1280×720, its labels cut; the right-hand column is the wider one) — where that column's
            # tabs keep their whole titles; else a tab of the editors, as before.
            # (the View menu's panels shown in front are tabs there too)
            right = ([win.docks.blend] if split else [win.docks.calc, win.docks.blend]) + front
            if self._tabs_fit(fm, [host.spec_of(d).title for d in right + [win.docks.plane]], calc):
                win.tabifyDockWidget(win.docks.blend, win.docks.plane)
            else:
                win.tabifyDockWidget(win.docks.editors, win.docks.plane)
                win.docks.editors.raise_()
                # (the column's tabs by their short titles when the long ones would be elided)
                titles = [host.spec_of(d).title for d in (win.docks.editors, win.docks.plane)]
                if not self._tabs_fit(fm, titles, editors):
                    short = {"editors", "plane"}
            if split:
                win.docks.blend.raise_()
        host.set_short_titles(short)
        win.docks.calc.raise_()
        for dock in front:
            dock.raise_()
        self.hide_stale_tab_bars()
        win.resizeDocks([win.docks.editors, win.docks.calc], [editors, calc], Qt.Horizontal)
        if tall:
            # (the editors need all of a short scene's rows — three tables and the token list; the plane keeps room)
            win.resizeDocks([win.docks.editors, win.docks.plane], [int(h * 0.68), int(h * 0.32)], Qt.Vertical)
        if split:
            self._share_right_column(h, 0.36)

    def bring_forward(self, view: str) -> None:
        """A stage step in the normal window: the stage's main view (the vector plane at Vectors, the
        blend at the last stage; see StageSpec.slide_view) in front when it is a tab behind another
        shown dock — at 1600×950 the plane is a tab behind the blend, and the Vectors stage showed the
        blend's empty bars.  A view already in view, or closed by the user, is left as it is."""
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
        w, h = max(win.width(), 800), max(win.height(), 500)
        fm = QFontMetrics(win.font())
        folded = w < FOLD_CHARS * fm.averageCharWidth()
        front = [d for d in self._lazy_docks() if not d.isHidden()]
        if folded and (bool(front) or self._editors_under_table(w, placed=False)):
            return {win.docks.plane, win.docks.blend}
        return set() if self._tall(h, fm) else {win.docks.plane}

    @staticmethod
    def _tall(h: int, fm: QFontMetrics) -> bool:
        """Whether a window ``h`` high has room for the plane under the editors (:data:`TALL_LINES`)."""
        return h >= TALL_LINES * fm.lineSpacing()

    def _lazy_docks(self) -> list[QDockWidget]:
        """The docks of the View menu's panels (tabs of the blend's place)."""
        host = self._window.panel_host
        return [host.docks[s.name] for s in host.specs() if s.docked and s.lazy]

    def make_room_for(self, dock: QDockWidget) -> None:
        """A View-menu panel just opened as a tab of the calculation table (a narrow window's folded
        column): the table goes under it, as wide as the column, and keeps no more than its rows — the
        panel took the column's whole height, larger than the heatmap at 1024×768."""
        win = self._window
        calc = win.docks.calc
        if calc.isHidden() or calc.isFloating() or calc not in win.tabifiedDockWidgets(dock):
            return
        # (a dock split from a tab group would only be tabbed again: out of the group, then back into
        # the column, under it)
        win.removeDockWidget(calc)
        win.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, calc, Qt.Orientation.Vertical)
        calc.show()
        dock.raise_()
        win.layout().activate()
        self._share_right_column(max(win.height(), 500), 0.36)

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
            win.docks.calc.layout().activate()  # (before the first show: nothing inside a dock is placed yet)
            chrome = max(0, win.docks.calc.width() - win.panels.calc.width())
        else:
            chrome = max(0, win.docks.calc.minimumSizeHint().width() - win.panels.calc.minimumSizeHint().width())
        # (no room kept for a vertical scroll bar where the rows fit the table's least share of the
        # height: the lesson's w·vⱼ column then fits beside a 1024-px window's heatmap)
        height, wanted = self._table_height(max(win.height(), 500), 0.36)
        return win.panels.calc.content_width(through=through, scroll_bar=height < wanted) + chrome + 4

    def _editors_under_table(self, w: int, *, placed: bool = True) -> bool:
        """Whether a window ``w`` wide is too narrow for the editors at their narrowest, the whole
        table and the heatmap at its floor (:data:`HEATMAP_MIN_WIDTH`) side by side."""
        win = self._window
        least = max(win.docks.editors.minimumSizeHint().width(), int(w * EDITORS_MIN_WIDTH))
        return least + self._table_width(placed=placed) + int(w * HEATMAP_MIN_WIDTH) + SEPARATORS > w

    def _column_widths(self, w: int, folded: bool) -> tuple[int, int]:
        """The widths of the editors' and the calculation's columns in a window ``w`` wide.

        The calculation column is as wide as its table's shown columns when that fits in 36 % (in a
        narrow window the weights, its last column, would otherwise sit behind a scroll bar).  Where
        that would take the heatmap below :data:`HEATMAP_MIN_WIDTH` of the window, the editors give
        up width for it, down to their minimum — only if the whole table then fits (a table that
        scrolls anyway leaves the editors as they are, and a folded one takes 26 %).
        """
        win = self._window
        win.panels.calc.set_compact(False)
        need = self._table_width()
        if need > min(int(w * 0.36), w - int(w * HEATMAP_MIN_WIDTH) - SEPARATORS - int(w * EDITORS_MIN_WIDTH)):
            # (too wide for its column: its headings break onto two lines, its columns as wide as
            # their numbers — at 1024×768 the weights were behind a scroll bar)
            win.panels.calc.set_compact(True)
            need = self._table_width()
        calc = max(int(w * 0.28), min(int(w * 0.36), need))
        editors = int(w * 0.22)
        room = w - int(w * HEATMAP_MIN_WIDTH) - SEPARATORS
        if editors + calc > room:
            # (the editors' minimum before the first show is less than they keep once shown)
            least = max(win.docks.editors.minimumSizeHint().width(), int(w * EDITORS_MIN_WIDTH))
            if calc >= need and room - calc >= least:
                editors = room - calc
            elif folded:
                # (it scrolls anyway: the heatmap keeps the width — 1024 px is where the editors, the
                # table and the heatmap all want more than there is)
                calc = int(w * 0.26)
        return editors, calc

    def _share_right_column(self, h: int, calc_share: float) -> None:
        """The calculation table gets up to ``calc_share`` of the height — no more than its rows need,
        so a short scene's table does not leave an empty box while the blend view is squeezed."""
        win = self._window
        calc, _ = self._table_height(h, calc_share)
        # (the two share the docks' height, the window's less its menu and status bars: asked for
        # the window's, each got its share of the difference taken off — the table lost ~5 % of its
        # rows' height and scrolled both ways at 1600×950)
        bars = [b for b in (win.menuBar(), win.findChild(QStatusBar)) if b is not None and not b.isHidden()]
        area = h - sum(max(b.height(), b.sizeHint().height()) for b in bars if b.parentWidget() is win)
        win.resizeDocks([win.docks.calc, win.docks.blend], [calc, max(1, area - calc)], Qt.Vertical)

    def _table_height(self, h: int, calc_share: float) -> tuple[int, int]:
        """The calculation dock's height in a window ``h`` tall when it may take ``calc_share`` of it,
        and the height its rows want."""
        win = self._window
        # (before the first show the dock's title bar is not placed yet: its minimum says how tall it is)
        chrome = max(0, win.docks.calc.height() - win.panels.calc.height(),
                     win.docks.calc.minimumSizeHint().height() - win.panels.calc.minimumSizeHint().height())
        wanted = win.panels.calc.content_height() + chrome + 10  # (a few px of slack: no scroll bar for them)
        # (the docks under it keep their minimum: the Real model's, taller than the rest, grew the
        # window past a 1280×720 screen when the table took its rows)
        under = [d for d in (win.docks.blend, *win.tabifiedDockWidgets(win.docks.blend)) if not d.isHidden()]
        least = max((d.minimumSizeHint().height() for d in under), default=0) + SEPARATORS
        return max(int(h * 0.18), min(int(h * calc_share), wanted, h - least)), wanted
