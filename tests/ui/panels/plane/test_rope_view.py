"""The vector plane's RoPE view: one rotation pair of q and k, before and after RoPE, on a RoPE model's head."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from qkv_studio.core import load_preset, rope
from qkv_studio.core import rope_pair as R
from qkv_studio.core.models import ModelRun
from qkv_studio.core.scene import Scene
from qkv_studio.state.session import Session
from qkv_studio.ui.update_policy import settle as settle_now
from tests.ui.panels.plane.helpers import show

BASE, D, N = 1e4, 8, 5
TOY = SimpleNamespace(title="Toy RoPE LM", label="ToyRoPE", causal=True, rope_base=BASE)
NO_ROPE = SimpleNamespace(title="all-MiniLM-L6-v2", label="MiniLM", causal=False)


def toy_run(seed: int = 5) -> tuple[ModelRun, np.ndarray, np.ndarray]:
    """A run whose q and k were turned by RoPE (row j at position j); also the unturned q and k."""
    rng = np.random.default_rng(seed)
    raw_q, raw_k, v = rng.normal(size=(3, N, D))
    q = np.stack([rope.rotate(raw_q[j], j, BASE) for j in range(N)])
    k = np.stack([rope.rotate(raw_k[j], j, BASE) for j in range(N)])
    run = ModelRun.from_qkv(TOY, "a b c d e", ("a", "b", "c", "d", "e"), q[None, None], k[None, None], v[None, None])
    return run, raw_q, raw_k


@pytest.fixture
def head():
    run, raw_q, raw_k = toy_run()
    session = Session(run.head_scene(0, 0))
    session.set_query(4)
    return SimpleNamespace(run=run, raw_q=raw_q, raw_k=raw_k, session=session)


def settle(plane) -> None:
    plane.session.flush()
    settle_now(plane)


def tip(item) -> tuple[float, float]:
    """The arrow's head: the second point of its shaft segment."""
    xs, ys = item.getData()
    return float(xs[1]), float(ys[1])


def rope_plane(qtbot, head, *, model=TOY):
    plane = show(qtbot, head.session)
    plane.rope.set_source(lambda: (model, head.run))
    settle(plane)
    return plane


