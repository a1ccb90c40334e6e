"""The heatmap's colour bar: the stage's colour scale beside the matrix, level with its rows.

:class:`HeatmapLegend` owns the :class:`~qkv_studio.ui.widgets.plot_cache.LegendBar`: it shows a scale
(its colour table, its range, its title — shortened to the words when the whole one is taller than the
bar), spans the matrix's cells rather than the names above them (so "1.0" and "0" stand beside the first
and last rows), and labels ticks only where they have room: thinned by their measured text height with
:func:`qkv_studio.render.label_layout.bar_ticks`, so they never overlap at any size.
"""

from __future__ import annotations

import math
from typing import cast

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QGraphicsItem

from qkv_studio.render import label_layout
from qkv_studio.render.colormaps import ColorScale, lut
from qkv_studio.render.label_layout import TextMeasure
from qkv_studio.render.theme import Theme
from qkv_studio.ui.widgets.plot_cache import LegendBar, cache_axes


def _tick_text(value: float, signed: bool) -> str:
    if value == 0:
        return "0"
    return (f"{value:.3g}" if signed else f"{value:.1f}").replace("-", "−")


def candidate_ticks(lo: float, hi: float) -> list[float]:
    """Nice values from ``lo`` to ``hi``, both ends included (0 too, on a signed scale)."""
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [lo]
    raw = span / 5.0
    mag = 10 ** math.floor(math.log10(raw))
    step = next((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), 10 * mag)
    first = math.ceil(lo / step) * step
    values = [lo, hi] + [first + k * step for k in range(int(span / step) + 2)]
    ends = (round(lo, 12), round(hi, 12))  # (rounded as the values are: compared unrounded, an end
    # such as ±2.8284271247461903 did not match itself and was dropped as crowding the end)
    inside = sorted({round(v, 12) for v in values if lo - 1e-9 <= v <= hi + 1e-9})
    # (a nice value a hair from an end would crowd it; an end itself is given back exact: rounded, ÷√dₖ's
    # 588.3128419472075 became 588.312841947208, a hair past the bar's range, and pyqtgraph's axis drew
    # no label for a tick outside its range — the largest value unlabelled)
    exact = {ends[0]: lo, ends[1]: hi}
    return [exact.get(v, v) for v in inside if v in ends or min(v - lo, hi - v) > 0.2 * step]


