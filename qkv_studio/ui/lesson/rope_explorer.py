"""The RoPE explorer: rotary position embeddings make a score depend on the offset n − m only.

Two fixed, seeded vectors q and k (d = 8: four rotation pairs) are put at positions m (the query) and n
(the key) and turned as RoPE turns them (:mod:`qkv_studio.core.rope`).  The explorer shows

* the score q̃·k̃ for the chosen m and n, and the unrotated q·k beside it;
* the score as a curve over every offset n − m, with the chosen offset marked — moving both positions
  together (the "move together" box) leaves the mark, and the score, where they are; moving one moves it;
* each pair's frequency θᵢ = base^(−2i/d) and the angle it adds at this offset, as bars.

Standalone: no Session needed.  Public API: ``set_positions(m, n)``, ``set_together(on)``,
``set_base(base)``, ``reseed()``; drawn in the look of the Appearance it is bound to.  Test hooks:
``m_box``, ``n_box``, ``together_box``, ``base_box``, ``readout``, ``score()``, ``curve_data()``,
``marker_position()``, ``pair_bars()``.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

from qkv_studio.core import rope
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.indicators import style_indicators

DIM = 8
MAX_POSITION = 512
OFFSETS = np.arange(-32, 33)
BASES = ((10_000.0, "base 10 000 (the original)"), (100_000.0, "base 100 000 (SmolLM2)"))


class RopeExplorer(FollowsAppearance, QWidget):
    """Positions m and n of a query and a key, the RoPE score, and its curve over the offset.

    Signal ``changed()`` after the positions, the base or the vectors changed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None, *, appearance: Appearance | None = None,
                 seed: int = 26) -> None:
        super().__init__(parent)
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._scale = 1.0
        self._seed = seed
        self._base = BASES[0][0]
        self._q, self._k = np.random.default_rng(seed).normal(size=(2, DIM))
        self._curve_scores = np.zeros(len(OFFSETS))

        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.m_box = QSpinBox()
        self.n_box = QSpinBox()
        for box, what in ((self.m_box, "query position m "), (self.n_box, "key position n ")):
            box.setRange(0, MAX_POSITION)
            box.setPrefix(what)
        self.m_box.setValue(3)
        self.n_box.setValue(10)
        self.together_box = QCheckBox("move together")
        self.together_box.setToolTip("Change m and n by the same amount: the offset, and so the score, stay")
        self.base_box = QComboBox()
        for base, text in BASES:
            self.base_box.addItem(text, base)
        self.base_box.setToolTip("θᵢ = base^(−2i/d): a larger base turns the slow pairs more slowly")
        self.reseed_button = QPushButton("New q, k")
        self.reseed_button.setToolTip("Two other random vectors (seeded)")
        self.readout = QLabel()
        self.readout.setWordWrap(True)
        self.readout.setTextFormat(Qt.TextFormat.RichText)

        self.curve_plot = pg.PlotWidget()
        self.curve_plot.setMenuEnabled(False)
        self.curve_plot.setMouseEnabled(x=False, y=False)
        self.curve_plot.hideButtons()
        self.curve_plot.setLabel("bottom", "offset n − m")
        self.curve_plot.setLabel("left", "score q̃·k̃")
        self._curve = self.curve_plot.plot([], [])
        self._marker = pg.ScatterPlotItem(size=12)
        self.curve_plot.addItem(self._marker)
        self.pairs_plot = pg.PlotWidget()
        self.pairs_plot.setMenuEnabled(False)
        self.pairs_plot.setMouseEnabled(x=False, y=False)
        self.pairs_plot.hideButtons()
        self.pairs_plot.setLabel("left", "angle added (rad)")
        self.pairs_plot.setLabel("bottom", "θᵢ of pairs 0–3")
        self.pairs_plot.setYRange(-np.pi, np.pi)
        self._bars = pg.BarGraphItem(x=np.arange(DIM // 2), height=np.zeros(DIM // 2), width=0.6)
        self.pairs_plot.addItem(self._bars)
        self.pairs_plot.getViewBox().sigResized.connect(self._fit_theta_ticks)

        row = QHBoxLayout()
        row.addWidget(self.m_box)
        row.addWidget(self.n_box)
        row.addWidget(self.together_box)
        row2 = QHBoxLayout()
        row2.addWidget(self.base_box, 1)
        row2.addWidget(self.reseed_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.title)
        lay.addLayout(row)
        lay.addLayout(row2)
        lay.addWidget(self.readout)
        self.plots = QSplitter(Qt.Orientation.Vertical)
        self.plots.setChildrenCollapsible(False)
        for plot in (self.curve_plot, self.pairs_plot):
            plot.setMinimumSize(160, 110)
            self.plots.addWidget(plot)
        self.plots.setStretchFactor(0, 3)
        self.plots.setStretchFactor(1, 2)
        lay.addWidget(self.plots, 1)

        self._last = (self.m_box.value(), self.n_box.value())
        self.m_box.valueChanged.connect(lambda v: self._moved("m", v))
        self.n_box.valueChanged.connect(lambda v: self._moved("n", v))
        self.base_box.activated.connect(lambda i: self.set_base(self.base_box.itemData(i)))
        self.reseed_button.clicked.connect(self.reseed)
        self._recompute_curve()
        self._restyle_theme(self._theme)  # (pyqtgraph's own default is black; the app's default is light)
        self._apply_fonts()
        self.bind_appearance(appearance)

    # ---- reading ---------------------------------------------------------------------------------
    @property
    def positions(self) -> tuple[int, int]:
        return self.m_box.value(), self.n_box.value()

    def score(self) -> float:
        """q at m · k at n, both turned by RoPE."""
        m, n = self.positions
        return rope.score(self._q, self._k, m, n, self._base)

    def curve_data(self) -> tuple[np.ndarray, np.ndarray]:
        """The curve drawn: (offsets, scores)."""
        return OFFSETS.copy(), self._curve_scores.copy()

    def marker_position(self) -> tuple[float, float]:
        """Where the chosen (offset, score) is marked."""
        m, n = self.positions
        return float(n - m), self.score()

    def pair_bars(self) -> tuple[np.ndarray, np.ndarray]:
        """(θᵢ per pair, the angle each adds at this offset) as the bars show them."""
        m, n = self.positions
        return rope.pair_frequencies(DIM, self._base), rope.pair_angles(n - m, DIM, self._base)

    # ---- changing --------------------------------------------------------------------------------
    def set_positions(self, m: int, n: int) -> None:
        """Put the query at ``m`` and the key at ``n`` (0–512)."""
        for box, value in ((self.m_box, m), (self.n_box, n)):
            with signals_blocked(box):
                box.setValue(int(value))
        self._last = self.positions
        self._redraw()

    def set_together(self, on: bool) -> None:
        self.together_box.setChecked(bool(on))

    def set_base(self, base: float) -> None:
        self._base = float(base)
        i = self.base_box.findData(self._base)
        if i >= 0 and self.base_box.currentIndex() != i:
            with signals_blocked(self.base_box):
                self.base_box.setCurrentIndex(i)
        self._recompute_curve()
        self._redraw()

    def reseed(self) -> None:
        self._seed += 1
        self._q, self._k = np.random.default_rng(self._seed).normal(size=(2, DIM))
        self._recompute_curve()
        self._redraw()

    def _moved(self, which: str, value: int) -> None:
        m0, n0 = self._last
        if self.together_box.isChecked():
            delta = value - (m0 if which == "m" else n0)
            other, base = (self.n_box, n0) if which == "m" else (self.m_box, m0)
            target = base + delta
            if not 0 <= target <= MAX_POSITION:  # the other one is at its end: this one stays too
                box = self.m_box if which == "m" else self.n_box
                with signals_blocked(box):
                    box.setValue(m0 if which == "m" else n0)
                return
            with signals_blocked(other):
                other.setValue(target)
        self._last = self.positions
        self._redraw()

    # ---- drawing ---------------------------------------------------------------------------------
    def _recompute_curve(self) -> None:
        self._curve_scores = rope.scores_by_offset(self._q, self._k, OFFSETS, self._base)

    def _redraw(self) -> None:
        t = self._theme
        m, n = self.positions
        s = self.score()
        plain = float(self._q @ self._k)
        self.readout.setText(
            f'<span style="color:{t.text}">offset n − m = <b>{n - m}</b> · score '
            f'<span style="color:{t.highlight}"><b>q̃·k̃ = {s:.3f}</b></span> (without RoPE q·k = {plain:.3f}). '
            f"Move both together: the score stays; move one: it changes.</span>")
        self._curve.setData(OFFSETS, self._curve_scores,
                            pen=pg.mkPen(t.accent, width=2 * self._scale * t.line_scale))
        size = 0.8 * QFontMetricsF(self.font()).height()
        self._marker.setData([n - m], [s], size=size, brush=pg.mkBrush(t.highlight), pen=pg.mkPen(t.text))
        theta, angles = self.pair_bars()
        self._bars.setOpts(height=angles, brush=pg.mkBrush(t.key_color), pen=pg.mkPen(t.text))
        self._fit_theta_ticks()
        self.changed.emit()

    def theta_ticks(self) -> list[str]:
        """The θ labels under the bars: each pair's where they all fit side by side, else every second (or
        third…) one — never two labels run together ("0.010.001")."""
        theta, _ = self.pair_bars()
        texts = [f"{th:.2g}" for th in theta]
        fm = QFontMetricsF(self.pairs_plot.getAxis("bottom").style.get("tickFont") or self.font())
        vb = self.pairs_plot.getViewBox()
        (x0, x1), _ = vb.viewRange()
        slot = vb.width() / max(x1 - x0, 1e-9)  # (px between two bars)
        widest = max(fm.horizontalAdvance(x + "  ") for x in texts)
        step = max(1, math.ceil(widest / max(slot, 1.0)))
        return [x if i % step == 0 else "" for i, x in enumerate(texts)]

    def _fit_theta_ticks(self, *_: object) -> None:
        ticks = list(enumerate(self.theta_ticks()))
        axis = self.pairs_plot.getAxis("bottom")
        if getattr(self, "_ticks", None) != ticks:  # (the bars' plot resized, or new θ)
            self._ticks = ticks
            axis.setTicks([ticks])

    def _restyle_theme(self, theme: Theme) -> None:
        self._theme = theme
        for plot in (self.curve_plot, self.pairs_plot):
            plot.setBackground(QColor(theme.background))
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(pg.mkPen(theme.text))
                axis.setTextPen(pg.mkPen(theme.text))
        self.title.setText(f'<b style="color:{theme.text}">RoPE: a score depends on the offset n − m only</b>')
        style_indicators((self.together_box,), theme)
        self._redraw()

    def changeEvent(self, event) -> None:  # noqa: N802 - the window's zoom (projector) changes the font
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._apply_fonts()

    def _apply_fonts(self) -> None:
        """pyqtgraph's axes keep their own small font: give them the panel's (read from the back row)."""
        font = self.font()
        for plot in (self.curve_plot, self.pairs_plot):
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setStyle(tickFont=font)
                axis.label.setFont(font)
        self._redraw()

    def resizeEvent(self, event) -> None:  # noqa: N802
        """The two plots side by side in a wide, short panel (a docked tab), stacked in a tall one."""
        super().resizeEvent(event)
        size = self.plots.size()
        wide = size.width() > 1.6 * size.height()
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.plots.orientation() != orientation:
            self.plots.setOrientation(orientation)

    def _restyle_scale(self, f: float) -> None:
        self._scale = f
        self._redraw()


def build(window) -> RopeExplorer:
    """The panel registry's factory: the explorer in the window's look."""
    return RopeExplorer(appearance=window.appearance)
