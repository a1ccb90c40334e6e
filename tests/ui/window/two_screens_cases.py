"""The presenter view on two screens, run by tests/ui/window/test_presenter_screens.py in a pytest of its
own under Qt's offscreen platform with two screens (a laptop 1280×720 at the left, a projector
1920×1080 at its right: the configuration file that test writes).  Not collected on its own (its name
does not start with ``test_``): one process has one platform."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from qkv_studio.core.stopwatch import Stopwatch
from qkv_studio.ui.update_policy import settle
from tests.views import LESSON_VIEW


def _screens():
    screens = {s.name(): s for s in QGuiApplication.screens()}
    assert set(screens) == {"laptop", "projector"}, screens
    return screens["laptop"], screens["projector"]


@pytest.fixture
def window(show_window, lesson_scene, qtbot):
    w = show_window(lesson_scene, (1200, 680), view=LESSON_VIEW)
    yield w
    if w.presenter.console is not None:
        w.presenter.console.close()


def _settle(qtbot):
    settle()


def _on_slide(qtbot, window):
    """The lecturer clicks the projector's slide: it has the keyboard (the console had it)."""
    slide = window.presentation.slide
    slide.activateWindow()
    qtbot.waitUntil(slide.isActiveWindow, timeout=2000)
    return slide


def test_f5_puts_the_slide_on_the_projector_and_the_console_on_the_laptop(qtbot, window):
    laptop, projector = _screens()
    assert QGuiApplication.primaryScreen() is laptop and window.screen() is laptop
    before = window.geometry()
    qtbot.keyClick(window, Qt.Key_F5)
    _settle(qtbot)
    p = window.presenter
    slide = window.presentation.slide
    assert window.is_presentation() and slide.isFullScreen() and not window.isFullScreen()
    assert slide.screen() is projector and slide.geometry() == projector.geometry()
    assert window.screen() is laptop and window.geometry() == before  # (the window never moves)
    assert p.console_shown() and p.console.screen() is laptop
    assert p.console.geometry() == laptop.geometry()
    assert p.console.isActiveWindow()  # (the keyboard on the laptop)
    # the slide is composed for the projector (its size), not for the laptop
    assert window.presentation.slide_size() == projector.geometry().size()
    # the console's copy of the slide is a picture of the projector's slide
    _settle(qtbot)  # (the console's grab, a burst of changes after the slide showed, taken now)
    assert p.console.mirror.picture().size() == projector.geometry().size()
    qtbot.keyClick(window, Qt.Key_Escape)
    _settle(qtbot)
    assert not window.is_presentation() and not p.console_shown() and not slide.isVisible()
    # (Esc: the window exactly as it was — nothing of it was moved, so nothing is put back)
    assert window.screen() is laptop and window.geometry() == before


def test_keys_from_either_window_step_the_stage_and_the_console_follows(qtbot, window):
    window.set_presentation(True)
    _settle(qtbot)
    p, s = window.presenter, window.session
    s.set_stage("vectors")
    slide = _on_slide(qtbot, window)
    qtbot.keyClick(slide, Qt.Key_Right)  # (on the slide)
    assert s.stage == "scores" and p.console.now_title.text() == "Now: Q·Kᵀ"
    qtbot.keyClick(p.console, Qt.Key_Right)  # (on the console)
    assert s.stage == "scaled" and p.console.next_title.text() == "Next: softmax"
    qtbot.keyClick(p.console, Qt.Key_PageUp)
    assert s.stage == "scores"
    qtbot.keyClick(p.console, Qt.Key_B)  # (black screen on the slide, from the console)
    assert slide.blank.isVisible()
    qtbot.keyClick(p.console, Qt.Key_Space)  # (any key brings the picture back, and does nothing else)
    assert not slide.blank.isVisible() and s.stage == "scores"
    qtbot.keyClick(p.console, Qt.Key_Escape)
    assert not window.is_presentation()


def test_x_swaps_the_screens(qtbot, window):
    laptop, projector = _screens()
    window.set_presentation(True)
    _settle(qtbot)
    p = window.presenter
    slide = _on_slide(qtbot, window)
    qtbot.keyClick(slide, Qt.Key_X)
    _settle(qtbot)
    assert slide.screen() is laptop and p.console.screen() is projector
    assert window.presentation.slide_size() == laptop.geometry().size()
    qtbot.keyClick(p.console, Qt.Key_X)
    _settle(qtbot)
    assert slide.screen() is projector and p.console.screen() is laptop


def test_the_chosen_presentation_screen_wins(qtbot, window):
    laptop, _ = _screens()
    window.presenter.present_on("laptop")
    window.set_presentation(True)
    _settle(qtbot)
    assert window.presentation.slide.screen() is laptop and window.presenter.console.screen() is not laptop


def test_unplugging_the_projector_brings_the_slide_back_with_its_place_ink_and_timer(qtbot, window):
    laptop, projector = _screens()
    now = [50.0]
    p, s = window.presenter, window.session
    p.stopwatch = Stopwatch(clock=lambda: now[0])
    window.set_presentation(True)
    _settle(qtbot)
    s.set_stage("weights")
    s.set_query(1)
    slide = _on_slide(qtbot, window)
    qtbot.keyClick(slide, Qt.Key_D)
    p.overlay.pen_down(0.2, 0.2)
    p.overlay.pen_move(0.3, 0.4)
    p.overlay.pen_up()
    now[0] += 300
    # (the offscreen platform cannot remove a screen at run time: the handler of
    # QGuiApplication.screenRemoved is called with the projector as Qt would call it)
    p.on_screen_removed(projector)
    _settle(qtbot)
    assert window.is_presentation() and slide.isFullScreen()
    assert slide.screen() is laptop and slide.geometry() == laptop.geometry()
    assert window.presentation.slide_size() == laptop.geometry().size()
    assert not p.console_shown()
    assert (s.stage, s.query) == ("weights", 1)
    assert len(p.book.strokes()) == 1 and p.overlay.isVisible() and p.overlay.mode == "ink"
    assert p.stopwatch.running and p.stopwatch.elapsed() == 300
    # plugging it in again is offered; X presents on it, the console back on the laptop
    p.on_screen_added(projector)
    assert "projector" in p.banner_text()
    _on_slide(qtbot, window)
    qtbot.keyClick(slide, Qt.Key_X)
    _settle(qtbot)
    assert slide.screen() is projector and p.console_shown() and p.console.screen() is laptop
    assert len(p.book.strokes()) == 1 and p.stopwatch.elapsed() == 300


def test_removing_a_screen_that_is_not_presenting_changes_nothing(qtbot, window):
    laptop, projector = _screens()
    window.presenter.on_screen_removed(projector)  # (not presenting)
    assert not window.is_presentation() and window.screen() is laptop
