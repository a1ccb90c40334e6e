"""The action table: each row is an action with its shortcut, in its menu, in row order; a new row is a
new menu entry; no two actions share a shortcut.  And the lecture-key table."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from qkv_studio.ui.window import actions
from qkv_studio.ui.window.actions import Action, Separator
from qkv_studio.ui.window.keys import LECTURE_KEYS
from tests.views import LESSON_VIEW


def _keys(row: Action) -> list[str]:
    return [QKeySequence(k).toString() for k in row.keys]


def test_every_row_is_an_action_in_its_menu_in_row_order(window):
    rows = [r for r in actions.MENU if isinstance(r, Action)]
    # (View → Fit the vector plane, Whole heatmap, Rehearse; Edit → Cut, Copy, Paste; View → Reset layout;
    # View → RoPE pair)
    assert len(rows) == 42
    for row in rows:
        act = window.acts[row.id]
        assert [s.toString() for s in act.shortcuts()] == _keys(row), row.id
        assert act.isCheckable() == row.checkable, row.id
        if row.create is None:  # (undo and redo: enabled, and named, by the undo stack)
            assert act.isEnabled() == row.enabled, row.id
            assert act.text() == row.text and (not row.tip or act.statusTip() == act.toolTip() == row.tip), row.id
    for title in dict.fromkeys(r.menu for r in rows if r.menu):
        menu = window.menu_by_title[title]
        declared = [window.acts[r.id] for r in rows if r.menu == title]
        assert [a for a in menu.actions() if a in declared] == declared, title
    assert [m.title() for m in window.menu_by_title.values()] == ["&File", "&Edit", "&Attention", "&View", "&Help"]
    assert not any(window.acts.leave in m.actions() for m in window.menu_by_title.values())  # Esc only


def test_no_two_actions_share_a_shortcut(window):
    owner: dict[str, str] = {}
    for act in window.findChildren(type(window.acts.new)):
        for key in {s.toString() for s in act.shortcuts()}:
            assert key not in owner, f"{key}: {owner.get(key)} and {act.text()}"
            owner[key] = act.text()
    assert {"Ctrl+E", "F5", "Ctrl+Shift+D", "Ctrl+Z", "Esc"} <= set(owner)


def test_a_new_row_is_a_menu_entry_with_its_shortcut(qtbot, monkeypatch, lesson_scene):
    from qkv_studio.ui.window.main_window import MainWindow

    calls = []
    extra = (Separator("&Attention"),
             Action("probe", "&Probe", lambda w, on: calls.append((w, on)), "&Attention", ("Ctrl+Shift+J",),
                    checkable=True, tip="A row added by a test"))
    monkeypatch.setattr(actions, "MENU", actions.MENU + extra)
    w = MainWindow(lesson_scene, use_settings=False, view=LESSON_VIEW)
    qtbot.addWidget(w)
    assert w.menu_by_title["&Attention"].actions()[-1] is w.acts.probe
    assert w.acts.probe.shortcut().toString() == "Ctrl+Shift+J" and w.acts.probe.statusTip() == "A row added by a test"
    w.acts.probe.trigger()
    assert calls == [(w, True)]


def test_actions_drive_the_session(window):
    s = window.session
    window.acts.next.trigger()
    assert s.stage == "output"
    window.acts.back.trigger()
    window.stage_actions["scores"].trigger()
    assert s.stage == "scores" and window.stage_actions["scores"].isChecked()
    s.set_stage("vectors")
    assert window.stage_actions["vectors"].isChecked()
    window.acts.add_dk.trigger()
    assert s.scene.d_k == 3
    window.acts.remove_dk.trigger()
    window.acts.randomise.trigger()
    assert s.scene.mode == "projection" and window.acts.projection.isChecked()
    window.acts.projection.trigger()
    assert s.scene.mode == "direct" and not window.acts.projection.isChecked()
    window.acts.zoom_in.trigger()
    assert window._zoom == pytest.approx(1.15)
    window.acts.zoom_reset.trigger()
    assert window._zoom == 1.0


def test_the_lecture_key_table(window):
    s = window.session
    table = {int(k) for row in LECTURE_KEYS for k in row.keys}
    assert {int(Qt.Key_Right), int(Qt.Key_PageDown), int(Qt.Key_Space), int(Qt.Key_Home)} <= table
    assert window.handle_lecture_key(Qt.Key_End, "")
    assert s.stage == "output"
    assert not window.handle_lecture_key(Qt.Key_X, "x")  # not a lecture key: it goes on its way
    assert window.handle_lecture_key(Qt.Key_9, "9") and s.query == 2  # (no ninth token: nothing happens)
    assert window.handle_lecture_key(Qt.Key_2, "2") and s.query == 1
    assert s.undo_stack.count() == 0
