"""The √d_k explorer's plots: the score histogram (with the other setting as a dotted ghost and ±σ
marked) and one sample query's softmax weights over the keys, raw and ÷√d_k, as two bar charts.

:class:`ExplorerPlots` is told what to draw by :class:`~qkv_studio.ui.lesson.sqrt_dk_explorer.SqrtDkExplorer`
(the numbers come from :mod:`qkv_studio.core.saturation`); it decides only how they fit: the plots
stacked or in one row, titles in a smaller type when they would not fit, as many numbers under and on
the bars as there is room for.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QWidget

from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.ui.widgets.formatting import fmt_fixed

N_KEYS = 8
BASE_PT = 10.0


def signed(x: float, decimals: int = 1) -> str:
    """``x`` with its sign always written (+1.5, −0.3)."""
    return ("+" if x >= 0 else "−") + f"{abs(x):.{decimals}f}"


class ExplorerPlots(pg.GraphicsLayoutWidget):
    """The histogram above the two bar charts (or all three in a row when the room is wide and short)."""

    def __init__(self, parent: QWidget | None = None, *, samples: int = 1000) -> None:
        super().__init__(parent)
        self._samples = samples
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._scale = 1.0
        self._base = QFont()
        self._bars_shown: tuple | None = None  # (weights, scores, d_k, scaled) of the bars, for a redraw
        self.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.hist_plot: pg.PlotItem = self.addPlot(row=0, col=0, colspan=2)
        self.raw_plot: pg.PlotItem = self.addPlot(row=1, col=0)
        self.scaled_plot: pg.PlotItem = self.addPlot(row=1, col=1)
        for p in (self.hist_plot, self.raw_plot, self.scaled_plot):
            p.setMenuEnabled(False)
            p.hideButtons()
            p.setMouseEnabled(False, False)
        self.hist_plot.hideAxis("left")  # densities: the shape and the x-axis carry the message
        self.hist_plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.ci.layout.setRowStretchFactor(0, 1)
        self.ci.layout.setRowStretchFactor(1, 1)
        self.ghost_item = pg.PlotDataItem(stepMode="center")
        self.hist_item = pg.PlotDataItem(stepMode="center", fillLevel=0)
        self.hist_plot.addItem(self.ghost_item)
        self.hist_plot.addItem(self.hist_item)
        self.sigma_lines = [pg.InfiniteLine(angle=90, movable=False) for _ in range(2)]
        for line in self.sigma_lines:
            self.hist_plot.addItem(line, ignoreBounds=True)
        self.sigma_text = pg.TextItem(anchor=(0.0, 0.0))
        self.hist_plot.addItem(self.sigma_text, ignoreBounds=True)
        self.bars: dict[str, pg.BarGraphItem] = {}
        self.bar_labels: dict[str, list[pg.TextItem]] = {}
        for key, p in (("raw", self.raw_plot), ("scaled", self.scaled_plot)):
            p.setYRange(0, 1.18, padding=0)
            p.setXRange(-0.6, N_KEYS - 0.4, padding=0)
            p.getAxis("left").setTicks([[(0, "0"), (0.5, "0.5"), (1, "1")]])
            p.getAxis("left").setLabel("weight")
            bars = pg.BarGraphItem(x=np.arange(N_KEYS), height=np.zeros(N_KEYS), width=0.7)
            p.addItem(bars)
            self.bars[key] = bars
            labels = []
            for _j in range(N_KEYS):
                t = pg.TextItem(anchor=(0.5, 1.0))
                p.addItem(t)
                labels.append(t)
            self.bar_labels[key] = labels
        self._plots_in_a_row = False
        self._titles: dict[pg.PlotItem, tuple] = {}  # plot -> (html, colour, factor) of its title
        self.raw_plot.vb.sigResized.connect(self._on_bars_resized)
        self._sigma_at = (1.0, 1.0, 4.0)  # where "±σ" goes: σ, height, half-range of the histogram
        self.hist_plot.vb.sigResized.connect(self._place_sigma_text)
        self.installEventFilter(self)  # their room's shape decides how the plots stand

    def _font(self, factor: float = 1.0, bold: bool = False) -> QFont:
        font = QFont(self._base)
        font.setPointSizeF(BASE_PT * self._scale * factor)
        font.setBold(bold)
        return font

    def restyle(self, theme: Theme, scale: float, base: QFont) -> None:
        """Axes, lines and labels in a theme's colours at a font scale (``base``: the explorer's font)."""
        self._theme, self._scale, self._base = theme, scale, QFont(base)
        t, f = theme, scale
        self.setBackground(t.background)
        tick_font = self._font(0.9)
        for p in (self.hist_plot, self.raw_plot, self.scaled_plot):
            for ax in ("left", "bottom"):
                axis = p.getAxis(ax)
                axis.setPen(pg.mkPen(t.text, width=t.line_scale))
                axis.setTextPen(pg.mkPen(t.text))
                axis.setStyle(tickFont=tick_font, tickLength=int(-4 * f))
                axis.label.setFont(tick_font)
        for line in self.sigma_lines:
            line.setPen(pg.mkPen(t.highlight, width=1.5 * t.line_scale * f, style=Qt.PenStyle.DashLine))
        self.sigma_text.setColor(t.highlight)
        backing = QColor(t.background)
        backing.setAlpha(210)
        self.sigma_text.fill = pg.mkBrush(backing)  # legible where it crosses the dashed ±σ lines
        self.sigma_text.setFont(self._font(0.9, bold=True))
        for labels in self.bar_labels.values():
            for item in labels:
                item.setColor(t.text)
                item.setFont(self._font(0.85))

    # ---- the histogram ---------------------------------------------------------------------------
    def draw_histogram(self, hist: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], limit: float,
                       sigma: float, scaled: bool) -> None:
        """The scores in use (``hist`` = edges, densities, then the other setting's) over ±``limit``, with
        the ±σ lines at ``sigma``."""
        t, f = self._theme, self._scale
        edges, dens, g_edges, g_dens = hist
        cur_colour = t.accent if scaled else t.key_color
        ghost_colour = t.muted
        fill = QColor(cur_colour)
        fill.setAlpha(110)
        self.hist_item.setData(edges, dens, stepMode="center", fillLevel=0, brush=pg.mkBrush(fill),
                               pen=pg.mkPen(cur_colour, width=1.5 * t.line_scale * f))
        self.ghost_item.setData(g_edges, g_dens, stepMode="center",
                                pen=pg.mkPen(ghost_colour, width=1.0 * t.line_scale * f,
                                             style=Qt.PenStyle.DotLine))
        top = float(dens.max()) if dens.size and dens.max() > 0 else 1.0
        self.hist_plot.setXRange(-limit, limit, padding=0.02)
        self.hist_plot.setYRange(0, top * 1.25, padding=0)
        for line, x in zip(self.sigma_lines, (-sigma, sigma), strict=False):
            line.setPos(x)
        self.sigma_text.setText(f"±σ = ±{sigma:.1f}")
        self._sigma_at = (sigma, top * 1.22, limit)
        self._place_sigma_text()
        which = "÷ √dₖ" if scaled else "raw q·k"
        other = "raw" if scaled else "÷ √dₖ"
        self._fit_title(self.hist_plot, f"<span style='color:{cur_colour}'>■</span> {which} &nbsp;"
                                        f"<span style='color:{ghost_colour}'>┄ {other}</span>", t.text, 1.0)
        self.hist_plot.getAxis("bottom").setLabel("score")
        self.hist_plot.setToolTip(f"{self._samples * N_KEYS:,} scores: {self._samples:,} random queries × "
                                  f"{N_KEYS} random keys, seeded; the dotted outline is the other setting")

    def _place_sigma_text(self, *_: object) -> None:
        """"±σ = …" beside the +σ line when it fits before the plot's right end, else centred over 0."""
        sigma, y, limit = self._sigma_at
        text_px = QFontMetrics(self._font(0.9, bold=True)).horizontalAdvance(self.sigma_text.toPlainText()) + 8
        vb_w = self.hist_plot.vb.width()
        room_px = (limit * 1.02 - sigma) / (2.04 * limit) * vb_w if vb_w > 10 else text_px
        beside = room_px >= text_px
        self.sigma_text.setAnchor((0.0, 0.0) if beside else (0.5, 0.0))
        self.sigma_text.setPos(sigma if beside else 0.0, y)

    # ---- the bars ----------------------------------------------------------------------------------
    def draw_bars(self, weights: dict[str, np.ndarray], scores: dict[str, np.ndarray], d_k: int,
                  scaled: bool) -> None:
        """The sample query's weights (``weights["raw"]``, ``weights["scaled"]``) as bars, its scores
        under them; the chart of the setting in use titled in bold."""
        self._bars_shown = (weights, scores, d_k, scaled)
        t, f, d, on = self._theme, self._scale, d_k, scaled
        for key, p in (("raw", self.raw_plot), ("scaled", self.scaled_plot)):
            w = weights[key]
            s = scores[key]
            best = int(np.argmax(w))
            active = (key == "scaled") == on
            brushes = [pg.mkBrush(t.query_color if j == best else t.key_color) for j in range(N_KEYS)]
            self.bars[key].setOpts(x=np.arange(N_KEYS), height=w, width=0.7, brushes=brushes,
                                   pen=pg.mkPen(None))
            # Numbers only where they fit: every bar's weight if there is room, else the top one alone.
            slot = self._bar_slot_px(p)
            fm = QFontMetrics(self._font(0.85))
            fits = fm.horizontalAdvance("0.00 ") <= slot
            # the top bar's number may spill over its neighbours, but not out of the plot at either end
            top_fits = fm.horizontalAdvance("0.00") <= slot * (1.0 if best in (0, N_KEYS - 1) else 2.6)
            for j, item in enumerate(self.bar_labels[key]):
                wj = float(w[j])
                item.setVisible(fits or (j == best and top_fits))
                item.setText(fmt_fixed(wj))
                # tall bars carry their number inside, clear of the title — when it fits in the bar
                inside = wj > 0.75 and fm.horizontalAdvance(fmt_fixed(wj)) <= 0.7 * slot
                item.setAnchor((0.5, 0.0) if inside else (0.5, 1.0))
                item.setColor(t.background if inside else t.text)
                item.setPos(j, wj)
            p.getAxis("bottom").setTicks([[(j, text) for j, text in enumerate(self._score_ticks(s, slot))]])
            # One query of the samples (the cards and the caption give means over all of them): its own top weight.
            top = fmt_fixed(float(w[best]))
            label = (f"one query, raw q·k → softmax: top {top}" if key == "raw"
                     else f"one query, q·k ÷ √{d}: top {top}")
            title_fm = QFontMetrics(self._font(0.95, bold=True))  # (the title's own type, bold when active)
            if self._plots_in_a_row or title_fm.horizontalAdvance(label) > p.width() - 12 * f:  # narrow: short
                label = (f"one query, raw: top {top}" if key == "raw" else f"one query, ÷√{d}: top {top}")
            self._fit_title(p, f"<b>{label}</b>" if active else label, t.text if active else t.muted, 0.95)

    def _on_bars_resized(self, *_: object) -> None:
        if self._bars_shown is not None:
            self.draw_bars(*self._bars_shown)

    def _score_ticks(self, scores: np.ndarray, slot: float) -> list[str]:
        """The scores under the bars, as precise as the room allows (+14.7, else 15 and 0.3, else 15 and 0,
        else none)."""
        fm = QFontMetrics(self._font(0.9))

        def fits(texts: list[str]) -> bool:
            return max(fm.horizontalAdvance(x + " ") for x in texts) <= slot

        one = [signed(float(x), 1) for x in scores]
        if fits(one):
            return one
        plain = [fmt_fixed(float(x), 1 if abs(x) < 9.95 else 0) for x in scores]  # no "+": the minus tells
        if fits(plain):
            return plain
        whole = [fmt_fixed(float(x), 0) for x in scores]
        return whole if fits(whole) else [""] * len(scores)  # colliding numbers help nobody: none

    @staticmethod
    def _bar_slot_px(p: pg.PlotItem) -> float:
        """Pixels per bar in a bar chart (before it is laid out, a guess)."""
        width = p.vb.width()
        return width / N_KEYS if width > 10 else 60.0

    # ---- fitting the room --------------------------------------------------------------------------
    def _fit_title(self, plot: pg.PlotItem, html: str, color: str, factor: float) -> None:
        """A plot's title, in a smaller type (down to 60%) when it would be wider than the plot's share of
        the row: a title must neither push the plots out of the panel nor run into its neighbour's."""
        pt = BASE_PT * self._scale * factor
        self._titles[plot] = (html, color, factor)  # kept for a refit when the plots are re-arranged
        plot.setTitle(html, color=color, size=f"{pt:.1f}pt")
        shares = {self.hist_plot: 5 / 13, self.raw_plot: 4 / 13, self.scaled_plot: 4 / 13} \
            if self._plots_in_a_row else {self.hist_plot: 1.0, self.raw_plot: 0.5, self.scaled_plot: 0.5}
        room = self.width() * shares[plot] - 12 * self._scale  # a margin: centred HTML runs wider
        wide = plot.titleLabel.itemRect().width()
        if room > 0 and wide > room:
            plot.setTitle(html, color=color, size=f"{max(0.6 * pt, pt * room / wide):.1f}pt")
        plot.titleLabel.setMinimumWidth(0)  # the layout shares the row by its stretch, not by title widths

    def _refit_titles(self) -> None:
        for plot in (self.hist_plot, self.raw_plot, self.scaled_plot):
            if plot in self._titles:
                self._fit_title(plot, *self._titles[plot])

    def _arrange_plots(self) -> None:
        """Histogram above the two bar charts, or all three side by side when the plots' room is wide and
        short (a dock under the calculation table on the projector): each then keeps a readable height."""
        in_a_row = self.width() > 2.2 * max(self.height(), 1)
        if in_a_row == self._plots_in_a_row:
            return
        self._plots_in_a_row = in_a_row
        layout = self.ci
        for p in (self.hist_plot, self.raw_plot, self.scaled_plot):
            layout.removeItem(p)
        for p in (self.raw_plot, self.scaled_plot):  # side by side, the ticks 0 / 0.5 / 1 say it: no axis title
            p.getAxis("left").setLabel(None if in_a_row else "weight")
            p.getAxis("left").showLabel(not in_a_row)
        if in_a_row:
            layout.addItem(self.hist_plot, row=0, col=0)
            layout.addItem(self.raw_plot, row=0, col=1)
            layout.addItem(self.scaled_plot, row=0, col=2)
            layout.layout.setColumnStretchFactor(0, 5)
            layout.layout.setColumnStretchFactor(1, 4)
            layout.layout.setColumnStretchFactor(2, 4)
        else:
            layout.addItem(self.hist_plot, row=0, col=0, colspan=2)
            layout.addItem(self.raw_plot, row=1, col=0)
            layout.addItem(self.scaled_plot, row=1, col=1)
            for c in range(3):
                layout.layout.setColumnStretchFactor(c, 1)

    def plots_in_a_row(self) -> bool:
        """True when the histogram and the two bar charts stand side by side."""
        return self._plots_in_a_row

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self and event.type() == QEvent.Type.Resize:
            self._arrange_plots()
            self._refit_titles()
        return super().eventFilter(obj, event)
