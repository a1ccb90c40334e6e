"""What the heatmap draws over its cells, in one ``paint()``: numbers, masks, the query outline, Σ.

:class:`CellOverlay` reads what to draw from its :class:`~qkv_studio.ui.panels.heatmap_view.HeatmapView`
(the displayed matrix, its colours and the text plan) and paints only the cells in view: nothing is an
item per cell, so 1024 tokens stay fast.  It also outlines the hovered cell.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

if TYPE_CHECKING:
    from qkv_studio.ui.panels.heatmap_view import HeatmapView

SIGMA_GAP = 0.2  # gap (in cells) between the matrix and the row-sum column
MIN_CELL_PX = 14.0  # cells smaller than this get no numbers at all (cheap early exit)
MIN_HATCH_PX = 6.0


class CellOverlay(pg.GraphicsObject):
    """Everything drawn per cell, in one ``paint()``: numbers, masks, the query outline, Σ column.

    It reads what to draw from its :class:`HeatmapView` (which holds the displayed matrix and its
    colours) and paints only the cells inside the visible range.
    """

    def __init__(self, view: "HeatmapView") -> None:
        super().__init__()
        self._view = view
        self._rect = QRectF(-0.5, -0.5, 1, 1)
        # Qt then says which part needs painting: a one-row update draws one row of numbers.
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def set_extent(self, n: int, sigma: bool, rows=None) -> None:
        """Cover an n×n matrix (and the Σ column); repaint all of it, or only ``rows`` (row indices)."""
        width = n + (1 + SIGMA_GAP if sigma else 0)
        rect = QRectF(-0.5, -0.5, width, n)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
            rows = None
        if rows is None:
            self.update()
        elif len(rows):
            r0, r1 = int(min(rows)), int(max(rows))
            self.update(QRectF(-0.5, r0 - 0.5, width, r1 - r0 + 1))

    def update_rows(self, rows, margin: float) -> None:
        """Repaint only these rows (each with ``margin`` cells around it, for the outline's pen)."""
        width = self._rect.width()
        for r in rows:
            self.update(QRectF(-0.5 - margin, r - 0.5 - margin, width + 2 * margin, 1 + 2 * margin))

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        m = 0.05 * max(1.0, self._rect.height())
        return self._rect.adjusted(-m, -m, m, m)

    def paint(self, p: QPainter, option=None, *args) -> None:
        exposed = getattr(option, "exposedRect", None)
        if exposed is not None and not exposed.isEmpty():
            row_lo, row_hi = exposed.top() - 0.5, exposed.bottom() + 0.5
        else:
            row_lo, row_hi = -math.inf, math.inf
        view = self._view
        if view._matrix is None:
            return
        n = view._matrix.shape[0]
        plan = view._text_plan()
        tr = p.transform()
        theme = view._theme
        f = view._font_scale * theme.line_scale

        p.save()
        p.resetTransform()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)

        rows, cols, cell_px = plan["rows"], plan["cols"], plan["cell_px"]

        # Hatch over masked cells so they stay distinct under any colormap (grayscale included).
        if cell_px >= MIN_HATCH_PX and view._blocked is not None and len(rows) and len(cols):
            sub = view._blocked[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
            if sub.any():
                colour = QColor(theme.muted)
                colour.setAlpha(110)
                hatch = QBrush(colour, Qt.BrushStyle.BDiagPattern)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(hatch)
                for r, c in np.argwhere(sub):
                    rr, cc = rows[0] + int(r), cols[0] + int(c)
                    p.drawRect(tr.mapRect(QRectF(cc - 0.5, rr - 0.5, 1, 1)))
                p.setBrush(Qt.BrushStyle.NoBrush)

        # Row-sum column: a panel-coloured strip right of the matrix.
        if view._sigma and cell_px >= MIN_CELL_PX:
            x0 = n - 0.5 + SIGMA_GAP
            if len(rows):
                strip = tr.mapRect(QRectF(x0, rows[0] - 0.5, 1, len(rows)))
                p.fillRect(strip, QColor(theme.panel))
                pen = QPen(QColor(theme.grid))
                pen.setWidthF(1.0)
                pen.setCosmetic(True)
                p.setPen(pen)
                p.drawRect(strip)

        # Numbers.
        font = plan["font"]
        if font is not None:
            p.setFont(font)
            dark, light = QColor("#111111"), QColor("#ffffff")
            for r, c, text, is_dark in plan["cells"]:
                if not row_lo <= r <= row_hi:
                    continue
                rect = tr.mapRect(QRectF(c - 0.5, r - 0.5, 1, 1))
                p.setPen(dark if is_dark else light)
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
            if view._sigma:
                p.setPen(QColor(theme.text))
                x0 = n - 0.5 + SIGMA_GAP
                for r, text in plan["sums"]:
                    if not row_lo <= r <= row_hi:
                        continue
                    rect = tr.mapRect(QRectF(x0, r - 0.5, 1, 1))
                    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

        # The selected query's row, outlined (the Σ cell too when it is shown).
        q = view._query
        if 0 <= q < n:
            width = n + (1 + SIGMA_GAP if view._sigma else 0)
            rect = tr.mapRect(QRectF(-0.5, q - 0.5, width, 1))
            pen = QPen(QColor(theme.highlight))
            pen.setWidthF(3.0 * f)
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect)

        # The hovered cell (its read-out is the tooltip), in the text colour.
        hover = view.hovered_cell()
        if hover is not None and 0 <= hover[0] < n and 0 <= hover[1] < n:
            pen = QPen(QColor(theme.text))
            pen.setWidthF(2.0 * f)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(tr.mapRect(QRectF(hover[1] - 0.5, hover[0] - 0.5, 1, 1)))
        p.restore()

    def update_cell(self, cell: tuple[int, int] | None, margin: float) -> None:
        """Repaint one cell with ``margin`` cells around it (a hover moving on)."""
        if cell is not None:
            self.update(QRectF(cell[1] - 0.5 - margin, cell[0] - 0.5 - margin, 1 + 2 * margin, 1 + 2 * margin))
