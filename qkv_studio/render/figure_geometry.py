"""Where everything in the figure goes: :class:`FigureOptions` say what it shows, :func:`figure_layout`
places it (:class:`FigureLayout`), in logical units (see :mod:`qkv_studio.render.figure`).

The token labels, axis titles, cell numbers and colour-bar ticks are placed by the label layout the
live heatmap uses too (:mod:`qkv_studio.render.label_layout`), so the window and an export agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QTransform

from qkv_studio.core import Scene
from qkv_studio.core.morph import blend_colours, blend_values
from qkv_studio.core.stages import stage_spec
from qkv_studio.render import label_layout
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, SEQUENTIAL, ColorScale, is_signed, scale_for
from qkv_studio.render.figure_text import (
    TextItem,
    _elide,
    _format_tick,
    _line,
    _require_app,
    _text_bounds,
    _width,
    _wrap,
    format_value,
    measure,
)
from qkv_studio.render.theme import THEMES, Theme, get_theme

BACKGROUNDS = ("theme", "white", "transparent")
#: Largest token count drawn with one rectangle per cell; above it the cells are one image.
MAX_SHAPE_TOKENS = 128

_CELL_MAX = 64.0
_CELL_MIN = 4.0
_GRID_TARGET = 768.0  # cells shrink so that n·cell ≈ this, between the two bounds
_GRID_ZOOM_FROM = 960.0  # a grid larger than this scales text and lines up with it
_HIGHLIGHT_WIDTH = 2.5  # the query row's outline, before the theme's line scale
_MARGIN = 18.0

@dataclass(frozen=True)
class FigureOptions:
    """What the figure shows and how it looks.

    ``stage`` is one of :data:`~qkv_studio.core.STAGES` (``vectors`` shows the scores Q·Kᵀ, ``output``
    the weights that make the blend) and ``query`` the selected query token (the row the title names and
    the outline marks): the view being exported, which the Scene does not hold.  ``background`` is
    ``"theme"`` (the theme's own), ``"white"`` (the light theme's ink on white, whatever the theme) or
    ``"transparent"``.  ``colormap`` is the sequential map for weights; signed scores always use the
    diverging map centred at 0.
    """

    stage: str = "weights"
    query: int = 0
    title: bool = True
    token_labels: bool = True
    values: bool = True
    colorbar: bool = True
    highlight_query: bool = True
    theme: str = "light"
    background: str = "theme"
    colormap: str = DEFAULT_SEQUENTIAL
    font_scale: float = 1.0
    heading: str = ""  # what the figure is of, before the title: "head 1 (of heads 0–1)", a model's layer and head
    #: fixed colour levels (lo, hi) instead of the stage's own (figures side by side share one scale)
    levels: tuple[float, float] | None = None
    #: a second scene drawn to the right of this one on the same levels (see :mod:`qkv_studio.render.pair`)
    compare_with: Scene | None = None
    compare_heading: str = ""

    def validated(self) -> FigureOptions:
        """Self, or ValueError naming the bad option."""
        from qkv_studio.core import STAGES

        if self.stage not in STAGES:
            raise ValueError(f"unknown stage {self.stage!r} (use {', '.join(STAGES)})")
        if isinstance(self.query, bool) or not isinstance(self.query, int) or self.query < 0:
            raise ValueError(f"the query must be a token index (0, 1, …), got {self.query!r}")
        get_theme(self.theme)
        if self.background not in BACKGROUNDS:
            raise ValueError(f"unknown background {self.background!r} (use {', '.join(BACKGROUNDS)})")
        if self.colormap not in SEQUENTIAL:
            raise ValueError(f"unknown colormap {self.colormap!r} (use {', '.join(SEQUENTIAL)})")
        if not (isinstance(self.font_scale, (int, float)) and 0.25 <= self.font_scale <= 4):
            raise ValueError(f"font scale must be between 0.25 and 4, got {self.font_scale!r}")
        if self.levels is not None and not (len(self.levels) == 2 and all(map(math.isfinite, self.levels))
                                            and self.levels[0] < self.levels[1]):
            raise ValueError(f"colour levels must be two finite numbers, low < high, got {self.levels!r}")
        return self


@dataclass(frozen=True)
class Morph:
    """A frame on the way from the ``source`` stage's figure to this one's: the cells show colours and
    numbers mixed at ``t`` (0 = the source's, 1 = this stage's; already eased); the title, legend,
    colour bar and layout are this stage's, as in the window's morph."""

    source: str
    t: float



@dataclass
class FigureLayout:
    """Where everything in the figure goes.

    Geometry is held in logical units (``logical_size``); ``transform`` maps it into the target
    rectangle the figure was laid out for, and the accessors (:meth:`cell_rect`, :meth:`grid_rect`,
    :meth:`colorbar_rect`, :attr:`size`) answer in target coordinates, i.e. image pixels when the
    target is an image.
    """

    scene: Scene
    options: FigureOptions
    theme: Theme
    scale: ColorScale
    matrix: np.ndarray
    blocked: np.ndarray
    n: int
    cell: float
    logical_size: QSizeF
    origin: QPointF  # the grid's top-left in logical units
    transform: QTransform = field(default_factory=QTransform)
    texts: list[TextItem] = field(default_factory=list)
    show_values: bool = False
    value_px: float = 0.0
    colorbar_logical: QRectF | None = None
    colorbar_ticks: list[tuple[float, str]] = field(default_factory=list)
    row_label_ticks: list[int] = field(default_factory=list)
    col_label_ticks: list[int] = field(default_factory=list)
    label_ticks: bool = False
    gap: float = 0.0
    zoom: float = 1.0  # text/line multiplier for very large grids (see _layout)
    cell_rgba: np.ndarray | None = None  # a morph's mixed cell colours (None: the scale's own)
    text_matrix: np.ndarray | None = None  # a morph's mixed cell numbers (None: the matrix)

    # ---- target-coordinate accessors -----------------------------------------------------------
    @property
    def size(self) -> QSizeF:
        r = self.transform.mapRect(QRectF(QPointF(0, 0), self.logical_size))
        return QSizeF(r.width(), r.height())

    def logical_cell(self, i: int, j: int) -> QRectF:
        c = self.cell
        return QRectF(self.origin.x() + j * c, self.origin.y() + i * c, c, c)

    def logical_grid(self) -> QRectF:
        g = self.n * self.cell
        return QRectF(self.origin.x(), self.origin.y(), g, g)

    def cell_rect(self, i: int, j: int) -> QRectF:
        """Cell (query i, key j) in target coordinates (its painted area, without the gap)."""
        r = self.logical_cell(i, j).adjusted(self.gap, self.gap, -self.gap, -self.gap)
        return self.transform.mapRect(r)

    def logical_query_rect(self) -> QRectF:
        """The selected query row's outline (the pen's centre line), in logical units."""
        w = _HIGHLIGHT_WIDTH * self.theme.line_scale * self.zoom
        c = self.cell
        row = QRectF(self.origin.x(), self.origin.y() + self.options.query * c, self.n * c, c)
        return row.adjusted(-w / 2, -w / 2, w / 2, w / 2)

    def query_rect(self) -> QRectF:
        """The selected query row's outline in target coordinates (drawn only if highlighted)."""
        return self.transform.mapRect(self.logical_query_rect())

    def query_pen_width(self) -> float:
        """Width of the query outline in target units."""
        return _HIGHLIGHT_WIDTH * self.theme.line_scale * self.zoom * self.transform.m11()

    def grid_rect(self) -> QRectF:
        return self.transform.mapRect(self.logical_grid())

    def colorbar_rect(self) -> QRectF | None:
        return None if self.colorbar_logical is None else self.transform.mapRect(self.colorbar_logical)

    def colorbar_value_y(self, value: float) -> float:
        """Target y of a value on the colour bar (top = the scale's high end)."""
        r = self.colorbar_logical
        if r is None:
            raise ValueError("this figure has no colour bar")
        t = (value - self.scale.lo) / (self.scale.hi - self.scale.lo)
        return self.transform.map(QPointF(r.center().x(), r.bottom() - t * r.height())).y()



