"""Lecture keys: → ← Space PageUp/PageDown ↑ ↓ Home End 1–9, P, B / ., ? — wherever the focus is,
unless the user is typing.

:data:`LECTURE_KEYS` is the table (key → what it does); :class:`KeyRouter` brings the keys to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QAbstractSlider, QAbstractSpinBox, QApplication, QLineEdit, QTextEdit,
)

from qkv_studio.core import STAGES
from qkv_studio.ui.panels.calc_table import CalcTable

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow

_KEY_PRESS = int(QEvent.Type.KeyPress.value)

LECTURE_KEYS: tuple[tuple[tuple[Qt.Key, ...], Callable[["MainWindow"], object]], ...] = (
    ((Qt.Key_Right, Qt.Key_PageDown, Qt.Key_Space), lambda w: w.next_step()),
    ((Qt.Key_Left, Qt.Key_PageUp), lambda w: w.back_step()),
    ((Qt.Key_P,), lambda w: w.toggle_plane()),
    ((Qt.Key_Home,), lambda w: w.session.set_stage(STAGES[0])),
    ((Qt.Key_End,), lambda w: w.session.set_stage(STAGES[-1])),
    ((Qt.Key_Up,), lambda w: w.session.move_query(-1)),
    ((Qt.Key_Down,), lambda w: w.session.move_query(+1)),
)
"""Keys and what they do (B / . blank the screen, ? shows the shortcuts, 1–9 pick a query: see
:func:`handle_lecture_key`)."""

_BY_KEY = {int(key): act for keys, act in LECTURE_KEYS for key in keys}
_BLANK = (int(Qt.Key_B), int(Qt.Key_Period))


def handle_lecture_key(window: "MainWindow", key: int, text: str) -> bool:
    """A lecture key pressed anywhere but in a text field; returns True if it was used."""
    if window.shortcuts_overlay.isVisible():
        window.shortcuts_overlay.hide()
        return True
    if int(key) in _BLANK:
        window.blank_overlay.toggle()
        return True
    if window.blank_overlay.isVisible():
        return True  # a black screen ignores everything but B / . (and Esc through its action)
    act = _BY_KEY.get(int(key))
    if act is not None:
        act(window)
    elif text == "?":
        window.show_shortcuts()
    elif text and len(text) == 1 and text in "123456789":
        index = int(text) - 1
        if index < window.session.scene.n:
            window.session.set_query(index)
    else:
        return False
    return True


class KeyRouter(QObject):
    """Routes lecture keys to the window unless typing.

    Installed on the application so the keys work whichever panel has focus, except in a text field
    or a table, where arrows keep their usual meaning (PageUp/PageDown from a clicker always step).
    """

    def __init__(self, window: "MainWindow") -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        # Every event of the application passes here (hundreds per edit): compare plain ints first.
        if int(event.type().value) != _KEY_PRESS or not self._window.isActiveWindow():
            return False
        if event.modifiers() & (Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier):
            return False
        focus = QApplication.focusWidget()
        typing = isinstance(focus, (QLineEdit, QAbstractSpinBox, QTextEdit, QAbstractSlider)) or (
            isinstance(focus, QAbstractItemView) and not isinstance(focus, CalcTable))
        key = event.key()
        if typing and key not in (Qt.Key_PageDown, Qt.Key_PageUp):
            return False
        if typing and isinstance(focus, QLineEdit):
            return False
        return self._window.handle_lecture_key(key, event.text())