class HeatmapLegend:
    """The colour bar of ``graphics`` (row 0, column 1), aligned to ``image``'s cells in ``plot``."""

    def __init__(self, graphics: pg.GraphicsLayoutWidget, plot: pg.PlotItem, image: QGraphicsItem,
                 measure: TextMeasure) -> None:
        self._graphics, self._plot, self._image, self._measure = graphics, plot, image, measure
        self.bar = LegendBar(values=(0, 1), width=22, interactive=False, colorMapMenu=False, label="")
        graphics.addItem(self.bar, row=0, col=1)
        cache_axes(self.bar)
        self._scale: ColorScale | None = None
        self._label: tuple | None = None
        self._ticks: list | None = None
        self._tick_px = 12
        self._tick_font_px = 12
        # The tick labels' column is as wide as the widest of the labels the heatmap's stages show now
        # (reserve_for) and any seen since: stepping the stages does not move the matrix, and "1.0"
        # leaves no empty band the width of "−2.83" beside it (a fixed 4 labels' heights did: 100 px
        # of a 1024×768 slide), nor is "−1.3e+03" cut.
        self._room_texts: tuple[str, ...] = ()
        self._tick_width = 0
        self._label_px = 12
        self._text = "#000000"
        # Aligned once the layouts have settled (a resize, a new range or token count, the bar's own
        # height all move it, in an order the layouts decide): one check per event-loop turn.
        self._align_timer = QTimer(graphics)
        self._align_timer.setSingleShot(True)
        self._align_timer.setInterval(0)
        self._align_timer.timeout.connect(self.align)
        plot.vb.sigResized.connect(self._align_timer.start)
        plot.vb.sigRangeChanged.connect(self._align_timer.start)
        self.bar.geometryChanged.connect(self._align_timer.start)
        self.bar.axis.geometryChanged.connect(self._align_timer.start)  # (its ticks follow its height)

    def style(self, theme: Theme, tick_font, tick_px: int, label_px: int, line_width: float, font_scale: float) -> None:
        """Fonts, pens and widths of the bar for a theme and text size."""
        self._tick_px, self._label_px, self._text = tick_px, label_px, theme.text
        axis = self.bar.axis
        # The end labels ("1.0", "0") stand half above and below the bar; pyqtgraph drops a label that
        # overhangs its axis by more than 15 px, which projector-sized text does: allow half a label.
        half_label = tick_px // 2 + 4
        axis.setStyle(tickFont=tick_font, hideOverlappingLabels=half_label, maxTickLevel=0)
        self._graphics.ci.layout.setContentsMargins(4, 4, 4, half_label)  # (room for the "0" under the bar)
        axis.setPen(pg.mkPen(theme.muted, width=line_width))
        axis.setTextPen(pg.mkPen(theme.text))
        self._tick_font_px = tick_px
        self._tick_width = 0  # (measured again in this size, by relabel below)
        for side in ("left", "top", "bottom"):
            ax = self.bar.getAxis(side)
            ax.setPen(pg.mkPen(theme.muted, width=line_width))
            ax.setTextPen(pg.mkPen(theme.text))
        self.bar.layout.setColumnFixedWidth(1, int(22 * font_scale))
        self._ticks = None
        self.relabel()

    def reserve_for(self, scales: list[ColorScale]) -> None:
        """Make the tick labels' column as wide as the widest label of any of these scales (the stages
        the heatmap may show next) — and of what it shows now; narrower than before if they are."""
        self._room_texts = tuple(_tick_text(v, sc.lo < 0) for sc in scales for v in candidate_ticks(sc.lo, sc.hi))
        self._tick_width = 0
        self._fit_tick_width()

    def _fit_tick_width(self) -> None:
        shown = [text for _, text in self._ticks or ()]
        widest = max((self._measure.width(t, self._tick_font_px) for t in [*self._room_texts, *shown, "0.0"]),
                     default=0.0)
        # (the tick, its gap to the text, a little air; it grows as an edit widens the labels, and
        # shrinks only at reserve_for)
        self._tick_width = max(self._tick_width, int(math.ceil(widest)) + 14)
        if int(self.bar.axis.width()) != self._tick_width:
            self.bar.axis.setWidth(self._tick_width)

    def show_scale(self, scale: ColorScale) -> None:
        """Show this colour scale (table, range, ticks and title), changing only what differs."""
        old = self._scale
        if old is None or scale.cmap != old.cmap:
            self.bar.show_table(scale.cmap, lut(scale.cmap))
        if old is None or (scale.lo, scale.hi) != (old.lo, old.hi):
            self.bar.setLevels((scale.lo, scale.hi))
        self._scale = scale
        self.relabel()

    def _bar_px(self) -> float:
        return self.bar.axis.size().height() * self._graphics.transform().m22()

    def relabel(self) -> None:
        """The ticks that have room and the title that fits the bar's height (a relabelled axis redraws
        itself: set only on change)."""
        scale = self._scale
        if scale is None:
            return
        height = self._bar_px()
        values = candidate_ticks(scale.lo, scale.hi)
        if height > 0 and scale.hi > scale.lo:
            positions = [(v - scale.lo) / (scale.hi - scale.lo) * height for v in values]
            values = [values[i] for i in label_layout.bar_ticks(positions, self._tick_px, self._measure)]
        signed = scale.lo < 0
        ticks = [(v, _tick_text(v, signed)) for v in values]
        if ticks != self._ticks:
            self._ticks = ticks
            self.bar.axis.setTicks([ticks, []])
            self._fit_tick_width()
        room = self._plot.vb.rect().height() * self._graphics.transform().m22()
        label, px = scale.label, self._label_px
        if room > 0:  # whole, or "softmax weight (0–1)" → "softmax weight" (the ticks say 0–1), or smaller
            forms = [scale.label, scale.label.split(" (")[0]]
            title = label_layout.axis_title(forms, px, room, self._measure, min_px=0.6 * px)
            label, px = title.text, int(title.px)
        css = {"color": self._text, "font-size": f"{px}px"}
        key = (label, tuple(css.items()))
        if key != self._label:
            self._label = key
            axis = self.bar.getAxis("left")
            axis.setLabel(label, **css)
            axis.showLabel(bool(label))

    def align(self, *_: object) -> None:
        """Span the matrix's cells (not the view box, which pads them a little), so the bar's 0 and its
        top stand level with the first and last rows."""
        cells = self._image.mapRectToParent(self._image.boundingRect())  # (in the view's coordinates)
        cells = cells.intersected(self._plot.vb.viewRect())  # (zoomed in: the cells in view)
        # (through the view box, which brings its transform up to date for a range set just now)
        rect = self._plot.vb.mapFromViewToItem(self.bar, cells).boundingRect()
        height = self.bar.boundingRect().height()
        if rect.height() <= 0 or height <= 0:
            return
        # (PySide6 returns getContentsMargins' four out-parameters as a tuple; its stubs say object)
        margins = cast("tuple[float, float, float, float]", self.bar.layout.getContentsMargins())
        left, old_top, right, old_bottom = margins
        top, bottom = max(0.0, rect.top()), max(0.0, height - rect.bottom())
        if abs(old_top - top) > 0.5 or abs(old_bottom - bottom) > 0.5:
            self.bar.layout.setContentsMargins(left, top, right, bottom)
        self.relabel()
