"""Drawing a slide's ink and the laser dot with a QPainter: the same strokes on the projector, on the
presenter console's copy of the slide and in an exported picture.

Every stroke and the dot have a thin dark halo under them, so that they stand out on the palest and
the darkest heatmap cell alike (a colour alone vanishes on a cell of its own hue).

Bounded work: a slide may hold 500 strokes of 5 000 points (:mod:`qkv_studio.core.ink`'s limits), 2.5
million segments — minutes of painting one by one.  :func:`paint_strokes` first simplifies every stroke to
the resolution it is drawn at (:func:`simplify`: consecutive points in the same cell of a grid of half a
pixel are one point; only while the whole slide would still exceed :data:`SEGMENT_BUDGET` segments does the
cell grow, and a slide with that much ink is covered by it anyway), then draws each stroke's segments in
a few ``drawLines`` calls, one per width (widths rounded to a quarter pixel), round-capped so that their
joins are round.  At the limits a slide paints in about 2 s, reporting through :mod:`qkv_studio.core.progress`
(so the window can show it and stop it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QRadialGradient

from qkv_studio.core import progress
from qkv_studio.core.ink import Stroke
from qkv_studio.render.theme import Theme

#: The colours of ink 1–4 (red, yellow, green, blue): saturated, each legible on white and on black.
INK_RGB: tuple[str, ...] = ("#ff1f4b", "#ffd400", "#1fd65f", "#2f7bff")
_HALO = QColor(0, 0, 0, 150)


def ink_colour(colour: int) -> QColor:
    return QColor(INK_RGB[(int(colour) - 1) % len(INK_RGB)])


def laser_colour(theme: Theme) -> QColor:
    """The laser dot's colour: the theme's highlight (the selected row's), brightened."""
    c = QColor(theme.highlight)
    return c.lighter(115) if c.lightness() < 140 else c


SEGMENT_BUDGET = 120_000  # segments drawn per slide at most (≈ 2 s); far more than a slide of ink can show
_WIDTH_STEP = 0.25  # px: segment widths are rounded to this, so a stroke is drawn in a few calls


def _cells(px: np.ndarray, cell: float) -> np.ndarray:
    """Which points start a new grid cell (the first and last always): the points kept at ``cell`` px."""
    q = np.floor(px / cell)
    keep = np.ones(len(px), dtype=bool)
    keep[1:] = np.any(q[1:] != q[:-1], axis=1)
    keep[-1] = True
    return keep


def simplify(strokes: Sequence[Stroke], rect: QRectF, budget: int = SEGMENT_BUDGET
             ) -> list[tuple[Stroke, np.ndarray, np.ndarray]]:
    """Each stroke as (stroke, its points in pixels (m × 2), their pressures (m)), with consecutive points
    that fall in the same cell of a half-pixel grid made one; the cell grows (×1.5) only while the slide
    would hold more than ``budget`` segments."""
    scale = np.array([rect.width(), rect.height()])
    origin = np.array([rect.x(), rect.y()])
    arrays = []
    for s in strokes:
        pts = np.asarray(s.points, dtype=np.float64).reshape(-1, 3)
        arrays.append((s, pts[:, :2] * scale + origin, pts[:, 2]))
    cell = 0.5
    while True:
        keeps = [_cells(px, cell) if len(px) > 2 else np.ones(len(px), dtype=bool) for _, px, _ in arrays]
        if sum(int(k.sum()) - 1 for k in keeps) <= budget or cell > max(rect.width(), rect.height()):
            break
        cell *= 1.5
    return [(s, px[k], p[k]) for (s, px, p), k in zip(arrays, keeps, strict=True)]


def paint_strokes(painter: QPainter, strokes: Iterable[Stroke], rect: QRectF, *, reports: bool = False) -> None:
    """``strokes`` (points as fractions of the slide) drawn into ``rect``, the slide's place (simplified to
    its resolution first, see the module notes).  ``reports``: a job's picture (an export), which reports
    through :mod:`qkv_studio.core.progress` — never a widget's paint event, which a report could re-enter."""
    strokes = tuple(strokes)
    if not strokes:
        return
    painter.save()
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        w = rect.width()
        shapes = simplify(strokes, rect)
        for i, (s, px, pressure) in enumerate(shapes):
            if reports and not i % 8:
                progress.report(i / len(shapes), f"ink: stroke {i + 1} of {len(shapes)}")
            base = max(1.0, s.width * w)
            colour = ink_colour(s.colour)
            if len(px) == 1:
                r = base * (0.5 + 0.5 * float(pressure[0]))
                centre = QPointF(float(px[0, 0]), float(px[0, 1]))
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(_HALO)
                painter.drawEllipse(centre, r + 1.5, r + 1.5)
                painter.setBrush(colour)
                painter.drawEllipse(centre, r, r)
                continue
            if float(pressure.max() - pressure.min()) < 0.05:  # (a mouse: one width)
                widths = np.full(len(px) - 1, base * (0.5 + 0.5 * float(pressure[0])))
            else:  # (a pen: each segment as wide as its pressure)
                widths = base * (0.5 + 0.5 * (pressure[:-1] + pressure[1:]) / 2)
            levels = np.round(widths / _WIDTH_STEP).astype(np.int64)
            ends = np.concatenate([px[:-1], px[1:]], axis=1).tolist()
            groups: dict[int, list[QLineF]] = {}
            for level, (ax, ay, bx, by) in zip(levels.tolist(), ends, strict=True):
                groups.setdefault(level, []).append(QLineF(ax, ay, bx, by))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for halo in (True, False):
                for level, lines in groups.items():
                    width = max(level * _WIDTH_STEP, 0.1)
                    pen = QPen(_HALO if halo else colour, width + (3 if halo else 0))
                    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
                    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
                    painter.setPen(pen)
                    painter.drawLines(lines)
        if reports:
            progress.report(1.0, "ink: done")
    finally:
        painter.restore()


def paint_laser(painter: QPainter, trail: Sequence[tuple[float, float]], rect: QRectF, colour: QColor) -> None:
    """The laser dot at the trail's last point (fractions of the slide), the earlier points a short
    fading tail; a dark ring and a white one around it make it visible on any cell."""
    if not trail:
        return
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setPen(Qt.PenStyle.NoPen)
    radius = max(5.0, rect.width() * 0.007)
    n = len(trail)
    for i, (x, y) in enumerate(trail[:-1]):
        fade = QColor(colour)
        fade.setAlphaF(0.15 + 0.5 * (i + 1) / n)
        painter.setBrush(fade)
        painter.drawEllipse(QPointF(rect.x() + x * rect.width(), rect.y() + y * rect.height()),
                            radius * (0.35 + 0.5 * (i + 1) / n), radius * (0.35 + 0.5 * (i + 1) / n))
    x, y = trail[-1]
    centre = QPointF(rect.x() + x * rect.width(), rect.y() + y * rect.height())
    glow = QRadialGradient(centre, radius * 2.4)
    halo = QColor(colour)
    halo.setAlpha(110)
    glow.setColorAt(0.0, halo)
    glow.setColorAt(1.0, QColor(colour.red(), colour.green(), colour.blue(), 0))
    painter.setBrush(glow)
    painter.drawEllipse(centre, radius * 2.4, radius * 2.4)
    painter.setBrush(QColor(0, 0, 0, 200))
    painter.drawEllipse(centre, radius + 3, radius + 3)
    painter.setBrush(QColor("white"))
    painter.drawEllipse(centre, radius + 1.5, radius + 1.5)
    painter.setBrush(colour)
    painter.drawEllipse(centre, radius, radius)
    painter.restore()
