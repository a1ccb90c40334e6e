"""Edit → Cut / Copy / Paste on the focused matrix editor's selection (issue 19, item 12), through the
action table with the standard shortcuts and enabled only where they apply; View → Reset layout."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QLineEdit

from tests.views import LESSON_VIEW


def _focus(qtbot, window, name: str):
    table = window.editors[name].table
    window.docks.editors.show()
    window.docks.editors.raise_()
    table.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(table.hasFocus, timeout=2000)
    return table


def _select(table, top: int, left: int, bottom: int, right: int) -> None:
    model = table.model()
    table.setCurrentIndex(model.index(top, left))
    sel = table.selectionModel()
    sel.clearSelection()
    for r in range(top, bottom + 1):
        for c in range(left, right + 1):
            sel.select(model.index(r, c), QItemSelectionModel.SelectionFlag.Select)
    QApplication.processEvents()


def test_the_edit_menu_has_cut_copy_paste_with_the_standard_shortcuts(show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    menu = window.menu_by_title["&Edit"].actions()
    for name, key in (("cut", QKeySequence.StandardKey.Cut), ("copy", QKeySequence.StandardKey.Copy),
                      ("paste", QKeySequence.StandardKey.Paste)):
        act = window.acts[name]
        assert act in menu
        assert act.shortcuts() == [QKeySequence(key)]  # (the platform's own: Ctrl+X, Ctrl+C, Ctrl+V here)
    # nothing worked in yet: nothing to cut or copy, nowhere to paste
    assert not window.acts.cut.isEnabled() and not window.acts.copy.isEnabled() and not window.acts.paste.isEnabled()


def test_copy_and_paste_a_block_between_editors_through_the_menu(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    s = window.session
    q = _focus(qtbot, window, "Q")
    QGuiApplication.clipboard().clear()
    window.menu_by_title["&Edit"].aboutToShow.emit()  # (the menu opening reads the clipboard)
    assert not window.acts.copy.isEnabled() and not window.acts.paste.isEnabled()  # (nothing to paste)
    _select(q, 2, 0, 3, 1)  # the rows of sat and mat
    assert window.acts.copy.isEnabled() and window.acts.cut.isEnabled()
    window.acts.copy.trigger()
    assert QGuiApplication.clipboard().text() == "1.0\t2.0\n0.5\t0.5"
    assert window.acts.paste.isEnabled()
    k = _focus(qtbot, window, "K")
    k.selectionModel().clearSelection()
    k.selectionModel().setCurrentIndex(k.model().index(0, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
    QApplication.processEvents()
    assert not window.acts.copy.isEnabled() and window.acts.paste.isEnabled()  # (nothing selected in K)
    window.acts.paste.trigger()
    assert np.array_equal(s.scene.qkv()[1][:2], [[1.0, 2.0], [0.5, 0.5]])
    s.undo_stack.undo()
    assert np.array_equal(s.scene.qkv()[1][:2], [[1.0, 0.0], [2.0, 1.0]])


def test_cut_copies_and_clears_the_selection_in_one_undo_step(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    s = window.session
    v = _focus(qtbot, window, "V")
    _select(v, 0, 0, 1, 1)
    qtbot.keyClick(v, Qt.Key_X, Qt.ControlModifier)  # (the standard shortcut, the focus in the table)
    assert QGuiApplication.clipboard().text() == "1.0\t0.0\n0.0\t1.0"
    assert np.array_equal(s.scene.qkv()[2][:2], np.zeros((2, 2)))
    assert s.undo_stack.undoText() == "Cut from V"
    s.undo_stack.undo()
    assert np.array_equal(s.scene.qkv()[2][:2], [[1.0, 0.0], [0.0, 1.0]])


@pytest.mark.qt_log_ignore("This plugin does not support raise",  # (the offscreen platform's notes on a popup)
                            "This plugin does not support grabbing the keyboard")
def test_the_menu_opening_keeps_the_editor_the_actions_act_on(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    q = _focus(qtbot, window, "Q")
    _select(q, 0, 0, 0, 1)
    qtbot.keyClick(window, Qt.Key_E, Qt.AltModifier)  # Alt+E opens the Edit menu
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is window.menu_by_title["&Edit"], timeout=2000)
    assert window.acts.copy.isEnabled() and window.edit_clipboard.table() is q
    qtbot.keyClick(QApplication.activePopupWidget(), Qt.Key_Escape)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=2000)
    # the keyboard elsewhere (a text field outside the editors): nothing of an editor to cut or copy
    field = window.tokens_panel.findChild(QLineEdit) or window.stepper.next_button
    field.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    field.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(field.hasFocus, timeout=2000)
    assert window.edit_clipboard.table() is None
    assert not window.acts.copy.isEnabled() and not window.acts.cut.isEnabled() and not window.acts.paste.isEnabled()


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # (a floating dock, offscreen)
def test_reset_layout_brings_back_the_default_docks(qtbot, show_window, lesson_scene):
    screen = QApplication.primaryScreen().availableGeometry()  # (a window that fits its screen, as it opens)
    window = show_window(lesson_scene, (screen.width() - 20, screen.height() - 60), view=LESSON_VIEW)
    window.layout_docks()
    QApplication.processEvents()

    def places():
        return {n: (window.dock(n).isVisible(), window.dock(n).isFloating(), window.dockWidgetArea(window.dock(n)),
                    sorted(d.objectName() for d in window.tabifiedDockWidgets(window.dock(n))))
                for n in ("editors", "plane", "calc", "blend", "explorer")}

    default = places()
    window.docks.calc.setFloating(True)
    window.docks.plane.close()
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.docks.editors)
    window.show_panel("explorer")
    QApplication.processEvents()
    assert places() != default
    assert window.acts.reset_layout in window.menu_by_title["&View"].actions()
    window.acts.reset_layout.trigger()
    QApplication.processEvents()
    assert places() == default
    assert screen.contains(window.frameGeometry())
