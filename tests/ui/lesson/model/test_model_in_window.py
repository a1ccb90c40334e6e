"""The Real model panel inside the window: the question before a head replaces edits (Undo brings them
back), the clicker's PageDown at the last stage asking for the next token, Save As's proposed name."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from qkv_studio.core import STAGES
from qkv_studio.ui.window.keys import handle_lecture_key
from tests.toy_model import register_toy_generating
from tests.views import LESSON_VIEW


@pytest.fixture
def window(show_window, lesson_scene, monkeypatch):
    register_toy_generating(monkeypatch)
    w = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
    assert w.panels.model.set_model("toygen")
    return w


def test_run_over_edits_says_what_it_replaces_and_one_undo_brings_them_back(qtbot, window, monkeypatch):
    asked = []

    def answer(box):
        asked.append((box.windowTitle(), box.text(), box.informativeText()))
        next(b for b in box.buttons() if b.text() == "Replace").click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", answer)
    s, panel = window.session, window.panels.model
    s.set_value("Q", 0, 0, 3.0)
    edited = s.scene
    with qtbot.waitSignal(panel.job_finished, timeout=10_000) as sig:
        qtbot.mouseClick(panel.run_button, Qt.LeftButton)
    assert sig.args == [True] and s.scene.title == "Toy layer 0 head 0"
    (title, text, info), = asked
    assert title == "Replace your edited scene?" and f"“{edited.title}”" in text and "Toy on “" in text
    assert "Undo" in info and "one step" in info
    panel.select(1, 1)
    s.undo_stack.undo()
    assert s.scene.same_as(edited) and s.modified
    # answering Cancel keeps the edits and starts nothing
    monkeypatch.setattr(QMessageBox, "exec", lambda box: 0)
    assert not panel.start_run() and s.scene.same_as(edited) and not panel.busy


def test_pagedown_at_the_last_stage_of_a_presentation_asks_for_the_next_token(qtbot, window):
    s, panel = window.session, window.panels.model
    assert panel.run_text("the cat sat")
    window.set_presentation(True, fullscreen=False)
    s.set_stage(STAGES[-2])
    assert handle_lecture_key(window, Qt.Key_PageDown) and s.stage == STAGES[-1] and s.scene.n == 3
    with qtbot.waitSignal(panel.job_finished, timeout=10_000):
        assert handle_lecture_key(window, Qt.Key_PageDown)
    assert s.scene.n == 4 and panel.state.generated == 1 and s.stage == STAGES[-1]
    assert handle_lecture_key(window, Qt.Key_Right) and s.scene.n == 4  # → is a stage key only
    window.set_presentation(False)
    assert handle_lecture_key(window, Qt.Key_PageDown) and s.scene.n == 4 and not panel.busy


def test_save_as_proposes_a_name_from_the_scenes_title(qtbot, window, monkeypatch, tmp_path):
    offered = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda parent, caption, start, *a, **k: (offered.append(start), ("", ""))[1]))
    assert window.panels.model.run_text("the cat sat")
    window.panels.model.select(1, 3)
    assert not window.save_as()
    assert offered[-1].endswith("toy-layer-1-head-3.qkv.json")


def test_n_writes_the_next_token_at_any_stage_and_the_heatmap_gains_its_row(qtbot, window):
    s, panel = window.session, window.panels.model
    lesson = s.scene
    handle_lecture_key(window, Qt.Key_N)  # (no run yet: nothing to write, nothing started)
    assert s.scene is lesson and not panel.busy
    assert panel.run_text("the cat sat")
    window.set_presentation(True, fullscreen=False)
    s.set_stage("weights")
    with qtbot.waitSignal(panel.job_finished, timeout=10_000):
        assert handle_lecture_key(window, Qt.Key_N)
    assert s.scene.n == 4 and panel.state.generated == 1 and s.stage == "weights"
    assert window.heatmap.displayed_matrix().shape == (4, 4)
    assert window.presentation.slide.views.get("heatmap").displayed_matrix().shape == (4, 4)  # (the hall's)
    window.show_shortcuts()  # (on the slide while presenting)
    assert "next token" in window.presentation.slide.shortcuts_overlay().label.text()
