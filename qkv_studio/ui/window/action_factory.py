"""Making one of the window's actions: a window-wide QAction from a text, a slot and its keys.

The menu table (:mod:`.actions`) and the entries made when the window is built (:mod:`.menus`) both make
their actions here.  A slot is either a path from the window (``"files.open_dialog"``: the bound method,
connected as is) or a callable ``slot(window, checked)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow

Key = str | QKeySequence.StandardKey
Slot = str | Callable[["MainWindow", bool], object]


def _resolve(window: MainWindow, path: str) -> Callable:
    target: object = window
    for part in path.split("."):
        target = getattr(target, part)
    return target  # type: ignore[return-value]


def make_action(window: MainWindow, text: str, slot: Slot, keys: tuple[Key, ...] = (), *,
                checkable: bool = False, tip: str = "") -> QAction:
    """A window-wide action (its shortcut works with the menu bar hidden)."""
    act = QAction(text, window)
    if keys:
        act.setShortcuts([QKeySequence(k) for k in keys])
    act.setCheckable(checkable)
    if tip:
        act.setStatusTip(tip)
        act.setToolTip(tip)
    if isinstance(slot, str):
        act.triggered.connect(_resolve(window, slot))
    else:
        act.triggered.connect(lambda checked=False, run=slot: run(window, checked))
    window.addAction(act)
    return act
