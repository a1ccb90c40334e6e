"""Presentation mode: clicker keys, blanking, the shortcut overlay, decks, readable text, themes,
animation and remembered settings."""

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication

from qkv_studio.core import STAGES, View, load_preset
from qkv_studio.render.colormaps import SEQUENTIAL
from qkv_studio.render.theme import THEMES
from qkv_studio.ui.update_policy import settle
from qkv_studio.ui.window.main_window import MainWindow
from tests.views import LESSON_VIEW


@pytest.fixture
def window(show_window, lesson_scene):
    return show_window(lesson_scene, (1920, 1080), view=LESSON_VIEW)


def test_f5_shows_the_slide_full_screen_and_esc_hides_it_the_window_never_moving(qtbot, window):
    docks = [window.docks.editors, window.docks.plane, window.docks.calc, window.docks.blend]
    before = (window.geometry(), window.frameGeometry(), [d.geometry() for d in docks],
              [d.isVisible() for d in docks], window.saveState())
    qtbot.keyClick(window, Qt.Key_F5)
    slide = window.presentation.slide
    assert window.is_presentation() and slide.isVisible() and slide.isFullScreen()
    assert slide.geometry() == window.screen().geometry()  # (the window's screen, all of it)
    assert slide.views.get("calc").isVisible() and slide.views.get("heatmap").isVisible()
    assert not window.isFullScreen() and window.menuBar().isVisible()  # (the window behind, as it was)
    qtbot.keyClick(slide, Qt.Key_Escape)
    settle(window)
    assert not window.is_presentation() and not slide.isVisible()
    after = (window.geometry(), window.frameGeometry(), [d.geometry() for d in docks],
             [d.isVisible() for d in docks], window.saveState())
    assert after == before  # (nothing moved, so nothing had to be put back)


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
def test_the_window_comes_back_where_it_was_after_f5_and_esc(qtbot, show_window, lesson_scene, size):
    """After the first F5 → Esc at 1280×720 and 1024×768 the window came back 5 px lower, its status bar
    off the screen: the slide is a window of its own now, and the main window's geometry is the same."""
    window = show_window(lesson_scene, size, view=LESSON_VIEW)
    settle(window)
    before = (window.geometry(), window.frameGeometry())
    for _ in range(2):
        window.set_presentation(True)
        settle(window)
        window.set_presentation(False)
        settle(window)
        assert (window.geometry(), window.frameGeometry()) == before


def test_p_brings_a_left_out_table_in_and_takes_it_out_again(qtbot, show_window):
    """The multihead scene's table cannot stand legibly beside or under the heatmap at 1280×720: it is left
    out, and the slide says so (the P hint); P brings it in, P again takes it out."""
    window = show_window(load_preset("multihead"), (1280, 720), view=View(stage="weights"))
    window.set_presentation(True, fullscreen=False)
    settle(window)
    slide = window.presentation.slide
    table = slide.views.get("calc")
    assert slide.placement.left_out and not table.isVisible()
    assert slide.hint.isVisible() and "P" in slide.hint.text() and "table" in slide.hint.text()
    qtbot.keyClick(window, Qt.Key_P)
    assert table.isVisible() and not slide.hint.isVisible()
    qtbot.keyClick(window, Qt.Key_P)
    assert not table.isVisible() and slide.hint.isVisible()
    slide.hint.click()  # (the hint is a button too)
    assert table.isVisible()
    window.set_presentation(False)
    visible = window.docks.plane.isVisible()
    window.toggle_plane()  # (P's action outside the slides: the window's plane shown or hidden)
    assert window.docks.plane.isVisible() != visible


