"""View → RoPE pair on the vector plane in the window: enabled only for a RoPE model's head (and its
editable copy), in step with the plane's own box, off for the lesson and back with the head."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core import load_preset, rope
from qkv_studio.core.models import ModelRun
from qkv_studio.ui.update_policy import settle as settle_now
from tests.toy_model import ToyGenerating
from tests.views import LESSON_VIEW


class ToyRotary(ToyGenerating):
    """The generating toy with RoPE: its q and k turned by position (base 10 000), 2 pairs a head."""

    name = "toyrope"
    title = "Toy RoPE LM"
    label = "ToyRoPE"
    head_dim = 4
    rope_base = 1e4

    def run(self, text: str, progress=None) -> ModelRun:
        plain = super().run(text, progress=progress)
        q, k = (np.stack([rope.rotate(a[:, :, j], j, self.rope_base) for j in range(plain.n)], axis=2)
                for a in (plain.q, plain.k))
        return ModelRun.from_qkv(self, plain.text, plain.tokens, q, k, plain.v, ids=plain.ids)


@pytest.fixture
def window(show_window, lesson_scene, monkeypatch):
    from qkv_studio.core.models import registry

    monkeypatch.setitem(registry.MODELS, ToyRotary.name, ToyRotary())
    w = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
    w.show_panel(w.docks.plane)
    return w


def settle(w) -> None:
    w.session.flush()
    settle_now(w)


def test_the_view_menu_entry_follows_the_scene_and_the_planes_box(qtbot, window):
    w, act = window, window.acts.rope_pair
    assert act in w.menu_by_title["&View"].actions() and act.shortcut().toString() == "Ctrl+Shift+L"
    assert act.isCheckable() and not act.isEnabled() and "SmolLM2" in act.toolTip() == act.statusTip()
    panel = w.panels.model
    assert panel.set_model("toyrope") and panel.run_text("the cat sat on")
    settle(w)
    assert act.isEnabled() and not act.isChecked() and w.panels.plane.rope.box.isVisible()
    act.trigger()
    settle(w)
    assert act.isChecked() and w.panels.plane.rope.shown() and w.panels.plane.rope.box.isChecked()
    q, k, _ = w.session.scene.qkv()
    view = w.panels.plane.rope.view
    assert tuple(view.q_after) == pytest.approx(tuple(q[w.session.query, [0, 2]]))
    w.panels.plane.rope.box.setChecked(False)  # the plane's box: the menu entry follows, and nothing else is asked
    assert not act.isChecked() and not w.panels.plane.rope.shown()
    act.trigger()
    # Next token: the new row's query (the query on the last token follows it) at its position
    w.session.set_query(w.session.scene.n - 1)
    assert panel.next_token()
    settle(w)
    assert w.panels.plane.rope.shown() and w.panels.plane.rope.view.query == w.session.scene.n - 1 == 4
    assert w.panels.plane.rope.view.q_angle == pytest.approx(4 * 1.0)  # pair 0: θ = 1 rad a token
    # Edit this head: the copy's q and k are still the turned ones
    assert panel.edit_head()
    settle(w)
    assert "(your copy)" in w.session.scene.title and act.isEnabled() and w.panels.plane.rope.shown()
    # the lesson: off, disabled, the reason in the tip; Undo brings the head and the view back
    w.session.replace_scene(load_preset("lesson"), "Open the lesson")
    settle(w)
    assert not act.isEnabled() and not act.isChecked() and not w.panels.plane.rope.shown()
    assert "tokens differ" in act.toolTip() and w.panels.plane._query_item.isVisible()
    w.session.undo_stack.undo()
    settle(w)
    assert act.isEnabled() and act.isChecked() and w.panels.plane.rope.shown()


def test_a_model_without_rope_leaves_it_disabled(qtbot, window, monkeypatch):
    from tests.toy_model import register_toy

    register_toy(monkeypatch)
    panel = window.panels.model
    assert panel.set_model("toy") and panel.run_text("the cat sat")
    settle(window)
    assert not window.acts.rope_pair.isEnabled() and "Toy causal LM has no RoPE" in window.acts.rope_pair.toolTip()
    window.acts.rope_pair.setChecked(True)  # (disabled: a script still cannot switch on what is not there)
    settle(window)
    assert not window.panels.plane.rope.shown() and not window.acts.rope_pair.isChecked()  # (the check taken back)
