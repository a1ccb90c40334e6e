"""Lecture keys: → ← Space PageUp/PageDown Home End ↑ ↓ 1–9, P, B / ., ? — wherever the focus is in
the window, unless the user is typing.

:data:`LECTURE_KEYS` is the table (keys → what they do, as the shortcut list writes them);
:class:`KeyRouter` brings the keys to it; :func:`shortcut_rows` is the shortcut list (F1 or ?), made
from this table and the window's action table (:mod:`qkv_studio.ui.window.actions`), so a new key or
action is listed by itself.

Who gets a key (a lecturer drives the lesson from a clicker, whatever panel was clicked last):

- an open menu, popup, combo list or modal dialog, and anything outside the main window: always;
- the black screen or the shortcut list, while shown: any key takes it away and does nothing else;
- an open cell editor (a table cell being typed in): every key, Esc first closing the editor;
- a text field, spin box or slider: its own keys (a clicker's PageUp/PageDown still step, except in a
  text field);
- a table: ↑/↓ move in it; the other lecture keys drive the lecture;
- anywhere else: the lecture keys drive the lecture.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QLineEdit,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from qkv_studio.core import STAGES
from qkv_studio.ui.panels.calc_table import CalcTable

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow

_KEY_PRESS = int(QEvent.Type.KeyPress.value)
_SHORTCUT_OVERRIDE = int(QEvent.Type.ShortcutOverride.value)


def _pick_query(window: MainWindow, key: int) -> None:
    index = int(key) - int(Qt.Key.Key_1)
    if index < window.session.scene.n:
        window.session.set_query(index)


def _step_cell(window: MainWindow, back: bool = False) -> None:
    """K: the next cell (Shift+K: the previous), shown at Q·Kᵀ — a later stage steps back there first."""
    from qkv_studio.core.cellwise import CELL_STAGES

    s = window.session
    if s.stage not in CELL_STAGES:
        s.set_stage(CELL_STAGES[0])
    s.step_cell(-1 if back else +1)


@dataclass(frozen=True)
class LectureKey:
    """Keys that drive the lecture: ``run(window, key)`` does it; ``label`` and ``what`` are the line of
    the shortcut list."""

    keys: tuple[Qt.Key, ...]
    label: str
    what: str
    run: Callable[[MainWindow, int], object]


@runtime_checkable
class _TokenStepper(Protocol):
    """What the lecture keys use of the Real model panel (:mod:`qkv_studio.ui.lesson.model`, not imported
    here: it is built only when opened): asking a language model for its next token."""

    def can_step_token(self) -> bool: ...

    def start_next_token(self) -> bool: ...


def _token_stepper(window: MainWindow) -> _TokenStepper | None:
    """The Real model panel if it has been built, else None."""
    panel = window.built_panel("model")
    return panel if isinstance(panel, _TokenStepper) else None


def _next(window: MainWindow, key: int) -> None:
    """Next stage; the clicker's PageDown at the last stage of a presentation, while a language model's
    head is shown, asks the model for the next token (Real model → Next token)."""
    if key == Qt.Key.Key_PageDown and window.presentation.on and not window.can_step(+1):
        panel = _token_stepper(window)
        if panel is not None and panel.can_step_token():
            panel.start_next_token()
            return
    window.next_step()


def _next_token(window: MainWindow, key: int) -> bool:
    """N: a language model's next token (Real model → Next token) at whatever stage is shown — on the
    heatmap's slides the hall sees the new query's row appear."""
    panel = _token_stepper(window)
    if panel is None or not panel.can_step_token():
        return False
    panel.start_next_token()
    return True


def _back(window: MainWindow, key: int) -> None:
    window.back_step()


def _first_or_last(window: MainWindow, key: int) -> None:
    window.session.set_stage(STAGES[0] if key == Qt.Key.Key_Home else STAGES[-1])


def _move_query(window: MainWindow, key: int) -> None:
    window.session.move_query(-1 if key == Qt.Key.Key_Up else +1)


def _toggle_plane(window: MainWindow, key: int) -> None:
    window.toggle_plane()


def _next_cell(window: MainWindow, key: int) -> None:
    _step_cell(window)


def _blank(window: MainWindow, key: int) -> None:
    window.presentation.blank_overlay().toggle()


def _shortcuts(window: MainWindow, key: int) -> None:
    window.show_shortcuts()


LECTURE_KEYS: tuple[LectureKey, ...] = (
    LectureKey((Qt.Key.Key_Right, Qt.Key.Key_PageDown, Qt.Key.Key_Space), "→  PageDown  Space",
               "next stage (then the next scene of a deck; PageDown at the last: a language model's next "
               "token)", _next),
    LectureKey((Qt.Key.Key_Left, Qt.Key.Key_PageUp), "←  PageUp", "previous stage", _back),
    LectureKey((Qt.Key.Key_Home, Qt.Key.Key_End), "Home / End", "first / last stage",
               _first_or_last),
    LectureKey((Qt.Key.Key_Up, Qt.Key.Key_Down), "↑ / ↓", "previous / next query token",
               _move_query),
    LectureKey(tuple(Qt.Key(int(Qt.Key.Key_1) + i) for i in range(9)), "1 – 9", "pick the query token", _pick_query),
    LectureKey((Qt.Key.Key_P,), "P", "vector plane on / off (presentation)", _toggle_plane),
    LectureKey((Qt.Key.Key_N,), "N", "a language model's next token (Real model → Next token)", _next_token),
    LectureKey((Qt.Key.Key_K,), "K / Shift+K", "next / previous cell of Q·Kᵀ, worked out row · column",
               _next_cell),
    LectureKey((Qt.Key.Key_B, Qt.Key.Key_Period), "B  or  .", "black screen (any key or click brings the picture back)",
               _blank),
    LectureKey((Qt.Key.Key_Question,), "?", "this list (any key closes it)", _shortcuts),
)
"""Every lecture key and what it does (a new row is a new key, in the shortcut list too)."""

#: Lecture keys a table keeps for itself: they move between its rows.
TABLE_KEYS = frozenset((int(Qt.Key.Key_Up), int(Qt.Key.Key_Down)))
_CLICKER = frozenset((int(Qt.Key.Key_PageDown), int(Qt.Key.Key_PageUp)))
_MODIFIER_KEYS = frozenset(int(k) for k in (Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta,
                                            Qt.Key.Key_AltGr, Qt.Key.Key_CapsLock, Qt.Key.Key_NumLock,
                                            Qt.Key.Key_unknown))
_BY_KEY = {int(key): row for row in LECTURE_KEYS for key in row.keys}
_TEXT_FIELDS = (QLineEdit, QTextEdit, QPlainTextEdit)
_OWN_KEYS = (*_TEXT_FIELDS, QAbstractSpinBox, QAbstractSlider, QComboBox)


def handle_lecture_key(window: MainWindow, key: int, text: str = "") -> bool:
    """A lecture key pressed anywhere but in a text field; returns True if it was used.

    While the screen is blank or the shortcut list shows, any key takes it away and does nothing else."""
    if _uncover(window):
        return True
    presenter = getattr(window, "presenter", None)
    if presenter is not None and presenter.handle_key(int(key), text):
        return True  # (L, I, D, E, C, U, T, R, X and the ink's 1–4: presentation mode only)
    row = _BY_KEY.get(int(key))
    if row is None and text == "?":
        row = _BY_KEY[int(Qt.Key.Key_Question)]  # (a layout whose "?" has a key code of its own)
    if row is None:
        return False
    if int(key) == int(Qt.Key.Key_K):  # (Shift+K steps back: the key's text says whether Shift was held)
        _step_cell(window, back=text == "K")
        return True
    row.run(window, int(key))
    return True


def _covered(window: MainWindow) -> bool:
    return any(cover.isVisible() for cover in window.covers())


def _uncover(window: MainWindow) -> bool:
    """Take the black screen or the shortcut list away; True if one was shown."""
    shown = False
    for cover in window.covers():
        if cover.isVisible():
            cover.hide()
            shown = True
    return shown


def cell_editor(widget: QWidget | None) -> bool:
    """True for an open cell editor: a widget inside an item view's viewport (a delegate's editor)."""
    if widget is None or isinstance(widget, QAbstractItemView):
        return False
    parent = widget.parentWidget()
    while parent is not None and not parent.isWindow():
        if isinstance(parent, QAbstractItemView):
            return True
        parent = parent.parentWidget()
    return False


class KeyRouter(QObject):
    """Routes lecture keys to the window (see the module's docstring for who gets a key).

    Installed on the application, so the keys work whichever panel of the window has focus.
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window

    def _ours(self, focus: QWidget | None) -> bool:
        """True when the key goes to the main window itself (not a menu, popup, modal or other window)."""
        if QApplication.activePopupWidget() is not None or QApplication.activeModalWidget() is not None:
            return False
        if focus is None:
            return True  # (the active window is ours, nothing inside it has focus)
        if isinstance(focus, (QMenuBar, QMenu)):
            return False  # the menu bar's keyboard navigation (Alt, then arrows)
        w: QWidget | None = focus
        if self._window.presentation.owns(focus):
            return True  # (the slide: a window of its own while presenting)
        while w is not None:
            if w is self._window:
                return True
            if w.isWindow() and not isinstance(w, QDockWidget):
                return False  # a dialog or a window of its own
            w = w.parentWidget()
        return False

    def _active(self) -> bool:
        """Whether the window is the active one, or the slide it presents (a window of its own)."""
        return self._window.isActiveWindow() or self._window.presentation.slide_active()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        # Every event of the application passes here (hundreds per edit): compare plain ints first.
        kind = int(event.type().value)
        if (kind != _KEY_PRESS and kind != _SHORTCUT_OVERRIDE) or not self._active():
            return False
        key = int(event.key())
        if key in _MODIFIER_KEYS:
            return False
        focus = QApplication.focusWidget()
        if not self._ours(focus):
            return False
        if _covered(self._window):
            return self._uncover(kind, event)
        if cell_editor(focus):
            return self._in_cell_editor(kind, key, event)
        held = event.modifiers()
        if kind == _SHORTCUT_OVERRIDE or held & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                                                 | Qt.KeyboardModifier.MetaModifier):
            return False
        if _keeps_key(focus, key):
            return False
        text = event.text()
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and text.islower():
            text = text.upper()  # (Shift+K's text is "K" from a keyboard; a synthetic event may say "k")
        return self._window.handle_lecture_key(key, text)

    def _uncover(self, kind: int, event) -> bool:
        """Any key takes the cover away and does nothing else: no shortcut (Esc, F5, Ctrl+Z) either."""
        if kind == _SHORTCUT_OVERRIDE:
            event.accept()
        else:
            _uncover(self._window)
        return True

    @staticmethod
    def _in_cell_editor(kind: int, key: int, event) -> bool:
        """An open cell editor gets every key; its Esc (it closes the editor) comes before presentation's."""
        if kind == _SHORTCUT_OVERRIDE and key == int(Qt.Key.Key_Escape):
            event.accept()
            return True
        return False