def _nice_step(span: float) -> float:
    raw = span / 3.0
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _colorbar_ticks(scale: ColorScale, height: float, px: float) -> list[tuple[float, str]]:
    """Ticks from the scale's low end to its high end (both always shown), nice steps between."""
    signed = scale.lo < 0
    if not signed:
        values = [0.0, 0.25, 0.5, 0.75, 1.0] if height >= 5 * _line(px) * 1.2 else [0.0, 0.5, 1.0]
        lo, hi = scale.lo, scale.hi
        return [(lo + v * (hi - lo), _format_tick(lo + v * (hi - lo), False)) for v in values]
    m = scale.hi
    ticks = [(-m, _format_tick(-m, True)), (0.0, "0"), (m, _format_tick(m, True))]
    if m > 0 and math.isfinite(m) and m < 1e300:
        step = _nice_step(m)
        min_gap = _line(px) * 1.8 / height * (2 * m)  # in data units: keep labels well apart
        k = 1
        while k * step < m - min_gap and k < 50:
            v = k * step
            if v > min_gap:
                ticks += [(v, _format_tick(v, True)), (-v, _format_tick(-v, True))]
            k += 1
    return sorted(ticks)


def effective_theme(options: FigureOptions) -> Theme:
    """The theme's colours, with the light theme's ink when the background is forced white."""
    theme = get_theme(options.theme)
    if options.background == "white" and QColor(theme.background).lightness() < 128:
        light = THEMES["light"]
        return replace(light, name=theme.name, line_scale=theme.line_scale, highlight=theme.highlight)
    return theme


