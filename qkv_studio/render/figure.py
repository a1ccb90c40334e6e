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

from qkv_studio.render.figure_geometry import (
    BACKGROUNDS,
    MAX_SHAPE_TOKENS,
    FigureLayout,
    FigureOptions,
    Morph,
    background_color,
    effective_theme,
    figure_layout,
    figure_size,
    figure_title,
    stage_scale,
)
from qkv_studio.render.figure_paint import MAX_WIDTH_PX, paint_figure, render_image
from qkv_studio.render.figure_text import FONT_FAMILY, TextItem, _text_bounds, _width, format_value

__all__ = [
    "BACKGROUNDS", "FONT_FAMILY", "MAX_SHAPE_TOKENS", "MAX_WIDTH_PX", "FigureLayout", "FigureOptions", "Morph",
    "TextItem", "background_color", "effective_theme", "figure_layout", "figure_size", "figure_title",
    "format_value", "paint_figure", "render_image", "stage_scale", "_text_bounds", "_width",
]
