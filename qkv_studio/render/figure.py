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
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPen,
    QTransform,
)

# colormaps.lut imports pyqtgraph, which would pick PyQt6 over PySide6 if both were installed.
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from qkv_studio.core import Scene  # noqa: E402
from qkv_studio.core.morph import blend_colours, blend_values  # noqa: E402
from qkv_studio.core.stages import stage_spec  # noqa: E402
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, SEQUENTIAL, ColorScale, is_signed, lut, scale_for, text_is_dark  # noqa: E402
from qkv_studio.render.theme import THEMES, Theme, get_theme  # noqa: E402

FONT_FAMILY = "DejaVu Sans"
BACKGROUNDS = ("theme", "white", "transparent")
#: Largest token count drawn with one rectangle per cell; above it the cells are one image.
MAX_SHAPE_TOKENS = 128
#: Largest PNG width accepted by :func:`render_image` (the export dialog offers up to 7680).
MAX_WIDTH_PX = 16384

_CELL_MAX = 64.0
_CELL_MIN = 4.0
_MIN_HATCH_CELL = 5.0  # the window hatches from 6 screen px
_GRID_TARGET = 768.0  # cells shrink so that n·cell ≈ this, between the two bounds
_GRID_ZOOM_FROM = 960.0  # a grid larger than this scales text and lines up with it
_HIGHLIGHT_WIDTH = 2.5  # the query row's outline, before the theme's line scale
_MARGIN = 18.0
_LABEL_MAX_CHARS = 18
_DARK_TEXT = "#111111"
_LIGHT_TEXT = "#ffffff"

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

    def validated(self) -> "FigureOptions":
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
        t = (value - self.scale.lo) / (self.scale.hi - self.scale.lo)
        return self.transform.map(QPointF(r.center().x(), r.bottom() - t * r.height())).y()


# ---- helpers ----------------------------------------------------------------------------------
def _require_app() -> None:
    if QGuiApplication.instance() is None or not isinstance(QGuiApplication.instance(), QGuiApplication):
        raise RuntimeError("drawing a figure needs a QGuiApplication: call qkv_studio.export.figures.ensure_app() first")


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


def _nice_step(span: float) -> float:
    raw = span / 3.0
    mag = 10 ** math.floor(math.log10(raw))
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


def _thin(n: int, step: int, keep: int | None) -> list[int]:
    """Indices 0, step, 2·step… with ``keep`` forced in (neighbours that would collide dropped)."""
    chosen = list(range(0, n, step))
    if keep is not None and keep not in chosen and step > 1:
        chosen = [i for i in chosen if abs(i - keep) >= step] + [keep]
    return sorted(chosen)


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
def _text_bounds(it: TextItem) -> QRectF:
    """The area a text item covers, in the same coordinates as the grid."""
    if it.anchor is None:
        return it.rect
    a, r = it.anchor, it.rect
    if it.rotate == -90.0:  # local (x, y) lands at (a.x + y, a.y − x)
        return QRectF(a.x() + r.top(), a.y() - r.right(), r.height(), r.width())
    return QTransform().translate(a.x(), a.y()).rotate(it.rotate).mapRect(r)


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
    source = None
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
    if source is not None:
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
        widest_per_px = max(_width(t, 1.0) for t in samples)
        vpx = min(17.0 * fs, c * 0.3 * fs, c * 0.86 / widest_per_px, c * 0.8 / _line(1.0))
        if vpx >= 8.0:
            lay.show_values, lay.value_px = True, vpx

    # row labels (queries), left of the grid
    left = 0.0
    bottom = g
    if options.token_labels:
        lh = _line(label_px)
        step = max(1, math.ceil(lh * 1.05 / c))
        rows = _thin(n, step, options.query if options.highlight_query else None)
        max_w = 12 * label_px
        names = [_elide(scene.token_label(i), label_px, max_w) for i in range(n)]
        wlab = max(_width(names[i], label_px, True) for i in rows)
        lay.label_ticks = step > 1
        tick = 5.0 * u if lay.label_ticks else 0.0
        x0 = -8.0 * u - tick - wlab
        for i in rows:
            is_q = options.highlight_query and i == options.query
            items.append(TextItem(names[i], QRectF(x0, (i + 0.5) * c - lh / 2, wlab, lh), label_px,
                                  theme.highlight if is_q else text, Qt.AlignmentFlag.AlignRight
                                  | Qt.AlignmentFlag.AlignVCenter, bold=is_q))
        lay.row_label_ticks = rows
        left = x0

        # column labels (keys), below the grid: horizontal when every one fits its column
        widths = [_width(t, label_px) for t in names]
        # horizontal when every label fits its column with a clear gap, at up to 20 % smaller type
        col_px = min(label_px, (c - 12 * u) / (max(widths) / label_px))
        horizontal = col_px >= max(0.8 * label_px, 9.0 * fs)
        cols = _thin(n, step, None)
        y0 = g + 8.0 * u + tick
        if horizontal:
            for j in cols:
                items.append(TextItem(names[j], QRectF(j * c, y0, c, _line(col_px)), col_px, text))
            bottom = y0 + _line(col_px)
        else:
            for j in cols:
                w = widths[j]
                # rotated −90° about (centre of column, y0): the text runs upwards and ends at y0
                items.append(TextItem(names[j], QRectF(-w, -lh / 2, w, lh), label_px, text,
                                      Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                                      rotate=-90.0, anchor=QPointF((j + 0.5) * c, y0)))
            bottom = y0 + max(widths[j] for j in cols)
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


def figure_size(scene: Scene, options: FigureOptions) -> QSizeF:
    """Natural size of the figure at scale 1 (logical px; 0.75 pt each in a PDF)."""
    if options.compare_with is not None:
        from qkv_studio.render.pair import pair_size

        return pair_size(scene, options)
    return QSizeF(_layout(scene, options).logical_size)


# ---- painting ----------------------------------------------------------------------------------
def _device_points(painter: QPainter, px: float) -> float:
    dpi = painter.device().logicalDpiY() if painter.device() is not None else 72
    return px * 72.0 / dpi


def _text_at_reference(painter: QPainter, rect: QRectF, px: float, align, text: str) -> None:
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


def paint_figure(painter: QPainter, rect: QRectF, scene: Scene, options: FigureOptions,
                 morph: Morph | None = None) -> FigureLayout:
    """Draw the figure into ``rect`` (device coordinates of the painter), scaled uniformly and centred.

    The background is *not* filled here unless ``options.background`` asks for one (then ``rect`` is
    filled).  With ``morph``, a frame of the stage morph (see :class:`Morph`).  Returns the layout
    used, mapped into ``rect`` (of the left figure when ``options.compare_with`` draws two).
    """
    if options.compare_with is not None:
        from qkv_studio.render.pair import paint_pair

        return paint_pair(painter, rect, scene, options)
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