def background_color(options: FigureOptions) -> QColor:
    """The colour the figure is painted on (transparent for ``background="transparent"``)."""
    if options.background == "transparent":
        return QColor(0, 0, 0, 0)
    if options.background == "white":
        return QColor("#ffffff")
    return QColor(get_theme(options.theme).background)


def stage_scale(scene: Scene, options: FigureOptions) -> ColorScale:
    """The colour scale the figure (and the window) uses for this stage."""
    matrix = scene.result().stage(options.stage)
    sc = scale_for(options.stage, matrix, options.colormap)
    if options.levels is not None:
        sc = replace(sc, lo=float(options.levels[0]), hi=float(options.levels[1]))
    legend = stage_spec(options.stage).words(scene.scale).legend
    return sc if legend == sc.label else replace(sc, label=legend)


def figure_title(scene: Scene, options: FigureOptions) -> tuple[str, str]:
    """(title, subtitle) of the figure: the stage, the query, d_k; then what the numbers mean."""
    words = stage_spec(options.stage).words(scene.scale)
    head, meaning = words.figure, words.meaning
    d_k = scene.d_k
    title = f"{head} · query “{scene.token_label(options.query)}” · dₖ = {d_k}"
    if options.heading:
        title = f"{options.heading} · {title}"
    meaning = meaning.format(sqrt=f"{math.sqrt(d_k):.3g}")
    if not isinstance(scene.mask, str) or scene.mask != "none":
        kind = "causal mask" if isinstance(scene.mask, str) else "custom mask"
        after = "0" if not is_signed(options.stage) else "−∞"
        meaning += f" · {kind}: blocked cells {after}"
    return title, meaning


# ---- layout ------------------------------------------------------------------------------------
def _cell_size(n: int) -> float:
    return max(_CELL_MIN, min(_CELL_MAX, _GRID_TARGET / n))


