"""The √d_k explorer: why attention divides its scores by √d_k, seen rather than told.

Seeded random query and key vectors with d_k unit-variance components (1–512, one slider).  A score
q·k adds up d_k such products, so its spread grows like √d_k; the explorer shows that spread as a
histogram, measures what it does to the softmax (the top weight, the entropy, the size of the
softmax's gradient) and puts one query's weights over eight keys side by side, raw and ÷√d_k.  At
d_k = 64 the raw scores swing by ±8, one key takes nearly all the weight and the gradient goes flat;
divided by √64 = 8 they are back to unit size.

Standalone: no Session needed (the numbers come from :mod:`qkv_studio.core.saturation`).
Public API: ``set_d_k(n)``, ``set_scaled(on)``, ``set_temperature(t)``, ``set_scene_d_k(n, whose)`` (the
window's scene or head: a button beside the quick d_k values); drawn in the look of the
:class:`~qkv_studio.state.appearance.Appearance` it is bound to (``appearance=`` or ``bind_appearance``).
Test hooks: ``d_k_slider``, ``scale_box``, ``temperature_slider``, ``readouts()``, ``current()``,
``other()``, ``sample_weights()``, ``histogram_data()``, ``caption``.

This module holds the controls, the state and the caption; the plots are
:mod:`qkv_studio.ui.lesson.explorer_plots`, the four live numbers :mod:`qkv_studio.ui.lesson.explorer_readouts`,
the caption's words :mod:`qkv_studio.core.saturation_words`.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSlider,
    QToolButton,
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
    histogram_limit,
    saturation,
    softmax_rows,
    typical_query,
)
from qkv_studio.core.saturation_words import explorer_caption
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.lesson.explorer_plots import N_KEYS, ExplorerPlots
from qkv_studio.ui.lesson.explorer_readouts import Readouts
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance

SAMPLES = 1000  # queries, each against N_KEYS keys: 8000 scores per setting
BINS = 60
QUICK_D_K = (1, 8, 64, 512)
_BASE_PT = 10.0
_THROTTLE_MS = 30  # slider drags: the first move draws at once, the rest at most every 30 ms


class SqrtDkExplorer(FollowsAppearance, QWidget):
    """d_k slider, ÷√d_k switch and temperature; score histogram; raw vs scaled softmax side by side."""

    changed = Signal()  # after every recompute (d_k, scaling or temperature moved)

    def __init__(self, parent: QWidget | None = None, *, seed: int = DEFAULT_SEED, d_k: int = 64,
                 scaled: bool = False, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._font_scale = 1.0
        self._bank = ScoreBank(n_keys=N_KEYS, samples=SAMPLES, seed=seed)
        self._sample = typical_query(self._bank)
        self._cur: Saturation | None = None
        self._oth: Saturation | None = None
        self._hist: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._sample_w: dict[str, np.ndarray] = {}
        self._sample_s: dict[str, np.ndarray] = {}
        self._tight = False  # a very short dock (the projector): a one-sentence caption

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
        # (superqt types the labelled sliders' proxy as int; this one's slider is a QDoubleSlider)
        self.temperature_slider.setSingleStep(0.05)  # type: ignore[arg-type]
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
        # The dₖ of what the window's other views show (see set_scene_d_k): one click to see its softmax.
        self.scene_button = QToolButton()
        self.scene_button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self._scene_d_k = 0
        self.scene_button.clicked.connect(self._show_scene_d_k)
        self.scene_button.hide()
        quick.addWidget(self.scene_button)
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
        self.cards = Readouts(self, n_keys=N_KEYS, samples=SAMPLES)
        self.std_readout, self.max_readout = self.cards.std_readout, self.cards.max_readout
        self.entropy_readout, self.gradient_readout = self.cards.entropy_readout, self.cards.gradient_readout
        self._readouts = self.cards.cards
        self.summary = self.cards.summary
        self.cards.reflow(self.width(), self.height())

        # ---- plots ---------------------------------------------------------------------------------
        self.graphics = ExplorerPlots(self, samples=SAMPLES)
        self.hist_plot, self.raw_plot, self.scaled_plot = (self.graphics.hist_plot, self.graphics.raw_plot,
                                                           self.graphics.scaled_plot)
        self.hist_item, self.ghost_item = self.graphics.hist_item, self.graphics.ghost_item
        self.sigma_lines, self.sigma_text = self.graphics.sigma_lines, self.graphics.sigma_text
        self.bars, self.bar_labels = self.graphics.bars, self.graphics.bar_labels

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.caption)
        layout.addLayout(controls)
        layout.addWidget(self.cards)
        layout.addWidget(self.graphics, 1)

        self._throttled = qthrottled(self._recompute, timeout=_THROTTLE_MS, leading=True, parent=self)
        self.d_k_slider.valueChanged.connect(self._throttled)
        self.temperature_slider.valueChanged.connect(self._throttled)
        self.scale_box.toggled.connect(self._recompute)
        self._restyle_theme(self._theme)  # styles, then computes
        self.bind_appearance(appearance)

    # ---- public API -------------------------------------------------------------------------------
    def set_d_k(self, d_k: int) -> None:
        self.d_k_slider.setValue(int(max(MIN_D_K, min(MAX_D_K, d_k))))
        self.flush()

    def set_scaled(self, on: bool) -> None:
        self.scale_box.setChecked(bool(on))

    def set_temperature(self, t: float) -> None:
        self.temperature_slider.setValue(float(t))
        self.flush()

    def set_scene_d_k(self, d_k: int | None, whose: str = "this scene") -> None:
        """Offer the d_k of what the window shows (``whose``: "this scene", "head 1 of 2") as a button
        beside the quick values; None hides it."""
        self._scene_d_k = 0 if d_k is None else int(max(MIN_D_K, min(MAX_D_K, d_k)))
        self.scene_button.setVisible(bool(self._scene_d_k))
        self.scene_button.setText(f"▸{self._scene_d_k}")
        self.scene_button.setToolTip(f"d_k = {self._scene_d_k}: the width of {whose}'s queries and keys, as the "
                                     f"other views show it")

    def _show_scene_d_k(self) -> None:
        if self._scene_d_k:
            self.set_d_k(self._scene_d_k)

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
        self._style()

    def _restyle_scale(self, f: float) -> None:
        """Scale every font and pen width (zoom, projector)."""
        self._font_scale = f
        self._style()
        self._reflow()

    # ---- test hooks -----------------------------------------------------------------------------------
    def current(self) -> Saturation:
        """The numbers of the setting in use (the ÷√d_k box decides)."""
        return self._computed()[0]

    def other(self) -> Saturation:
        """The same d_k and temperature with the ÷√d_k box flipped."""
        return self._computed()[1]

    def readouts(self) -> dict[str, str]:
        """The four readouts' values as shown (plain text)."""
        return {name: r.value.text() for name, r in zip(("std", "max_weight", "entropy", "gradient"),
                                                        self._readouts, strict=False)}

    def sample_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """The sample query's softmax weights over the keys: (raw scores, scores ÷ √d_k)."""
        return self._sample_w["raw"], self._sample_w["scaled"]

    def sample_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """The sample query's scores over the keys as fed to the softmax: (raw, ÷ √d_k)."""
        return self._sample_s["raw"], self._sample_s["scaled"]

    def histogram_data(self) -> tuple[np.ndarray, np.ndarray]:
        """Bin edges and densities of the histogram in use."""
        hist = self._computed()[2]
        return hist[0], hist[1]

    def _computed(self) -> tuple[Saturation, Saturation, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """The setting in use, the flipped one and the histograms (the explorer computes them as it is built)."""
        if self._cur is None or self._oth is None or self._hist is None:
            raise RuntimeError("the explorer has not computed its numbers yet")
        return self._cur, self._oth, self._hist

    def plots_in_a_row(self) -> bool:
        """True when the histogram and the two bar charts stand side by side (test hook)."""
        return self.graphics.plots_in_a_row()

    # ---- drawing ------------------------------------------------------------------------------------
    def _font(self, factor: float = 1.0, bold: bool = False) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(_BASE_PT * self._font_scale * factor)
        font.setBold(bold)
        return font

    def _style(self) -> None:
        """Fonts, colours and pens of the controls; the cards and the plots restyle themselves."""
        t = self._theme
        f = self._font_scale
        base = self._font()
        for w in (self.caption, self.d_k_label, self.t_label, self.scale_box, self.d_k_slider,
                  self.temperature_slider, *self.quick_buttons, self.scene_button):
            w.setFont(base)
        for b in (*self.quick_buttons, self.scene_button):
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
            for edit in w.findChildren(QLineEdit):
                edit.setFont(base)
                edit.setStyleSheet(f"background: transparent; border: 0; color: {t.text};")
                if hasattr(edit, "_update_size"):  # superqt sizes the box from its font only when told
                    edit._update_size()
        self.cards.restyle(t, f, self.font())
        self.graphics.restyle(t, f, self.font())
        self._recompute()

    def _recompute(self, *_: object) -> None:
        d, on, temp = self.d_k(), self.scaled(), self.temperature()
        self._cur = cur = saturation(d, on, temp, bank=self._bank)
        self._oth = oth = saturation(d, not on, temp, bank=self._bank)
        raw_row = self._bank.scores(d, False, temp)[self._sample]
        scaled_row = self._bank.scores(d, True, temp)[self._sample]
        self._sample_s = {"raw": raw_row, "scaled": scaled_row}
        self._sample_w = {"raw": softmax_rows(raw_row), "scaled": softmax_rows(scaled_row)}
        limit = histogram_limit(d, temp)
        edges, dens = histogram(self._bank.scores(d, on, temp), bins=BINS, limit=limit)
        g_edges, g_dens = histogram(self._bank.scores(d, not on, temp), bins=BINS, limit=limit)
        self._hist = (edges, dens, g_edges, g_dens)
        self.graphics.draw_histogram(self._hist, limit, cur.stats.score_std, on)
        self.graphics.draw_bars(self._sample_w, self._sample_s, d, on)
        self._write_readouts(cur, oth)
        self._write_caption(cur, oth)
        self.changed.emit()

    # ---- fitting the room ----------------------------------------------------------------------------
    def _reflow(self) -> None:
        """The cards for the room (see :meth:`Readouts.reflow`); in a very short dock the caption says its
        point in one sentence."""
        self.cards.reflow(self.width(), self.height())
        tight = self.height() < 420 * self._font_scale
        if tight != self._tight:
            self._tight = tight
            if self._cur is not None and self._oth is not None:
                self._write_caption(self._cur, self._oth)
                self._write_readouts(self._cur, self._oth)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._reflow()

    def _write_readouts(self, cur: Saturation, oth: Saturation) -> None:
        self.cards.write(cur, oth, self._theme, tight=self._tight)

    def _write_caption(self, cur: Saturation, oth: Saturation) -> None:
        on = self.scaled()
        raw = (oth if on else cur).stats
        scl = (cur if on else oth).stats
        text = explorer_caption(self.d_k(), self.temperature(), raw, scl, SAMPLES, tight=self._tight)
        self.caption.setText(f"<span style='color:{self._theme.text}'>{text}</span>")
