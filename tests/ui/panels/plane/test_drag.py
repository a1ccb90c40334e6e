"""Dragging a head on the plane: a live edit, one undo step per drag; Shift snaps the tip to the grid."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from qkv_studio.core import Scene, load_preset
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.plane.drag import snap, snap_step
from qkv_studio.ui.widgets.frame_throttle import flush_pending
from tests.ui.panels.plane.helpers import NO_MODIFIER, SHIFT, drag, move, show, viewport_pos


def test_dragging_the_query_head_is_one_live_undo_step(qtbot, session):
    plane = show(qtbot, session)
    before = np.array(session.scene.q)
    start = plane.head_viewport_pos("Q", 2)
    end = viewport_pos(plane, 2.0, 0.5)
    changes = []
    session.scene_changed.connect(lambda: changes.append(np.array(session.scene.q[2])))
    dragging = []
    session.drag_changed.connect(dragging.append)
    drag(qtbot, plane, start, end)
    assert dragging == [True, False] and not session.dragging  # (panels following a frame late catch up)
    q = session.scene.q[2]
    assert q[0] == pytest.approx(2.0, abs=0.05) and q[1] == pytest.approx(0.5, abs=0.05)
    assert len(changes) >= 3  # it moved live, not only on release
    assert session.undo_stack.count() == 1
    np.testing.assert_array_equal(np.delete(session.scene.q, 2, axis=0), np.delete(before, 2, axis=0))
    np.testing.assert_array_equal(session.scene.k, load_preset("lesson").k)
    # the arrow follows
    assert plane.head_view_pos("Q", 2).x() == pytest.approx(q[0])
    session.flush()
    assert plane.best_key() == int(np.argmax(session.result.weights[2]))
    session.undo_stack.undo()
    np.testing.assert_array_equal(session.scene.q, before)
    assert plane.head_view_pos("Q", 2) == QPointF(1, 2)


def test_two_drags_are_two_undo_steps_and_keys_drag_too(qtbot, session):
    plane = show(qtbot, session)
    drag(qtbot, plane, plane.head_viewport_pos("K", 0), viewport_pos(plane, 1.0, -1.0))
    assert session.scene.k[0] == pytest.approx([1.0, -1.0], abs=0.05)
    assert session.undo_stack.count() == 1
    drag(qtbot, plane, plane.head_viewport_pos("K", 0), viewport_pos(plane, 0.5, -1.0))
    assert session.scene.k[0] == pytest.approx([0.5, -1.0], abs=0.05)
    assert session.undo_stack.count() == 2
    session.undo_stack.undo()
    assert session.scene.k[0] == pytest.approx([1.0, -1.0], abs=0.05)


def test_a_drag_away_from_any_head_edits_nothing(qtbot, session):
    plane = show(qtbot, session)
    drag(qtbot, plane, viewport_pos(plane, -0.8, 1.8), viewport_pos(plane, -0.2, 1.2))
    assert session.undo_stack.count() == 0


@pytest.mark.perf
def test_the_moves_of_a_drag_under_way_come_straight_to_the_plane(qtbot, session):
    plane = show(qtbot, session)
    through_pyqtgraph = []
    handler = plane.view_box.drag_handler
    plane.view_box.drag_handler = lambda ev: through_pyqtgraph.append(
        "start" if ev.isStart() else "finish" if ev.isFinish() else "move") or handler(ev)
    drag(qtbot, plane, plane.head_viewport_pos("Q", 2), viewport_pos(plane, 1.5, 0.5), steps=6)
    # pyqtgraph starts the drag and ends it; the moves between skip its scene (~1 ms a step)
    assert through_pyqtgraph[0] == "start" and through_pyqtgraph[-1] == "finish"
    assert through_pyqtgraph.count("move") <= 1  # (at most the move that started it, before it was ours)
    assert session.scene.q[2] == pytest.approx([1.5, 0.5], abs=0.05)
    assert session.undo_stack.count() == 1 and not session.dragging


# ---- issue 19 item 13: Shift snaps the tip -----------------------------------------------------------

def _on_grid(value: float, step: float) -> bool:
    return abs(value / step - round(value / step)) < 1e-9


def test_shift_snaps_the_dragged_tip_to_halves_in_one_undo_step(qtbot, session):
    plane = show(qtbot, session)
    steps = []
    session.scene_changed.connect(lambda: steps.append(tuple(session.scene.q[2])))
    drag(qtbot, plane, plane.head_viewport_pos("Q", 2), viewport_pos(plane, 1.83, 2.71), modifiers=SHIFT)
    assert tuple(session.scene.q[2]) == (2.0, 2.5)  # not 1.83, 2.71: numbers for the board
    assert steps and all(_on_grid(x, 0.5) and _on_grid(y, 0.5) for x, y in steps), steps  # every step on the grid
    assert session.undo_stack.count() == 1 and not session.dragging
    session.undo_stack.undo()
    assert tuple(session.scene.q[2]) == (1.0, 2.0)


def test_without_shift_the_tip_is_free_but_lands_on_an_axis_near_it(qtbot, session):
    plane = show(qtbot, session)
    px = plane.pixel_size()
    drag(qtbot, plane, plane.head_viewport_pos("K", 1), viewport_pos(plane, 1.83, 3 * px[1]))
    x, y = session.scene.k[1]
    assert x == pytest.approx(1.83, abs=0.02) and not _on_grid(x, 0.5)  # free: where the hand let go
    assert y == 0.0  # 3 px from the axis: on it (k ⟂ the vertical), not 0.01
    assert session.undo_stack.count() == 1


def test_the_header_says_what_shift_does_and_when_it_snaps(qtbot, session):
    plane = show(qtbot, session)
    assert "Shift: steps of 0.5" in plane.info.text()
    vp = plane.plot_widget.viewport()
    start = plane.head_viewport_pos("Q", 2)
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, SHIFT, start)
    for i in range(1, 4):
        move(vp, QPoint(start.x() + 20 * i, start.y()), modifiers=SHIFT)
        qtbot.wait(15)
    flush_pending()
    assert plane.drag.snapping and "Shift held" in plane.info.text()
    move(vp, QPoint(start.x() + 70, start.y()))  # Shift let go: free again
    flush_pending()
    assert not plane.drag.snapping and "Shift held" not in plane.info.text()
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, NO_MODIFIER, QPoint(start.x() + 70, start.y()))
    assert "Shift: steps of 0.5" in plane.info.text()
    assert session.undo_stack.count() == 1


def test_shift_drags_the_first_two_components_of_a_wider_vector(qtbot):
    """dₖ = 3: the plane draws (and a drag edits) the first two components; the third stays."""
    q = np.array([[1.0, 2.0, 0.7], [0.0, 1.0, -0.3]])
    k = np.array([[2.0, 1.0, 0.4], [1.0, 0.0, 0.9]])
    session = Session(Scene.create(["a", "b"], q=q, k=k, v=np.eye(2)))
    plane = show(qtbot, session)
    assert "first 2 of dₖ = 3" in plane.info.text() and not plane.pca_shown()
    assert plane.head_view_pos("Q", 0) == QPointF(1, 2)
    drag(qtbot, plane, plane.head_viewport_pos("Q", 0), viewport_pos(plane, 1.31, 1.12), modifiers=SHIFT)
    np.testing.assert_array_equal(session.scene.q[0], [1.5, 1.0, 0.7])
    np.testing.assert_array_equal(session.scene.q[1], q[1])
    assert session.undo_stack.count() == 1


def test_the_grid_follows_the_scale_of_the_view():
    assert snap_step(4.0) == 0.5  # the lesson's few units
    assert snap_step(40.0) == pytest.approx(5.0)
    assert snap_step(1.0) == pytest.approx(0.05)
    assert snap_step(float("inf")) == 0.5 and snap_step(0.0) == 0.5


def test_snap_rounds_to_the_grid_or_the_pixel_and_pulls_to_the_axes():
    assert snap(1.26, 0.74, step=0.5, axis=(0.0, 0.0), digits=2) == (1.5, 0.5)
    assert snap(-0.2, 3.3, step=0.5, axis=(0.0, 0.0), digits=2) == (0.0, 3.5)  # (0.0, never −0.0)
    assert snap(0.03, 1.234, step=None, axis=(0.05, 0.05), digits=2) == (0.0, 1.23)
    x, _ = snap(0.1500001, 0, step=0.05, axis=(0, 0), digits=2)
    assert repr(x) == "0.15"