def _layout(scene: Scene, options: FigureOptions, morph: Morph | None = None) -> FigureLayout:
    _require_app()
    options = options.validated()
    if options.query >= scene.n:
        raise ValueError(f"query {options.query} is out of range: there are {scene.n} tokens (0–{scene.n - 1})")
    theme = effective_theme(options)
    result = scene.result()
    matrix = result.stage(options.stage)
    scale = stage_scale(scene, options)
    source = source_rgba = None
    if morph is not None:
        source = result.stage(morph.source)
        source_rgba = stage_scale(scene, replace(options, stage=morph.source)).rgba(source)
    n = scene.n
    c = _cell_size(n)
    g = n * c
    # Past ~240 tokens the 4 px cells make the grid outgrow a page: everything else grows with it
    # (text, gaps, lines) so the figure keeps its proportions at any size it is rendered.
    u = max(1.0, g / _GRID_ZOOM_FROM)
    fs = float(options.font_scale) * u
    lw = theme.line_scale * u
    text, muted = theme.text, theme.muted

    label_px = max(9.0 * fs, min(15.0 * fs, c / 1.25))  # c / 1.25: one label per row while ≥ 9 px
    axis_px = 14.0 * fs
    title_px = 19.0 * fs
    sub_px = 13.0 * fs
    tick_px = 12.5 * fs

    lay = FigureLayout(scene=scene, options=options, theme=theme, scale=scale, matrix=matrix,
                       blocked=result.blocked, n=n, cell=c, logical_size=QSizeF(), origin=QPointF())
    lay.zoom = u
    lay.gap = 0.0 if c < 16 else min(1.5, c * 0.025)
    if morph is not None and source is not None and source_rgba is not None:
        lay.cell_rgba = blend_colours(source_rgba, scale.rgba(matrix), morph.t)
        lay.text_matrix = blend_values(source, matrix, morph.t)
    items: list[TextItem] = []
    bounds = QRectF(0, 0, g, g)
    if options.highlight_query:
        pad = _HIGHLIGHT_WIDTH * lw
        bounds = bounds.united(QRectF(-pad, -pad, g + 2 * pad, g + 2 * pad))

    # values in the cells
    if options.values and n <= MAX_SHAPE_TOKENS:
        # the largest size (≤ 17 px) at which every value fits its cell; hidden below 8 px
        finite = matrix[np.isfinite(matrix)]
        if source is not None:  # (the numbers between the two stages' are no wider than the two ends)
            finite = np.concatenate([finite, source[np.isfinite(source)]])
        samples = {format_value(float(v), options.stage) for v in finite.ravel()} | {"−∞"}
        vpx = label_layout.value_px(sorted(samples), c, c, measure(), max_px=min(17.0 * fs, c * 0.3 * fs),
                                    min_px=8.0, width_frac=0.86, height_frac=0.8)
        if vpx:
            lay.show_values, lay.value_px = True, vpx

    # row labels (queries), left of the grid
    left = 0.0
    bottom = g
    if options.token_labels:
        max_w = 12 * label_px
        names = [_elide(scene.token_label(i), label_px, max_w) for i in range(n)]
        keep = [options.query] if options.highlight_query else []
        row_plan = label_layout.row_labels(names, c, label_px, measure(), min_px=9.0 * fs, max_width=max_w,
                                           keep=keep)
        rows, rpx = list(row_plan.shown), row_plan.px
        lh = _line(rpx)
        wlab = max(_width(t, rpx, True) for t in row_plan.texts)
        lay.label_ticks = row_plan.step > 1
        tick = 5.0 * u if lay.label_ticks else 0.0
        x0 = -8.0 * u - tick - wlab
        for i, name in row_plan.pairs():
            is_q = options.highlight_query and i == options.query
            items.append(TextItem(name, QRectF(x0, (i + 0.5) * c - lh / 2, wlab, lh), rpx,
                                  theme.highlight if is_q else text, Qt.AlignmentFlag.AlignRight
                                  | Qt.AlignmentFlag.AlignVCenter, bold=is_q))
        lay.row_label_ticks = rows
        left = x0

        # column labels (keys), below the grid: horizontal when every one fits its column with a clear
        # gap at up to 20 % smaller type, else upright (thinned only when even that does not fit)
        col_plan = label_layout.key_labels(names, c, label_px, measure(), min_px=9.0 * fs, max_extent=max_w,
                                           keep=keep, gap=12 * u, flat_min_px=max(0.8 * label_px, 9.0 * fs))
        cols, col_px = list(col_plan.shown), col_plan.px
        y0 = g + 8.0 * u + tick
        if col_plan.rotation == 0:
            for j, name in col_plan.pairs():
                items.append(TextItem(name, QRectF(j * c, y0, c, _line(col_px)), col_px, text))
            bottom = y0 + _line(col_px)
        else:
            clh = _line(col_px)
            for j, name in col_plan.pairs():
                w = _width(name, col_px)
                # rotated −90° about (centre of column, y0): the text runs upwards and ends at y0
                items.append(TextItem(name, QRectF(-w, -clh / 2, w, clh), col_px, text,
                                      Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                                      rotate=-90.0, anchor=QPointF((j + 0.5) * c, y0)))
            bottom = y0 + col_plan.extent
        lay.col_label_ticks = cols

    # axis titles
    alh = _line(axis_px)
    xa = "attending to (key)"
    xw = _width(xa, axis_px)
    items.append(TextItem(xa, QRectF(g / 2 - xw / 2 - 2 * u, bottom + 8 * u, xw + 4 * u, alh), axis_px, muted))
    ya = "attending from (query)"
    yw = _width(ya, axis_px)
    items.append(TextItem(ya, QRectF(-yw / 2 - 2 * u, -alh / 2, yw + 4 * u, alh), axis_px, muted, rotate=-90.0,
                          anchor=QPointF(left - 10 * u - alh / 2, g / 2)))

    # row sums (weights stage), when a row is tall enough for a line of text
    right = g + (_HIGHLIGHT_WIDTH * lw if options.highlight_query else 0)
    if options.stage == "weights":
        spx = min(14.0 * fs, lay.value_px or 14.0 * fs)
        if _line(spx) <= c * 1.05:
            sums = result.weights.sum(axis=1)
            texts = [("Σ = 0" if result.fully_masked[i] else f"Σ = {sums[i]:.2f}") for i in range(n)]
            sw = max(_width(t, spx) for t in texts)
            x = right + 10 * u
            for i, t in enumerate(texts):
                items.append(TextItem(t, QRectF(x, (i + 0.5) * c - _line(spx) / 2, sw + 2, _line(spx)), spx,
                                      muted, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter))
            right = x + sw + 2

    # colour bar: as tall as the grid (at least 140 px), its ticks spanning exactly the scale
    if options.colorbar:
        bar_h = max(g, 140.0 * fs)
        bar = QRectF(right + 22 * u, (g - bar_h) / 2, 18 * fs, bar_h)
        lay.colorbar_logical = bar
        ticks = _colorbar_ticks(scale, bar_h, tick_px)
        span = (scale.hi - scale.lo) or 1.0
        ticks = [ticks[i] for i in label_layout.bar_ticks([(v - scale.lo) / span * bar_h for v, _ in ticks],
                                                          tick_px, measure())]  # (never two overlapping)
        lay.colorbar_ticks = ticks
        tlh = _line(tick_px)
        tw = max(_width(t, tick_px) for _, t in ticks)
        tx = bar.right() + 9 * u
        for v, t in ticks:
            y = bar.bottom() - (v - scale.lo) / (scale.hi - scale.lo) * bar_h
            items.append(TextItem(t, QRectF(tx, y - tlh / 2, tw + 2, tlh), tick_px, text,
                                  Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter))
        lw_ = _width(scale.label, axis_px)
        items.append(TextItem(scale.label, QRectF(-lw_ / 2 - 2, -alh / 2, lw_ + 4, alh), axis_px, muted,
                              rotate=-90.0, anchor=QPointF(tx + tw + 10 * u + alh / 2, bar.center().y())))
        bounds = bounds.united(bar)

    for it in items:
        bounds = bounds.united(_text_bounds(it))

    # title and subtitle above everything, left-aligned with the content, subtitle wrapped to it
    if options.title:
        title, meaning = figure_title(scene, options)
        tlh, slh = _line(title_px), _line(sub_px)
        tw_ = _width(title, title_px, True)
        lines = _wrap(meaning, sub_px, max(bounds.width(), tw_))
        top = bounds.top() - 14 * u - len(lines) * slh - 4 * u - tlh
        left_ = bounds.left()
        items.append(TextItem(title, QRectF(left_, top, tw_ + 4, tlh), title_px, text,
                              Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, bold=True))
        bounds = bounds.united(items[-1].rect)
        for k, line in enumerate(lines):
            r = QRectF(left_, top + tlh + 4 * u + k * slh, _width(line, sub_px) + 4, slh)
            items.append(TextItem(line, r, sub_px, muted, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter))
            bounds = bounds.united(r)

    # move everything so the figure starts at (margin, margin)
    m = _MARGIN * u * max(1.0, options.font_scale ** 0.5)
    dx, dy = m - bounds.left(), m - bounds.top()
    for it in items:
        if it.anchor is not None:
            it.anchor = it.anchor + QPointF(dx, dy)
        else:
            it.rect = it.rect.translated(dx, dy)
    if lay.colorbar_logical is not None:
        lay.colorbar_logical = lay.colorbar_logical.translated(dx, dy)
    lay.origin = QPointF(dx, dy)
    lay.texts = items
    lay.logical_size = QSizeF(math.ceil(bounds.width() + 2 * m), math.ceil(bounds.height() + 2 * m))
    return lay


def _fit(logical: QSizeF, target: QRectF) -> QTransform:
    """Uniform scale of the logical figure into the target rectangle, centred."""
    s = min(target.width() / logical.width(), target.height() / logical.height())
    ox = target.left() + (target.width() - logical.width() * s) / 2
    oy = target.top() + (target.height() - logical.height() * s) / 2
    return QTransform(s, 0, 0, s, ox, oy)


def figure_layout(scene: Scene, options: FigureOptions, size: QSizeF | None = None,
                  morph: Morph | None = None) -> FigureLayout:
    """The figure's layout; with ``size``, its accessors answer in a target of that size (e.g. pixels
    of an image rendered at that size).  :func:`paint_figure` draws exactly this."""
    lay = _layout(scene, options, morph)
    if size is not None:
        lay.transform = _fit(lay.logical_size, QRectF(QPointF(0, 0), size))
    return lay


def single_size(scene: Scene, options: FigureOptions) -> QSizeF:
    """Natural size of one figure at scale 1 (logical px; 0.75 pt each in a PDF); ``options.compare_with``
    is not looked at (:func:`qkv_studio.render.figure.figure_size` sizes pairs)."""
    return QSizeF(_layout(scene, options).logical_size)
