"""Dragging arrow heads on the plane: grab the nearest head, move it with the pointer, snap on Shift.

A press within :data:`GRAB_PX` pixels of a head grabs it (the query's first); each move edits that
vector through :meth:`Session.drag_vector`, and the whole drag is one undo step (the Session merges the
moves between two :meth:`Session.begin_drag` calls).  Once a drag is ours its moves come straight from
the plot's viewport (an event filter), skipping pyqtgraph's scene and its hit-tests (~1.7 ms a step).
A drag reads the pointer through the view as it was when the drag began: the view may grow under a
head dragged out of it (see view_range), and the head then goes on moving as the hand does, where a
pointer read through the grown view would make the value leap (and the view grow again).

Where the tip lands (:func:`snap`): a free drag rounds to what a pixel can tell apart; a tip within
:data:`AXIS_PX` pixels of an axis lands on it (a component of exactly 0: q ⟂ k, a dot product of 0, is a
point of the lesson, and a hand cannot hit 0.00 by itself); with **Shift** held the tip snaps to a grid
of :func:`snap_step` — 0.5 at the lesson's scale.  Half-steps rather than tenths because the lesson's
vectors are small integers (q sat = [1, 2], k cat = [2, 1]) and the lecturer works the dot products out
on the board: 1.5·2 + 0.5·1 is mental arithmetic, 1.8·2.7 is not; a tenth is also only ~6 px on a
panel-sized plane, too fine to hit reliably with a trackpad or from a lectern, so the numbers would look
as random as without the grid.  Scenes far larger or smaller than the lesson's get the same grid
scaled by powers of ten (5, 0.05), so a step is always a visible distance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt

if TYPE_CHECKING:
    from qkv_studio.ui.panels.plane.widget import VectorPlane

GRAB_PX = 12.0  # how close (in pixels) a press must be to an arrow head to grab it
AXIS_PX = 6.0  # a tip this close (in pixels, times the font scale) to an axis lands on it


def snap_step(span: float) -> float:
    """The Shift grid for a view ``span`` data units across (its narrower side): 0.5 for the lesson's
    few units, 0.5·10ᵏ for a view ten times larger or smaller (see the module's docstring)."""
    if not (span > 0 and math.isfinite(span)):
        return 0.5
    return 0.5 * 10.0 ** math.floor(math.log10(span / 2.0))


def snap(x: float, y: float, *, step: float | None, axis: tuple[float, float], digits: int) -> tuple[float, float]:
    """Where a tip dragged to (x, y) lands: on the ``step`` grid if given, else rounded to ``digits``
    decimals; and on an axis when within ``axis`` = (x, y) data units of it."""
    if step is not None:
        places = max(0, 1 - math.floor(math.log10(step)))  # (enough decimals for the step, and no 1.5000000000000002)
        x, y = round(round(x / step) * step, places), round(round(y / step) * step, places)
    else:
        x, y = round(x, digits), round(y, digits)
    if abs(x) <= axis[0]:
        x = 0.0
    if abs(y) <= axis[1]:
        y = 0.0
    return x + 0.0, y + 0.0  # (no −0.0 in a cell)


class PlaneViewBox(pg.ViewBox):
    """A ViewBox that hands left-button drags to the plane (to move arrow heads)."""

    def __init__(self) -> None:
        super().__init__(enableMenu=False)
        #: called with each drag event (pyqtgraph's MouseDragEvent); True when it used the event
        self.drag_handler: Callable[[Any], bool] | None = None

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802 - pyqtgraph's name
        if self.drag_handler is not None and self.drag_handler(ev):
            return
        ev.ignore()


class PlaneDrag(QObject):
    """The drag of one arrow head at a time on ``plane`` (its view box's drag handler, and an event
    filter on its viewport).  ``state`` is (matrix, row, x, y at the start) while a drag lasts;
    ``snapping`` whether Shift held the tip to the grid at its last move."""

    # (a class default too: a plane torn down by the garbage collector may have its viewport's events
    # filtered here after this object's attributes were cleared — no drag is under way then)
    state: tuple[str, int, float, float] | None = None

    def __init__(self, plane: VectorPlane) -> None:
        super().__init__(plane)
        self._plane = plane
        self.state: tuple[str, int, float, float] | None = None
        self.snapping = False
        self._origin = QPointF()  # where the pointer was, in data units, when the head was at state's x, y
        self._to_data = None  # scene -> data units as the view was when the drag began
        self._grid = (0.5, 2, (0.0, 0.0))  # the Shift grid, free decimals, axis pull (data units) of the drag
        plane.view_box.drag_handler = self.on_drag_event
        plane.plot_widget.viewport().installEventFilter(self)
        plane.plot_widget.scene().sigMouseMoved.connect(self._on_hover)

    def pick(self, scene_pos) -> tuple[str, int, float, float] | None:
        """The draggable head nearest a scene position, within GRAB_PX pixels (the query first)."""
        p = self._plane
        vecs = p.vectors
        tr = p.view_box.childGroup.sceneTransform()

        def dist(arr: np.ndarray) -> np.ndarray:
            sx = tr.m11() * arr[:, 0] + tr.m21() * arr[:, 1] + tr.dx()
            sy = tr.m12() * arr[:, 0] + tr.m22() * arr[:, 1] + tr.dy()
            return np.hypot(sx - scene_pos.x(), sy - scene_pos.y())

        radius = GRAB_PX * max(1.0, p.font_scale())
        query = p.session.query
        if dist(vecs.query_vec)[0] <= radius:
            return ("Q", query, *vecs.head("Q", query))
        best: tuple[float, str, int] | None = None
        sets = [("K", vecs.keys)] + ([("V", vecs.values)] if p.values_visible() else [])
        for name, arr in sets:
            if len(arr):
                d = dist(arr)
                j = int(np.argmin(d))
                if d[j] <= radius and (best is None or d[j] < best[0]):
                    best = (float(d[j]), name, j)
        if best is None:
            return None
        _, name, j = best
        return (name, j, *vecs.head(name, j))

    def on_drag_event(self, ev) -> bool:
        """pyqtgraph's drag event (the press that starts a drag, the release that ends it); True if used."""
        if ev.button() != Qt.MouseButton.LeftButton:
            return False
        p = self._plane
        if ev.isStart():
            p.catch_up_now()  # (pick from what is on screen, not from a frame still waiting)
            hit = None if p.read_only() else self.pick(ev.buttonDownScenePos())
            if hit is None:
                return False
            self.state = hit
            self._begin(ev.buttonDownScenePos())
            p.session.begin_drag()
            p.plot_widget.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
        if self.state is None:
            return False
        ev.accept()
        self.move_to(ev.scenePos(), ev.modifiers())
        if ev.isFinish():
            self.state = None
            self._set_snapping(False)
            p.session.end_drag()
            p.plot_widget.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            p.drag_finished()
        return True

    def _begin(self, scene_pos) -> None:
        """Remember the view as it is: the whole drag reads the pointer, and snaps, through it."""
        p = self._plane
        to_data, ok = p.view_box.childGroup.sceneTransform().inverted()
        self._to_data = to_data if ok else None
        self._origin = self._map(scene_pos)
        (vx0, vx1), (vy0, vy1) = p.view_box.viewRange()
        px = p.pixel_size()
        tol = AXIS_PX * max(1.0, p.font_scale())
        self._grid = (snap_step(min(vx1 - vx0, vy1 - vy0)), _decimals(vx1 - vx0), (tol * px[0], tol * px[1]))

    def _map(self, scene_pos) -> QPointF:
        if self._to_data is None:  # (a singular view: extreme ranges)
            return self._plane.view_box.mapSceneToView(scene_pos)
        return self._to_data.map(QPointF(scene_pos))

    def step(self) -> float:
        """The Shift grid of the drag under way (or of one begun now)."""
        if self.state is not None:
            return self._grid[0]
        (vx0, vx1), (vy0, vy1) = self._plane.view_box.viewRange()
        return snap_step(min(vx1 - vx0, vy1 - vy0))

    def move_to(self, scene_pos: QPointF, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
        """The dragged head follows the pointer (at ``scene_pos``) by as much as it moved; snapped (see
        :func:`snap`), on the grid while Shift is held; nothing while no drag is under way."""
        if self.state is None:
            return
        matrix, row, x0, y0 = self.state
        p = self._plane
        at = self._map(scene_pos)
        shift = bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
        self._set_snapping(shift)
        step, digits, axis = self._grid
        x, y = snap(x0 + at.x() - self._origin.x(), y0 + at.y() - self._origin.y(),
                    step=step if shift else None, axis=axis, digits=digits)
        scene = p.session.shown
        if matrix in ("Q", "K") and scene.d_k == 1 or matrix == "V" and scene.d_v == 1:
            y = 0.0
        p.session.drag_vector(matrix, row, x, y)

    def _set_snapping(self, on: bool) -> None:
        if on != self.snapping:
            self.snapping = on
            self._plane.snapping_changed()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        # (the plot's viewport: a move of a drag already under way)
        if (self.state is not None and event.type() == QEvent.Type.MouseMove
                and event.buttons() & Qt.MouseButton.LeftButton):
            self.move_to(self._plane.plot_widget.mapToScene(event.position().toPoint()), event.modifiers())
            return True
        return False

    def _on_hover(self, scene_pos) -> None:
        if self.state is not None:
            return
        vp = self._plane.plot_widget.viewport()
        if not self._plane.read_only() and self.pick(scene_pos) is not None:
            vp.setCursor(Qt.CursorShape.OpenHandCursor)
        else:
            vp.unsetCursor()


def _decimals(span: float) -> int:
    """Decimals a free drag keeps: about what one pixel of a ~200-pixel view of ``span`` tells apart."""
    return int(-math.floor(math.log10(max(span, 1e-12) / 200.0)))
