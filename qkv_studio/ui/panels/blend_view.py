"""The blend view: "the output is a blend, not a pick".

Left, one bar per token for the selected query's softmax weight (the best match highlighted); right,
the value vectors as arrows (first two dimensions) with the output vector drawn among them.  The
weights appear from the softmax stage on and the output at the blend stage (the stage registry's
``reveals``), or at every stage with ``set_show_all_stages(True)``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QGraphicsItem, QLabel, QVBoxLayout, QWidget

from qkv_studio.core.captions import contribution
from qkv_studio.core.stages import reveals
from qkv_studio.render.label_layout import TextMeasure, abbreviate
from qkv_studio.render.theme import THEMES, Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.blend_labels import BarValueLabels, ValueLabels
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.arrows import arrow_segments
from qkv_studio.ui.widgets.formatting import fmt_fixed, fmt_vector
from qkv_studio.ui.widgets.frame_throttle import FrameThrottle
from qkv_studio.ui.widgets.layout_barrier import LayoutBarrier
from qkv_studio.ui.widgets.plot_cache import cache_axes, plot_item, show_only
from qkv_studio.ui.widgets.rich_label import RichLabel
from qkv_studio.ui.widgets.view_caches import keep_caches_while_hidden, paint_opaquely

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult

_MAX_BARS = 64  # beyond this the bars carry no labels
_NO_PEN = pg.mkPen(None)


LABEL_SCALE_MAX = 1.5  # the largest growth of the names inside the values plot (see _label_scale)


class BlendView(FollowsAppearance, QWidget):
    """Weights as bars and the output among the values, for the selected query, in the look of the
    :class:`Appearance` it is bound to (``appearance=`` or ``bind_appearance``)."""

    def __init__(self, session: Session, parent=None, *, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._theme: Theme = THEMES["light"]
        self._font_scale = 1.0
        self._show_all_stages = False
        self._on_slide = False
        self._revealed: tuple[bool, bool] | None = None  # (weights, output) as drawn now
        self.title = RichLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        # (no menus; see plot_cache for the axes)
        self.bars_plot = pg.PlotWidget(plotItem=plot_item())
        self.values_plot = pg.PlotWidget(plotItem=plot_item())
        for p in (self.bars_plot, self.values_plot):
            show_only(p.getPlotItem(), "left", "bottom")
            p.setMenuEnabled(False)
            p.hideButtons()
            p.setMouseEnabled(False, False)
            p.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            keep_caches_while_hidden(p)  # (a slide's step to the heatmap and back: nothing redrawn)
            paint_opaquely(p)  # (its background is the theme's: _style_theme)
        self.bars_plot.setYRange(0, 1.05, padding=0)
        cache_axes(self.bars_plot.getPlotItem(), self.values_plot.getPlotItem())
        self.bars_plot.getAxis("left").setLabel("weight")
        self.values_plot.setAspectLocked(True)
        self.values_plot.showGrid(x=True, y=True, alpha=0.25)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7)
        self.bars_plot.addItem(self.bars)
        # The best match drawn over its bar: every bar then shares one brush, which pyqtgraph draws in
        # one call (a brush per bar costs a call per bar, ~10 ms for 1024 tokens).
        self.best_bar = pg.BarGraphItem(x=[], height=[], width=0.7)
        self.bars_plot.addItem(self.best_bar)
        self.bar_labels = BarValueLabels()
        self.bars_plot.addItem(self.bar_labels, ignoreBounds=True)
        self._value_items: list = []
        self.value_labels = ValueLabels(self.values_plot.getPlotItem())
        # What the items show now, so an update touches only what changed.
        self._drawn = False
        self._stale = False
        self._ticks: tuple[list[tuple[int, str]], float] | None = None  # (ticks, point size) as shown
        self._ticks_for: tuple[tuple[str, ...], float, float] | None = None  # (tokens, width, scale) of those
        self._bars_n: tuple | None = None  # (n, the margins left and right of the end bars) as drawn
        self._x_margins = (0.6, 0.6)  # (in bars: the end names' room when they are wider than a bar)
        self._bar_style: tuple | None = None
        self._values_style: tuple | None = None
        self._values_key: tuple | None = None
        self._lines_key: tuple | None = None
        self._axis_labels: tuple | None = None
        # (names under the bars are fitted to the bars' own width, known once the plot has its size)
        self.bars_plot.getViewBox().sigResized.connect(lambda *_: self._sync_ticks() if self._drawn else None)
        # (the value arrows' heads are sized in pixels: a new size of the plot redraws them)
        self.values_plot.getViewBox().sigResized.connect(self._on_values_resized)
        row = self._plots_row = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        row.addWidget(self.bars_plot, 1)
        row.addWidget(self.values_plot, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(LayoutBarrier(self.title, grow_only=True))  # new numbers re-lay out this line only
        lay.addLayout(row, 1)
        # The blend follows an edit rather than shows it: drawn at the next frame (see frame_throttle).
        self._next_frame = FrameThrottle(self._sync, self)
        session.result_changed.connect(self._next_frame.request)
        session.query_changed.connect(self._next_frame.request)
        session.tokens_changed.connect(self._next_frame.request)
        session.stage_changed.connect(self._on_stage)
        # Styled in the default theme at scale 1 as it is built: the Appearance restyles it only when
        # its look differs (as for the heatmap and the plane).  Drawn when first shown, at its size
        # (drawn here, every item was placed for a 640 × 480 plot and then again).
        self._style_theme(self._theme)
        self._style_fonts(self._font_scale)
        self._stale = True
        self.bind_appearance(appearance)

    # ---- look (see FollowsAppearance) ---------------------------------------------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        self._style_theme(theme)
        self._sync()

    def _style_theme(self, theme: Theme) -> None:
        self._theme = theme
        for p in (self.bars_plot, self.values_plot):
            p.setBackground(theme.background)
            for ax in ("left", "bottom"):
                p.getAxis(ax).setPen(pg.mkPen(theme.text, width=theme.line_scale))
                p.getAxis(ax).setTextPen(pg.mkPen(theme.text))

    def _restyle_scale(self, f: float) -> None:
        self._style_fonts(f)
        self._sync()

    def _style_fonts(self, f: float) -> None:
        self._font_scale = f
        self._ticks = None  # (their font follows the scale)
        self._ticks_for = None
        self.resizeEvent(QResizeEvent(self.size(), self.size()))  # (stack or not, at the new size of text)
        font = QFont()
        font.setPointSizeF(11 * f)
        for p in (self.bars_plot, self.values_plot):
            for ax in ("left", "bottom"):
                # major ticks and grid lines only (minor ones were clutter, and half the first paint);
                # big numbers need room: fewer of them on a projector
                p.getAxis(ax).setStyle(tickFont=font, maxTickLevel=0)
                p.getAxis(ax).setTickDensity(1 / max(1.0, f))
            # fixed width: an axis sized by its labels can oscillate with an aspect-locked range
            metrics = QFontMetricsF(font)
            p.getAxis("left").setWidth(int(metrics.horizontalAdvance("−0.55") + 2.2 * metrics.height()))

    def _sync(self, *_: object) -> None:
        self._next_frame.cancel()
        # Every edit and drag step lands here: items are made once and updated in place, and axes,
        # ranges and labels are touched only when what they show changed (a pyqtgraph axis that is
        # told anything redraws its ticks, ~10 ms).  A hidden view catches up when it is shown.
        if not self.isVisible() and self._drawn:
            self._stale = True
            return
        self._stale = False
        self._drawn = True
        s = self._session.scene
        r = self._session.result
        qi = self._session.query
        w = r.weights[qi]
        best = int(np.argmax(w))
        t = self._theme
        # Bars are keys (the key colour everywhere else too); the best one is the full colour, the rest
        # paler — pink stays the query's colour, as on the heatmap and the vector plane.
        pale = QColor(t.key_color)
        pale.setAlpha(120)
        self.bars.setOpts(x=np.arange(s.n), height=w, width=0.7, brush=pg.mkBrush(pale), pen=_NO_PEN)
        self.best_bar.setOpts(x=[best], height=[float(w[best])], width=0.7, brush=pg.mkBrush(t.key_color),
                              pen=_NO_PEN)
        self._sync_ticks()
        self._sync_x_range()
        self._sync_bar_labels(w if s.n <= 16 else w[:0])
        shown = self._revealed = self.revealed()
        self._set_text(self.title, self._title_text(qi, best, float(w[best]), shown))
        self._draw_values(best)
        self._show_revealed(shown)

    # ---- what the stage reveals (the stage registry's reveals) --------------------------------------
    def set_show_all_stages(self, on: bool) -> None:
        """Show the weights and the output at every stage (View → Show all stages at once), or only from
        the stages that reveal them."""
        if bool(on) != self._show_all_stages:
            self._show_all_stages = bool(on)
            self._next_frame.request()

    def set_on_slide(self, on: bool) -> None:
        """On a presentation slide the blend has no header of its own: the stage caption above it says
        the same words (its header repeated the caption line for line and took the plots' room).  In the
        window the header stays — the caption there may speak of another stage, and a floated or tabbed
        blend panel still says whose blend it shows."""
        if bool(on) != self._on_slide:
            self._on_slide = bool(on)
            self.title.setVisible(not self._on_slide)

    def on_slide(self) -> bool:
        """True while the blend is shown on a presentation slide (its header hidden)."""
        return self._on_slide

    def revealed(self) -> tuple[bool, bool]:
        """Whether the current stage shows (the weights, the output): not before the softmax and the
        blend stages, unless every stage is shown at once."""
        stage = self._session.stage
        return (reveals(stage, "weights", all_stages=self._show_all_stages),
                reveals(stage, "output", all_stages=self._show_all_stages))

    def _on_stage(self, *_: object) -> None:
        if self.revealed() != self._revealed:  # (a step that reveals nothing new costs nothing)
            self._next_frame.request()

    def _show_revealed(self, shown: tuple[bool, bool]) -> None:
        weights, output = shown
        for item in (self.bars, self.best_bar, self.bar_labels):
            item.setVisible(weights)
        for item in (self._arrow, self._head, self._out_label):
            item.setVisible(output)

    def _title_text(self, qi: int, best: int, weight: float, shown: tuple[bool, bool]) -> str:
        s, r = self._session.shown, self._session.result
        head = f"<b>Blend for “{s.token_label(qi)}”</b>: output = Σ w<sub>j</sub> v<sub>j</sub>"
        if shown[1]:
            # the Session's LiveResult reads as an AttentionResult (state/session.py); core's
            # functions are typed for the dataclass
            terms = contribution(s, cast("AttentionResult", r), qi)
            return f"{head} = {fmt_vector(r.output[qi], decimals=2)} — {terms}."
        if shown[0]:
            return (f"{head} — the weights w: “{s.token_label(best)}” most ({fmt_fixed(weight)}); "
                    "the blend itself comes at the blend stage.")
        return f"{head} — the weights come at the softmax stage, the blend at the last one."

    def _sync_ticks(self) -> None:
        """Token names under the bars: every one side by side when they fit (a little smaller if need
        be), else in two staggered rows, else — up to :data:`ALL_NAMES` tokens — staggered and
        abbreviated ("…", the heatmap's rule: a shortened name beats a dropped one), and beyond that
        every k-th."""
        s = self._session.scene
        key = (s.tokens, self.bars_plot.getViewBox().width(), self._font_scale)
        if key == self._ticks_for:  # (every edit comes here: measure names only anew)
            return
        self._ticks_for = key
        if s.n > _MAX_BARS:
            ticks = None
        else:
            names = [s.token_label(j) for j in range(s.n)]
            ticks = self._tick_layout(names, max(1.0, self.bars_plot.getViewBox().width()) / max(1, s.n))
        if ticks != self._ticks:
            self._ticks = ticks
            axis = self.bars_plot.getAxis("bottom")
            two_rows = ticks is not None and any(text.startswith("\n") for _, text in ticks[0])
            if ticks is not None:
                font = QFont()
                font.setPointSizeF(ticks[1])
                axis.setStyle(tickFont=font)
                # (two rows of names: the axis as tall as both at once — grown only at its next paint,
                # the second row was first drawn cut off under the plot)
                fm = QFontMetricsF(font)
                axis.setHeight(int(math.ceil(2 * fm.height() + fm.height() / 2 + 8)) if two_rows else None)
            axis.setTicks(None if ticks is None else [ticks[0]])
        self._x_margins = self._end_margins(ticks, s.n)
        if self._drawn:
            self._sync_x_range()

    def _sync_x_range(self) -> None:
        n = self._session.scene.n
        key = (n, self._x_margins)
        if key != self._bars_n:
            self._bars_n = key
            self.bars_plot.setXRange(-self._x_margins[0], n - 1 + self._x_margins[1], padding=0)

    def _end_margins(self, ticks, n: int) -> tuple[float, float]:
        """Room beyond the first and the last bar (in bars) for their names: the axis leaves out a name
        that sticks out of its ends (the newest token's, under the last bar, was missing)."""
        if not ticks or not ticks[0] or n < 1:
            return (0.6, 0.6)
        font = QFont()
        font.setPointSizeF(ticks[1])
        fm = QFontMetricsF(font)
        width = max(1.0, self.bars_plot.getViewBox().width())
        half = {j: fm.horizontalAdvance(text.lstrip("\n")) / 2 + 2 for j, text in ticks[0]}
        margins = (0.6, 0.6)
        for _ in range(2):  # (the margins change the bars' pitch a little: once more at the new pitch)
            per_bar = width / (n - 1 + sum(margins))
            margins = (max(0.6, half.get(0, 0.0) / per_bar), max(0.6, half.get(n - 1, 0.0) / per_bar))
        return (round(margins[0], 3), round(margins[1], 3))

    def _tick_layout(self, names: list[str], per_bar: float) -> tuple[list[tuple[int, str]], float]:
        """(index, text) of the names under the bars and their size in points, for bars ``per_bar`` px
        apart.  A name of the second row is written on the tick's second line."""
        base = 11 * self._font_scale
        font = QFont()
        font.setPointSizeF(base)
        fm = QFontMetricsF(font)
        pad = fm.averageCharWidth() / 2
        widest = max((fm.horizontalAdvance(name) for name in names), default=0.0) + pad
        n = len(names)

        def rows(k: int, names: list[str]) -> list[tuple[int, str]]:
            return [(j, ("\n" if k == 2 and j % 2 else "") + names[j]) for j in range(n)]

        for k in (1, 2):  # one row, else two staggered rows: each name then has two bars' room
            shrink = (k * per_bar) / max(widest, 1.0)
            if shrink >= self.NAMES_SMALLEST:
                return rows(k, names), base * min(1.0, shrink)
        size = base * self.NAMES_SMALLEST
        if n <= self.ALL_NAMES:  # staggered at the smallest size, each name shortened to its room
            font.setPointSizeF(size)
            fm = QFontMetricsF(font)
            measure = TextMeasure(lambda text, px: fm.horizontalAdvance(text), fm.height())
            room = 2 * per_bar - fm.averageCharWidth() / 2
            return rows(2, [abbreviate(name, size, room, measure) for name in names]), size
        stride = max(1, math.ceil(widest * self.NAMES_SMALLEST / per_bar))
        return [(j, names[j]) for j in range(0, n, stride)], size

    ALL_NAMES = 32  # up to this many tokens every one is named under its bar (as on the heatmap)
    NAMES_SMALLEST = 0.7  # of the plots' text size: the names' legible floor

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        # Side by side each plot needs ~26 characters of width for its numbers and names; a narrower
        # dock stacks them, each then as wide as the dock.
        font = QFont()
        font.setPointSizeF(11 * self._font_scale)  # (the plots' own text size)
        wide = self.width() >= 26 * 2 * QFontMetricsF(font).averageCharWidth()
        # A tall dock stacks them too: side by side each plot would be a narrow strip, the values plot's
        # equal-aspect axes then spanning ±3 for vectors within ±1.
        tall = self.height() > 1.2 * self.width()
        direction = (QBoxLayout.Direction.LeftToRight if wide and not tall
                     else QBoxLayout.Direction.TopToBottom)
        if self._plots_row.direction() != direction:
            self._plots_row.setDirection(direction)
        # Stacked in a tall dock, the values plot gets the larger share: its axes keep equal scales, so
        # its height is what shows the vectors (the bars read as well shorter).  In a short one (the
        # projector's large type) the bars need their half for their tick labels.
        values_share = 3 if tall else 2
        if self._plots_row.stretch(1) != values_share:
            self._plots_row.setStretch(0, 2)
            self._plots_row.setStretch(1, values_share)

    def plots_stacked(self) -> bool:
        """True when the two plots stand one above the other (a narrow or a tall dock)."""
        return self._plots_row.direction() == QBoxLayout.Direction.TopToBottom

    @staticmethod
    def _set_text(label: QLabel, text: str) -> None:
        if label.text() != text:  # a word-wrapped label re-lays out the panel on every setText
            label.setText(text)

    def _sync_bar_labels(self, w: np.ndarray) -> None:
        """The weights above their bars (up to 16 tokens)."""
        style = (self._theme.text, self._theme.background, self._font_scale)
        if style != self._bar_style:
            self._bar_style = style
            font = QFont()
            font.setPointSizeF(11 * self._font_scale)
            self.bar_labels.set_style(font, self._theme.text, self._theme.background)
        self.bar_labels.set_labels([(float(j), float(x), fmt_fixed(float(x))) for j, x in enumerate(w)])

    def _draw_values(self, best: int) -> None:
        s = self._session.shown  # (a split scene's selected head)
        r = self._session.result
        t = self._theme
        v = s.qkv()[2]
        v2 = v[:, :2] if v.shape[1] >= 2 else np.column_stack([v[:, 0], np.zeros(s.n)])
        out = r.output[self._session.query]
        out2 = out[:2] if out.shape[0] >= 2 else np.array([out[0], 0.0])
        style = (t.value_color, t.output_color, t.text, t.line_scale, self._font_scale)
        restyle = style != self._values_style
        if restyle:
            self._values_style = style
            for item in self._value_items:
                self.values_plot.removeItem(item)
            self._value_items = []
            font = QFont()
            font.setPointSizeF(11 * self._label_scale())
            self.value_labels.set_style(font, t.value_color)
            # (curves, not PlotDataItems: the same lines without the data item's processing on each set)
            # (the values as arrows, as on the vector plane: thin aliased lines were faint from afar)
            self._lines = pg.PlotCurveItem(pen=pg.mkPen(t.value_color, width=3 * t.line_scale * self._font_scale),
                                           antialias=True)
            # The values stay put while the output moves: repaint them from a cached picture.
            self._lines.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            self._arrow = pg.PlotCurveItem(pen=pg.mkPen(t.output_color, width=4 * t.line_scale * self._font_scale),
                                           antialias=True)
            self._head = pg.ScatterPlotItem(size=12 * self._font_scale, brush=pg.mkBrush(t.output_color), pen=_NO_PEN)
            # (on a backing of the plot's colour: the label stays readable where it crosses a value)
            backing = QColor(t.background)
            backing.setAlpha(210)
            self._out_label = pg.TextItem("output", color=t.output_color, anchor=(0, 0), fill=backing)
            font = QFont()
            font.setPointSizeF(12 * self._label_scale())
            font.setBold(True)
            self._out_label.setFont(font)
            # (the output's arrow and dot over its label's backing, the label over the values)
            for z, item in ((0, self._lines), (2, self._arrow), (3, self._head), (1, self._out_label)):
                item.setZValue(z)
                self.values_plot.addItem(item)
                self._value_items.append(item)
            self._values_key = None
        values_key = (v2.tobytes(), tuple(s.token_label(j) for j in range(s.n)) if s.n <= 16 else s.n)
        values_changed = values_key != self._values_key
        if values_changed:
            self._values_key = values_key
            n = s.n if s.n <= 16 else 0
            self.value_labels.set_values(v2[:n], [s.token_label(j) for j in range(n)])
        self._arrow.setData(np.array([0.0, out2[0]]), np.array([0.0, out2[1]]))
        self._head.setData([out2[0]], [out2[1]])
        # (its label beside its head, clear of the values' heads: placed with the values' names)
        self._out_label.setPos(float(out2[0]), float(out2[1]))
        label_style = {"font-size": f"{11 * self._font_scale:.0f}pt", "color": t.text}
        labels = ("value dim 1" + (f" of {v.shape[1]}" if v.shape[1] > 2 else ""),
                  "value dim 2" if v.shape[1] >= 2 else "", tuple(label_style.items()))
        if labels != self._axis_labels:
            self._axis_labels = labels
            self.values_plot.getAxis("bottom").setLabel(labels[0], **label_style)
            self.values_plot.getAxis("left").setLabel(labels[1], **label_style)
            self.bars_plot.getAxis("left").setLabel("weight", **label_style)
        # The output is a convex blend of the values (or 0), so the range only follows the values.
        if restyle or values_changed:
            lim = np.finfo(np.float64).max / 4  # so that span and padding stay finite for huge values
            pts = np.clip(np.vstack([v2, out2[None, :], np.zeros((1, 2))]), -lim, lim)
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            pad = 0.3 * float(max(hi[0] - lo[0], hi[1] - lo[1], 1e-9))
            self.values_plot.setRange(xRange=(lo[0] - pad, hi[0] + pad), yRange=(lo[1] - pad, hi[1] + pad),
                                      padding=0)
        # Heads a fixed number of pixels long: drawn again when the vectors or the zoom change.
        px = self.values_plot.getViewBox().viewPixelSize()
        if not (px[0] > 0 and px[1] > 0 and math.isfinite(px[0]) and math.isfinite(px[1])):
            px = (0.01, 0.01)
        lines_key = (values_key, style, tuple(round(p, 12) for p in px))
        head_px = 10 * self._label_scale() * t.line_scale ** 0.5
        if lines_key != self._lines_key:
            self._lines_key = lines_key
            self._lines.setData(*arrow_segments(v2, head_px, px), connect="pairs")
        self._place_value_labels(out2, px, head_px)

    def _place_value_labels(self, out2: np.ndarray, px: tuple[float, float], head_px: float) -> None:
        """The values' names clear of each other, of the other heads and — once it is shown — of the
        output's dot and label, the largest weights' first (the weights once they are shown)."""
        weights, output = self.revealed()
        out = (float(out2[0]), float(out2[1]), self._out_label, 12 * self._font_scale) if output else None
        w = self._session.result.weights[self._session.query] if weights else None
        self.value_labels.lay_out(w, px, self.values_plot.getViewBox().viewRect(), head_px, out)

    def _label_scale(self) -> float:
        """The names written among the value vectors grow less than the rest: at the projector's 2.2×
        "v cat" and "v sat" covered each other and the arrows they name."""
        return min(self._font_scale, LABEL_SCALE_MAX)

    def _on_values_resized(self, *_: object) -> None:
        # The arrows' heads for the plot's new size, in the repaint the new size brings anyway: a frame
        # later, they were drawn a second time (a slide's step into the blend, then its caption's new
        # height a frame later: at 4K@2 two drawings of ~40 ms each).  A hidden blend catches up when
        # shown.
        if self._drawn and self.isVisible():
            self._draw_values(int(np.argmax(self._session.result.weights[self._session.query])))

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if self._stale:
            self._sync()
