"""Zooming the heatmap: Ctrl+wheel around the pointer, and back to the whole grid.

For many tokens (:data:`ZOOM_FROM` and more) a lecturer zooms in to read the cells: the view's range
narrows around the pointer (never beyond the grid, never below :data:`MIN_CELLS` cells), the numbers
appear once the cells are large enough and the axes name every token in view.  :meth:`HeatmapZoom.reset`
shows the whole grid again (View → Whole heatmap).  Only pyqtgraph's public ViewBox API is used.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QGraphicsView

#: Zoom is offered from this many tokens on (smaller grids show every cell readably already).
ZOOM_FROM = 64
#: The fewest cells a zoomed view shows across.
MIN_CELLS = 4
#: One wheel notch (120 units) zooms by this factor.
STEP = 1.25

Range = tuple[tuple[float, float], tuple[float, float]]


class HeatmapZoom(QObject):
    """Ctrl+wheel over ``graphics`` zooms ``vb``; ``full()`` is the whole grid's (x, y) range and
    ``n()`` the token count (zoom only from :data:`ZOOM_FROM` tokens)."""

    def __init__(self, vb: pg.ViewBox, graphics: QGraphicsView, full: Callable[[], Range], n: Callable[[], int],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._vb, self._graphics, self._full, self._n = vb, graphics, full, n
        self._viewport = graphics.viewport()
        self.zoomed = False
        self._viewport.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if obj is self._viewport and isinstance(event, QWheelEvent) \
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            delta = event.angleDelta().y() or event.angleDelta().x()
            if delta and self._n() >= ZOOM_FROM:
                scene_pos = self._graphics.mapToScene(event.position().toPoint())
                self.zoom_at(self._vb.mapSceneToView(scene_pos), STEP ** (-delta / 120.0))
            event.accept()
            return True
        return False

    def zoom_at(self, centre: QPointF, factor: float) -> None:
        """Scale the view's range by ``factor`` (< 1 zooms in) keeping ``centre`` (view coordinates) in
        place, inside the whole grid."""
        (fx0, fx1), (fy0, fy1) = self._full()
        (x0, x1), (y0, y1) = self._vb.viewRange()
        cx, cy = centre.x(), centre.y()
        w = min(fx1 - fx0, max(MIN_CELLS, (x1 - x0) * factor))
        h = min(fy1 - fy0, max(MIN_CELLS, (y1 - y0) * factor))
        # keep the point under the pointer where it is on screen
        nx0 = cx - (cx - x0) * w / (x1 - x0) if x1 > x0 else cx - w / 2
        ny0 = cy - (cy - y0) * h / (y1 - y0) if y1 > y0 else cy - h / 2
        nx0 = min(max(nx0, fx0), fx1 - w)
        ny0 = min(max(ny0, fy0), fy1 - h)
        self.zoomed = w < fx1 - fx0 - 1e-9 or h < fy1 - fy0 - 1e-9
        self._vb.setRange(xRange=(nx0, nx0 + w), yRange=(ny0, ny0 + h), padding=0)

    def reset(self) -> None:
        """The whole grid again."""
        self.zoomed = False
        (fx0, fx1), (fy0, fy1) = self._full()
        self._vb.setRange(xRange=(fx0, fx1), yRange=(fy0, fy1), padding=0)
