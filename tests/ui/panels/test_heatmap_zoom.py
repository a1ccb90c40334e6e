"""Ctrl+wheel zooms a large heatmap around the pointer; every token in view is then named."""

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from tests.ui.panels.heatmap_helpers import preset_session, settle, shown


def _wheel(view, row, col, notches: int, modifiers=Qt.KeyboardModifier.ControlModifier) -> None:
    pos = QPointF(view.cell_center(row, col))
    viewport = view.graphics.viewport()
    event = QWheelEvent(pos, QPointF(viewport.mapToGlobal(pos.toPoint())), QPoint(0, 0), QPoint(0, 120 * notches),
                        Qt.MouseButton.NoButton, modifiers, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, event)


def _visible(view):
    (x0, x1), (y0, y1) = view.plot.vb.viewRange()
    return x1 - x0, y1 - y0


def test_ctrl_wheel_zooms_around_the_pointer_and_names_every_token_in_view(qtbot):
    session = preset_session("long")
    view = shown(qtbot, session, (700, 600))
    whole = _visible(view)
    assert view.labeller.rows.step > 1 and view.cell_texts() == []
    for _ in range(8):
        _wheel(view, 40, 20, 1)
        settle(qtbot, view)
    w, h = _visible(view)
    assert w < whole[0] / 4 and h < whole[1] / 4
    (x0, x1), (y0, y1) = view.plot.vb.viewRange()
    assert x0 - 1 <= 20 <= x1 + 1 and y0 - 1 <= 40 <= y1 + 1  # around the pointer
    left = dict(view.plot.getAxis("left").shown_labels())
    rows = [r for r in range(64) if y0 + 0.5 <= r <= y1 - 0.5]
    assert rows and all(r in left for r in rows)  # zoomed in, every visible row is named
    texts = view.cell_texts()
    assert texts  # and the cells are large enough for their numbers, each in a cell wholly in view
    assert all(x0 <= c - 0.5 and c + 0.5 <= x1 and y0 <= r - 0.5 and r + 0.5 <= y1 for r, c, _ in texts if c < 64)
    # the colour bar spans the cells in view, inside the panel (not the whole zoomed grid)
    qtbot.waitUntil(lambda: view.graphics.viewport().repaint() or view.graphics.sceneRect().contains(
        view.color_bar.bar.sceneBoundingRect()), timeout=2000)
    view.reset_zoom()
    settle(qtbot, view)
    assert _visible(view) == whole


def test_a_plain_wheel_and_a_small_grid_do_not_zoom(qtbot):
    session = preset_session("long")
    view = shown(qtbot, session, (700, 600))
    whole = _visible(view)
    _wheel(view, 10, 10, 3, Qt.KeyboardModifier.NoModifier)
    assert _visible(view) == whole
    lesson = preset_session("lesson")
    small = shown(qtbot, lesson, (700, 600))
    full = _visible(small)
    _wheel(small, 1, 1, 3)
    assert _visible(small) == full


def test_a_stage_step_keeps_the_zoom_and_a_new_scene_shows_the_whole_grid(qtbot):
    session = preset_session("long")
    view = shown(qtbot, session, (700, 600))
    view.zoom_at(30, 30, 0.25)
    zoomed = _visible(view)
    session.set_stage("scores")  # (the Σ column goes: the zoom stays)
    settle(qtbot, view)
    assert _visible(view) == zoomed
    session.remove_token(0)
    settle(qtbot, view)
    assert _visible(view)[1] > 60


def test_the_view_menu_restores_the_whole_heatmap(qtbot, show_window):
    doc = preset_session("long")
    window = show_window(doc.scene, (1280, 720), view=doc.view)
    heatmap = window.heatmap
    heatmap.zoom_at(20, 20, 0.3)
    assert heatmap.zoom.zoomed
    assert window.acts.heatmap_whole.shortcuts()[0].toString() == "Ctrl+Shift+F"
    assert window.acts.heatmap_whole in window.menu_by_title["&View"].actions()
    window.acts.heatmap_whole.trigger()
    assert not heatmap.zoom.zoomed
