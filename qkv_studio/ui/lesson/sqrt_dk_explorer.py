"""The √d_k explorer: why attention divides its scores by √d_k, seen rather than told.

Seeded random query and key vectors with d_k unit-variance components (1–512, one slider).  A score
q·k adds up d_k such products, so its spread grows like √d_k; the explorer shows that spread as a
histogram, measures what it does to the softmax (the top weight, the entropy, the size of the
softmax's gradient) and puts one query's weights over eight keys side by side, raw and ÷√d_k.  At
d_k = 64 the raw scores swing by ±8, one key takes nearly all the weight and the gradient goes flat;
divided by √64 = 8 they are back to unit size.

Standalone: no Session needed (the numbers come from :mod:`qkv_studio.core.saturation`).
Public API: ``set_d_k(n)``, ``set_scaled(on)``, ``set_temperature(t)``; drawn in the look of the
:class:`~qkv_studio.state.appearance.Appearance` it is bound to (``appearance=`` or ``bind_appearance``).
Test hooks: ``d_k_slider``, ``scale_box``, ``temperature_slider``, ``readouts()``, ``current()``,
``other()``, ``sample_weights()``, ``histogram_data()``, ``caption``.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)
from superqt import QLabeledDoubleSlider, QLabeledSlider
from superqt.utils import qthrottled

from qkv_studio.core.saturation import (
    DEFAULT_SEED,
    MAX_D_K,
    MIN_D_K,
    Saturation,
    ScoreBank,
    histogram,
    saturation,
    softmax_rows,
)
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.formatting import fmt_fixed

N_KEYS = 8
SAMPLES = 1000  # queries, each against N_KEYS keys: 8000 scores per setting
BINS = 60
QUICK_D_K = (1, 8, 64, 512)
_BASE_PT = 10.0
_THROTTLE_MS = 30  # slider drags: the first move draws at once, the rest at most every 30 ms


def _sign(x: float, decimals: int = 1) -> str:
    return ("+" if x >= 0 else "−") + f"{abs(x):.{decimals}f}"


class _Readout(QFrame):
    """One live number: a caption, the value large (with a small unit or theory beside it), and the
    other setting's value small below."""

    def __init__(self, title: str, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(title)
        self.value = QLabel()
        self.unit = QLabel()
        self.note = QLabel()
        for lab in (self.title, self.value, self.unit, self.note):
            lab.setTextFormat(Qt.TextFormat.PlainText)
        row = QHBoxLayout()
        row.setSpacing(6)
        row.addWidget(self.value, 0, Qt.AlignmentFlag.AlignBaseline)
        row.addWidget(self.unit, 1, Qt.AlignmentFlag.AlignBaseline)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setSpacing(0)
        lay.addWidget(self.title)
        lay.addLayout(row)
        lay.addWidget(self.note)


class SqrtDkExplorer(FollowsAppearance, QWidget):
    """d_k slider, ÷√d_k switch and temperature; score histogram; raw vs scaled softmax side by side."""

    changed = Signal()  # after every recompute (d_k, scaling or temperature moved)

    def __init__(self, parent: QWidget | None = None, *, seed: int = DEFAULT_SEED, d_k: int = 64,
                 scaled: bool = False, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._font_scale = 1.0
        self._bank = ScoreBank(n_keys=N_KEYS, samples=SAMPLES, seed=seed)
        self._sample = self._typical_query()
        self._cur: Saturation | None = None
        self._oth: Saturation | None = None
        self._hist: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

        # ---- controls ------------------------------------------------------------------------------
        self.caption = QLabel(self)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self.d_k_slider = QLabeledSlider(Qt.Orientation.Horizontal)
        self.d_k_slider.setRange(MIN_D_K, MAX_D_K)
        self.d_k_slider.setValue(int(d_k))
        self.d_k_slider.setToolTip("the width d_k of the query and key vectors")
        self.scale_box = QCheckBox("÷ √dₖ")
        self.scale_box.setChecked(bool(scaled))
        self.scale_box.setToolTip("divide the scores by √d_k before the softmax")
        self.temperature_slider = QLabeledDoubleSlider(Qt.Orientation.Horizontal)
        self.temperature_slider.setRange(0.1, 5.0)
        self.temperature_slider.setDecimals(2)
        self.temperature_slider.setSingleStep(0.05)
        self.temperature_slider.setValue(1.0)
        self.temperature_slider.setToolTip("temperature: the scores are divided by it too (below 1 sharpens, "
                                           "above 1 flattens)")
        self.quick_buttons: list[QToolButton] = []
        quick = QHBoxLayout()
        quick.setSpacing(4)
        for n in QUICK_D_K:
            b = QToolButton()
            b.setText(f"{n}")
            b.setToolTip(f"d_k = {n}")
            b.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            b.clicked.connect(lambda _=False, n=n: self.set_d_k(n))
            quick.addWidget(b)
            self.quick_buttons.append(b)
        self.d_k_label = QLabel("dₖ")
        self.t_label = QLabel("temperature")
        controls = QGridLayout()
        controls.setHorizontalSpacing(8)
        controls.setVerticalSpacing(2)
        controls.addWidget(self.d_k_label, 0, 0)
        controls.addWidget(self.d_k_slider, 0, 1)
        controls.addLayout(quick, 0, 2)
        controls.addWidget(self.t_label, 1, 0)
        controls.addWidget(self.temperature_slider, 1, 1)
        controls.addWidget(self.scale_box, 1, 2)
        controls.setColumnStretch(1, 1)

        # ---- readouts ------------------------------------------------------------------------------
        self.std_readout = _Readout("score spread σ")
        self.max_readout = _Readout("mean top weight")  # (of every query: the bars show one of them)
        self.entropy_readout = _Readout("entropy")
        self.gradient_readout = _Readout("gradient ‖∂w/∂s‖")
        self._readouts = (self.std_readout, self.max_readout, self.entropy_readout, self.gradient_readout)
        self._cards = QGridLayout()
        self._cards.setSpacing(6)
        self._card_columns = 0
        self._compact = False
        self._tight = False  # a very short dock (the projector): a one-sentence caption
        self._plots_in_a_row = False
        self._titles: dict[pg.PlotItem, tuple] = {}  # plot -> (html, colour, factor) of its title
        self.summary = QLabel(self)  # the four readouts on one line, for a short dock
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.summary.hide()
        self._reflow_cards()

        # ---- plots ---------------------------------------------------------------------------------
        self.graphics = pg.GraphicsLayoutWidget(self)
        self.graphics.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.hist_plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0, colspan=2)
        self.raw_plot: pg.PlotItem = self.graphics.addPlot(row=1, col=0)
        self.scaled_plot: pg.PlotItem = self.graphics.addPlot(row=1, col=1)
        for p in (self.hist_plot, self.raw_plot, self.scaled_plot):
            p.setMenuEnabled(False)
            p.hideButtons()
            p.setMouseEnabled(False, False)
        self.hist_plot.hideAxis("left")  # densities: the shape and the x-axis carry the message
        self.hist_plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)
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
            for j in range(N_KEYS):
                t = pg.TextItem(anchor=(0.5, 1.0))
                p.addItem(t)
                labels.append(t)
            self.bar_labels[key] = labels

        self.raw_plot.vb.sigResized.connect(self._on_bars_resized)
        self._sigma_at = (1.0, 1.0, 4.0)  # where "±σ" goes: σ, height, half-range of the histogram
        self.hist_plot.vb.sigResized.connect(self._place_sigma_text)
        self.graphics.installEventFilter(self)  # their room's shape decides how the plots stand

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.caption)
        layout.addLayout(controls)
        layout.addLayout(self._cards)
        layout.addWidget(self.summary)
        layout.addWidget(self.graphics, 1)

        self._throttled = qthrottled(self._recompute, timeout=_THROTTLE_MS, leading=True, parent=self)
        self.d_k_slider.valueChanged.connect(self._throttled)
        self.temperature_slider.valueChanged.connect(self._throttled)
        self.scale_box.toggled.connect(self._recompute)
        self._restyle_theme(self._theme)  # styles, then computes
        self.bind_appearance(appearance)

    def _typical_query(self) -> int:
        """The sample query shown as bars: the one whose raw top weight at d_k = 64 is the median one.

        Fixed for every d_k (the bars grow continuously as d_k slides) and typical rather than extreme.
        """
        top = softmax_rows(self._bank.raw(64)).max(axis=1)
        return int(np.argsort(top)[len(top) // 2])

    # ---- public API -------------------------------------------------------------------------------
    def set_d_k(self, d_k: int) -> None:
        self.d_k_slider.setValue(int(max(MIN_D_K, min(MAX_D_K, d_k))))
        self.flush()

    def set_scaled(self, on: bool) -> None:
        self.scale_box.setChecked(bool(on))

    def set_temperature(self, t: float) -> None:
        self.temperature_slider.setValue(float(t))
        self.flush()

    def flush(self) -> None:
        """Draw now any slider move still waiting for the throttle."""
        self._throttled.flush()

    def d_k(self) -> int:
        return int(self.d_k_slider.value())

    def scaled(self) -> bool:
        return self.scale_box.isChecked()

    def temperature(self) -> float:
        return float(self.temperature_slider.value())

    # ---- look (see FollowsAppearance; the explorer draws no colour-mapped data) ---------------------
    def _restyle_theme(self, theme: Theme) -> None:
        """Colours and line widths of a theme."""
        self._theme = theme
        pal = self.palette()
        for role, colour in ((QPalette.ColorRole.Window, theme.background), (QPalette.ColorRole.Base, theme.background),
                             (QPalette.ColorRole.WindowText, theme.text), (QPalette.ColorRole.Text, theme.text),
                             (QPalette.ColorRole.Button, theme.panel), (QPalette.ColorRole.ButtonText, theme.text)):
            pal.setColor(role, QColor(colour))
        self.setPalette(pal)
        self.setAutoFillBackground(True)
        self.graphics.setBackground(theme.background)
        for r in self._readouts:
            r.setStyleSheet(f"_Readout {{ border: {max(1, int(theme.line_scale))}px solid {theme.grid}; }}")
        self._style()

    def _restyle_scale(self, f: float) -> None:
        """Scale every font and pen width (zoom, projector)."""
        self._font_scale = f
        self._style()
        self._reflow_cards()

    # ---- test hooks -----------------------------------------------------------------------------------
    def current(self) -> Saturation:
        """The numbers of the setting in use (the ÷√d_k box decides)."""
        return self._cur

    def other(self) -> Saturation:
        """The same d_k and temperature with the ÷√d_k box flipped."""
        return self._oth

    def readouts(self) -> dict[str, str]:
        """The four readouts' values as shown (plain text)."""
        return {name: r.value.text() for name, r in zip(("std", "max_weight", "entropy", "gradient"),
                                                        self._readouts)}

    def sample_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """The sample query's softmax weights over the keys: (raw scores, scores ÷ √d_k)."""
        return self._sample_w["raw"], self._sample_w["scaled"]

    def sample_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """The sample query's scores over the keys as fed to the softmax: (raw, ÷ √d_k)."""
        return self._sample_s["raw"], self._sample_s["scaled"]

    def histogram_data(self) -> tuple[np.ndarray, np.ndarray]:
        """Bin edges and densities of the histogram in use."""
        return self._hist[0], self._hist[1]

    # ---- drawing ------------------------------------------------------------------------------------
    def _font(self, factor: float = 1.0, bold: bool = False) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(_BASE_PT * self._font_scale * factor)
        font.setBold(bold)
        return font

    def _style(self) -> None:  # noqa: C901 - one place for every font, colour and pen
        t = self._theme
        f = self._font_scale
        base = self._font()
        for w in (self.caption, self.summary, self.d_k_label, self.t_label, self.scale_box, self.d_k_slider,
                  self.temperature_slider, *self.quick_buttons):
            w.setFont(base)
        for b in self.quick_buttons:
            b.setMinimumWidth(QFontMetrics(base).horizontalAdvance("5120"))
            b.setStyleSheet(f"QToolButton {{ color: {t.text}; background: {t.panel}; border: "
                            f"{max(1, round(t.line_scale))}px solid {t.grid}; border-radius: 3px; padding: 1px 4px; }}"
                            f"QToolButton:hover {{ border-color: {t.accent}; }}")
        groove = max(4, round(5 * f))
        handle = max(12, round(16 * f))
        slider_css = (
            f"QSlider::groove:horizontal {{ height: {groove}px; background: {t.grid}; "
            f"border-radius: {groove // 2}px; }}"
            f"QSlider::sub-page:horizontal {{ background: {t.accent}; border-radius: {groove // 2}px; }}"
            f"QSlider::handle:horizontal {{ background: {t.text}; border: {max(1, round(t.line_scale))}px solid "
            f"{t.background}; width: {handle}px; margin: -{(handle - groove) // 2}px 0; "
            f"border-radius: {handle // 2}px; }}")
        box = max(12, round(14 * f))
        self.scale_box.setStyleSheet(
            f"QCheckBox {{ color: {t.text}; spacing: {round(6 * f)}px; }}"
            f"QCheckBox::indicator {{ width: {box}px; height: {box}px; border: {max(1, round(t.line_scale * f))}px "
            f"solid {t.text}; background: {t.background}; border-radius: 2px; }}"
            f"QCheckBox::indicator:checked {{ background: {t.accent}; }}")
        for w in (self.d_k_slider, self.temperature_slider):
            for child in w.findChildren(QSlider):
                child.setStyleSheet(slider_css)
                child.setMinimumHeight(handle + 4)
        for w in (self.d_k_slider, self.temperature_slider):  # superqt's editable number box
            for child in w.findChildren(QLineEdit):
                child.setFont(base)
                child.setStyleSheet(f"background: transparent; border: 0; color: {t.text};")
                if hasattr(child, "_update_size"):  # superqt sizes the box from its font only when told
                    child._update_size()
        for r in self._readouts:
            r.title.setFont(self._font(0.9))
            r.value.setFont(self._font(1.6, bold=True))
            r.note.setFont(self._font(0.85))
            r.unit.setFont(self._font(0.85))
            for lab in (r.title, r.value, r.unit, r.note):
                lab.setStyleSheet(f"color: {t.text if lab is r.value else t.muted}; border: none;")
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
        self._recompute()

    def _recompute(self, *_: object) -> None:
        d, on, temp = self.d_k(), self.scaled(), self.temperature()
        self._cur = saturation(d, on, temp, bank=self._bank)
        self._oth = saturation(d, not on, temp, bank=self._bank)
        raw_row = self._bank.scores(d, False, temp)[self._sample]
        scaled_row = self._bank.scores(d, True, temp)[self._sample]
        self._sample_s = {"raw": raw_row, "scaled": scaled_row}
        self._sample_w = {"raw": softmax_rows(raw_row), "scaled": softmax_rows(scaled_row)}
        self._draw_histogram()
        self._draw_bars()
        self._write_readouts()
        self._write_caption()
        self.changed.emit()

    def _draw_histogram(self) -> None:
        t = self._theme
        f = self._font_scale
        d, on, temp = self.d_k(), self.scaled(), self.temperature()
        # One x-range for both settings: the raw scores' ±4σ, so switching ÷√d_k visibly narrows them.
        limit = 4.0 * np.sqrt(d) / temp
        edges, dens = histogram(self._bank.scores(d, on, temp), bins=BINS, limit=limit)
        g_edges, g_dens = histogram(self._bank.scores(d, not on, temp), bins=BINS, limit=limit)
        self._hist = (edges, dens, g_edges, g_dens)
        cur_colour = t.accent if on else t.key_color
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
        sigma = self._cur.stats.score_std
        for line, x in zip(self.sigma_lines, (-sigma, sigma)):
            line.setPos(x)
        self.sigma_text.setText(f"±σ = ±{sigma:.1f}")
        self._sigma_at = (sigma, top * 1.22, limit)
        self._place_sigma_text()
        which = "÷ √dₖ" if on else "raw q·k"
        other = "raw" if on else "÷ √dₖ"
        self._fit_title(self.hist_plot, f"<span style='color:{cur_colour}'>■</span> {which} &nbsp;"
                                        f"<span style='color:{ghost_colour}'>┄ {other}</span>", t.text, 1.0)
        self.hist_plot.getAxis("bottom").setLabel("score")
        self.hist_plot.setToolTip(f"{SAMPLES * N_KEYS:,} scores: {SAMPLES:,} random queries × {N_KEYS} random keys, "
                                  f"seeded; the dotted outline is the other setting")

    def _place_sigma_text(self, *_: object) -> None:
        """"±σ = …" beside the +σ line when it fits before the plot's right end, else centred over 0."""
        sigma, y, limit = self._sigma_at
        text_px = QFontMetrics(self._font(0.9, bold=True)).horizontalAdvance(self.sigma_text.toPlainText()) + 8
        vb_w = self.hist_plot.vb.width()
        room_px = (limit * 1.02 - sigma) / (2.04 * limit) * vb_w if vb_w > 10 else text_px
        beside = room_px >= text_px
        self.sigma_text.setAnchor((0.0, 0.0) if beside else (0.5, 0.0))
        self.sigma_text.setPos(sigma if beside else 0.0, y)

    def _draw_bars(self) -> None:
        t = self._theme
        f = self._font_scale
        d, on = self.d_k(), self.scaled()
        for key, p in (("raw", self.raw_plot), ("scaled", self.scaled_plot)):
            w = self._sample_w[key]
            s = self._sample_s[key]
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
            # One query of the SAMPLES (the cards and the caption give means over all of them): its own top weight.
            top = fmt_fixed(float(w[best]))
            label = (f"one query, raw q·k → softmax: top {top}" if key == "raw"
                     else f"one query, q·k ÷ √{d}: top {top}")
            title_fm = QFontMetrics(self._font(0.95, bold=True))  # (the title's own type, bold when active)
            if self._plots_in_a_row or title_fm.horizontalAdvance(label) > p.width() - 12 * f:  # narrow: short
                label = (f"one query, raw: top {top}" if key == "raw" else f"one query, ÷√{d}: top {top}")
            self._fit_title(p, f"<b>{label}</b>" if active else label, t.text if active else t.muted, 0.95)

    def _fit_title(self, plot: pg.PlotItem, html: str, color: str, factor: float) -> None:
        """A plot's title, in a smaller type (down to 60%) when it would be wider than the plot's share of
        the row: a title must neither push the plots out of the panel nor run into its neighbour's."""
        pt = _BASE_PT * self._font_scale * factor
        self._titles[plot] = (html, color, factor)  # kept for a refit when the plots are re-arranged
        plot.setTitle(html, color=color, size=f"{pt:.1f}pt")
        shares = {self.hist_plot: 5 / 13, self.raw_plot: 4 / 13, self.scaled_plot: 4 / 13} \
            if self._plots_in_a_row else {self.hist_plot: 1.0, self.raw_plot: 0.5, self.scaled_plot: 0.5}
        room = self.graphics.width() * shares[plot] - 12 * self._font_scale  # a margin: centred HTML runs wider
        wide = plot.titleLabel.itemRect().width()
        if room > 0 and wide > room:
            plot.setTitle(html, color=color, size=f"{max(0.6 * pt, pt * room / wide):.1f}pt")
        plot.titleLabel.setMinimumWidth(0)  # the layout shares the row by its stretch, not by title widths

    def _refit_titles(self) -> None:
        for plot in (self.hist_plot, self.raw_plot, self.scaled_plot):
            if plot in self._titles:
                self._fit_title(plot, *self._titles[plot])

    def _score_ticks(self, scores: np.ndarray, slot: float) -> list[str]:
        """The scores under the bars, as precise as the room allows (+14.7, else 15 and 0.3, else 15 and 0,
        else none)."""
        fm = QFontMetrics(self._font(0.9))

        def fits(texts: list[str]) -> bool:
            return max(fm.horizontalAdvance(x + " ") for x in texts) <= slot

        one = [_sign(float(x), 1) for x in scores]
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

    def _reflow_cards(self) -> None:
        """Four readouts in a row, or 2 × 2 when the widget is narrow for its font (a slim dock), or one
        line of text when it is short (the histogram and the bars come first); in a very short dock the
        caption says its point in one sentence, and the plots stand in one row when that suits their room."""
        compact = self.height() < 620 * self._font_scale
        if compact != self._compact:
            self._compact = compact
            for r in self._readouts:
                r.setVisible(not compact)
            self.summary.setVisible(compact)
        tight = self.height() < 420 * self._font_scale
        if tight != self._tight:
            self._tight = tight
            if self._cur is not None:
                self._write_caption()
                self._write_readouts()
        need = 4 * max(r.minimumSizeHint().width() for r in self._readouts) + 3 * self._cards.spacing() + 12
        columns = 4 if self.width() >= need else 2
        if columns == self._card_columns:
            return
        self._card_columns = columns
        for r in self._readouts:
            self._cards.removeWidget(r)
        for i, r in enumerate(self._readouts):
            self._cards.addWidget(r, i // columns, i % columns)
        for c in range(4):
            self._cards.setColumnStretch(c, 1 if c < columns else 0)

    def _arrange_plots(self) -> None:
        """Histogram above the two bar charts, or all three side by side when the plots' room is wide and
        short (a dock under the calculation table on the projector): each then keeps a readable height."""
        g = self.graphics
        in_a_row = g.width() > 2.2 * max(g.height(), 1)
        if in_a_row == self._plots_in_a_row:
            return
        self._plots_in_a_row = in_a_row
        layout = g.ci
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
        """True when the histogram and the two bar charts stand side by side (test hook)."""
        return self._plots_in_a_row

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._reflow_cards()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.graphics and event.type() == QEvent.Type.Resize:
            self._arrange_plots()
            self._refit_titles()
        return super().eventFilter(obj, event)

    def _on_bars_resized(self, *_: object) -> None:
        if self._cur is not None:
            self._draw_bars()

    def _write_readouts(self) -> None:
        cur, oth = self._cur.stats, self._oth.stats
        on = self.scaled()
        other = "raw" if on else "÷√dₖ"
        self.std_readout.value.setText(f"{cur.score_std:.2f}")
        self.std_readout.unit.setText(f"theory {self._cur.expected_std:.3g}")
        self.std_readout.note.setText(f"{other} {oth.score_std:.2f}")
        self.max_readout.value.setText(f"{cur.max_weight:.2f}")
        self.max_readout.unit.setText(f"even {1 / N_KEYS:.3g}")
        self.max_readout.note.setText(f"{other} {oth.max_weight:.2f}")
        self.entropy_readout.value.setText(f"{cur.entropy_bits:.2f}")
        self.entropy_readout.unit.setText(f"of {cur.entropy_max_bits:g} bits")
        self.entropy_readout.note.setText(f"{other} {oth.entropy_bits:.2f}")
        self.gradient_readout.value.setText(f"{cur.gradient:.3f}")
        self.gradient_readout.unit.setText("0 = flat")
        self.gradient_readout.note.setText(f"{other} {oth.gradient:.3f}")
        t = self._theme
        self.summary.setText(
            f"<span style='color:{t.text}'>σ <b>{cur.score_std:.2f}</b> (theory {self._cur.expected_std:.3g}) · "
            f"mean top weight <b>{cur.max_weight:.2f}</b> · entropy <b>{cur.entropy_bits:.2f}</b> of "
            f"{cur.entropy_max_bits:g} bits · gradient <b>{cur.gradient:.3f}</b></span> "
            + ("" if self._tight else  # a very short dock: the caption gives the other setting's top weight
               f"<span style='color:{t.muted}'>({other}: {oth.score_std:.2f} · {oth.max_weight:.2f} · "
               f"{oth.entropy_bits:.2f} · {oth.gradient:.3f})</span>"))
        self.std_readout.setToolTip("standard deviation of the scores that reach the softmax "
                                    "(theory: √d_k raw, 1 after ÷√d_k, both ÷ temperature)")
        self.max_readout.setToolTip(f"the largest softmax weight, averaged over {SAMPLES:,} random queries "
                                    f"(1/{N_KEYS} = {1 / N_KEYS:.3f} when spread evenly, 1 when one key takes all)")
        self.entropy_readout.setToolTip(f"how spread the weights are: log₂ {N_KEYS} = {cur.entropy_max_bits:g} bits "
                                        "when even, 0 when one key takes all")
        self.gradient_readout.setToolTip("size (Frobenius norm) of the softmax's Jacobian diag(w) − w wᵀ: how much "
                                         "the weights respond to the scores; near 0 the softmax is saturated and "
                                         "learning stalls")

    def _write_caption(self) -> None:
        d, on, temp = self.d_k(), self.scaled(), self.temperature()
        raw = (self._oth if on else self._cur).stats
        scl = (self._cur if on else self._oth).stats
        root = f"{np.sqrt(d):.3g}"
        t = self._theme
        if self._tight:  # one sentence; the numbers are in the line below it
            if d == 1:
                text = "d<sub>k</sub> = 1: √1 = 1, scaling changes nothing: slide d<sub>k</sub> up."
            else:
                verdict = "the softmax saturates" if raw.max_weight > 0.8 else "the softmax still spreads"
                text = (f"Raw scores swing by <b>±√{d} = ±{root}</b>: {verdict} (mean top weight "
                        f"{raw.max_weight:.2f}); ÷√{d} brings them back to ±1 (mean top {scl.max_weight:.2f}).")
            self.caption.setText(f"<span style='color:{t.text}'>{text}</span>")
            return
        parts = [f"q·k adds up d<sub>k</sub> = {d} products of unit-size numbers, so raw scores swing by "
                 f"about <b>±√{d} = ±{root}</b>."]
        if raw.max_weight > 0.8:
            parts.append(f"The softmax goes all-or-nothing (top weight <b>{raw.max_weight:.2f}</b> on average "
                         f"over {SAMPLES:,} random queries) and its gradient goes flat (<b>{raw.gradient:.2f}</b>): "
                         f"learning stalls.")
        elif d > 1:
            parts.append(f"Raw, the softmax still spreads its weight (mean top weight {raw.max_weight:.2f} over "
                         f"{SAMPLES:,} random queries).")
        if d > 1:
            parts.append(f"÷√{d} brings them back to about ±1 (mean top weight {scl.max_weight:.2f}, "
                         f"gradient {scl.gradient:.2f}).")
        else:
            parts.append("With one dimension √d<sub>k</sub> = 1, so scaling changes nothing: slide d<sub>k</sub> up.")
        if abs(temp - 1) > 1e-9:
            parts.append(f"Temperature {temp:g} divides the scores again ({'sharper' if temp < 1 else 'flatter'}).")
        self.caption.setText(f"<span style='color:{t.text}'>{' '.join(parts)}</span>")