def _keeps_key(focus: QWidget | None, key: int) -> bool:
    """Whether the focused widget keeps ``key`` for itself: a text field every key, a spin box, slider or
    combo box all but the clicker's PageUp/PageDown, a table (not the calculation's) ↑ and ↓."""
    if isinstance(focus, _OWN_KEYS) and (key not in _CLICKER or isinstance(focus, _TEXT_FIELDS)):
        return True
    return key in TABLE_KEYS and isinstance(focus, QAbstractItemView) and not isinstance(focus, CalcTable)


# ---- the shortcut list (F1 or ?) -------------------------------------------------------------------------
def _name(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def _keys_text(sequences) -> str:
    return " / ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in sequences if not s.isEmpty())


def shortcut_rows(window: MainWindow) -> list[tuple[str, str]]:
    """Every shortcut of the window as (keys, what they do): the lecture keys, then each action that
    has a shortcut, in the action table's order (the registry's panels included)."""
    from qkv_studio.ui.window.actions import MENU, Action
    from qkv_studio.ui.window.presenter import PRESENTER_KEYS

    rows = [(row.label, row.what) for row in LECTURE_KEYS] + list(PRESENTER_KEYS)
    listed = set()
    for row in MENU:
        if isinstance(row, Action):
            act = window.acts.get(row.id)
            if act is not None and act.shortcuts():
                rows.append((_keys_text(act.shortcuts()), _name(row.text)))
                listed.add(act)
    for act in window.actions():  # the actions made elsewhere (the registry's panels)
        if act not in listed and act.shortcuts():
            rows.append((_keys_text(act.shortcuts()), _name(act.text())))
    return rows