def test_the_pair_is_drawn_before_and_after_where_the_core_maths_puts_it(qtbot, head):
    plane = rope_plane(qtbot, head)
    rope_view = plane.rope
    assert rope_view.available() and not rope_view.shown() and rope_view.box.isVisibleTo(plane)
    assert plane._query_item.isVisible()  # (asked for nothing yet: the ordinary plane)
    rope_view.box.setChecked(True)  # the plane's own box
    rope_view.pair_box.setValue(1)
    settle(plane)
    assert rope_view.shown() and rope_view.pair == 1 and plane.read_only()
    key = plane.best_key()
    assert key is not None and rope_view.view.key == key and rope_view.view.query == 4
    q, k, _ = head.session.scene.qkv()
    v = R.pair_view(q, k, R.Rotary(BASE, np.arange(N, dtype=float)), 4, key, 1)
    dims = [1, 1 + D // 2]
    # after: the model's own components; before: the unturned vectors (the run was made from them)
    assert tip(rope_view.q_after) == pytest.approx(tuple(q[4, dims]))
    assert tip(rope_view.k_after) == pytest.approx(tuple(k[key, dims]))
    assert tip(rope_view.q_before) == pytest.approx(tuple(head.raw_q[4, dims]))
    assert tip(rope_view.k_before) == pytest.approx(tuple(head.raw_k[key, dims]))
    # the arcs: from the before direction, by position × θ
    theta = rope.pair_frequencies(D, BASE)[1]
    xs, ys = rope_view.q_arc.getData()
    start = math.atan2(ys[0], xs[0])
    assert start == pytest.approx(math.atan2(*head.raw_q[4, dims][::-1]))
    arc_end = math.atan2(ys[-5], xs[-5])  # (the arc's last point, before its head's four points)
    assert math.remainder(arc_end - start - 4 * theta, 2 * math.pi) == pytest.approx(0, abs=1e-9)
    assert math.hypot(xs[0], ys[0]) == pytest.approx(0.62 * np.linalg.norm(head.raw_q[4, dims]))
    # the header reads it out, the axes name the pair's dimensions; the ordinary arrows and labels are away
    text = plane.info.text()
    assert R.caption(v).split("; ")[0] in text and f"q at position 4 turned {v.q_angle:.3g} rad" in text
    assert f"relative angle {v.relative:.3g} rad" in text and "the strongest" in text
    assert plane.plot.getAxis("bottom").labelText == "dimension 1"
    assert plane.plot.getAxis("left").labelText == "dimension 5"
    assert not plane._query_item.isVisible() and not plane._keys_item.isVisible() and not plane.label_items()
    assert {"q e", "k " + head.session.scene.tokens[key], "q before", "k before"} <= set(
        part for text in rope_view.labels.texts() for part in text.split(" · "))
    assert not plane.values_box.isVisibleTo(plane) and not plane.pca_box.isVisibleTo(plane)


def test_the_key_is_the_selected_cells_and_else_the_strongest(qtbot, head):
    plane = rope_plane(qtbot, head)
    plane.rope.set_wanted(True)
    settle(plane)
    best = plane.best_key()
    head.session.select_cell(2)
    settle(plane)
    assert plane.rope.view.key == 2 and "selected cell" in plane.info.text()
    q, k, _ = head.session.scene.qkv()
    assert tip(plane.rope.k_after) == pytest.approx(tuple(k[2, [0, D // 2]]))
    assert plane.rope.view.relative == pytest.approx((4 - 2) * rope.pair_frequencies(D, BASE)[0])
    head.session.select_cell(None)
    settle(plane)
    assert plane.rope.view.key == best


def test_another_pair_redraws_and_the_range_follows(qtbot, head):
    plane = rope_plane(qtbot, head)
    plane.rope.set_wanted(True)
    settle(plane)
    q = head.session.scene.q
    for pair in (3, 2, 0):
        plane.rope.pair_box.setValue(pair)
        settle(plane)
        assert plane.rope.view.pair == pair
        assert tip(plane.rope.q_after) == pytest.approx(tuple(q[4, [pair, pair + D // 2]]))
        (x0, x1), (y0, y1) = plane.view_box.viewRange()
        for x, y in plane.rope.view.heads():
            assert x0 <= x <= x1 and y0 <= y <= y1
    plane.rope.set_pair(99)  # (out of range: the last pair)
    assert plane.rope.pair == D // 2 - 1 and plane.rope.pair_box.value() == D // 2 - 1
    assert plane.rope.pair_box.maximum() == D // 2 - 1


def test_without_rope_the_view_is_unavailable_and_says_why(qtbot, session):
    plane = show(qtbot, session)  # the lesson, no model run
    plane.rope.set_wanted(True)
    settle(plane)
    assert not plane.rope.available() and not plane.rope.shown()
    assert "SmolLM2" in plane.rope.why_not() and not plane.rope.box.isVisibleTo(plane)
    assert plane._query_item.isVisible() and "q sat" in plane.label_texts()
    run, _, _ = toy_run()
    plane.rope.set_source(lambda: (NO_ROPE, run))  # a model without RoPE
    assert "all-MiniLM-L6-v2 has no RoPE" in plane.rope.why_not()
    plane.rope.set_source(lambda: (TOY, run))  # a RoPE model's run, but the scene is not its head
    assert "tokens" in plane.rope.why_not() and not plane.rope.shown()


def test_model_to_widget_updates_do_not_echo_back(qtbot, head):
    plane = rope_plane(qtbot, head)
    plane.rope.set_wanted(True)
    plane.rope.set_pair(3)
    settle(plane)
    heard = []
    plane.rope.box.toggled.connect(lambda on: heard.append(("box", on)))
    plane.rope.pair_box.valueChanged.connect(lambda p: heard.append(("pair", p)))
    stack = head.session.undo_stack.count()
    # a head of d = 4 (two pairs): the pair is clamped and shown, the box follows — none of it an edit
    small = toy_run()[0]
    scene = Scene.create(small.tokens, q=small.q[0, 0][:, :4], k=small.k[0, 0][:, :4], v=small.v[0, 0][:, :4])
    run4 = SimpleNamespace(scene_tokens=lambda: small.tokens, head_dim=4)
    plane.rope.set_source(lambda: (TOY, run4))
    head.session.load(scene)
    settle(plane)
    assert plane.rope.shown() and plane.rope.pair == 1 and plane.rope.pair_box.value() == 1
    head.session.load(load_preset("lesson"))  # no RoPE: the box hides and unticks
    settle(plane)
    assert not plane.rope.shown() and not plane.rope.box.isChecked()
    assert heard == [] and head.session.undo_stack.count() == stack and plane.rope.wanted


def test_it_survives_a_scene_change_to_the_lesson_and_back(qtbot, head):
    plane = rope_plane(qtbot, head)
    plane.rope.set_wanted(True)
    settle(plane)
    model_head = head.session.scene
    head.session.load(load_preset("lesson"))
    settle(plane)
    assert not plane.rope.shown() and plane._query_item.isVisible() and plane._keys_item.isVisible()
    assert not plane.rope.q_after.isVisible() and not plane.rope.labels.texts()
    assert any(t.startswith("q ") for t in plane.label_texts()) and "RoPE" not in plane.info.text()
    axes = plane.plot.getAxis("bottom").labelText, plane.plot.getAxis("left").labelText
    assert axes == ("dimension 1", "dimension 2")  # (the pair's would be dimensions 0 and 4)
    head.session.load(model_head)  # the head again (Undo, or another run): the view it was asked for
    settle(plane)
    assert plane.rope.shown() and plane.rope.q_after.isVisible() and not plane._query_item.isVisible()
    assert "RoPE" in plane.info.text()


def test_an_edit_of_the_heads_copy_moves_the_after_vector_and_the_before_follows(qtbot, head):
    plane = rope_plane(qtbot, head)
    plane.rope.set_wanted(True)
    settle(plane)
    head.session.set_value("Q", 4, 0, 2.5)  # q's pair 0, first component, as the model turned it
    head.session.flush()
    qtbot.waitUntil(lambda: tip(plane.rope.q_after)[0] == pytest.approx(2.5), timeout=200)
    v = plane.rope.view
    c, s = math.cos(v.q_angle), math.sin(v.q_angle)  # before = after turned back by 4θ₀
    x, y = v.q_after
    assert tuple(v.q_before) == pytest.approx((c * x + s * y, c * y - s * x))
