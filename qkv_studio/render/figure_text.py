"""The figure's text: its font, measured at a reference size, and how a piece of text is drawn.

Sizes are *logical* px (see :mod:`qkv_studio.render.figure`).  Text is measured large
(:data:`_REF_PX`) and scaled linearly, and drawn the same way, so what the layout measured is what the
painter draws in PNG, SVG and PDF alike.  :func:`measure` gives this font to the Qt-free label layout
(:mod:`qkv_studio.render.label_layout`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QGuiApplication, QImage, QPainter, QTransform

# colormaps.lut imports pyqtgraph, which would pick PyQt6 over PySide6 if both were installed.
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from qkv_studio.render.colormaps import is_signed  # noqa: E402
from qkv_studio.render.label_layout import TextMeasure  # noqa: E402

FONT_FAMILY = "DejaVu Sans"
_LABEL_MAX_CHARS = 18


@dataclass
class TextItem:
    """One piece of text: its box in logical units, its size in logical px, alignment, rotation."""

    text: str
    rect: QRectF
    px: float
    color: str
    align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignCenter
    bold: bool = False
    rotate: float = 0.0  # degrees, about ``anchor``
    anchor: QPointF | None = None  # when set, ``rect`` is relative to it (and rotated about it)



def _require_app() -> None:
    if QGuiApplication.instance() is None or not isinstance(QGuiApplication.instance(), QGuiApplication):
        raise RuntimeError(
            "drawing a figure needs a QGuiApplication: call qkv_studio.export.figures.ensure_app() first"
        )


_REF_PX = 100.0
_METRICS: dict[bool, QFontMetricsF] = {}
_METRICS_DEVICE: list[QImage] = []


def _metrics(bold: bool = False) -> QFontMetricsF:
    """Font metrics at :data:`_REF_PX` logical pixels, independent of any screen's DPI.

    Measured large and scaled linearly, because small sizes are rounded to whole pixels by the font
    engine while the painter's transform draws them at fractional sizes.
    """
    if bold not in _METRICS:
        if not _METRICS_DEVICE:
            img = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
            dpm = round(72 / 0.0254)  # 72 dpi: one point = one logical pixel
            img.setDotsPerMeterX(dpm)
            img.setDotsPerMeterY(dpm)
            _METRICS_DEVICE.append(img)
        dev = _METRICS_DEVICE[0]
        _METRICS[bold] = QFontMetricsF(_font(_REF_PX * 72 / dev.logicalDpiY(), bold), dev)
    return _METRICS[bold]


def _font(points: float, bold: bool = False) -> QFont:
    f = QFont(FONT_FAMILY)
    f.setStyleHint(QFont.StyleHint.SansSerif)
    f.setPointSizeF(max(points, 0.5))
    f.setBold(bold)
    # No hinting: glyphs keep their true proportions at every scale, so PNG, SVG and PDF agree.
    f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return f


def _width(text: str, px: float, bold: bool = False) -> float:
    return _metrics(bold).horizontalAdvance(text) * px / _REF_PX


def _line(px: float) -> float:
    return _metrics().height() * px / _REF_PX



_MEASURE: list[TextMeasure] = []


def measure() -> TextMeasure:
    """The figure's font as the label layout asks for it (:mod:`qkv_studio.render.label_layout`)."""
    if not _MEASURE:  # (fonts need an application: built when first asked, not at import)
        _MEASURE.append(TextMeasure(width=_width, line=_line(1.0)))
    return _MEASURE[0]


def format_value(value: float, stage: str) -> str:
    """How a cell's number is printed (window and figures alike): weights with 2 decimals, scores with
    up to 3 significant digits, −∞ for a masked score."""
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    if not is_signed(stage):
        return f"{value:.2f}"
    a = abs(value)
    if a == 0:
        return "0"
    if a >= 1:
        text = f"{value:.3g}"
        if "e" in text:
            mant, exp = text.split("e")
            text = f"{mant}e{int(exp)}"
    elif a >= 0.001:  # 3 decimals at most, so small scores stay short: 0.0819 → 0.082
        text = f"{value:.3f}".rstrip("0").rstrip(".")
    else:
        text = f"{value:.1g}"
    return text.replace("-", "−")


def _format_tick(value: float, signed: bool) -> str:
    if value == 0:
        return "0"
    return (f"{value:.3g}" if signed else f"{value:g}").replace("-", "−")



def _wrap(text: str, px: float, max_width: float) -> list[str]:
    """Greedy word wrap (at spaces) to ``max_width``; a single long word stays whole."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and _width(lines[-1] + " " + word, px) <= max_width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _elide(text: str, px: float, max_width: float) -> str:
    if len(text) > _LABEL_MAX_CHARS:
        text = text[: _LABEL_MAX_CHARS - 1] + "…"
    if _width(text, px) <= max_width:
        return text
    return _metrics().elidedText(text, Qt.TextElideMode.ElideRight, max_width * _REF_PX / px)


def _text_bounds(it: TextItem) -> QRectF:
    """The area a text item covers, in the same coordinates as the grid."""
    if it.anchor is None:
        return it.rect
    a, r = it.anchor, it.rect
    if it.rotate == -90.0:  # local (x, y) lands at (a.x + y, a.y − x)
        return QRectF(a.x() + r.top(), a.y() - r.right(), r.height(), r.width())
    return QTransform().translate(a.x(), a.y()).rotate(it.rotate).mapRect(r)



def _device_points(painter: QPainter, px: float) -> float:
    dpi = painter.device().logicalDpiY() if painter.device() is not None else 72
    return px * 72.0 / dpi


def _text_at_reference(painter: QPainter, rect: QRectF, px: float, align: Qt.AlignmentFlag, text: str) -> None:
    """drawText of ``text`` at ``px`` logical pixels inside ``rect``.

    The font is always set at the reference size the layout measured with (:data:`_REF_PX`) and the
    painter scaled down to ``px``: font engines round small sizes to whole pixels, which made drawn
    text a few percent wider than measured.  The painter must already hold the reference font.
    """
    k = px / _REF_PX
    painter.save()
    painter.translate(rect.topLeft())
    painter.scale(k, k)
    painter.drawText(QRectF(0, 0, rect.width() / k, rect.height() / k),
                     int(align) | int(Qt.TextFlag.TextDontClip), text)
    painter.restore()


def _set_reference_font(painter: QPainter, bold: bool = False) -> None:
    painter.setFont(_font(_device_points(painter, _REF_PX), bold))


def _draw_text(painter: QPainter, it: TextItem) -> None:
    _set_reference_font(painter, it.bold)
    painter.setPen(QColor(it.color))
    if it.anchor is not None:
        painter.save()
        painter.translate(it.anchor)
        painter.rotate(it.rotate)
        _text_at_reference(painter, it.rect, it.px, it.align, it.text)
        painter.restore()
    else:
        _text_at_reference(painter, it.rect, it.px, it.align, it.text)
