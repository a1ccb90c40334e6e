"""What the heatmap draws over its cells, in one ``paint()``: numbers, masks, the query outline, Σ.

:class:`CellOverlay` reads what to draw from its :class:`~qkv_studio.ui.panels.heatmap_view.HeatmapView`
(the displayed matrix, its colours and the text plan) and paints only the cells in view: nothing is an
item per cell, so 1024 tokens stay fast.  It also outlines the hovered cell.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from qkv_studio.core import row_stats
from qkv_studio.core.stages import SIGNED_STAGES, stage_spec
from qkv_studio.render.colormaps import text_is_dark

# (from the figure's text module: the window needs the rule, not the figure's layout and painting)
from qkv_studio.render.figure_text import format_value as figure_format_value
from qkv_studio.render.label_layout import TextMeasure, value_px, value_px_cap

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult
    from qkv_studio.ui.panels.heatmap_view import HeatmapView

SIGMA_GAP = 0.2  # gap (in cells) between the matrix and the row-sum column
MIN_CELL_PX = 14.0  # cells smaller than this get no numbers at all (cheap early exit)
MIN_HATCH_PX = 6.0
MIN_TEXT_PX = 9.0  # cell numbers smaller than this are not drawn


def format_value(x: float, stage: str) -> str:
    """A cell's number as printed: the figure's rule (so screen and exports agree); "0" for a blocked weight."""
    if x == 0 and stage not in SIGNED_STAGES:
        return "0"
    return figure_format_value(x, stage)


_NUMBERS: list[TextMeasure] = []


def _number_measure() -> TextMeasure:
    """The cells' (demi-bold) font for the label layout, measured once."""
    if not _NUMBERS:
        font = QFont()
        font.setPixelSize(100)
        font.setWeight(QFont.Weight.DemiBold)
        fm = QFontMetricsF(font)
        _NUMBERS.append(TextMeasure(width=lambda text, px: fm.horizontalAdvance(text) * px / 100.0,
                                    line=fm.height() / 100.0))
    return _NUMBERS[0]


class CellTexts:
    """The cells' numbers as printed, kept between paints: a paint re-formats only the rows whose values
    changed (an edit changes one query's row; a repaint with nothing new formats nothing).

    Formatting every cell on every paint cost ~10 ms at 64 tokens.  The cache compares the values it
    formatted with those in view (a few µs), so it needs no signal to stay right, whoever changed them.
    """

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._values: np.ndarray | None = None
        self._texts: list[list[str]] = []
        self._longest: list[str] = []  # each row's longest text (the first of that length)

    def texts(self, values: np.ndarray, stage: str, row0: int, col0: int) -> tuple[list[list[str]], str]:
        """The texts of ``values`` (the block of cells in view from (row0, col0)) at ``stage``, and the
        longest of them (the first of that length, row by row)."""
        key = (stage, row0, col0, values.shape)
        stale: range | np.ndarray  # the rows to format again
        if key != self._key or self._values is None:
            stale = range(values.shape[0])
            self._texts = [[] for _ in stale]
            self._longest = ["0"] * values.shape[0]
        else:
            old = self._values
            same = (old == values) | (np.isnan(old) & np.isnan(values))
            stale = np.flatnonzero(~same.all(axis=1))
        for r in stale:
            row = [format_value(float(v), stage) for v in values[r]]
            self._texts[r] = row
            self._longest[r] = max(row, key=len, default="0")
        self._key = key
        self._values = values.copy()
        return self._texts, max(self._longest, key=len, default="0")


class CellOverlay(pg.GraphicsObject):
    """Everything drawn per cell, in one ``paint()``: numbers, masks, the query outline, Σ column.

    It reads what to draw from its :class:`HeatmapView` (which holds the displayed matrix and its
    colours) and paints only the cells inside the visible range.
    """

    def __init__(self, view: HeatmapView) -> None:
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

        # The selected cell of Q·Kᵀ cell by cell (worked out in the stepper's caption), boldly outlined.
        picked = view.selected_cell()
        if picked is not None and 0 <= picked[0] < n and 0 <= picked[1] < n:
            pen = QPen(QColor(theme.text))
            pen.setWidthF(4.0 * f)
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(tr.mapRect(QRectF(picked[1] - 0.5, picked[0] - 0.5, 1, 1)))

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