def test_b_blanks_the_slide_while_presenting(qtbot, window):
    window.set_presentation(True, fullscreen=False)
    slide = window.presentation.slide
    qtbot.keyClick(slide, Qt.Key_B)
    assert slide.blank.isVisible() and not window.blank_overlay.isVisible()
    image = slide.grab().toImage()
    assert image.pixelColor(image.width() // 2, image.height() // 2).name() == "#000000"
    qtbot.keyClick(slide, Qt.Key_B)
    assert not slide.blank.isVisible()


def test_b_and_period_blank_the_screen_and_back(qtbot, window):
    qtbot.keyClick(window, Qt.Key_B)
    assert window.blank_overlay.isVisible()
    image = window.grab().toImage()
    assert image.pixelColor(image.width() // 2, image.height() // 2).name() == "#000000"
    qtbot.keyClick(window, Qt.Key_Right)  # any key brings the picture back, and does nothing else
    assert window.session.stage == "weights"
    assert not window.blank_overlay.isVisible()
    qtbot.keyClick(window, Qt.Key_Period)
    assert window.blank_overlay.isVisible()
    qtbot.keyClick(window, Qt.Key_Period)
    assert not window.blank_overlay.isVisible()


def test_f1_and_question_mark_show_every_shortcut(qtbot, window):
    qtbot.keyClick(window, Qt.Key_F1)
    assert window.shortcuts_overlay.isVisible()
    text = window.shortcuts_overlay.label.text()
    for key in ("PageDown", "Home", "1 – 9", "B ", "F5", "Ctrl+Z"):
        assert key in text
    qtbot.keyClick(window.shortcuts_overlay, Qt.Key_X)
    assert not window.shortcuts_overlay.isVisible()
    qtbot.keyClick(window, Qt.Key_Question, Qt.ShiftModifier, )
    assert window.shortcuts_overlay.isVisible()


def test_clicker_keys_step_and_pick_tokens(qtbot, window):
    window.set_presentation(True, fullscreen=False)
    s = window.session
    qtbot.keyClick(window, Qt.Key_PageDown)
    assert s.stage == "output"
    qtbot.keyClick(window, Qt.Key_PageUp)
    qtbot.keyClick(window, Qt.Key_PageUp)
    assert s.stage == "scaled"
    qtbot.keyClick(window, Qt.Key_4)
    assert s.query == 3


def test_presentation_text_is_at_least_28_px_at_1080p(qtbot, window):
    window.set_presentation(True, fullscreen=False)
    settle(window)
    slide = window.presentation.slide
    assert slide.size().toTuple() == (1920, 1080)
    heatmap = slide.views.get("heatmap")
    plan = heatmap._text_plan()
    assert plan["font"] is not None
    assert QFontMetricsF(plan["font"]).height() >= 28  # cell values
    caption_px = QFontMetricsF(slide.stepper.caption.font()).height()
    assert caption_px >= 28
    tick_font = heatmap.plot.getAxis("left").style["tickFont"]
    assert tick_font is not None and QFontMetricsF(tick_font).height() >= 28  # token labels
    # (the window behind keeps its desktop text)
    assert QFontMetricsF(window.stepper.caption.font()).height() < caption_px


@pytest.mark.parametrize("theme", list(THEMES))
def test_each_theme_renders_its_background(qtbot, window, theme):
    window.apply_theme(theme)
    QApplication.processEvents()
    image = window.heatmap.graphics.grab().toImage()
    assert image.pixelColor(3, 3).name() == THEMES[theme].background


@pytest.mark.parametrize("cmap", SEQUENTIAL)
def test_each_colormap_recolours_the_heatmap(qtbot, window, cmap):
    from qkv_studio.render.colormaps import scale_for

    window.apply_colormap(cmap)
    w = window.session.result.weights
    expected = scale_for("weights", w, cmap).rgba(w)
    assert np.array_equal(window.heatmap.image_item.image, expected)


def test_stage_changes_animate_and_settle(qtbot, window):
    window.set_animate(True)
    window.session.set_stage("scaled")
    assert window.heatmap.is_animating()
    settle(window)  # (the morph run to its end: no waiting on the clock)
    assert not window.heatmap.is_animating()
    assert np.array_equal(window.heatmap.image_item.image, window.heatmap._rgba)
    window.set_animate(False)
    window.session.set_stage("weights")
    assert not window.heatmap.is_animating()


def test_a_deck_steps_across_scenes(qtbot, window, tmp_path):
    deck = tmp_path / "lecture.qkvdeck.json"
    deck.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1,
                                "scenes": ["preset:lesson", "preset:causal"]}))
    assert window.open_deck(str(deck), ask=False)
    s = window.session
    assert s.stage == STAGES[0] and s.scene.tokens[:2] == ("the", "cat")
    assert s.query == 2  # each scene opens on its file's query (the lesson's "sat"), at the deck's stage
    for _ in range(len(STAGES) - 1):
        window.next_step()
    assert s.stage == STAGES[-1]
    assert window.stepper.next_button.isEnabled() and "scene" in window.stepper.next_button.text()
    window.next_step()
    assert s.scene.mask == "causal" and s.stage == STAGES[0] and window.deck_index == 1
    assert s.query == 4 and window.lecture.deck.view_of(1) == View(4, "weights")
    window.back_step()
    assert s.scene.tokens[:2] == ("the", "cat") and s.stage == STAGES[-1]


