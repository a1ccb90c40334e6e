"""The heads view, driven with qtbot: small multiples, clicking a head, the heads spin box, W^O."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from qkv_studio.core import load_preset
from qkv_studio.core.multihead import multihead
from qkv_studio.render.colormaps import lut
from qkv_studio.render.theme import THEMES
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.lesson.heads_view import HeadsView


@pytest.fixture
def scene():
    return load_preset("multihead")


@pytest.fixture
def view(qtbot, scene):
    v = HeadsView(scene)
    qtbot.addWidget(v)
    v.resize(1000, 700)
    v.show()
    qtbot.waitExposed(v)
    return v


def click_head(qtbot, view, i):
    qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     view.head_center(i))


def test_two_heads_as_small_multiples_on_a_fixed_scale(view, scene):
    r = view.result()
    assert view.heads() == 2 and r.h == 2 and len(view.small_images) == 2
    want = multihead(scene.x, scene.wq, scene.wk, scene.wv, 2)
    for i, img in enumerate(view.small_images):
        np.testing.assert_array_equal(img.image, want.heads[i].weights)
        assert tuple(img.levels) == (0.0, 1.0)
        np.testing.assert_array_equal(img.lut, lut("viridis"))
    np.testing.assert_array_equal(view.big_image.image, want.heads[0].weights)
    assert "2 heads" in view.title.text() and "8×8 split into 2 × 4" in view.title.text()
    assert not view.message.isVisible()


def test_clicking_a_head_selects_it_and_emits(qtbot, view):
    with qtbot.waitSignal(view.head_selected, timeout=1000) as sig:
        click_head(qtbot, view, 1)
    assert sig.args == [1] and view.selected() == 1
    r = view.result()
    np.testing.assert_array_equal(view.big_image.image, r.heads[1].weights)
    q1, k1, v1 = r.head_qkv(1)
    np.testing.assert_array_equal(view.detail_images[0].image, q1)
    np.testing.assert_array_equal(view.detail_images[2].image, v1)
    np.testing.assert_array_equal(view.detail_images[3].image, r.concat)
    assert "head 1" in view.big_title.text()  # counted from 0, as --head N and the model panel count
    with qtbot.assertNotEmitted(view.head_selected):  # clicking the selected head again changes nothing
        click_head(qtbot, view, 1)


def test_the_spin_box_steps_through_counts_that_split_the_width(qtbot, view):
    spin = view.heads_spin
    assert spin.allowed == [1, 2, 4, 8]
    with qtbot.waitSignal(view.heads_changed, timeout=1000) as sig:
        spin.stepUp()  # 2 → 4, skipping 3
    assert sig.args == [4] and len(view.small_images) == 4 and view.result().d_head_k == 2
    spin.stepUp()
    assert view.heads() == 8
    spin.stepUp()  # 16 does not divide 8: stays
    assert view.heads() == 8
    spin.stepDown()
    spin.stepDown()
    spin.stepDown()
    assert view.heads() == 1 and len(view.small_images) == 1
    np.testing.assert_array_equal(view.result().heads[0].weights, load_preset("multihead").result().weights)


def test_keyboard_on_the_spin_box(qtbot, view):
    view.heads_spin.setFocus()
    qtbot.keyClick(view.heads_spin, Qt.Key_Up)
    assert view.heads() == 4


def test_a_typed_count_that_does_not_divide_is_explained(qtbot, view):
    view.set_heads(3)
    assert view.message.isVisible()
    assert "3 heads cannot split d_k = 8" in view.message.text() and "1, 2, 4, 8" in view.message.text()
    assert view.result().h == 2  # the last good split stays on screen
    view.set_heads(4)
    assert not view.message.isVisible() and view.result().h == 4


def test_selection_survives_fewer_heads(view):
    view.set_heads(8)
    view.select_head(7)
    view.set_heads(2)
    assert view.selected() == 1


def test_output_projection(view, scene):
    wo = np.random.default_rng(4).normal(size=(8, 3))
    view.set_scene(scene, heads=4, wo=wo)
    r = view.result()
    np.testing.assert_allclose(r.output, r.concat @ wo)
    assert len(view.detail_images) == 5
    np.testing.assert_array_equal(view.detail_images[4].image, r.output)
    assert "W<sup>O</sup>" in view.title.text()


def test_weights_are_written_in_the_large_cells(view):
    texts = view.cell_texts()
    assert len(texts) == 36
    w = view.result().heads[0].weights
    assert texts[4] == f"{w[0, 4]:.2f}"


def test_a_direct_mode_scene_and_a_new_width(qtbot, view):
    lesson = load_preset("lesson")  # d_k = 2, Q/K/V given directly
    view.set_scene(lesson, heads=2)
    assert view.result().h == 2 and view.heads_spin.allowed == [1, 2]
    view.set_scene(load_preset("long"), heads=16)  # d_k = 8: the nearest count that splits it
    assert view.heads() == 8 and len(view.small_images) == 8
    assert view.cell_texts() == []  # 64 tokens: no numbers in the cells


def test_without_a_scene(qtbot):
    v = HeadsView()
    qtbot.addWidget(v)
    assert v.result() is None and "No scene" in v.message.text()
    v.set_heads(4)  # harmless
    v.select_head(1)


def test_theme_font_scale_colormap(view):
    look = Appearance()
    view.bind_appearance(look)
    for theme in THEMES.values():
        look.set_theme(theme)
        assert view._theme is theme
    look.set_font_scale(2.0)
    assert view._font_scale == 2.0
    look.set_colormap("magma")
    np.testing.assert_array_equal(view.small_images[0].lut, lut("magma"))
    with pytest.raises(ValueError):
        look.set_colormap("nope")
    with pytest.raises(ValueError):
        look.set_font_scale(20)
    np.testing.assert_array_equal(view.small_images[0].lut, lut("magma"))  # (refused: nothing changed)


def test_edits_redraw_without_rebuilding_and_hidden_views_wait(qtbot, view, scene):
    boxes = list(view.small_boxes)
    edited = scene.with_value("X", 0, 0, 3.0)
    view.set_scene(edited)
    assert view.small_boxes == boxes  # same plots, new numbers
    want = multihead(edited.x, edited.wq, edited.wk, edited.wv, 2)
    np.testing.assert_array_equal(view.small_images[0].image, want.heads[0].weights)
    view.hide()
    view.set_scene(scene)
    assert view._stale
    assert view.result().heads[0].weights.tolist() == multihead(scene.x, scene.wq, scene.wk, scene.wv, 2) \
        .heads[0].weights.tolist()


def test_set_query_moves_the_outline(view):
    view.set_query(4)
    rect = view.large.query_box.rect()
    assert rect.top() == 3.5 and view.large.query_box.isVisible()


def test_the_layout_follows_the_dock_shape(qtbot, view):
    from PySide6.QtWidgets import QBoxLayout

    view.resize(420, 900)  # tall and narrow: heads under the large one
    qtbot.waitUntil(lambda: view._middle.direction() == QBoxLayout.Direction.TopToBottom, timeout=1000)
    assert view.detail.isVisible()
    view.resize(1200, 300)  # short: the Q/K/V strip gives way to the weights
    qtbot.waitUntil(lambda: not view.detail.isVisible(), timeout=1000)
    assert view._middle.direction() == QBoxLayout.Direction.LeftToRight


# ---- the scene's own heads and W^O; head counts as undoable scene edits ---------------------------------
def test_the_view_follows_the_scenes_heads_and_wo(qtbot, view, scene):
    assert scene.heads == 2 and view.heads() == view.heads_spin.value() == 2
    np.testing.assert_allclose(view.result().output, view.result().concat @ scene.wo)  # the preset's W^O
    assert len(view.detail_images) == 5
    view.set_scene(scene.with_heads(4))
    assert view.heads() == view.heads_spin.value() == 4 and len(view.small_images) == 4
    view.set_scene(scene.with_heads(8).with_wo(None))
    assert view.heads() == 8 and view.result().wo is None and len(view.detail_images) == 4
    assert "Q₀" in view.detail.plots[0].titleLabel.text  # heads are counted from 0


def test_a_short_view_has_one_line_titles(qtbot, view):
    view.resize(1000, 400)
    qtbot.waitUntil(lambda: "rows sum to 1" not in view.big_title.text(), timeout=1000)
    assert "2 heads" in view.title.text() and "d<sub>model</sub>" not in view.title.text()
    view.resize(1000, 800)
    qtbot.waitUntil(lambda: "rows sum to 1" in view.big_title.text(), timeout=1000)
    assert "d<sub>model</sub> = 8" in view.title.text()


@pytest.fixture
def window(qtbot, show_window, scene):
    w = show_window(scene)
    w.show_panel(w.docks.heads)
    qtbot.waitUntil(lambda: w.panels.heads.isVisible(), timeout=2000)
    return w


def test_in_the_window_the_spin_box_edits_the_scene_with_undo(qtbot, window):
    s, heads = window.session, window.panels.heads
    assert heads.heads_spin.value() == s.scene.heads == 2
    heads.heads_spin.setFocus()
    qtbot.keyClick(heads.heads_spin, Qt.Key_Up)  # 2 → 4
    assert s.scene.heads == 4 and heads.heads() == 4 and s.modified
    assert s.undo_stack.undoText() == "Heads: 4"
    assert len(heads.small_images) == 4
    s.undo_stack.undo()
    assert s.scene.heads == 2 and heads.heads() == heads.heads_spin.value() == 2 and len(heads.small_images) == 2
    s.undo_stack.redo()
    assert heads.heads_spin.value() == 4
    heads.set_heads(3)  # does not split d_k = 8: explained in the view, the scene keeps its 4
    assert heads.message.isVisible() and s.scene.heads == 4 and s.undo_stack.index() == 1


def test_in_the_window_a_new_scene_brings_its_heads(qtbot, window, tmp_path):
    from qkv_studio.core import View, write_session

    path = tmp_path / "four.qkv.json"
    write_session(path, load_preset("multihead").with_heads(4).with_wo(None), View(query=2))
    assert window.open_path(str(path), ask=False)
    heads = window.panels.heads
    assert heads.heads() == heads.heads_spin.value() == 4 and heads.result().wo is None
    window.session.remove_dim("qk")  # d_k = 7: the scene falls back to one head, the view with it
    assert window.session.scene.heads == 1 and heads.heads() == 1


def test_in_the_window_a_direct_scene_with_heads_is_split_too(qtbot, window):
    from qkv_studio.core.scene import projection_of

    direct = load_preset("multihead").to_direct()  # Q, K, V given, "heads": 2 kept
    assert direct.mode == "direct" and direct.heads == 2
    window.session.load(direct.with_heads(4), "")
    heads = window.panels.heads
    assert heads.heads() == 4 and heads.result().h == 4
    np.testing.assert_allclose(heads.result().output, projection_of(direct).with_heads(4).multihead().output,
                               atol=1e-12)


def test_in_the_window_the_selected_head_is_the_sessions_view(qtbot, window):
    """Like the query, the selected head lives in the Session's View: the panel shows it and sets it."""
    s, heads = window.session, window.panels.heads
    scene = s.scene
    assert s.head == heads.selected() == 0
    with qtbot.waitSignal(s.head_changed, timeout=1000) as sig:
        heads.select_head(1)
    assert sig.args == [1] and s.head == 1 and s.view.head == 1
    assert s.scene is scene and s.undo_stack.count() == 0  # navigation: no new Scene, no undo step
    s.set_head(0)
    assert heads.selected() == 0
    s.set_head(1)
    assert heads.selected() == 1
    heads.heads_spin.setValue(1)  # one head: head 1 is gone, the Session follows what is shown
    qtbot.waitUntil(lambda: heads.heads() == 1, timeout=2000)
    assert heads.selected() == 0 and s.head == 0
    s.load(load_preset("multihead"))  # another scene: the default view, head 0
    assert s.head == 0


@pytest.mark.parametrize("size", [(900, 700), (1000, 400), (500, 900)])
def test_the_large_head_shows_every_cell_whole(qtbot, scene, size):
    """In large type, wide or tall: the large heatmap's view holds every row and every column (its first and
    last columns' numbers were cut when one axis's range was set after the other with the aspect locked)."""
    appearance = Appearance()
    appearance.set_font_scale(2.0)
    v = HeadsView(scene, appearance=appearance)
    qtbot.addWidget(v)
    v.resize(*size)
    v.show()
    qtbot.waitExposed(v)
    for head in (1, 0, 1):  # (each drawn in a laid-out view: the one-axis ranges cut it then)
        v.select_head(head)
        qtbot.wait(10)
    (x0, x1), (y0, y1) = v.big_plot.vb.viewRange()
    n = scene.n
    assert x0 <= -0.5 + 1e-9 and x1 >= n - 0.5 - 1e-9 and y0 <= -0.5 + 1e-9 and y1 >= n - 0.5 - 1e-9