def text_plan(view: HeatmapView) -> dict:
    """Which cells of ``view`` get text at the current size (those in view), with which font and colour:
    ``rows``, ``cols`` (ranges in view), ``cell_px``, ``font`` (None: no numbers), ``cells`` (row, col,
    text, dark?) and ``sums`` (row, text) of the Σ column.  The size follows the shared label layout's
    rule (:func:`~qkv_studio.render.label_layout.value_px`), as in the exported figure."""
    plan: dict = {"rows": range(0), "cols": range(0), "cell_px": 0.0, "font": None, "cells": [], "sums": []}
    m, rgba = view._matrix, view._rgba  # (coloured together)
    if m is None or rgba is None:
        return plan
    n = m.shape[0]
    cell_px = view._cell_px()
    if cell_px <= 0:
        return plan
    (x0, x1), (y0, y1) = view.plot.vb.viewRange()
    # the cells wholly in view (zoomed in, a number is never cut at the edge)
    rows = range(max(0, math.ceil(y0 + 0.5 - 1e-9)), min(n, math.floor(y1 - 0.5 + 1e-9) + 1))
    cols = range(max(0, math.ceil(x0 + 0.5 - 1e-9)), min(n, math.floor(x1 - 0.5 + 1e-9) + 1))
    plan.update(rows=rows, cols=cols, cell_px=cell_px)
    if cell_px < MIN_CELL_PX or stage_spec(view._session.stage).previews or not len(rows) or not len(cols):
        return plan
    max_px = min(0.36 * cell_px, 64.0 * view._font_scale)
    cell_h = view._cell_h_px()
    # Rows too flat for legible numbers at any width (a slide's 64 rows are ~4 px tall): nothing to format.
    if value_px_cap(cell_h, _number_measure(), max_px=max_px, height_frac=0.8) < MIN_TEXT_PX:
        return plan
    stage = view._shown
    sub = m[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    if view._text_matrix is not None and view._text_matrix.shape == m.shape:
        sub = view._text_matrix[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    texts, longest = view._cell_texts_cache.texts(sub, stage, rows.start, cols.start)
    sums: list[tuple[int, str]] = []
    if view._sigma:
        # the Session's LiveResult reads as an AttentionResult (state/session.py); core's functions are
        # typed for the dataclass
        result = cast("AttentionResult", view._session.result)
        if result.weights.shape[0] == n:
            for r in rows:
                s = row_stats(result, r)
                sums.append((r, "0" if s.fully_masked else f"{s.row_sum:.2f}"))
    longest = max([longest] + [t for _, t in sums], key=len)
    # the widest number fits its cell and a line its row (on a short slide the rows are much flatter
    # than the cells are wide): the label layout's rule, as in the exported figure
    size = value_px([longest + " "], cell_px, cell_h, _number_measure(),
                    max_px=max_px, min_px=MIN_TEXT_PX, width_frac=0.86, height_frac=0.8)
    if not size:
        return plan
    # (during a morph the cells show a blend of the old and new colours: numbers dark or light for
    # the colours on screen, not the new ones — black on the old dark purple was unreadable)
    shown = view.image_item.image
    colours = shown if view._anim_from is not None and shown is not None and shown.shape == rgba.shape else rgba
    dark = text_is_dark(colours[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1])
    font = QFont()
    font.setWeight(QFont.Weight.DemiBold)
    font.setPixelSize(int(size))
    plan["font"] = font
    plan["cells"] = [(rows[0] + i, cols[0] + j, texts[i][j], bool(dark[i, j]))
                     for i in range(len(rows)) for j in range(len(cols))]
    plan["sums"] = sums
    return plan
