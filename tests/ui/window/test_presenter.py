"""The presenter view on one screen (issue 23): the presenter keys in presentation mode only, ink per
stage and scene with its own undo, the laser dot following the console's mouse, the console following
the lecture (stage, notes, next stage, timer), rehearse mode, saving ink with the scene, and
``qkv-studio screenshot --presenter``.  Two screens: tests/ui/window/test_presenter_screens.py."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication

from qkv_studio.core import STAGES, View, write_session
from qkv_studio.core.ink import EMPTY_INK, Notes, stroke
from qkv_studio.core.stopwatch import Stopwatch
from qkv_studio.ui.update_policy import settle
from qkv_studio.ui.window.presenter.placement import place
from tests.views import LESSON_VIEW


@pytest.fixture
def window(show_window, lesson_scene):
    return show_window(lesson_scene, (1280, 720), view=LESSON_VIEW)


def _draw(overlay, points):
    overlay.pen_down(*points[0])
    for p in points[1:]:
        overlay.pen_move(*p)
    overlay.pen_up()


def _mouse(widget, kind, pos, buttons=Qt.MouseButton.NoButton, button=Qt.MouseButton.NoButton):
    event = QMouseEvent(kind, QPointF(pos), widget.mapToGlobal(QPointF(pos)), button, buttons,
                        Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def test_the_presenter_keys_wait_for_presentation_mode(qtbot, window):
    p = window.presenter
    qtbot.keyClick(window.heatmap, Qt.Key_L)
    assert p.overlay.mode == "off" and not p.overlay.isVisible()
    window.set_presentation(True, fullscreen=False)
    qtbot.keyClick(window, Qt.Key_L)
    assert p.overlay.mode == "laser" and p.overlay.isVisible()
    qtbot.keyClick(window, Qt.Key_L)
    assert p.overlay.mode == "off"
    qtbot.keyClick(window, Qt.Key_D)
    assert p.overlay.mode == "ink"
    query = window.session.query
    qtbot.keyClick(window, Qt.Key_3)  # (drawing: 1–4 pick the ink's colour, not a query token)
    assert p.overlay.colour == 3 and window.session.query == query
    qtbot.keyClick(window, Qt.Key_E)
    assert p.overlay.mode == "erase"
    window.set_presentation(False)
    assert p.overlay.mode == "off"
    rows = dict(window.shortcuts_overlay.rows()) if window.shortcuts_overlay.rows() else {}
    window.show_shortcuts()
    rows = dict(window.shortcuts_overlay.rows())
    assert "L" in rows and "laser" in rows["L"] and "X" in rows


def test_ink_belongs_to_its_stage_stays_and_undoes(qtbot, window):
    window.set_presentation(True, fullscreen=False)
    p, s = window.presenter, window.session
    s.set_stage("scores")
    qtbot.keyClick(window, Qt.Key_I)
    _draw(p.overlay, [(0.2, 0.2), (0.4, 0.3), (0.5, 0.5)])
    qtbot.keyClick(window, Qt.Key_2)
    _draw(p.overlay, [(0.6, 0.6), (0.7, 0.7)])
    assert [st.colour for st in p.book.strokes()] == [1, 2]
    assert p.book.strokes()[0].points[1][:2] == (0.4, 0.3)
    qtbot.keyClick(window, Qt.Key_Right)  # (Right steps the stage while drawing)
    assert s.stage == "scaled" and p.book.strokes() == ()
    qtbot.keyClick(window, Qt.Key_Left)
    assert len(p.book.strokes()) == 2  # (back on the stage: its ink is there)
    qtbot.keyClick(window, Qt.Key_U)
    assert len(p.book.strokes()) == 1
    qtbot.keyClick(window, Qt.Key_U, Qt.KeyboardModifier.ShiftModifier)
    assert len(p.book.strokes()) == 2
    qtbot.keyClick(window, Qt.Key_C)
    assert p.book.strokes() == () and p.book.strokes("scores") == ()
    qtbot.keyClick(window, Qt.Key_U)
    assert len(p.book.strokes()) == 2
    qtbot.keyClick(window, Qt.Key_E)
    p.overlay.pen_down(0.65, 0.65)  # (the eraser on the second stroke)
    assert len(p.book.strokes()) == 1 and p.book.strokes()[0].colour == 1
    assert not s.modified  # (ink is not a scene edit: stepping to a deck's next scene asks nothing)
    assert not s.undo_stack.canUndo()


def _tablet(widget, kind, pos, pressure):
    from PySide6.QtGui import QPointingDevice, QTabletEvent

    event = QTabletEvent(kind, QPointingDevice.primaryPointingDevice(), QPointF(pos), widget.mapToGlobal(QPointF(pos)),
                         pressure, 0.0, 0.0, 0.0, 0.0, 0.0, Qt.KeyboardModifier.NoModifier,
                         Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    QApplication.sendEvent(widget, event)
    return event


def test_a_tablet_pen_draws_with_its_pressure(qtbot, window):
    window.set_presentation(True, fullscreen=False)
    p = window.presenter
    qtbot.keyClick(window, Qt.Key_D)
    o = p.overlay
    w, h = o.width(), o.height()
    assert _tablet(o, QEvent.Type.TabletPress, QPointF(w * 0.2, h * 0.5), 0.2).isAccepted()
    _tablet(o, QEvent.Type.TabletMove, QPointF(w * 0.4, h * 0.5), 0.9)
    _tablet(o, QEvent.Type.TabletRelease, QPointF(w * 0.4, h * 0.5), 0.0)
    (drawn,) = p.book.strokes()
    assert [round(pt[2], 2) for pt in drawn.points] == [0.2, 0.9]
    assert drawn.points[1][:2] == pytest.approx((0.4, 0.5), abs=0.01)
    window.grab()  # (a pen stroke of varying width paints)


def test_ink_is_drawn_on_the_slide_and_in_its_screenshot(qtbot, window):
    window.set_presentation(True, fullscreen=False)
    p = window.presenter
    slide = window.presentation.slide
    settle(window)  # (the caption's numbers a frame after the slide shows: the picture it settles on)
    before = slide.grab().toImage()
    qtbot.keyClick(window, Qt.Key_D)
    qtbot.keyClick(window, Qt.Key_4)
    _draw(p.overlay, [(0.05, 0.5), (0.95, 0.5)])
    qtbot.keyClick(window, Qt.Key_D)  # (drawing off: the ink stays on the slide)
    assert p.overlay.isVisible() and p.overlay.parentWidget() is slide
    after = slide.grab().toImage()
    y = int(after.height() * 0.5)
    changed = sum(before.pixelColor(x, y) != after.pixelColor(x, y) for x in range(100, after.width() - 100, 10))
    assert changed > 0.8 * len(range(100, after.width() - 100, 10))
    blue = after.pixelColor(after.width() // 2, y)
    assert blue.blue() > 200 and blue.red() < 120  # (ink 4: blue)
    assert p.grab_slide().pixelColor(after.width() // 2, y) == before.pixelColor(after.width() // 2, y)


def test_the_laser_dot_follows_the_mouse_on_the_slide_and_on_the_console(qtbot, show_window, lesson_scene):
    screen = QApplication.primaryScreen().availableGeometry()
    window = show_window(lesson_scene, (screen.width() - 100, screen.height() - 100), view=LESSON_VIEW)
    p = window.presenter
    p.set_rehearse(True)
    before = window.geometry()
    window.set_presentation(True)  # (one screen, rehearsing: the slide and the console as two windows)
    slide = window.presentation.slide
    assert p.console_shown() and slide.isVisible() and not slide.isFullScreen()
    avail = window.screen().availableGeometry()
    assert p.console.geometry().left() == avail.x() + int(avail.width() * 0.62)  # (side by side)
    assert slide.geometry().left() == avail.x()
    assert window.geometry() == before  # (the main window stays where it was, behind them)
    qtbot.keyClick(p.console, Qt.Key_L)  # (the console has the keyboard: it was shown last)
    _mouse(p.overlay, QEvent.Type.MouseMove, QPointF(p.overlay.width() * 0.25, p.overlay.height() * 0.75))
    x, y = p.overlay.laser_trail()[-1]
    assert x == pytest.approx(0.25, abs=0.01) and y == pytest.approx(0.75, abs=0.01)
    mirror = p.console.mirror
    r = mirror.slide_rect()
    _mouse(mirror, QEvent.Type.MouseMove, QPointF(r.x() + r.width() * 0.6, r.y() + r.height() * 0.3))
    x, y = p.overlay.laser_trail()[-1]
    assert x == pytest.approx(0.6, abs=0.01) and y == pytest.approx(0.3, abs=0.01)
    assert r.width() / r.height() == pytest.approx(slide.width() / slide.height(), rel=0.01)
    # drawing on the console's copy draws on the slide
    qtbot.keyClick(p.console, Qt.Key_I)
    assert p.overlay.mode == "ink"
    _mouse(mirror, QEvent.Type.MouseButtonPress, r.center(), Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    _mouse(mirror, QEvent.Type.MouseMove, r.center() + QPointF(40, 10), Qt.MouseButton.LeftButton)
    _mouse(mirror, QEvent.Type.MouseButtonRelease, r.center() + QPointF(40, 10), Qt.MouseButton.NoButton,
           Qt.MouseButton.LeftButton)
    (drawn,) = p.book.strokes()
    assert drawn.points[0][:2] == pytest.approx((0.5, 0.5), abs=0.01)
    window.set_presentation(False)
    assert not p.console_shown() and not slide.isVisible()
    assert window.geometry() == before  # (Esc: the window as it was — it never moved)


def test_the_console_follows_the_lecture_and_its_keys_drive_it(qtbot, window, tmp_path):
    p = window.presenter
    now = [1000.0]
    p.stopwatch = Stopwatch(clock=lambda: now[0])  # (the timer on a clock the test moves: no sleeping)
    p.scene_opened("talk", Notes(stages={"scaled": "Why divide? Ask the room."}))
    p.set_rehearse(True)
    window.set_presentation(True)
    c = p.console
    window.session.set_stage("scores")
    assert c.now_title.text() == "Now: Q·Kᵀ" and c.next_title.text().startswith("Next: ÷")
    assert c.notes_title.text().startswith("Caption")  # (no note for the scores: the stage's caption)
    assert "sat" in c.notes.text()
    qtbot.keyClick(c, Qt.Key_Right)  # (a key in the console steps the lecture)
    assert window.session.stage == "scaled"
    assert c.notes.text() == "Why divide? Ask the room." and c.notes_title.text() == "Notes"
    assert c.next_title.text() == "Next: softmax" and not c.next_view.image.isNull()
    qtbot.keyClick(c, Qt.Key_End)
    assert c.next_title.text() == "Next: the end of the lecture" and c.next_view.image.isNull()
    qtbot.keyClick(c, Qt.Key_Home)
    assert window.session.stage == STAGES[0]
    now[0] += 125
    c.refresh_times()
    assert c.elapsed.text() == "2:05"
    qtbot.keyClick(c, Qt.Key_T)
    now[0] += 60
    c.refresh_times()
    assert c.elapsed.text().startswith("2:05") and "paused" in c.elapsed.text()
    qtbot.keyClick(c, Qt.Key_R)
    c.refresh_times()
    assert c.elapsed.text().startswith("0:00")
    assert "Stage 1 of 5" in c.status.text()
    # the console's copy of the slide is the slide
    settle(window)  # (the console's grab of the slide, taken now)
    assert not c.mirror.picture().isNull()
    assert c.mirror.picture().size() == window.presentation.slide.grab().toImage().size()
    qtbot.keyClick(c, Qt.Key_Escape)
    assert not window.is_presentation() and not c.isVisible()


def test_a_decks_scenes_keep_their_ink_and_notes(qtbot, window, tmp_path):
    deck = tmp_path / "talk.deck.json"
    deck.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1, "scenes": [
        {"scene": "preset:lesson", "notes": {"output": "Now the blend"}}, "preset:causal"]}))
    assert window.open_deck(str(deck), ask=False)
    p, s = window.presenter, window.session
    p.set_rehearse(True)
    window.set_presentation(True)
    s.set_stage("output")
    qtbot.keyClick(window, Qt.Key_D)
    _draw(p.overlay, [(0.1, 0.1), (0.2, 0.2)])
    assert p.console.notes.text() == "Now the blend"
    assert p.console.next_title.text().startswith("Next: ") and "scene 2 of 2" in p.console.next_title.text()
    qtbot.keyClick(window, Qt.Key_Right)  # (past the last stage: the deck's next scene)
    assert window.deck_index == 1 and p.book.strokes("output") == ()
    qtbot.keyClick(window, Qt.Key_Left)
    assert window.deck_index == 0 and len(p.book.strokes("output")) == 1


def test_ink_and_notes_are_saved_with_the_scene_and_read_back(qtbot, window, tmp_path):
    path = tmp_path / "talk.qkv.json"
    write_session(path, window.session.scene, View(stage="weights"), notes=Notes("Hello"),
                  ink=EMPTY_INK.with_stroke("weights", stroke([(0.5, 0.5, 1)], 2)))
    assert window.open_path(str(path), ask=False)
    p = window.presenter
    assert p.book.notes().text == "Hello" and p.book.strokes("weights")[0].colour == 2
    assert not p.overlay.isVisible()  # (ink is drawn on the slide's layout: not over the editing window)
    window.set_presentation(True, fullscreen=False)
    assert p.overlay.isVisible()
    _draw_on = p.overlay
    qtbot.keyClick(window, Qt.Key_I)
    _draw(_draw_on, [(0.1, 0.9), (0.3, 0.9)])
    assert window.save()
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert obj["notes"] == "Hello" and len(obj["ink"]["weights"]) == 2


def test_the_console_closes_with_the_window(qtbot, window):
    p = window.presenter
    p.set_rehearse(True)
    window.set_presentation(True)
    assert p.console_shown() and p.console.parentWidget() is window  # (never keeps the app open alone)
    window.close()
    assert not p.console.isVisible()


def test_a_screen_plugged_in_while_presenting_on_one_is_offered(qtbot, window):
    window.set_presentation(True, fullscreen=False)
    screen = QApplication.primaryScreen()
    window.presenter.on_screen_added(screen)
    assert "press X" in window.presenter.banner_text()


def test_screenshot_presenter_renders_the_console(tmp_path):
    from qkv_studio.cli import main

    out = tmp_path / "console.png"
    session = tmp_path / "inked.qkv.json"
    from qkv_studio.core import load_preset

    write_session(session, load_preset("lesson"), View(stage="weights"), notes=Notes("Point at cat"),
                  ink=EMPTY_INK.with_stroke("weights", stroke([(0.1, 0.5, 1), (0.9, 0.5, 1)], 2, 0.01)))
    assert main(["screenshot", str(session), "--presenter", "--ink", "--size", "1280x720",
                 "--slide-size", "1920x1080", "-o", str(out)]) == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 720)
    # the console's dark background, and the slide's copy (light theme) in its left part
    assert image.pixelColor(1270, 710).lightness() < 60
    assert image.pixelColor(300, 200).lightness() > 150
    yellow = [image.pixelColor(x, y) for x in range(100, 700, 25) for y in range(200, 500, 2)]
    assert any(c.red() > 220 and c.green() > 180 and c.blue() < 90 for c in yellow)  # (ink 2 on the copy)
    slide = tmp_path / "slide.png"
    assert main(["screenshot", str(session), "--presentation", "--ink", "--size", "1920x1080", "-o", str(slide)]) == 0
    picture = QImage(str(slide))
    row = [picture.pixelColor(x, 540) for x in range(300, 1600, 50)]
    assert sum(c.red() > 220 and c.green() > 180 and c.blue() < 90 for c in row) > len(row) * 0.7


def test_slide_size_without_presenter_is_refused(capsys, tmp_path):
    from qkv_studio.cli import main

    assert main(["screenshot", "--slide-size", "1280x720", "-o", str(tmp_path / "x.png")]) == 2
    assert "give --presenter too" in capsys.readouterr().err and not (tmp_path / "x.png").exists()


def test_ink_on_a_model_head_is_refused_with_a_message(monkeypatch, capsys, tmp_path):
    from qkv_studio.cli import main
    from tests.toy_model import register_toy

    register_toy(monkeypatch)
    code = main(["screenshot", "--model", "toy", "--text", "a b", "--ink", "-o", str(tmp_path / "x.png")])
    assert code != 0 and "--ink needs a session file" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


class _Screen:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


def test_the_audience_screen_is_the_one_that_is_not_the_laptops():
    laptop, projector, other = _Screen("eDP-1"), _Screen("HDMI-1"), _Screen("DP-2")
    assert place([], None) is None
    one = place([laptop], laptop)
    assert one.audience is laptop and one.console is None
    two = place([laptop, projector], laptop)
    assert (two.audience, two.console) == (projector, laptop)
    assert (place([projector, laptop], laptop).audience) is projector  # (order does not matter)
    swapped = place([laptop, projector], laptop, swapped=True)
    assert (swapped.audience, swapped.console) == (laptop, projector)
    chosen = place([laptop, projector, other], laptop, chosen="DP-2")
    assert (chosen.audience, chosen.console) == (other, laptop)
    gone = place([laptop, projector], laptop, chosen="DP-2")  # (the chosen screen is not attached)
    assert gone.audience is projector
