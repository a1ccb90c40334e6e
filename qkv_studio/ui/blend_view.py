"""The blend view: "the output is a blend, not a pick".

Left, one bar per token for the selected query's softmax weight (the best match highlighted); right,
the value vectors as arrows (first two dimensions) with the output vector drawn among them.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..render.theme import THEMES, Theme
from ..session import Session
from .formatting import fmt_fixed, fmt_vector

_MAX_BARS = 64  # beyond this the bars carry no labels


class BlendView(QWidget):
    """Weights as bars and the output among the values, for the selected query."""

    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(parent)
        self._session = session
        self._theme: Theme = THEMES["light"]
        self._font_scale = 1.0
        self.title = QLabel()
        self.title.setTextFormat(Qt.RichText)
        self.title.setWordWrap(True)
        self.bars_plot = pg.PlotWidget()
        self.values_plot = pg.PlotWidget()
        for p in (self.bars_plot, self.values_plot):
            p.setMenuEnabled(False)
            p.hideButtons()
            p.setMouseEnabled(False, False)
            p.setFocusPolicy(Qt.NoFocus)
        self.bars_plot.setYRange(0, 1.05, padding=0)
        self.bars_plot.getAxis("left").setLabel("weight")
        self.values_plot.setAspectLocked(True)
        self.values_plot.showGrid(x=True, y=True, alpha=0.25)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7)
        self.bars_plot.addItem(self.bars)
        self._bar_labels: list[pg.TextItem] = []
        self._value_items: list = []
        row = QHBoxLayout()
        row.addWidget(self.bars_plot, 1)
        row.addWidget(self.values_plot, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        lay.addLayout(row, 1)
        session.result_changed.connect(self._sync)
        session.query_changed.connect(self._sync)
        session.tokens_changed.connect(self._sync)
        self._sync()

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        for p in (self.bars_plot, self.values_plot):
            p.setBackground(theme.background)
            for ax in ("left", "bottom"):
                p.getAxis(ax).setPen(pg.mkPen(theme.text, width=theme.line_scale))
                p.getAxis(ax).setTextPen(pg.mkPen(theme.text))
        self._sync()

    def set_font_scale(self, f: float) -> None:
        self._font_scale = f
        font = QFont()
        font.setPointSizeF(10 * f)
        for p in (self.bars_plot, self.values_plot):
            for ax in ("left", "bottom"):
                p.getAxis(ax).setStyle(tickFont=font)
        self._sync()

    def _sync(self, *_: object) -> None:
        if not self.isVisible() and self._bar_labels:
            self._stale = True
            return
        self._stale = False
        s = self._session.scene
        r = self._session.result
        qi = s.query
        w = r.weights[qi]
        best = int(np.argmax(w))
        t = self._theme
        brushes = [pg.mkBrush(t.query_color if j == best else t.key_color) for j in range(s.n)]
        self.bars.setOpts(x=np.arange(s.n), height=w, width=0.7, brushes=brushes, pen=pg.mkPen(None))
        for item in self._bar_labels:
            self.bars_plot.removeItem(item)
        self._bar_labels = []
        axis = self.bars_plot.getAxis("bottom")
        if s.n <= _MAX_BARS:
            axis.setTicks([[(j, s.token_label(j)) for j in range(s.n)]])
            if s.n <= 16:
                font = QFont()
                font.setPointSizeF(9 * self._font_scale)
                for j in range(s.n):
                    label = pg.TextItem(fmt_fixed(float(w[j])), color=t.text, anchor=(0.5, 1.0))
                    label.setFont(font)
                    label.setPos(j, float(w[j]))
                    self.bars_plot.addItem(label)
                    self._bar_labels.append(label)
        else:
            axis.setTicks(None)
        self.bars_plot.setXRange(-0.6, s.n - 0.4, padding=0)
        self.title.setText(
            f"<b>Blend for “{s.token_label(qi)}”</b>: output = Σ w<sub>j</sub> v<sub>j</sub> = "
            f"{fmt_vector(r.output[qi])} — every token contributes, “{s.token_label(best)}” most "
            f"({fmt_fixed(float(w[best]))}).")
        self._draw_values(best)

    def _draw_values(self, best: int) -> None:
        s = self._session.scene
        r = self._session.result
        t = self._theme
        for item in self._value_items:
            self.values_plot.removeItem(item)
        self._value_items = []
        v = s.qkv()[2]
        v2 = v[:, :2] if v.shape[1] >= 2 else np.column_stack([v[:, 0], np.zeros(s.n)])
        out = r.output[s.query]
        out2 = out[:2] if out.shape[0] >= 2 else np.array([out[0], 0.0])
        segs = np.zeros((2 * s.n, 2))
        segs[1::2] = v2
        lines = pg.PlotDataItem(segs[:, 0], segs[:, 1], connect="pairs",
                                pen=pg.mkPen(t.value_color, width=2 * t.line_scale * self._font_scale))
        self.values_plot.addItem(lines)
        self._value_items.append(lines)
        font = QFont()
        font.setPointSizeF(10 * self._font_scale)
        if s.n <= 16:
            for j in range(s.n):
                label = pg.TextItem(f"v {s.token_label(j)}", color=t.value_color, anchor=(0, 1))
                label.setFont(font)
                label.setPos(float(v2[j, 0]), float(v2[j, 1]))
                self.values_plot.addItem(label)
                self._value_items.append(label)
        arrow = pg.PlotDataItem([0, out2[0]], [0, out2[1]],
                                pen=pg.mkPen(t.output_color, width=4 * t.line_scale * self._font_scale))
        head = pg.ScatterPlotItem([out2[0]], [out2[1]], size=12 * self._font_scale, brush=pg.mkBrush(t.output_color),
                                  pen=pg.mkPen(None))
        label = pg.TextItem("output", color=t.output_color, anchor=(0, 0))
        font = QFont(font)
        font.setBold(True)
        label.setFont(font)
        label.setPos(float(out2[0]), float(out2[1]))
        for item in (arrow, head, label):
            self.values_plot.addItem(item)
            self._value_items.append(item)
        style = {"font-size": f"{10 * self._font_scale:.0f}pt", "color": t.text}
        self.values_plot.getAxis("bottom").setLabel("value dim 1" + (f" of {v.shape[1]}" if v.shape[1] > 2 else ""),
                                                    **style)
        self.values_plot.getAxis("left").setLabel("value dim 2" if v.shape[1] >= 2 else "", **style)
        self.bars_plot.getAxis("left").setLabel("weight", **style)
        self.values_plot.autoRange(padding=0.3)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if getattr(self, "_stale", False):
            self._sync()
