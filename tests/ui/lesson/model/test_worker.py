"""The Real model panel's worker thread: progress, cancel, errors, sampling, undo of a generated token —
with a slow fake model (no weights needed)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer

from qkv_studio.state.session import Session
from qkv_studio.ui.lesson.model import ModelPanel
from tests.toy_model import register_toy_generating
from tests.views import LESSON_VIEW


@pytest.fixture
def session(qtbot, lesson_scene):
    return Session(lesson_scene, view=LESSON_VIEW)


def shown(qtbot, w, size=(600, 900)):
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    return w


def finished(qtbot, panel, timeout=10_000):
    with qtbot.waitSignal(panel.job_finished, timeout=timeout) as sig:
        pass
    return sig.args[0]


def test_the_event_loop_keeps_turning_and_progress_shows_while_a_slow_model_runs(qtbot, session, monkeypatch):
    register_toy_generating(monkeypatch, delay=0.05, blocks=12)  # ≈ 0.6 s per run
    panel = shown(qtbot, ModelPanel(session, model="toygen"))
    ticks, seen = [], []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)
    panel.worker.progress.connect(lambda f, what: seen.append((f, what, panel.progress_bar.isVisible())))
    with qtbot.waitSignal(panel.job_finished, timeout=10_000) as sig:
        qtbot.mouseClick(panel.run_button, Qt.LeftButton)
        assert panel.busy and panel.busy_row.isVisible() and panel.cancel_button.isEnabled()
        assert not panel.run_button.isEnabled() and not panel.sentence.isEnabled()
    timer.stop()
    assert sig.args == [True] and not panel.busy and not panel.busy_row.isVisible()
    assert len(ticks) >= 15  # the GUI thread turned all along (≈ 60 ticks of 10 ms if idle)
    assert [w for _, w, _ in seen][:2] == ["block 1 of 12", "block 2 of 12"] and all(v for *_, v in seen)
    assert session.scene.title == "Toy layer 0 head 0" and panel.run.n == len(session.scene.tokens)
    assert panel.run_button.isEnabled() and panel.next_button.isEnabled()


def test_cancel_leaves_the_previous_scene_intact(qtbot, session, monkeypatch):
    toy = register_toy_generating(monkeypatch, delay=0.05, blocks=40)
    panel = shown(qtbot, ModelPanel(session, model="toygen"))
    before = session.scene
    assert panel.start_run("the cat sat")
    qtbot.waitUntil(lambda: panel.progress_bar.value() > 0, timeout=5000)
    qtbot.mouseClick(panel.cancel_button, Qt.LeftButton)
    assert finished(qtbot, panel) is False
    assert session.scene is before and panel.run is None and "Cancelled" in panel.status.text()
    assert not panel.busy and panel.run_button.isEnabled()
    # a run shown, then a cancelled next token: the run and the scene stay as they were
    toy.delay = 0.0
    assert panel.start_run() and finished(qtbot, panel) is True
    shown_scene, run = session.scene, panel.run
    toy.delay = 0.05
    assert panel.start_next_token()
    panel.cancel()
    assert finished(qtbot, panel) is False
    assert session.scene is shown_scene and panel.run is run and panel.state.generated == 0


@pytest.mark.parametrize("error, words", [(RuntimeError("boom\nTraceback (most recent call last)"), "boom"),
                                          (MemoryError(), "not enough memory")])
def test_an_error_in_the_worker_becomes_one_clear_line(qtbot, session, monkeypatch, error, words):
    toy = register_toy_generating(monkeypatch)
    toy.fail = error
    panel = shown(qtbot, ModelPanel(session, model="toygen"))
    before = session.scene
    assert panel.start_run("a b c") and finished(qtbot, panel) is False
    text = panel.status.text()
    assert words in text and "Traceback" not in text and "\n" not in text
    assert session.scene is before and not panel.busy and panel.run_button.isEnabled()


def test_a_generated_token_is_one_undo_step_and_redo_puts_it_back(qtbot, session, monkeypatch):
    register_toy_generating(monkeypatch)
    panel = shown(qtbot, ModelPanel(session, model="toygen"))
    assert panel.run_text("the cat sat")
    prompt = session.scene
    assert panel.start_next_token() and finished(qtbot, panel) is True
    assert session.scene.n == 4 and panel.state.generated == 1
    assert session.undo_stack.undoText().startswith("Next token")
    assert panel.next_token() and session.scene.n == 5
    longer = session.scene
    session.undo_stack.undo()
    session.undo_stack.undo()
    assert session.scene.same_as(prompt) and panel.run.n == 3 and panel.state.generated == 0
    assert panel.showing_model_head() and panel.next_bars.isVisible()
    session.undo_stack.redo()
    session.undo_stack.redo()
    assert session.scene.same_as(longer) and panel.run.n == 5 and panel.state.generated == 2


def test_temperature_and_top_k_sample_reproducibly_and_greedy_at_zero(qtbot, session, monkeypatch):
    register_toy_generating(monkeypatch)
    panel = shown(qtbot, ModelPanel(session, model="toygen"))
    assert panel.temperature_box.isVisible() and panel.temperature_box.text() == "greedy"
    assert panel.run_text("the cat sat")
    greedy = panel.next_bars.choices()
    assert panel.next_token() and panel.run.tokens[-1] == greedy[0][0]  # greedy takes the top bar
    session.undo_stack.undo()
    panel.temperature_box.setValue(2.0)
    panel.top_k_box.setValue(3)
    assert (panel.state.temperature, panel.state.top_k) == (2.0, 3)
    bars = panel.next_bars.choices()
    assert len(bars) == 3 and abs(sum(p for _, p in bars) - 1) < 1e-9  # only 3 tokens can be drawn
    assert bars[0][1] < greedy[0][1] or greedy[0][1] < 1e-3  # a higher temperature flattens the top
    tokens = []
    for _ in range(4):
        assert panel.next_token()
        tokens.append(panel.run.tokens[-1])
    assert all(t in {p for p, _ in bars} for t in tokens[:1])
    for _ in range(4):
        session.undo_stack.undo()
    again = []
    for _ in range(4):
        assert panel.next_token()
        again.append(panel.run.tokens[-1])
    assert again == tokens  # the same seed and settings, the same tokens
    assert not panel.set_sampling(-1.0, 0) and "temperature" in panel.status.text()


def test_run_over_edits_asks_what_is_replaced_and_undo_brings_them_back(qtbot, session, monkeypatch):
    register_toy_generating(monkeypatch)
    panel = shown(qtbot, ModelPanel(session, model="toygen"))
    asked = []
    panel.state.confirm = lambda: asked.append(panel.state.replacing) or True
    session.set_value("Q", 0, 0, 3.0)
    edited = session.scene
    assert panel.start_run("the cat sat") and finished(qtbot, panel) is True
    assert asked == ["Toy on “the cat sat”"] and session.scene.title == "Toy layer 0 head 0"
    assert panel.select(1, 2) and session.undo_stack.undoText() == "Show Toy head"
    session.undo_stack.undo()
    assert session.scene.same_as(edited)


def test_a_panel_closed_while_its_model_runs_goes_quietly(qtbot, session, monkeypatch):
    register_toy_generating(monkeypatch, delay=0.02, blocks=30)
    panel = ModelPanel(session, model="toygen")
    panel.show()
    assert panel.start_run("a b c")
    qtbot.waitUntil(lambda: panel.progress_bar.value() > 0, timeout=5000)
    panel.deleteLater()
    qtbot.wait(800)  # the job ends with nobody to tell: no crash, no error
    assert session.scene.title != "Toy layer 0 head 0"


def test_undo_across_a_change_of_model_brings_back_the_model_too(qtbot, session, monkeypatch):
    from tests.toy_model import register_toy

    register_toy(monkeypatch)
    register_toy_generating(monkeypatch)
    panel = shown(qtbot, ModelPanel(session, model="toygen", confirm=lambda: True))
    session.set_value("Q", 0, 0, 3.0)
    edited = session.scene
    assert panel.run_text("the cat sat") and panel.next_token()
    assert panel.set_model("toy") and panel.run is None
    session.undo_stack.undo()  # the token: back on the generating toy, its 3-token run
    assert panel.model.name == "toygen" and panel.run.n == 3 and panel.model_box.currentData() == "toygen"
    session.undo_stack.undo()  # the run over the edits
    assert session.scene.same_as(edited) and panel.run is None and not panel.edit_button.isEnabled()
    session.undo_stack.redo()
    assert panel.run.n == 3 and panel.showing_model_head() and panel.edit_button.isEnabled()


def test_ctrl_enter_in_the_panel_asks_for_the_next_token(qtbot, session, monkeypatch):
    register_toy_generating(monkeypatch)
    panel = shown(qtbot, ModelPanel(session, model="toygen"))
    panel.activateWindow()
    assert panel.run_text("the cat sat")
    panel.sentence.setFocus()
    qtbot.waitUntil(panel.sentence.hasFocus, timeout=2000)
    with qtbot.waitSignal(panel.job_finished, timeout=10_000):
        qtbot.keyClick(panel.sentence, Qt.Key_Return, Qt.ControlModifier)
    assert session.scene.n == 4 and "Ctrl+Enter" in panel.next_button.toolTip()
