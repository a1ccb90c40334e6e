"""The Real model panel's state, without the panel: model, run, layer and head, and what it tells."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core.models import ModelInputError, ModelUnavailable
from qkv_studio.ui.lesson.model import ModelRunState, edit_text
from tests.toy_model import register_toy


@pytest.fixture
def toy(monkeypatch):
    return register_toy(monkeypatch)


def test_it_starts_on_the_first_model_and_takes_its_sizes(session, toy):
    state = ModelRunState(session)
    assert state.model.name == "minilm" and state.run is None
    assert (state.n_layers, state.n_heads, state.head_dim) == (6, 12, 32)
    assert [m.name for m in state.models] == ["minilm", "smollm2", "toy"]
    state = ModelRunState(session, model="toy")
    assert (state.n_layers, state.n_heads, state.head_dim) == (2, 4, 3)
    with pytest.raises(ModelInputError, match="unknown model"):
        ModelRunState(session, model="gpt2")


def test_listeners_hear_what_changed_and_the_session_shows_the_head(session, toy):
    state = ModelRunState(session)
    heard = []
    state.add_listener(heard.append)
    assert state.select(5, 11) and heard == ["head"]  # before a run: within MiniLM's ranges
    assert state.set_model("toy") and heard == ["head", "model"]
    assert (state.layer, state.head) == (1, 3)  # clamped to the toy's ranges
    assert state.set_model("toy") and heard == ["head", "model"]  # the same model: nothing changes
    assert state.run_text("the cat sat") and heard[-1] == "run"
    assert session.scene.title == "Toy layer 1 head 3" and session.scene.mask == "causal"
    assert state.showing_model_head() and not session.modified and session.undo_stack.count() == 0
    assert state.select(0, 1) and heard[-1] == "head" and session.scene.title == "Toy layer 0 head 1"
    np.testing.assert_array_equal(state.head_scene().k, state.run.k[0, 0])
    with pytest.raises(ModelInputError, match="layer must be 0–1"):
        state.select(2, 0)
    assert (state.layer, state.head) == (0, 1) and heard == ["head", "model", "run", "head"]


def test_edits_are_kept_unless_the_user_confirms(session, toy):
    answers = [False]
    state = ModelRunState(session, confirm=lambda: answers.pop(0), model="toy")
    session.set_value("Q", 0, 0, 3.0)
    assert not state.run_text("a b c") and state.run is None and session.modified
    answers.append(True)
    assert state.run_text("a b c") and session.scene.title == "Toy layer 0 head 0"
    # the edits are one undo step away (the head came in as "Show Toy head"), so the document is modified
    assert session.modified and session.undo_stack.undoText() == "Show Toy head"
    assert state.select(1, 2) and session.undo_stack.count() == 2  # browsing merges into that step
    session.undo_stack.undo()
    assert session.scene.q[0, 0] == 3.0 and session.scene.tokens == ("the", "cat", "sat", "mat")
    assert not state.showing_model_head()
    session.undo_stack.redo()
    assert session.scene.title == "Toy layer 1 head 2" and (state.layer, state.head) == (1, 2)
    assert state.showing_model_head() and state.select(0, 0)
    assert state.edit_copy() and session.undo_stack.undoText() == edit_text(toy) == "Edit Toy head"
    assert session.scene.mask == "causal" and not state.showing_model_head()
    answers.append(False)
    assert not state.select(1, 0) and (state.layer, state.head) == (0, 0)
    assert session.scene.title == "Toy layer 0 head 0 (your copy)"


def test_a_model_that_fails_to_load_is_marked_unavailable(session, toy, monkeypatch):
    def broken(text):
        raise ModelUnavailable("the toy's weights are missing: pip install toy")

    monkeypatch.setattr(toy, "run", broken)
    state = ModelRunState(session, model="toy")
    assert state.available() and state.failure() == ""
    with pytest.raises(ModelUnavailable):
        state.run_text("a b")
    assert not state.available() and "pip install toy" in state.failure()
    assert state.set_model("minilm") and state.failure() == ""
