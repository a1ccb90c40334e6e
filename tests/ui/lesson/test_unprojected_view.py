"""Attention → Without projections: the Q = K = V = X scene beside the learned one, in the window's centre."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from qkv_studio.core import View, load_preset
from qkv_studio.core.unprojected import without_projections
from qkv_studio.ui.widgets.frame_throttle import flush_pending


def _weights_of(panel):
    return panel.canvas.scene.result().weights


def test_the_menu_entry_puts_the_pair_in_the_centre_and_back(qtbot, show_window):
    w = show_window(load_preset("projection"), (1280, 720), view=View(2, "weights"))
    act = w.acts.unprojected
    assert act.isCheckable() and not act.isChecked()
    assert act.shortcut().toString() == "Ctrl+Shift+W"
    attention = next(m for m in w.menuBar().actions() if m.text() == "&Attention")
    assert act in attention.menu().actions()
    act.trigger()
    panel = w.panel("unprojected")
    assert w.centre_stack.currentWidget() is panel and panel.isVisible() and not w.heatmap.isVisible()
    x = w.session.scene.x
    s = x @ x.T / np.sqrt(x.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(_weights_of(panel), e / e.sum(axis=1, keepdims=True))
    assert panel.canvas.options.compare_with is w.session.scene
    text = panel.caption.text()
    assert "“sat” puts 0.37 on itself" in text and "with them 0.25" in text
    # it draws: both figures' pixels differ from a blank canvas
    image = panel.canvas.grab().toImage()
    assert len({image.pixel(x, image.height() // 2) for x in range(0, image.width(), 7)}) > 5
    act.trigger()  # off: the heatmap again
    assert w.centre_stack.currentWidget() is w.heatmap and w.heatmap.isVisible() and not act.isChecked()


def test_the_pair_follows_stage_query_and_edits(qtbot, show_window):
    w = show_window(load_preset("projection"), (1280, 720), view=View(2, "weights"))
    w.acts.unprojected.trigger()
    panel = w.panel("unprojected")
    s = w.session
    s.set_query(1)
    s.set_stage("scores")
    flush_pending()
    assert panel.canvas.options.query == 1 and panel.canvas.options.stage == "scores"
    assert panel.caption.text().startswith("Without projections “cat”")
    s.set_value("X", 0, 0, 3.0)  # an edit of X changes the left grid: X·Xᵀ of the new X
    flush_pending()
    x = s.scene.x
    np.testing.assert_allclose(panel.canvas.scene.result().scores, x @ x.T)
    assert np.array_equal(panel.canvas.scene.x if panel.canvas.scene.x is not None else panel.canvas.scene.q, x)


def test_a_direct_scene_says_what_to_do(qtbot, show_window):
    w = show_window(load_preset("lesson"), (1280, 720))
    w.acts.unprojected.trigger()
    panel = w.panel("unprojected")
    assert panel.canvas.scene is None
    assert "projection mode" in panel.message.text() and panel.message.isVisible()
    w.acts.projection.trigger()  # Attention → Projection mode: now there is an X to dot
    flush_pending()
    assert panel.canvas.scene is not None and panel.message.text() == ""
    np.testing.assert_allclose(panel.canvas.scene.result().scores,
                               without_projections(w.session.scene).result().scores)


def test_presentation_keeps_the_pair_on_the_slide(qtbot, show_window):
    w = show_window(load_preset("projection"), (1280, 720), view=View(2, "weights"))
    w.acts.unprojected.trigger()
    w.set_presentation(True, fullscreen=False)
    qtbot.wait(10)
    panel = w.panel("unprojected")
    assert panel.isVisible() and panel.canvas.height() > 150
    qtbot.keyClick(w, Qt.Key_PageUp)  # the clicker steps the stages; the pair follows
    flush_pending()
    assert panel.canvas.options.stage == w.session.stage == "scaled"


def test_it_follows_a_load_and_the_selected_head(qtbot, show_window):
    w = show_window(load_preset("multihead"), (1280, 720))
    w.acts.unprojected.trigger()
    panel = w.panel("unprojected")
    s = w.session
    s.set_head(1)
    flush_pending()
    learned = panel.canvas.options.compare_with
    np.testing.assert_allclose(learned.result().weights, s.scene.head_scene(1).result().weights)
    x = s.scene.x
    np.testing.assert_allclose(panel.canvas.scene.result().scores, x @ x.T)  # X is every head's
    s.replace_scene(load_preset("projection"), "Open preset")
    flush_pending()
    assert panel.canvas.scene.tokens == load_preset("projection").tokens
    assert panel.caption.text().startswith(f"Without projections “{s.scene.token_label(s.query)}”")
