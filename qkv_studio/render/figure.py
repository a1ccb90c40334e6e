"""The heatmap figure, drawn for the page with QPainter onto any paint device.

One function lays the figure out (:func:`figure_layout`) and one draws that layout
(:func:`paint_figure`), so a test can ask where a cell is and find exactly the colour the painter put
there.  Everything is drawn in *logical* units (1 unit = 1 px at scale 1, 0.75 pt in a PDF) and the
painter's transform scales it to the device: a 7680 px PNG is a re-drawing at 7680 px, never an
enlarged screen grab, and in SVG/PDF labels and values stay text while cells stay shapes.

Contents: a title naming the stage and the query, axis titles ("attending from (query)" /
"attending to (key)"), the token labels (thinned when too dense, rotated when too wide), one filled
rectangle per cell on the stage's honest colour scale (:func:`~qkv_studio.render.colormaps.scale_for`,
the same one the window uses), the values in the cells when they fit, masked cells hatched and
labelled −∞ (before the softmax) or 0 (after it), the selected query row outlined, the row sums at the
weights stage and a colour bar whose range is the scale's.

A :class:`Morph` draws a frame between two stages, as the window's stage morph does: the cells' colours
and numbers mixed (:mod:`qkv_studio.core.morph`) from another stage's to this one's; the animated
exports (:mod:`qkv_studio.export.motion`) draw their frames this way.

A ``QGuiApplication`` must exist before any of this runs (fonts need one); the exporters call
:func:`qkv_studio.export.figures.ensure_app`.  Above :data:`MAX_SHAPE_TOKENS` tokens the cells are drawn as one
nearest-neighbour image instead of up to a million rectangles (a 1024-token SVG of rects would be
~100 MB); the labels, title and colour bar stay vector.

This module is the figure's public face; the work is in three modules with one job each:
:mod:`~qkv_studio.render.figure_geometry` (options and layout: where everything goes, with the label
layout the live heatmap shares, :mod:`~qkv_studio.render.label_layout`),
:mod:`~qkv_studio.render.figure_paint` (drawing a layout) and :mod:`~qkv_studio.render.figure_text`
(the font, measured and drawn at a reference size).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSizeF
from PySide6.QtGui import QImage, QPainter

from qkv_studio.core.scene import Scene
from qkv_studio.render.figure_geometry import (
    BACKGROUNDS,
    MAX_SHAPE_TOKENS,
    FigureLayout,
    FigureOptions,
    Morph,
    background_color,
    effective_theme,
    figure_layout,
    figure_title,
    single_size,
    stage_scale,
)
from qkv_studio.render.figure_paint import MAX_WIDTH_PX, paint_single
from qkv_studio.render.figure_text import FONT_FAMILY, TextItem, _text_bounds, _width, format_value
from qkv_studio.render.pair import paint_pair, pair_size

__all__ = [
    "BACKGROUNDS", "FONT_FAMILY", "MAX_SHAPE_TOKENS", "MAX_WIDTH_PX", "FigureLayout", "FigureOptions", "Morph",
    "TextItem", "background_color", "effective_theme", "figure_layout", "figure_size", "figure_title",
    "format_value", "paint_figure", "render_image", "stage_scale", "_text_bounds", "_width",
]


def figure_size(scene: Scene, options: FigureOptions) -> QSizeF:
    """Natural size of the figure at scale 1 (logical px; 0.75 pt each in a PDF): one figure, or the
    pair of ``options.compare_with`` side by side."""
    if options.compare_with is not None:
        return pair_size(scene, options)
    return single_size(scene, options)


def paint_figure(painter: QPainter, rect: QRectF, scene: Scene, options: FigureOptions,
                 morph: Morph | None = None) -> FigureLayout:
    """Draw the figure into ``rect`` (device coordinates of the painter), scaled uniformly and centred.

    The background is *not* filled here unless ``options.background`` asks for one (then ``rect`` is
    filled).  With ``morph``, a frame of the stage morph (see :class:`Morph`).  Returns the layout
    used, mapped into ``rect`` (of the left figure when ``options.compare_with`` draws two).
    """
    if options.compare_with is not None:
        return paint_pair(painter, rect, scene, options)
    return paint_single(painter, rect, scene, options, morph)


def render_image(scene: Scene, options: FigureOptions, width_px: int) -> QImage:
    """The figure as an ARGB32-premultiplied image exactly ``width_px`` wide (height from the aspect)."""
    width_px = int(width_px)
    if not 16 <= width_px <= MAX_WIDTH_PX:
        raise ValueError(f"image width must be 16–{MAX_WIDTH_PX} px, got {width_px}")
    size = figure_size(scene, options)
    height = max(1, round(width_px * size.height() / size.width()))
    img = QImage(width_px, height, QImage.Format.Format_ARGB32_Premultiplied)
    if img.isNull():
        raise ValueError(f"cannot allocate a {width_px}×{height} image")
    img.fill(background_color(options))
    painter = QPainter(img)
    try:
        paint_figure(painter, QRectF(0, 0, width_px, height), scene, options)
    finally:
        painter.end()
    return img
