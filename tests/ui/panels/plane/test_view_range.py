"""The plane's range: it fits every arrow and label, follows edits and scene loads without jumping on
every drag step, and the fit key fits it again."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence

from qkv_studio.core import Scene, list_presets, load_preset
from qkv_studio.ui.panels.plane.view_range import fit_scale, fitted_range, verdict
from qkv_studio.ui.update_policy import settle as settle_now
from qkv_studio.ui.widgets.frame_throttle import flush_pending
from tests.ui.panels.plane.helpers import drag, move, outside_the_view, show, viewport_pos
from tests.views import LESSON_VIEW


def test_range_stays_put_while_dragging(qtbot, session):
    plane = show(qtbot, session)
    ranges = []
    plane.view_box.sigRangeChanged.connect(lambda *a: ranges.append(a))
    drag(qtbot, plane, plane.head_viewport_pos("Q", 2), viewport_pos(plane, 1.5, 1.5))
    assert session.undo_stack.count() == 1
    assert ranges == []
    # a head moved far outside by another editor brings the view along
    session.set_value("K", 3, 0, 40.0)
    session.flush()
    flush_pending()
    (x0, x1), _ = plane.view_box.viewRange()
    assert x0 < 40 < x1


# ---- issue 19 item 4: the view fits the vectors --------------------------------------------------------

def _settled(qtbot, session) -> None:
    session.flush()
    settle_now()


def _fits_tightly(plane) -> bool:
    """The view is no looser than the range logic allows (the arrows would fill at least half of it)."""
    return plane.view_range.state() == "fits"


def test_the_first_view_holds_every_tip_and_label(qtbot, session):
    plane = show(qtbot, session)
    assert outside_the_view(plane) == []
    assert _fits_tightly(plane)


def test_typing_1e200_and_undoing_it_fits_the_lesson_again(qtbot, session):
    """Issue 19 item 4: type 1e200 into Q and K, then Ctrl+Z twice — the axes must not stay at ±1e200."""
    plane = show(qtbot, session)
    first = plane.view_box.viewRange()
    session.set_value("Q", 2, 0, 1e200)
    session.set_value("K", 1, 0, 1e200)
    _settled(qtbot, session)
    (x0, x1), _ = plane.view_box.viewRange()
    assert x0 < 1e200 < x1  # the far arrows are in view
    session.undo_stack.undo()
    session.undo_stack.undo()
    _settled(qtbot, session)
    (x0, x1), (y0, y1) = plane.view_box.viewRange()
    assert x1 - x0 < 10 and y1 - y0 < 10  # the lesson's few units again, not ±1e200
    assert outside_the_view(plane) == []
    assert _fits_tightly(plane)
    np.testing.assert_allclose(plane.view_box.viewRange(), first, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", [p.name for p in list_presets()])
def test_a_scene_load_fits_every_tip_and_label(qtbot, session, name):
    plane = show(qtbot, session)
    plane.set_show_values(True)
    session.load(load_preset(name))
    _settled(qtbot, session)
    assert outside_the_view(plane) == [], name
    assert _fits_tightly(plane), (name, plane.view_box.viewRange())


def test_a_scene_far_from_the_origin_is_fitted_and_so_is_the_next(qtbot, session):
    plane = show(qtbot, session)
    far = Scene.create(["a", "b", "c"], q=[[30, 40], [35, 38], [31, 44]], k=[[40, 30], [33, 33], [38, 41]],
                       v=[[1, 0], [0, 1], [1, 1]])
    session.load(far)
    _settled(qtbot, session)
    assert outside_the_view(plane) == []
    session.load(load_preset("lesson"))
    _settled(qtbot, session)
    (x0, x1), _ = plane.view_box.viewRange()
    assert x1 - x0 < 10  # not the 40-unit view of the scene before
    assert outside_the_view(plane) == [] and _fits_tightly(plane)


def test_an_edit_that_moves_a_label_past_the_edge_brings_it_back(qtbot, session):
    plane = show(qtbot, session)
    (x0, x1), _ = plane.view_box.viewRange()
    session.set_value("K", 3, 0, x1 - 0.05)  # the head just inside, its label (to the right) not
    _settled(qtbot, session)
    assert outside_the_view(plane) == []


def test_the_view_fits_the_values_and_the_output_when_they_are_shown(qtbot, session):
    plane = show(qtbot, session)
    session.set_value("V", 3, 1, -3.0)  # v mat = [0.5, −3]: far below every q and k
    _settled(qtbot, session)
    (_, _), (y0, _) = plane.view_box.viewRange()
    assert y0 > -3  # not shown, not fitted
    plane.set_show_values(True)
    assert outside_the_view(plane) == []
    session.set_stage("output")
    _settled(qtbot, session)
    assert plane.output_shown() and outside_the_view(plane) == []


def test_a_drag_out_of_the_view_grows_it_and_refits_when_it_ends(qtbot, session):
    plane = show(qtbot, session)
    vp = plane.plot_widget.viewport()
    start = plane.head_viewport_pos("Q", 2)
    px = plane.pixel_size()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    seen = []
    for i in range(1, 41):
        # up and right, to ~3.5 widths beyond the plane's edge (the button held: Qt still reports the moves)
        move(vp, QPoint(start.x() + 75 * i, start.y() - 9 * i))
        qtbot.wait(15)
        (x0, x1), (y0, y1) = plane.view_box.viewRange()
        head = plane.head_view_pos("Q", 2)
        seen.append((x0 <= head.x() <= x1 and y0 <= head.y() <= y1, x1 - x0))
    end = QPoint(start.x() + 3000, start.y() - 360)
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    assert all(inside for inside, _ in seen), seen  # the head never left the view
    widths = [w for _, w in seen]
    assert widths == sorted(widths) and widths[-1] > widths[0]  # it only grew while dragged
    assert len(set(widths)) <= 8  # with room to spare: not a new range on every step
    assert session.undo_stack.count() == 1
    # the value moved with the hand, at the scale the drag began with
    q = session.scene.q[2]
    assert q[0] == pytest.approx(1 + 3000 * px[0], rel=0.02) and q[1] == pytest.approx(2 + 360 * px[1], rel=0.02)
    _settled(qtbot, session)
    assert outside_the_view(plane) == [] and _fits_tightly(plane)
    ended = plane.view_box.viewRange()
    plane.fit_view()  # (the room to spare that the drag had is gone: the view is the fit)
    np.testing.assert_allclose(plane.view_box.viewRange(), ended, rtol=1e-6, atol=1e-6)


def test_a_smaller_plane_keeps_its_labels_inside(qtbot, session):
    plane = show(qtbot, session)
    plane.resize(380, 330)
    qtbot.waitUntil(lambda: not plane.view_box.rect().width() > 500, timeout=1000)
    _settled(qtbot, session)
    assert outside_the_view(plane) == []


# ---- the fit key --------------------------------------------------------------------------------------

def test_the_fit_button_fits_a_loose_view(qtbot, session):
    plane = show(qtbot, session)
    fitted = plane.view_box.viewRange()
    (x0, x1), (y0, y1) = fitted
    # 1.5 times as wide and tall: looser, but not past LOOSE
    dx, dy = (x1 - x0) / 4, (y1 - y0) / 4
    plane.view_box.setRange(xRange=(x0 - dx, x1 + dx), yRange=(y0 - dy, y1 + dy), padding=0)
    assert plane.view_range.state() == "fits"  # (so nothing refits it by itself)
    plane.fit_button.click()
    np.testing.assert_allclose(plane.view_box.viewRange(), fitted, rtol=1e-6, atol=1e-6)


def test_the_fit_key_and_the_view_menu_fit_the_window_s_plane(qtbot, show_window):
    window = show_window(load_preset("lesson"), view=LESSON_VIEW)
    window.docks.plane.show()
    window.docks.plane.raise_()
    plane = window.panels.plane
    qtbot.waitUntil(plane.isVisible, timeout=2000)
    _settled(qtbot, window.session)
    plane.fit_view()
    fitted = plane.view_box.viewRange()
    act = window.acts.fit_plane
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert act in view_menu.actions()
    assert QKeySequence("Ctrl+Shift+V") in act.shortcuts()
    for run in (act.trigger, lambda: qtbot.keyClick(window, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier
                                                   | Qt.KeyboardModifier.ShiftModifier)):
        (x0, x1), (y0, y1) = fitted
        plane.view_box.setRange(xRange=(x0 - 2, x1 + 2), yRange=(y0 - 1, y1 + 1), padding=0)
        assert plane.view_box.viewRange() != fitted
        run()
        np.testing.assert_allclose(plane.view_box.viewRange(), fitted, rtol=1e-6, atol=1e-6)
        assert outside_the_view(plane) == []


# ---- the range logic itself ---------------------------------------------------------------------------

def test_fit_scale_holds_a_label_beside_its_head():
    heads = np.array([[0.0, 0.0], [2.0, 1.0]])
    # a label at (2, 1) reaching 100 px to its right: the x span 2 + 100 px + 2 × 10 px margin = 400 px
    boxes = np.array([[2.0, 1.0, 0.0, 100.0, 0.0, 0.0]])
    s = fit_scale(heads, boxes, (400, 400), 10)
    assert s == pytest.approx(2 / (400 - 20 - 100))
    (x0, x1), (y0, y1) = fitted_range(heads, boxes, (400, 400), 10)
    assert x1 == pytest.approx(2 + 110 * s) and x0 == pytest.approx(-10 * s)
    assert verdict(((x0, x1), (y0, y1)), heads, boxes, (400, 400), 10) == "fits"


def test_verdict_says_outside_and_loose():
    heads = np.array([[0.0, 0.0], [1.0, 1.0]])
    none = np.zeros((0, 6))
    assert verdict(((-0.5, 0.9), (-0.5, 1.5)), heads, none, (300, 300), 10) == "outside"
    assert verdict(((-1e200, 1e200), (-1e200, 1e200)), heads, none, (300, 300), 10) == "loose"
    assert verdict(((-0.2, 1.4), (-0.2, 1.4)), heads, none, (300, 300), 10) == "fits"


def test_zero_vectors_and_huge_ones_give_a_finite_view():
    (x0, x1), (y0, y1) = fitted_range(np.zeros((3, 2)), np.zeros((0, 6)), (300, 200), 10)
    assert x0 < -0.9 and x1 > 0.9 and y0 < -0.9 and y1 > 0.9
    huge = np.array([[1e308, -1e308], [0.0, 0.0]])
    rng = fitted_range(huge, np.array([[1e308, -1e308, 5, 50, 5, 5]]), (300, 200), 10)
    assert np.all(np.isfinite(rng))
