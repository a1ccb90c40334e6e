"""The window's typed containers: its actions, its docks and its panels, each looked up by name.

``window.acts.undo`` is the QAction of the menu table's row ``"undo"`` (:mod:`.actions`),
``window.docks.calc`` the dock of the registered panel ``"calc"`` and ``window.panels.calc`` the panel
itself, typed as the class its factory makes (:mod:`qkv_studio.ui.registry`).  Nothing is attached to
the window under a computed name: a name unknown to the table or the registry raises AttributeError
naming the known ones.

To add a panel: its :class:`~qkv_studio.ui.registry.PanelSpec` row, and here the annotation of its type
in :class:`Panels` (``tests/ui/window/test_parts.py`` checks that the two agree and that the built panel
is of the declared type).  An action needs nothing here: its row in the menu table is enough.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QWidget

if TYPE_CHECKING:
    from qkv_studio.ui.lesson.heads_view import HeadsView
    from qkv_studio.ui.lesson.model import ModelPanel
    from qkv_studio.ui.lesson.quiz import QuizDialog
    from qkv_studio.ui.lesson.rope_explorer import RopeExplorer
    from qkv_studio.ui.lesson.sqrt_dk_explorer import SqrtDkExplorer
    from qkv_studio.ui.lesson.unprojected_view import UnprojectedView
    from qkv_studio.ui.panels.blend_view import BlendView
    from qkv_studio.ui.panels.calc_table import CalcTable
    from qkv_studio.ui.panels.plane import VectorPlane
    from qkv_studio.ui.widgets.scroll_column import ScrollColumn
    from qkv_studio.ui.window.docks import PanelHost


class WindowActions:
    """The window's actions by their row id in the menu table: ``actions.undo`` (a QAction), also
    ``actions["undo"]``; ``"undo" in actions``; iterating gives the ids in the table's order."""

    def __init__(self) -> None:
        self._by_id: dict[str, QAction] = {}

    def add(self, name: str, action: QAction) -> None:
        """Register ``action`` as ``name`` (the menu table's builder and the panel entries do)."""
        self._by_id[name] = action

    def __getattr__(self, name: str) -> QAction:
        try:
            return self.__dict__["_by_id"][name]
        except KeyError:
            raise AttributeError(f"no action {name!r} (actions: {', '.join(self.__dict__['_by_id'])})") from None

    def __getitem__(self, name: str) -> QAction:
        return self._by_id[name]

    def get(self, name: str) -> QAction | None:
        return self._by_id.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_id

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)


class Docks:
    """The docks of the registered panels by panel name: ``docks.calc`` (a QDockWidget)."""

    def __init__(self, host: PanelHost) -> None:
        self._host = host

    def __getattr__(self, name: str) -> QDockWidget:
        docks = self.__dict__["_host"].docks
        try:
            return docks[name]
        except KeyError:
            raise AttributeError(f"no dock {name!r} (docks: {', '.join(docks)})") from None

    def __getitem__(self, name: str) -> QDockWidget:
        return self._host.docks[name]

    def __contains__(self, name: object) -> bool:
        return name in self._host.docks

    def __iter__(self) -> Iterator[str]:
        return iter(self._host.docks)


class Panels:
    """The registered panels by name, each of the type its factory makes: ``panels.calc`` is the
    :class:`CalcTable`.  A lazy or deferred panel is built the first time it is asked for
    (:meth:`PanelHost.panel`); :meth:`built` says whether it has been, without building it."""

    if TYPE_CHECKING:  # (the declared types: read by mypy and by the registry's test, not at run time)
        editors: ScrollColumn
        plane: VectorPlane
        calc: CalcTable
        blend: BlendView
        explorer: SqrtDkExplorer
        heads: HeadsView
        model: ModelPanel
        rope: RopeExplorer
        unprojected: UnprojectedView
        quiz: QuizDialog

    def __init__(self, host: PanelHost) -> None:
        self._host = host

    def __getattr__(self, name: str) -> QWidget:
        host = self.__dict__["_host"]
        try:
            return host.panel(name)
        except KeyError as exc:
            raise AttributeError(str(exc)) from None

    def __getitem__(self, name: str) -> QWidget:
        return self._host.panel(name)

    def built(self, name: str) -> QWidget | None:
        """The panel ``name`` if it has been built, else None (nothing is built)."""
        return self._host.built(name)

    def __iter__(self) -> Iterator[str]:
        return iter(spec.name for spec in self._host.specs())
