"""Two heatmap figures side by side on one colour scale: the scene and ``options.compare_with``.

Used for the lesson's "why three projections?": the scene without projections (Q = K = V = X) on the
left, the learned projections on the right, the same stage and query, one set of colour levels (so a
colour means the same number in both) and one colour bar, on the right.  A figure whose options have
``compare_with`` set is drawn by :func:`paint_pair` and sized by :func:`pair_size`
(:func:`qkv_studio.render.figure.paint_figure` and ``figure_size`` hand over to them, and this module
draws each side with the single figure's :func:`~qkv_studio.render.figure_paint.paint_single`), so every
figure writer — PNG, SVG, PDF, the clipboard — draws the pair without knowing about it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import QRectF, QSizeF
from PySide6.QtGui import QFont, QPainter

from qkv_studio.core.scene import Scene
from qkv_studio.render.colormaps import scale_for
from qkv_studio.render.figure_geometry import (
    FigureLayout,
    FigureOptions,
    background_color,
    effective_theme,
    single_size,
)
from qkv_studio.render.figure_paint import paint_single

GAP = 24.0  # logical px between the two figures
HEADING_PX = 20.0  # a heading's text height (logical px) when the figures are drawn without titles


def shared_levels(left: Scene, right: Scene, stage: str, colormap: str) -> tuple[float, float]:
    """The colour levels that cover both scenes' matrices of ``stage`` (weights keep 0–1)."""
    a, b = left.result().stage(stage), right.result().stage(stage)
    both = np.concatenate([np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()])
    sc = scale_for(stage, both.reshape(1, -1), colormap)
    return float(sc.lo), float(sc.hi)


def pair_options(scene: Scene, options: FigureOptions) -> tuple[FigureOptions, Scene, FigureOptions]:
    """(left options, right scene, right options): the same view on shared levels; the colour bar only
    on the right; each side's own heading."""
    right = options.compare_with
    if right is None:
        raise ValueError("a pair of figures needs options.compare_with: the scene to show beside")
    if right.tokens != scene.tokens:
        raise ValueError("figures side by side must show the same tokens")
    levels = options.levels or shared_levels(scene, right, options.stage, options.colormap)
    base: FigureOptions = replace(options, compare_with=None, compare_heading="", levels=levels)
    return (replace(base, colorbar=False), right, replace(base, heading=options.compare_heading))


def pair_size(scene: Scene, options: FigureOptions) -> QSizeF:
    """The natural size of the pair: both figures at scale 1, side by side, the taller's height."""
    left_opts, right, right_opts = pair_options(scene, options)
    a, b = _sized(scene, left_opts), _sized(right, right_opts)
    return _arranged(a, b, True)


def _band(options: FigureOptions) -> float:
    """The height above a figure for its heading: none when the figure draws its own title."""
    return 0.0 if options.title or not options.heading else 1.6 * HEADING_PX * options.font_scale


def _sized(scene: Scene, options: FigureOptions) -> QSizeF:
    s = single_size(scene, options)
    return QSizeF(s.width(), s.height() + _band(options))


def _heading_font(painter: QPainter, px: float) -> QFont:
    font = QFont(painter.font())
    font.setBold(True)
    font.setPixelSize(max(1, round(px)))
    return font


def _fitted_px(painter: QPainter, text: str, width: float, px: float) -> float:
    """``px``, or smaller so that ``text`` fits ``width``: a heading is never cut."""
    from PySide6.QtGui import QFontMetricsF

    wide = QFontMetricsF(_heading_font(painter, px)).horizontalAdvance(text)
    return px * width / wide if wide > width > 0 else px


def _heading(painter: QPainter, rect: QRectF, text: str, px: float, options: FigureOptions) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor

    painter.save()
    painter.setFont(_heading_font(painter, px))
    painter.setPen(QColor(effective_theme(options).text))
    painter.drawText(rect, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter), text)
    painter.restore()


def _arranged(a: QSizeF, b: QSizeF, across: bool) -> QSizeF:
    if across:
        return QSizeF(a.width() + GAP + b.width(), max(a.height(), b.height()))
    return QSizeF(max(a.width(), b.width()), a.height() + GAP + b.height())


def paint_pair(painter: QPainter, rect: QRectF, scene: Scene, options: FigureOptions) -> FigureLayout:
    """Draw the pair into ``rect``, scaled uniformly and centred — side by side, or one above the other
    when that draws them larger (a tall panel); returns the left (upper) figure's layout.  With
    ``options.title`` off each figure gets only its heading, above it."""
    left_opts, right, right_opts = pair_options(scene, options)
    a, b = _sized(scene, left_opts), _sized(right, right_opts)
    rect = QRectF(rect)

    def fit(total: QSizeF) -> float:
        return min(rect.width() / total.width(), rect.height() / total.height())

    across = fit(_arranged(a, b, True)) >= fit(_arranged(a, b, False))
    total = _arranged(a, b, across)
    k = fit(total)
    x0 = rect.x() + (rect.width() - total.width() * k) / 2
    y0 = rect.y() + (rect.height() - total.height() * k) / 2
    if left_opts.background != "transparent":  # fill once, behind both (and the gap)
        painter.fillRect(rect, background_color(left_opts))
    if across:
        left_rect = QRectF(x0, y0 + (total.height() - a.height()) * k / 2, a.width() * k, a.height() * k)
        right_rect = QRectF(x0 + (a.width() + GAP) * k, y0 + (total.height() - b.height()) * k / 2,
                            b.width() * k, b.height() * k)
    else:
        left_rect = QRectF(x0 + (total.width() - a.width()) * k / 2, y0, a.width() * k, a.height() * k)
        right_rect = QRectF(x0 + (total.width() - b.width()) * k / 2, y0 + (a.height() + GAP) * k,
                            b.width() * k, b.height() * k)
    sides = ((scene, left_opts, left_rect), (right, right_opts, right_rect))
    px = min(_fitted_px(painter, opts.heading, box.width(), HEADING_PX * opts.font_scale * k)
             for _, opts, box in sides)  # one size for both headings
    drawn = []
    for part, opts, box in sides:
        band = _band(opts) * k
        if band:
            _heading(painter, QRectF(box.x(), box.y(), box.width(), band), opts.heading, px, opts)
        drawn.append(paint_single(painter, QRectF(box.x(), box.y() + band, box.width(), box.height() - band),
                                  part, opts))
    return drawn[0]
