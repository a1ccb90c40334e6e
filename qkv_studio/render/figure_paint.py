"""Painting one figure: :func:`paint_single` draws exactly the layout of
:mod:`qkv_studio.render.figure_geometry` (cells, hatching, numbers, the query outline, label ticks, the
colour bar, every text) onto any paint device.  :func:`qkv_studio.render.figure.paint_figure` (which
also draws a pair, :mod:`qkv_studio.render.pair`) and ``render_image`` are built on it.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter, QPainterPath, QPen

from qkv_studio.core import Scene
from qkv_studio.render.colormaps import is_signed, lut, text_is_dark
from qkv_studio.render.figure_geometry import (
    _HIGHLIGHT_WIDTH,
    MAX_SHAPE_TOKENS,
    FigureLayout,
    FigureOptions,
    Morph,
    _fit,
    _layout,
    background_color,
)
from qkv_studio.render.figure_text import _draw_text, _set_reference_font, _text_at_reference, format_value

#: Largest PNG width accepted by :func:`render_image` (the export dialog offers up to 7680).
MAX_WIDTH_PX = 16384

_MIN_HATCH_CELL = 5.0  # the window hatches from 6 screen px
_DARK_TEXT = "#111111"
_LIGHT_TEXT = "#ffffff"


def _hatch_path(cells: list[QRectF], spacing: float) -> QPainterPath:
    """Diagonal hatching lines (↗) clipped by hand to each cell (no clip paths: SVG-safe)."""
    path = QPainterPath()
    for r in cells:
        x0, y0, w, h = r.left(), r.top(), r.width(), r.height()
        # lines x + y = k for k in (0, w + h), in cell-local coordinates (x right, y down)
        k = spacing
        while k < w + h:
            ax, ay = (k, 0.0) if k <= w else (w, k - w)
            bx, by = (0.0, k) if k <= h else (k - h, h)
            path.moveTo(x0 + ax, y0 + ay)
            path.lineTo(x0 + bx, y0 + by)
            k += spacing
    return path


def _paint_cells(painter: QPainter, lay: FigureLayout) -> None:
    n, c, gap = lay.n, lay.cell, lay.gap
    values = lay.matrix
    rgba = lay.cell_rgba if lay.cell_rgba is not None else lay.scale.rgba(values)
    shown = lay.text_matrix if lay.text_matrix is not None else values
    masked_fill = QColor(lay.theme.masked)
    blocked = lay.blocked
    if n > MAX_SHAPE_TOKENS:
        img_arr = np.ascontiguousarray(rgba, dtype=np.uint8).copy()
        mc = masked_fill
        img_arr[blocked] = (mc.red(), mc.green(), mc.blue(), 255)
        img_arr[..., 3] = 255
        img = QImage(img_arr.data, n, n, 4 * n, QImage.Format.Format_RGBA8888).copy()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        painter.drawImage(lay.logical_grid(), img)
        painter.restore()
        return
    painter.setPen(Qt.PenStyle.NoPen)
    # Touching cells (no gap) are drawn without antialiasing: fractional edges would show seams.
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, gap > 0)
    masked_cells = []
    for i in range(n):
        for j in range(n):
            r = lay.logical_cell(i, j).adjusted(gap, gap, -gap, -gap)
            if blocked[i, j]:
                painter.fillRect(r, masked_fill)
                masked_cells.append(r)
            else:
                col = rgba[i, j]
                painter.fillRect(r, QColor(int(col[0]), int(col[1]), int(col[2])))
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    if masked_cells and c >= _MIN_HATCH_CELL:
        pen = QPen(QColor(lay.theme.muted), max(0.6, c / 48) * lay.theme.line_scale)
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.save()
        painter.setOpacity(0.45)
        # a spacing that divides the cell, so the hatch runs on unbroken across neighbouring cells
        painter.drawPath(_hatch_path(masked_cells, c / max(1, round(c / max(5.0, c / 6)))))
        painter.restore()

    if lay.show_values:
        signed = is_signed(lay.options.stage)
        dark = text_is_dark(rgba)
        masked_dark = bool(text_is_dark(np.array([masked_fill.red(), masked_fill.green(), masked_fill.blue()])))
        _set_reference_font(painter)
        for i in range(n):
            for j in range(n):
                r = lay.logical_cell(i, j)
                if blocked[i, j]:
                    t = "−∞" if signed else "0"
                    painter.setPen(QColor(_DARK_TEXT if masked_dark else _LIGHT_TEXT))
                else:
                    t = format_value(float(shown[i, j]), lay.options.stage)
                    painter.setPen(QColor(_DARK_TEXT if dark[i, j] else _LIGHT_TEXT))
                _text_at_reference(painter, r, lay.value_px, Qt.AlignmentFlag.AlignCenter, t)


def _paint_colorbar(painter: QPainter, lay: FigureLayout) -> None:
    bar = lay.colorbar_logical
    if bar is None:
        return
    table = lut(lay.scale.cmap)
    grad = QLinearGradient(bar.left(), bar.bottom(), bar.left(), bar.top())
    stops = 64
    for k in range(stops + 1):
        t = k / stops
        col = table[round(t * (len(table) - 1))]
        grad.setColorAt(t, QColor(int(col[0]), int(col[1]), int(col[2])))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.fillRect(bar, grad)
    u = lay.zoom
    pen = QPen(QColor(lay.theme.text), 1.0 * lay.theme.line_scale * u)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRect(bar)
    for v, _ in lay.colorbar_ticks:
        y = bar.bottom() - (v - lay.scale.lo) / (lay.scale.hi - lay.scale.lo) * bar.height()
        painter.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 5 * u, y))


def paint_single(painter: QPainter, rect: QRectF, scene: Scene, options: FigureOptions,
                 morph: Morph | None = None) -> FigureLayout:
    """Draw one figure into ``rect`` (device coordinates of the painter), scaled uniformly and centred
    (``options.compare_with`` is not looked at: :func:`qkv_studio.render.figure.paint_figure` draws pairs).

    The background is *not* filled here unless ``options.background`` asks for one (then ``rect`` is
    filled).  With ``morph``, a frame of the stage morph (see :class:`Morph`).  Returns the layout
    used, mapped into ``rect``.
    """
    lay = _layout(scene, options, morph)
    lay.transform = _fit(lay.logical_size, QRectF(rect))
    bg = background_color(options)
    if bg.alpha() > 0:
        painter.fillRect(QRectF(rect), bg)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    painter.setTransform(lay.transform, True)
    _paint_cells(painter, lay)

    c = lay.cell
    theme = lay.theme
    u = lay.zoom
    if lay.label_ticks:
        painter.setPen(QPen(QColor(theme.muted), 1.0 * theme.line_scale * u))
        gx, gy = lay.origin.x(), lay.origin.y()
        g = lay.n * c
        for i in lay.row_label_ticks:
            y = gy + (i + 0.5) * c
            painter.drawLine(QPointF(gx - 7 * u, y), QPointF(gx - 2 * u, y))
        for j in lay.col_label_ticks:
            x = gx + (j + 0.5) * c
            painter.drawLine(QPointF(x, gy + g + 2 * u), QPointF(x, gy + g + 7 * u))

    if lay.options.highlight_query:
        pen = QPen(QColor(theme.highlight), _HIGHLIGHT_WIDTH * theme.line_scale * u)
        row = lay.logical_query_rect()
        pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(row)

    _paint_colorbar(painter, lay)
    for it in lay.texts:
        _draw_text(painter, it)
    painter.restore()
    return lay
