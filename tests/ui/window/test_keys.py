"""Keys drive the lecture, and menus work (issue 18, item 4): through the real window, keys sent to the
focused widget as a keyboard would.

An open menu gets its keys; Undo/Redo are each bound once; lecture keys work whichever panel has
focus except inside an open cell editor (where Esc closes the editor first); any key or click takes
the black screen away; presentation puts the keyboard on the stage and Esc gives the window back as it
was; the shortcut list is opaque and lists every shortcut."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QLineEdit

from qkv_studio.core import STAGES
from tests.views import LESSON_VIEW


@pytest.fixture
def window(show_window, lesson_scene, qtbot):
    w = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
    qtbot.waitUntil(w.isActiveWindow, timeout=2000)
    return w


def _focused():
    return QApplication.focusWidget()


def _press(qtbot, key, modifiers=Qt.NoModifier, text=None):
    """A key to whatever has the keyboard focus (as a keyboard sends it)."""
    target = QApplication.activePopupWidget() or _focused() or QApplication.activeWindow()
    if text is None:
        qtbot.keyClick(target, key, modifiers)
    else:
        qtbot.keyClicks(target, text)


def _click_cell(qtbot, view, row: int, col: int) -> None:
    rect = view.visualRect(view.model().index(row, col))
    assert rect.isValid() and not rect.isEmpty()
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=rect.center())
    if view.focusPolicy() != Qt.NoFocus:
        qtbot.waitUntil(lambda: _focused() is view, timeout=1000)


_MENU_NOISE = pytest.mark.qt_log_ignore("This plugin does not support raise",
                                        "This plugin does not support grabbing the keyboard")


# ---- menus ------------------------------------------------------------------------------------------------
@_MENU_NOISE  # (the offscreen platform's notes on a popup)
def test_arrow_keys_move_in_an_open_menu_not_the_query(qtbot, window):
    s = window.session
    query, stage = s.query, s.stage
    qtbot.keyClick(window, Qt.Key_F, Qt.AltModifier)  # Alt+F opens the File menu
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=2000)
    menu = QApplication.activePopupWidget()
    assert menu is window.menu_by_title["&File"]
    seen = []
    for _ in range(3):
        _press(qtbot, Qt.Key_Down)
        seen.append(menu.activeAction())
    assert None not in seen and len(set(seen)) == 3  # the highlight went down the menu
    _press(qtbot, Qt.Key_Up)
    assert menu.activeAction() is seen[1]
    for key in (Qt.Key_Right, Qt.Key_Left, Qt.Key_Home, Qt.Key_End, Qt.Key_PageDown, Qt.Key_Space):
        if QApplication.activePopupWidget() is None:
            break
        _press(qtbot, key)
    assert (s.query, s.stage) == (query, stage)  # nothing reached the lecture
    while QApplication.activePopupWidget() is not None:
        _press(qtbot, Qt.Key_Escape)
    assert (s.query, s.stage) == (query, stage)


@_MENU_NOISE
def test_lecture_keys_are_back_once_the_menu_closes(qtbot, window):
    window.menu_by_title["&View"].popup(window.mapToGlobal(QPoint(40, 40)))
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=2000)
    _press(qtbot, Qt.Key_Down)
    assert window.session.query == 2
    _press(qtbot, Qt.Key_Escape)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=2000)
    qtbot.keyClick(window, Qt.Key_Down)
    assert window.session.query == 3


def test_a_modal_dialog_gets_its_keys(qtbot, window):
    from PySide6.QtWidgets import QDialog, QVBoxLayout

    s = window.session
    dialog = QDialog(window)
    dialog.setModal(True)
    field = QLineEdit("abc")
    QVBoxLayout(dialog).addWidget(field)
    dialog.show()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is dialog, timeout=2000)
    field.setFocus()
    field.setCursorPosition(3)
    qtbot.waitUntil(lambda: _focused() is field, timeout=2000)
    for key in (Qt.Key_Left, Qt.Key_Home, Qt.Key_Down, Qt.Key_PageDown, Qt.Key_B):
        _press(qtbot, key)
    assert (s.stage, s.query) == ("weights", 2) and not window.blank_overlay.isVisible()
    assert field.text() == "babc"  # Home went to the field, "b" was typed there
    dialog.reject()


# ---- undo and redo ----------------------------------------------------------------------------------------
def test_undo_and_redo_are_each_bound_once_and_both_redo_keys_work(qtbot, window):
    s = window.session
    assert [k.toString() for k in window.acts.undo.shortcuts()] == ["Ctrl+Z"]
    assert [k.toString() for k in window.acts.redo.shortcuts()] == ["Ctrl+Shift+Z", "Ctrl+Y"]
    owners: dict[str, list[str]] = {}
    for act in window.findChildren(QAction):
        for key in act.shortcuts():
            owners.setdefault(key.toString(), []).append(act.text())
    assert all(len(names) == 1 for names in owners.values()), {k: v for k, v in owners.items() if len(v) > 1}
    s.set_value("K", 1, 0, 5.0)
    window.stepper.setFocus()
    for redo in ((Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier), (Qt.Key_Y, Qt.ControlModifier)):
        _press(qtbot, Qt.Key_Z, Qt.ControlModifier)
        assert s.scene.k[1, 0] == 2.0
        _press(qtbot, *redo)
        assert s.scene.k[1, 0] == 5.0, redo
    # (an "Ambiguous shortcut overload" warning would fail the test: qt_log_level_fail = WARNING)


def test_redo_works_in_presentation_with_the_menu_bar_hidden(qtbot, window):
    s = window.session
    s.set_value("K", 1, 0, 5.0)
    window.set_presentation(True, fullscreen=False)
    _press(qtbot, Qt.Key_Z, Qt.ControlModifier)
    assert s.scene.k[1, 0] == 2.0
    _press(qtbot, Qt.Key_Y, Qt.ControlModifier)
    assert s.scene.k[1, 0] == 5.0


# ---- a clicked table cell ---------------------------------------------------------------------------------
@pytest.mark.parametrize("panel", ["calc", "editor"])
def test_lecture_keys_drive_the_lecture_after_a_table_cell_is_clicked(qtbot, window, panel):
    s = window.session
    view = window.panels.calc if panel == "calc" else window.editors["Q"].table
    window.editors["K"].table.setFocus()  # (the calculation table takes no focus: the last one keeps it)
    _click_cell(qtbot, view, 1, 1 if panel == "calc" else 0)
    focus = _focused()
    q_before = s.scene.q.copy()
    s.set_stage("scores")
    _press(qtbot, Qt.Key_PageDown)
    assert s.stage == "scaled"
    _press(qtbot, Qt.Key_Right)
    assert s.stage == "weights"
    _press(qtbot, Qt.Key_Left)
    _press(qtbot, Qt.Key_PageUp)
    assert s.stage == "scores"
    _press(qtbot, Qt.Key_End)
    assert s.stage == STAGES[-1]
    _press(qtbot, Qt.Key_Home)
    assert s.stage == STAGES[0]
    _press(qtbot, Qt.Key_Space)
    assert s.stage == STAGES[1]
    _press(qtbot, Qt.Key_4)
    assert s.query == 3
    _press(qtbot, Qt.Key_1)
    assert s.query == 0
    assert view.state() != view.State.EditingState and _focused() is focus  # no editor was opened
    assert window.editors["K"].table.state() != view.State.EditingState
    assert (s.scene.q == q_before).all() and s.undo_stack.count() == 0  # and nothing was edited


def test_up_and_down_still_move_between_an_editor_table_s_rows(qtbot, window):
    table = window.editors["K"].table
    _click_cell(qtbot, table, 0, 0)
    _press(qtbot, Qt.Key_Down)
    assert table.currentIndex().row() == 1 and window.session.query == 2


def test_an_open_cell_editor_gets_its_keys_and_esc_closes_it_first(qtbot, window):
    s = window.session
    window.set_presentation(True, fullscreen=False)
    window.docks.editors.show()  # (a lecturer who brings the editors back to change a number)
    table = window.editors["Q"].table
    qtbot.waitUntil(table.isVisible, timeout=1000)
    table.setCurrentIndex(table.model().index(0, 0))
    table.setFocus()
    _press(qtbot, Qt.Key_F2)  # open the editor
    qtbot.waitUntil(lambda: isinstance(_focused(), QLineEdit), timeout=1000)
    editor = _focused()
    stage, query, value = s.stage, s.query, float(s.scene.q[0, 0])
    editor.selectAll()
    _press(qtbot, None, text="7")
    _press(qtbot, Qt.Key_Home)
    _press(qtbot, None, text="1")
    _press(qtbot, Qt.Key_End)
    _press(qtbot, None, text="5")
    assert editor.text() == "175"  # Home and End moved the editor's cursor, the digits were typed
    for key in (Qt.Key_Left, Qt.Key_Right, Qt.Key_PageDown, Qt.Key_Space, Qt.Key_B, Qt.Key_Period):
        _press(qtbot, key)
    assert (s.stage, s.query) == (stage, query) and not window.blank_overlay.isVisible()
    _press(qtbot, Qt.Key_Escape)  # first: the editor closes (its text thrown away)…
    qtbot.waitUntil(lambda: table.state() != table.State.EditingState, timeout=1000)
    assert window.is_presentation() and s.scene.q[0, 0] == value
    _press(qtbot, Qt.Key_Escape)  # …then presentation ends
    assert not window.is_presentation()


# ---- blanking ---------------------------------------------------------------------------------------------
def test_any_key_or_click_unblanks_and_the_key_does_nothing_else(qtbot, window):
    s = window.session
    window.set_presentation(True, fullscreen=False)
    stage = s.stage
    _press(qtbot, Qt.Key_B)
    assert window.blank_overlay.isVisible()
    _press(qtbot, Qt.Key_PageDown)
    assert not window.blank_overlay.isVisible() and s.stage == stage  # un-blanked, not stepped
    _press(qtbot, Qt.Key_PageDown)
    assert s.stage == STAGES[STAGES.index(stage) + 1]  # the next press steps
    _press(qtbot, Qt.Key_Period)
    _press(qtbot, Qt.Key_Escape)  # Esc un-blanks; it does not leave presentation
    assert not window.blank_overlay.isVisible() and window.is_presentation()
    _press(qtbot, Qt.Key_B)
    s.set_value("K", 1, 0, 5.0)
    _press(qtbot, Qt.Key_Z, Qt.ControlModifier)  # nor undoes behind a black screen
    assert not window.blank_overlay.isVisible() and s.scene.k[1, 0] == 5.0
    _press(qtbot, Qt.Key_B)
    qtbot.mouseClick(window.blank_overlay, Qt.LeftButton, pos=window.blank_overlay.rect().center())
    assert not window.blank_overlay.isVisible()


# ---- presentation: focus and the window it gives back ------------------------------------------------------
def test_entering_and_leaving_presentation_puts_the_keyboard_on_the_stage(qtbot, window):
    s = window.session
    window.editors["Q"].table.setFocus()
    _press(qtbot, Qt.Key_F5)
    assert window.is_presentation()
    qtbot.waitUntil(lambda: _focused() is window.stepper, timeout=1000)
    window.show_panel("heads")
    window.panels.heads.heads_spin.setFocus()  # a spin box (the head count), as a lecturer may have used
    qtbot.waitUntil(lambda: _focused() is window.panels.heads.heads_spin, timeout=1000)
    _press(qtbot, Qt.Key_Escape)
    assert not window.is_presentation()
    qtbot.waitUntil(lambda: _focused() is window.stepper, timeout=1000)
    query = s.query
    _press(qtbot, Qt.Key_Up)  # the arrow moves the query, not a spin box
    assert s.query == query - 1


def test_esc_gives_back_the_maximised_window_and_its_docks(qtbot, window):
    window.showMaximized()
    qtbot.waitUntil(window.isMaximized, timeout=2000)
    qtbot.wait(50)
    docks = [window.docks.editors, window.docks.plane, window.docks.calc, window.docks.blend]
    window.docks.plane.hide()  # a layout of the lecturer's own
    window.resizeDocks([window.docks.calc], [520], Qt.Horizontal)
    qtbot.wait(50)
    before = ([d.isVisible() for d in docks], [d.geometry() for d in docks], window.geometry())
    _press(qtbot, Qt.Key_F5)
    qtbot.waitUntil(window.isFullScreen, timeout=2000)
    _press(qtbot, Qt.Key_Escape)
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=2000)
    qtbot.wait(300)  # (the docks are put back once more after the window has its size)
    assert window.isMaximized()
    after = ([d.isVisible() for d in docks], [d.geometry() for d in docks], window.geometry())
    assert after == before


# ---- the shortcut list --------------------------------------------------------------------------------------
def test_the_shortcut_list_lists_every_shortcut_of_every_action(qtbot, window):
    _press(qtbot, Qt.Key_F1)
    overlay = window.shortcuts_overlay
    assert overlay.isVisible()
    text = overlay.label.text()
    missing = [(a.text(), k.toString(QKeySequence.NativeText)) for a in window.findChildren(QAction)
               for k in a.shortcuts() if k.toString(QKeySequence.NativeText) not in text]
    assert not missing
    for key in ("Ctrl+Shift+P", "Ctrl+Shift+D", "Ctrl+Shift+H", "Ctrl+Shift+M", "Ctrl+Y", "F5", "Esc", "PageDown",
                "1 – 9"):
        assert key in text, key


def test_the_shortcut_list_names_a_new_action_by_itself(qtbot, window):
    from qkv_studio.ui.window.action_factory import make_action

    make_action(window, "Frobnicate", lambda w, _: None, ("Ctrl+Alt+F",))
    window.show_shortcuts()
    assert "Frobnicate" in window.shortcuts_overlay.label.text()
    assert QKeySequence("Ctrl+Alt+F").toString(QKeySequence.NativeText) in window.shortcuts_overlay.label.text()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_shortcut_list_is_opaque(qtbot, window, theme):
    from PySide6.QtGui import QColor

    window.apply_theme(theme)
    window.show_shortcuts()
    overlay = window.shortcuts_overlay

    def picture():
        QApplication.processEvents()
        return window.grab().toImage()

    first = picture()
    window.session.set_stage("scores")  # the window under the list changes…
    window.session.set_query(0)
    window.docks.editors.hide()
    qtbot.wait(50)
    assert picture() == first  # …and nothing of it shows through
    background = QColor(window.appearance.theme.background).rgb()
    assert first.pixelColor(5, first.height() - 5).rgb() == background
    assert first.pixelColor(first.width() - 5, 5).rgb() == background
    _press(qtbot, Qt.Key_X)
    assert not overlay.isVisible()


def test_the_shortcut_list_fits_the_window_even_in_presentation_type(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, (1280, 720), view=LESSON_VIEW)
    window.set_presentation(True, fullscreen=False)
    window.show_shortcuts()
    overlay = window.shortcuts_overlay
    hint = overlay.label.sizeHint()
    assert hint.width() <= overlay.width() and hint.height() <= overlay.height()
    assert overlay.label.font().pointSizeF() >= 7
    assert "Ctrl+Shift+M" in overlay.label.text()
