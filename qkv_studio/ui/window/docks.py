"""The window's side of the panel registry: a dock for each registered panel, the lazy ones built the
first time they show, the deferred core docks when the window first shows them in front (else right
after its first paint), and bringing a panel (or a dialog) forward.

See :mod:`qkv_studio.ui.registry` for how to add a panel; nothing here names one.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QTabBar, QWidget

from qkv_studio.ui import registry
from qkv_studio.ui.registry import PanelSpec
from qkv_studio.ui.window.tab_titles import TabTitles

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow

_AREAS = {"left": Qt.DockWidgetArea.LeftDockWidgetArea, "right": Qt.DockWidgetArea.RightDockWidgetArea}


class PanelHost:
    """Builds and keeps the window's panels: a dock for each docked panel (``window.docks.<name>``), the
    panel itself (``window.panels.<name>``: the lazy and the deferred ones built through :meth:`panel`)."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self._specs = {spec.name: spec for spec in registry.panels()}
        self._built: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}
        self.titles = TabTitles(window, self.docks, self._specs)  # (tabs shortened by one rule)

    # ---- construction -----------------------------------------------------------------------------
    def build_docks(self) -> None:
        """The core docks (stacked in their column), then the lazy ones as hidden tabs of the right column."""
        w = self._window
        for spec in self._specs.values():
            if spec.docked and not spec.lazy and not spec.deferred:
                widget = spec.build(w)
                self._built[spec.name] = widget
                self._add_dock(spec, widget)
            elif spec.docked and not spec.lazy:  # (deferred: a placeholder until it is built)
                dock = self._add_dock(spec, QWidget())
                dock.visibilityChanged.connect(lambda on, name=spec.name: on and self.panel(name))
        for spec in self._specs.values():
            if spec.docked and spec.lazy:
                dock = self._add_dock(spec, QWidget())
                dock.visibilityChanged.connect(lambda on, name=spec.name: on and self.panel(name))
        self.arrange()

    def build_deferred(self, *, behind: Collection[QDockWidget] = ()) -> None:
        """Build the deferred core docks' panels not built yet, but those of the docks ``behind`` (the
        docks the window's layout will not show: a tab behind another's)."""
        for spec in self._specs.values():
            if spec.deferred and spec.name not in self._built and self.docks[spec.name] not in behind:
                # (polished now, as the window's other panels are: the layout measures it as it shows)
                self.panel(spec.name).ensurePolished()

    def build_shown(self) -> None:
        """Build the deferred panels whose docks the window shows as it is laid out now (not hidden, not a
        tab behind another): a restored layout's, say, as the window first shows."""
        for spec in self._specs.values():
            if spec.deferred and spec.name not in self._built and self._in_front(self.docks[spec.name]):
                self.panel(spec.name)

    def build_deferred_soon(self) -> None:
        """The deferred panels still to build, one an event-loop turn from now (called after the window's
        first paint: they are built while nothing else waits, before anyone can bring them forward)."""
        rest = [s.name for s in self._specs.values() if s.deferred and s.name not in self._built]
        if rest:
            def build_next() -> None:
                self.panel(rest[0])
                self.build_deferred_soon()

            QTimer.singleShot(0, self._window, build_next)

    def build_rest_now(self) -> bool:
        """The deferred panels still to build, built now (:func:`~qkv_studio.ui.update_policy.settle`, once
        the window has painted: what :meth:`build_deferred_soon` would build in the next idle turns);
        True if any was built."""
        rest = [s.name for s in self._specs.values() if s.deferred and s.name not in self._built]
        for name in rest:
            self.panel(name)
        return bool(rest)

    def _in_front(self, dock: QDockWidget) -> bool:
        """Whether ``dock`` shows when the window shows: shown, and the current tab of its tab group."""
        w = self._window
        if dock.isHidden():
            return False
        group = [d for d in w.tabifiedDockWidgets(dock) if not d.isHidden()]
        if dock.isFloating() or not group:
            return True
        titles = sorted(d.windowTitle() for d in group + [dock])
        for bar in w.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if sorted(bar.tabText(i) for i in range(bar.count())) == titles:
                return bar.tabText(bar.currentIndex()) == dock.windowTitle()
        return True  # (no tab bar for the group yet: built, to be sure)

    def arrange(self, *, show: bool = False) -> None:
        """Every dock in its place as built: the core docks stacked in their columns (``show``: shown,
        docked — View → Reset layout), the lazy ones hidden tabs of the right column."""
        core, lazy = self._docked(lazy=False), self._docked(lazy=True)
        for spec in core:
            self._dock_in_area(spec, show=show)
        for spec in lazy if show else ():
            self._dock_in_area(spec, show=False)
        # Split first, tabify after: splitting the blend away from its tab group would leave the View-menu
        # panels in a strip of their own under it instead of tabbed with it.
        for area in _AREAS:
            self._stack([self.docks[s.name] for s in core if s.area == area])
        right = [self.docks[s.name] for s in core if s.area == "right"][-1:]
        for spec in lazy:
            self._hide_behind(self.docks[spec.name], right[0] if right else None)
        for dock in right:
            dock.raise_()

    def _docked(self, *, lazy: bool) -> list[PanelSpec]:
        """The docked panels' specs, the lazy ones or the core ones."""
        return [s for s in self._specs.values() if s.docked and s.lazy == lazy]

    def _stack(self, column: list[QDockWidget]) -> None:
        """The docks of ``column`` one above the other, in order."""
        for upper, lower in zip(column, column[1:], strict=False):
            self._window.splitDockWidget(upper, lower, Qt.Orientation.Vertical)

    def _dock_in_area(self, spec: PanelSpec, *, show: bool) -> None:
        """``spec``'s dock docked in its area, out of any tab group (and shown)."""
        dock = self.docks[spec.name]
        dock.setFloating(False)
        self._window.addDockWidget(_AREAS[spec.area], dock)
        if show:
            dock.show()

    def _hide_behind(self, dock: QDockWidget, host: QDockWidget | None) -> None:
        """A lazy panel's dock: a hidden tab of ``host`` (the right column's last core dock)."""
        if host is not None:
            self._window.tabifyDockWidget(host, dock)
        dock.hide()

    def _add_dock(self, spec: PanelSpec, widget: QWidget) -> QDockWidget:
        w = self._window
        dock = QDockWidget(spec.title, w)
        dock.setObjectName(f"dock_{spec.name}")  # (saved layouts find their docks by this name)
        dock.setWidget(widget)
        feature = QDockWidget.DockWidgetFeature
        dock.setFeatures(feature.DockWidgetMovable | feature.DockWidgetFloatable | feature.DockWidgetClosable)
        w.addDockWidget(_AREAS[spec.area], dock)
        self.docks[spec.name] = dock
        self.titles.watch(dock)
        return dock

    # ---- lookup -----------------------------------------------------------------------------------
    def specs(self) -> tuple[PanelSpec, ...]:
        return tuple(self._specs.values())

    def spec(self, name: str) -> PanelSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise KeyError(f"unknown panel {name!r} (panels: {', '.join(self._specs)})") from None

    def built(self, name: str) -> QWidget | None:
        """The panel ``name`` if it has been built (a core dock's always is), else None."""
        return self._built.get(name)

    def built_docked(self) -> tuple[QWidget, ...]:
        """The lazy docked panels built so far (they follow the theme, colour map and zoom)."""
        return tuple(p for name, p in self._built.items() if self._specs[name].docked and self._specs[name].lazy)

    def panel(self, name: str) -> QWidget:
        """The panel ``name``; a lazy or deferred one is built (in the window's theme, colour map and zoom)
        the first time it is needed."""
        spec = self.spec(name)
        panel = self._built.get(name)
        if panel is not None:
            return panel
        w = self._window
        panel = spec.build(w)
        self._built[name] = panel
        if spec.docked:
            dock = self.docks[name]
            placeholder = dock.widget()
            if spec.lazy:
                _style(panel, w, colormap=True)
            panel.setFont(placeholder.font())  # (the window's fonts: see WindowStyle.style_fonts)
            dock.setWidget(panel)
            if spec.deferred:
                placeholder.deleteLater()
        return panel

    # ---- showing ----------------------------------------------------------------------------------
    def spec_of(self, dock_or_name: QDockWidget | str) -> PanelSpec:
        if isinstance(dock_or_name, str):
            return self.spec(dock_or_name)
        for name, dock in self.docks.items():
            if dock is dock_or_name:
                return self._specs[name]
        raise KeyError(f"not a panel's dock: {dock_or_name.objectName()!r}")

    def show(self, dock_or_name: QDockWidget | str) -> None:
        """Bring a panel to the front (a dialog: build, restyle and show it)."""
        spec = self.spec_of(dock_or_name)
        w = self._window
        if spec.kind == "centre":
            self.show_centre(spec.name)
            return
        if not spec.docked:
            dialog = self.panel(spec.name)
            _style(dialog, w, colormap=False)
            dialog.show()
            dialog.raise_()
            return
        dock = self.docks[spec.name]
        shown = not dock.isHidden()
        dock.show()  # (a lazy panel is built as its dock first shows)
        dock.raise_()
        if spec.lazy and not shown and w.isVisible():
            w.presentation.make_room_for(dock)  # (in a narrow window: not the whole column's height)
        lay = w.layout()
        if lay is not None:
            lay.activate()
        self.titles.fit_all()  # (the group it joined: its tabs' titles)
        if spec.on_show is not None:
            registry.resolve(spec.on_show)(w)

    # ---- the centre: the heatmap, or a centre panel in its place -----------------------------------
    def show_centre(self, name: str | None) -> None:
        """Show the centre panel ``name`` in place of the heatmap (None: the heatmap again); its menu
        entry's check follows."""
        w = self._window
        stack = w.centre_stack
        if name is None:
            stack.setCurrentWidget(w.heatmap)
        else:
            panel = self.panel(name)
            if stack.indexOf(panel) < 0:
                _style(panel, w, colormap=True)
                stack.addWidget(panel)
            stack.setCurrentWidget(panel)
            on_show = self._specs[name].on_show
            if on_show is not None:
                registry.resolve(on_show)(w)
        for spec in self._specs.values():
            act = w.acts.get(spec.name)
            if spec.kind == "centre" and act is not None:
                act.setChecked(spec.name == name)

    def centre(self) -> str | None:
        """The centre panel shown in place of the heatmap, or None when the heatmap shows."""
        current = self._window.centre_stack.currentWidget()
        for name, panel in self._built.items():
            if panel is current and self._specs[name].kind == "centre":
                return name
        return None

    def open(self, name: str) -> None:
        """The panel's menu entry: bring it forward and give the keyboard to its ``focus`` widget."""
        self.show(name)
        focus = self.spec(name).focus
        if focus:
            getattr(self.panel(name), focus).setFocus()


def _style(panel: QWidget, window: MainWindow, *, colormap: bool) -> None:
    """A panel that follows the app's look (``FollowsAppearance``) and was built without the window's
    Appearance is bound to it now; the factories pass it, so this is for panels that do not."""
    bind = getattr(panel, "bind_appearance", None)
    if bind is not None and getattr(panel, "appearance", None) is None:
        bind(window.appearance)
