"""The one rule by which the docks' tabs and title bars shorten their titles.

A group of tabbed docks shows every dock by its whole title (:attr:`PanelSpec.title`) when the tabs of
those titles fit the tab bar's width, else every dock of the group by its short title
(:attr:`PanelSpec.short_title`, the whole title where a panel declares none).  A dock on its own does the
same with its title bar.  The whole title is always the tab's tooltip and its accessible name (and the
dock's, and its View-menu entry), so nothing is only "Bl…" to anyone.

The rule runs whenever a tab bar or a dock is resized or shown — the moment Qt has placed it — so a
panel opened later (the Real model, the RoPE explorer) shortens the titles of the group it joins.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

from qkv_studio.ui.registry import PanelSpec

_FIT_EVENTS = frozenset((QEvent.Type.Resize, QEvent.Type.Show))
_CHILD_EVENTS = frozenset((QEvent.Type.ChildAdded, QEvent.Type.ChildPolished))


def fits(bar: QTabBar, titles: list[str]) -> bool:
    """Whether ``bar``'s tabs, each with the title at its index in ``titles``, fit its width unelided."""
    fm = QFontMetrics(bar.font())
    need = sum(bar.tabSizeHint(i).width() - fm.horizontalAdvance(bar.tabText(i)) + fm.horizontalAdvance(t)
               for i, t in enumerate(titles))
    return need <= bar.width()


class TabTitles(QObject):
    """Applies the rule to ``window``'s dock tab bars and title bars (``specs``: each dock's panel)."""

    def __init__(self, window: QMainWindow, docks: dict[str, QDockWidget], specs: dict[str, PanelSpec]) -> None:
        super().__init__(window)
        self._window = window
        self._docks = docks
        self._specs = specs
        window.installEventFilter(self)

    def watch(self, dock: QDockWidget) -> None:
        """Follow ``dock``'s title bar (called as the dock is made)."""
        dock.installEventFilter(self)
        self._set(dock, self._spec(dock).title)

    def _spec(self, dock: QDockWidget) -> PanelSpec:
        return self._specs[dock.objectName().removeprefix("dock_")]

    def _dock_titled(self, text: str) -> QDockWidget | None:
        for dock in self._docks.values():
            if dock.windowTitle() == text:
                return dock
        return None

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if obj is self._window:
            if kind in _CHILD_EVENTS and isinstance(event.child(), QTabBar):  # type: ignore[attr-defined]
                event.child().installEventFilter(self)  # type: ignore[attr-defined]
        elif kind in _FIT_EVENTS:
            if isinstance(obj, QTabBar):
                self.fit_bar(obj)
            elif isinstance(obj, QDockWidget):
                self._fit_around(obj)
        elif kind == QEvent.Type.ToolTip and isinstance(obj, QTabBar):
            self._name_tabs(obj)  # (Qt gives a tab the title it shows as its tooltip: the whole one again)
        return False

    def fit_all(self) -> None:
        """The rule for every tab bar and lone dock of the window now (after a layout is made)."""
        for bar in self._window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.installEventFilter(self)  # (once: Qt keeps one filter per object)
            if bar.isVisible():
                self.fit_bar(bar)
        for dock in self._docks.values():
            if dock.isVisible() and not self._window.tabifiedDockWidgets(dock):
                self.fit_dock(dock)

    def _fit_around(self, dock: QDockWidget) -> None:
        """A dock just placed: its tab bar's titles (Qt updates a group's tab bar before it places the
        docks: a panel joining a group is resized, its bar is not), or its own title bar's."""
        if not self._window.tabifiedDockWidgets(dock):
            self.fit_dock(dock)
            return
        title = dock.windowTitle()
        for bar in self._window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if bar.isVisible() and any(bar.tabText(i) == title for i in range(bar.count())):
                self.fit_bar(bar)

    def fit_bar(self, bar: QTabBar) -> None:
        """Whole titles on the tabs of ``bar`` if they all fit, else every tab's short one."""
        docks = [self._dock_titled(bar.tabText(i)) for i in range(bar.count())]
        if None in docks or not docks:
            return  # (not a tab bar of the window's docks)
        specs = [self._spec(d) for d in docks if d is not None]
        whole = fits(bar, [s.title for s in specs])
        for dock, spec in zip(docks, specs, strict=True):
            if dock is not None:
                self._set(dock, spec.title if whole else spec.short_title or spec.title)
        self._name_tabs(bar)

    def _name_tabs(self, bar: QTabBar) -> None:
        """Each tab's tooltip and accessible name: its dock's whole title."""
        for i in range(bar.count()):
            dock = self._dock_titled(bar.tabText(i))
            if dock is not None:
                title = self._spec(dock).title
                bar.setTabToolTip(i, title)
                bar.setAccessibleTabName(i, title)

    def fit_dock(self, dock: QDockWidget) -> None:
        """A lone dock's title bar: its whole title if it fits beside the bar's buttons, else its short one."""
        spec = self._spec(dock)
        fm = QFontMetrics(dock.font())
        buttons = 3 * fm.height()  # (the float and close buttons, and the margins)
        whole = fm.horizontalAdvance(spec.title) + buttons <= dock.width() or dock.width() <= 0
        self._set(dock, spec.title if whole else spec.short_title or spec.title)

    def _set(self, dock: QDockWidget, title: str) -> None:
        spec = self._spec(dock)
        if dock.windowTitle() != title:
            dock.setWindowTitle(title)
        dock.toggleViewAction().setText(spec.title)  # (Qt gives it the dock's title)
        dock.setAccessibleName(spec.title)
        dock.setToolTip(spec.title if title != spec.title else "")
