"""Drawing a slide's ink and the laser dot with a QPainter: the same strokes on the projector, on the
presenter console's copy of the slide and in an exported picture.

Every stroke and the dot have a thin dark halo under them, so that they stand out on the palest and
the darkest heatmap cell alike (a colour alone vanishes on a cell of its own hue).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QRadialGradient

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


def paint_strokes(painter: QPainter, strokes: Iterable[Stroke], rect: QRectF) -> None:
    """``strokes`` (points as fractions of the slide) drawn into ``rect``, the slide's place."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    x0, y0, w, h = rect.x(), rect.y(), rect.width(), rect.height()
    for s in strokes:
        base = max(1.0, s.width * w)
        colour = ink_colour(s.colour)
        pts = s.points
        if len(pts) == 1:
            x, y, p = pts[0]
            r = base * (0.5 + 0.5 * p)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(_HALO)
            painter.drawEllipse(QPointF(x0 + x * w, y0 + y * h), r + 1.5, r + 1.5)
            painter.setBrush(colour)
            painter.drawEllipse(QPointF(x0 + x * w, y0 + y * h), r, r)
            continue
        pressures = [p for _, _, p in pts]
        if max(pressures) - min(pressures) < 0.05:  # (a mouse: one path, one width)
            path = QPainterPath(QPointF(x0 + pts[0][0] * w, y0 + pts[0][1] * h))
            for x, y, _ in pts[1:]:
                path.lineTo(x0 + x * w, y0 + y * h)
            width = base * (0.5 + 0.5 * pressures[0])
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for pen in (QPen(_HALO, width + 3), QPen(colour, width)):
                pen.setCapStyle(Qt.PenCapStyle.RoundCap)
                pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
                painter.setPen(pen)
                painter.drawPath(path)
            continue
        for halo in (True, False):  # (a pen: each segment as wide as its pressure)
            for (ax, ay, ap), (bx, by, bp) in zip(pts, pts[1:], strict=False):
                width = base * (0.5 + 0.5 * (ap + bp) / 2)
                pen = QPen(_HALO if halo else colour, width + (3 if halo else 0))
                pen.setCapStyle(Qt.PenCapStyle.RoundCap)
                painter.setPen(pen)
                painter.drawLine(QPointF(x0 + ax * w, y0 + ay * h), QPointF(x0 + bx * w, y0 + by * h))
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