def test_a_bad_deck_is_refused_and_the_scene_stays(qtbot, window, tmp_path):
    deck = tmp_path / "bad.qkvdeck.json"
    deck.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1, "scenes": ["preset:nope"]}))
    before = window.session.scene
    assert not window.open_deck(str(deck), ask=False)
    assert window.session.scene is before and window.deck is None


def test_zoom_scales_fonts(qtbot, window):
    before = window.stepper.caption.font().pointSizeF()
    qtbot.keyClick(window, Qt.Key_Plus, Qt.ControlModifier)
    assert window.stepper.caption.font().pointSizeF() > before
    qtbot.keyClick(window, Qt.Key_0, Qt.ControlModifier)
    assert window.stepper.caption.font().pointSizeF() == pytest.approx(before)


def test_settings_written_by_one_window_are_read_by_the_next(qtbot, lesson_scene):
    a = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(a)
    a.show()
    a.apply_theme("projector")
    a.apply_colormap("cividis")
    a.set_zoom(1.5)
    a.set_animate(False)
    a.close()
    b = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(b)
    b.show()
    QApplication.processEvents()
    assert b.theme_actions["projector"].isChecked()
    assert b.cmap_actions["cividis"].isChecked()
    assert b._zoom == pytest.approx(1.5)
    assert not b.heatmap.animate and not b.acts.animate.isChecked()


def test_the_blend_slide_says_its_caption_once_and_the_stage_bar_is_as_tall_as_its_text(qtbot, show_window,
                                                                                      lesson_scene):
    """On the blend's slide the stage caption says what the blend's header said word for word: the slide's
    blend has no header (the window's keeps its own); the stage bar is as tall as its text and no taller,
    and follows a caption that needs another line (a step's caption comes a frame later)."""
    window = show_window(lesson_scene, (1280, 720), view=LESSON_VIEW)
    window.set_presentation(True, fullscreen=False)
    window.session.set_stage("output")
    window.session.flush()
    settle(window)
    slide = window.presentation.slide
    stepper, blend = slide.stepper, slide.views.get("blend")
    assert blend.isVisible() and "The output for “sat”" in stepper.caption.text()
    assert stepper.height() == stepper.heightForWidth(stepper.width())
    assert not blend.title.isVisible() and blend.on_slide()
    caption = stepper.caption
    assert caption.heightForWidth(caption.width()) <= caption.height() + 1  # (every line of it shown)
    window.set_presentation(False)
    assert window.panels.blend.title.isVisible() or not window.docks.blend.isVisible()
    assert not window.panels.blend.on_slide()


def test_a_slide_leaves_out_a_table_that_would_flatten_the_heatmap(qtbot, show_window):
    """Ten tokens of 64-number vectors (a real model's head) at 1280×720: the table cannot stand beside
    the heatmap legibly, and under it would flatten the heatmap's rows — the slide leaves it out, says
    so, and gives the heatmap the room; the window's own table is untouched."""
    from qkv_studio.core.scene import Scene

    rng = np.random.default_rng(3)
    tokens = "the cat sat on the mat and then it slept".split()
    q, k, v = (rng.normal(size=(10, 64)) for _ in range(3))
    window = show_window(Scene.from_arrays(q, k, v, tokens), (1280, 720), view=View(query=9, stage="weights"))
    window.set_presentation(True, fullscreen=False)
    settle(window)
    slide = window.presentation.slide
    assert slide.placement.left_out and not slide.views.get("calc").isVisible() and slide.hint.isVisible()
    assert slide.views.get("heatmap").height() > 0.6 * slide.height()
    window.set_presentation(False)
    assert window.docks.calc.isVisible() and window.panels.calc.isVisible()


def test_a_slide_keeps_a_table_that_leaves_the_heatmap_legible(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, (1280, 720), view=View(stage="weights"))
    window.set_presentation(True, fullscreen=False)
    settle(window)
    slide = window.presentation.slide
    assert slide.placement.where == "beside" and slide.views.get("calc").isVisible()
