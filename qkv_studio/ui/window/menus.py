"""The menu entries known only when the window is built: the stages, the docks and panels of the panel
registry, the themes and the colour maps.  Each ``fill(window, menu)`` is a :class:`~qkv_studio.ui.window.actions.Group`
row of the menu table in :mod:`qkv_studio.ui.window.actions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from qkv_studio.core import STAGES
from qkv_studio.render.colormaps import SEQUENTIAL
from qkv_studio.render.theme import THEMES
from qkv_studio.ui.registry import PanelSpec
from qkv_studio.ui.window.action_factory import make_action

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


def stages(window: MainWindow, menu: QMenu) -> None:
    """One checkable entry per stage (``window.stage_actions``), exclusive."""
    from qkv_studio.core.stages import stage_spec

    s = window.session
    window.stage_group = QActionGroup(window)
    window.stage_actions = {}
    for stage in STAGES:
        act = QAction(stage_spec(stage).button, window, checkable=True)
        act.triggered.connect(lambda _=False, st=stage: s.set_stage(st))
        window.stage_group.addAction(act)
        window.stage_actions[stage] = act
        menu.addAction(act)


def sync_stage(window: MainWindow) -> None:
    window.stage_actions[window.session.stage].setChecked(True)


def core_docks(window: MainWindow, menu: QMenu) -> None:
    """Show/hide entries of the docks built with the window."""
    for spec in window.panel_host.specs():
        if spec.docked and not spec.lazy:
            menu.addAction(window.panel_host.docks[spec.name].toggleViewAction())


def _panel_action(window: MainWindow, spec: PanelSpec) -> QAction:
    keys = (spec.shortcut,) if spec.shortcut else ()
    name = spec.name
    if spec.kind == "centre":  # a toggle: the panel in the centre, or the heatmap back

        def toggle(w: MainWindow, on: bool = False) -> None:
            w.panel_host.show_centre(name if on else None)

        act = make_action(window, spec.menu_text, toggle, keys, checkable=True, tip=spec.tip)
    else:

        def open_it(w: MainWindow, _: bool = False) -> None:
            w.open_panel(name)

        act = make_action(window, spec.menu_text, open_it, keys, tip=spec.tip)
    window.acts.add(spec.name, act)
    return act


def panels(window: MainWindow, menu: QMenu) -> None:
    """The entries (``window.acts.<name>``) of the registry's panels that belong in this menu."""
    for spec in window.panel_host.specs():  # (a panel given an entry already has its action)
        if spec.lazy and spec.menu_text and spec.menu == menu.title() and spec.name not in window.acts:
            menu.addAction(_panel_action(window, spec))


def leftover_panels(window: MainWindow, made: dict[str, QMenu]) -> None:
    """Registered panels whose menu has no panels group: at the end of their menu (made if need be)."""
    for spec in window.panel_host.specs():
        if spec.lazy and spec.menu_text and spec.name not in window.acts:
            menu = made.get(spec.menu)
            if menu is None:
                menu = made[spec.menu] = window.menuBar().addMenu(spec.menu)
            menu.addAction(_panel_action(window, spec))


def themes(window: MainWindow, menu: QMenu) -> None:
    """View → Theme (``window.theme_actions``)."""
    sub = menu.addMenu("&Theme")
    window.theme_group = QActionGroup(window)
    window.theme_actions = {}
    for name in THEMES:
        act = sub.addAction(name.capitalize())
        act.setCheckable(True)
        act.triggered.connect(lambda _=False, n=name: window.apply_theme(n))
        window.theme_group.addAction(act)
        window.theme_actions[name] = act


def colormaps(window: MainWindow, menu: QMenu) -> None:
    """View → Colormap (``window.cmap_actions``)."""
    sub = menu.addMenu("&Colormap (weights)")
    window.cmap_group = QActionGroup(window)
    window.cmap_actions = {}
    for name in SEQUENTIAL:
        act = sub.addAction(name)
        act.setCheckable(True)
        act.triggered.connect(lambda _=False, n=name: window.apply_colormap(n))
        window.cmap_group.addAction(act)
        window.cmap_actions[name] = act
