"""The vector plane: q, k (and v, and the blend) as arrows you can grab.

Every vector is an arrow from the origin on a 2-D plane (for d > 2 its first two components,
labelled so).  The selected query and its best-matching key stand out.  Dragging an arrow head edits
that vector live through :meth:`Session.drag_vector`; a whole drag is one undo step because the
Session merges the moves between two :meth:`Session.begin_drag` calls.  In projection mode Q, K and V
are derived from X and the W matrices, so they are shown read-only.

One ``PlotCurveItem`` draws a whole set of arrows (shafts and heads as ``connect="pairs"``
segments), so 1024 keys cost one item (a curve, not a ``PlotDataItem``: setting a dragged arrow's
six points took ~180 µs through the data item's processing, ~20 µs on the curve); labels are drawn only up to :data:`MAX_LABELLED` tokens.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QCheckBox, QGraphicsItem, QHBoxLayout, QSizePolicy, QVBoxLayout, QWidget,
)

from qkv_studio.core import row_stats
from qkv_studio.core.stages import reveals
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.frame_throttle import FrameThrottle
from qkv_studio.ui.widgets.layout_barrier import LayoutBarrier
from qkv_studio.ui.widgets.rich_label import RichLabel
from qkv_studio.ui.widgets.arrows import arrow_segments
from qkv_studio.ui.widgets.plot_cache import cache_axes, plot_item, show_only

MAX_LABELLED = 16  # above this many tokens keys/values get no labels (the query and best key still do):
# more labels than this overlap into a grey mass in a panel-sized plane, and each costs a rich-text item
GRAB_PX = 12.0  # how close (in pixels) a press must be to an arrow head to grab it
HEAD_PX = 15.0  # arrow-head length in pixels (times the font scale)


_EMPTY = np.zeros(0)


def _set_arrows(shown: dict, item: pg.PlotCurveItem, xs: np.ndarray, ys: np.ndarray) -> None:
    """Give ``item`` new segments only when they differ from what ``shown`` (item -> segments) says it
    shows: an unchanged set is neither re-set nor repainted (an edit of one query leaves the 1024 key
    arrows alone)."""
    old = shown.get(item)
    if old is not None and ((old[0] is xs and old[1] is ys)
                            or (np.array_equal(old[0], xs) and np.array_equal(old[1], ys))):
        return
    shown[item] = (xs, ys)
    item.setData(xs, ys, connect="pairs")


def _pca_bases(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The 2-D PCA basis of q and k with the share of their length it keeps, and one for v (None when
    dᵥ ≤ 2: its first two components are already all of it).  Rows are scaled first, so numbers near
    1e308 give the same directions instead of overflowing."""
    from qkv_studio.core.models import pca_basis  # (NumPy only; loaded when first asked for)

    def scaled(*ms: np.ndarray) -> list[np.ndarray]:
        top = max((float(np.max(np.abs(m))) for m in ms if m.size), default=0.0)
        return [m / top if top > 0 else m for m in ms]

    qs, ks = scaled(q, k)
    basis, explained = pca_basis(qs, ks)
    v_basis = pca_basis(*scaled(v), np.zeros((0, v.shape[1])))[0] if v.shape[1] > 2 else None
    return basis, explained, v_basis


def _finite(m: np.ndarray) -> np.ndarray:
    """Projected vectors kept finite: an overflow (numbers near 1e308) becomes ±1e300."""
    return np.nan_to_num(m, nan=0.0, posinf=1e300, neginf=-1e300)


def _first2(m: np.ndarray) -> np.ndarray:
    """The first two components of each row (a 1-D vector lies on the horizontal axis)."""
    if m.shape[1] >= 2:
        return np.asarray(m[:, :2], dtype=np.float64)
    return np.column_stack([m[:, 0], np.zeros(m.shape[0])]).astype(np.float64)


class _PlaneViewBox(pg.ViewBox):
    """A ViewBox that hands left-button drags to the plane (to move arrow heads)."""

    def __init__(self) -> None:
        super().__init__(enableMenu=False)
        self.drag_handler = None

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802 - pyqtgraph's name
        if self.drag_handler is not None and self.drag_handler(ev):
            return
        ev.ignore()


class VectorPlane(FollowsAppearance, QWidget):
    """Queries, keys, values and the output as arrows on a plane; drag a head to edit the vector.

    Drawn in the look of the :class:`Appearance` it is bound to (``appearance=`` or ``bind_appearance``).
    Public API: ``set_show_values(on)``.
    Test hooks: ``plot_widget``, ``view_box``, ``best_key()``, ``values_visible()``, ``read_only()``,
    ``head_view_pos(matrix, row)``, ``head_viewport_pos(matrix, row)``, ``label_texts()``.
    """

    def __init__(self, session: Session, parent: QWidget | None = None, *,
                 appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._font_scale = 1.0
        self._show_values = False
        self._show_all_stages = False
        self._best: int | None = None
        self._best_weight = 0.0
        self._output: np.ndarray | None = None
        self._keys = np.zeros((0, 2))
        self._read_from: tuple = (None, None)  # the K and V the keys and values were read from
        self._arrow_memo: dict[str, tuple] = {}
        self._values = np.zeros((0, 2))
        self._query_vec = np.zeros((1, 2))
        self._drag: tuple[str, int, float, float] | None = None
        self._drag_origin = QPointF()
        self._labels: list[pg.TextItem] = []
        self._label_shows: dict[pg.TextItem, list] = {}  # label -> [html, (x, y)] it shows now
        self._segments: dict[pg.PlotCurveItem, tuple] = {}  # arrow set -> the segments it shows now
        self._label_texts: list[str] = []
        self._html_cache: dict[tuple, str] = {}
        self._labels_sig: tuple | None = None  # what the labels show now
        self._stale = 0  # 1: redraw when shown; 2: re-style and re-fit too (new tokens)
        # What follows from an edit elsewhere is drawn at the next frame (see frame_throttle).
        self._next_frame = FrameThrottle(self._catch_up, self)
        self._info_frame = FrameThrottle(self._update_info, self)
        self._names: tuple = (None, [])  # (tokens, their labels)
        self._pca = False
        self._bases: tuple | None = None  # (q·k basis, explained, v basis) while PCA is shown

        # header: what is shown, and the values toggle
        self.info = RichLabel(parent=self)
        self.info.setTextFormat(Qt.TextFormat.RichText)
        self.info.setWordWrap(True)
        self.info.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.values_box = QCheckBox("show values v", self)
        self.values_box.setToolTip("Draw the value vectors v (dashed). The blend stage always shows them.")
        self.values_box.toggled.connect(self.set_show_values)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(LayoutBarrier(self.info, grow_only=True), 1)  # new numbers re-lay out this line only
        self.pca_box = QCheckBox("PCA", self)
        self.pca_box.setToolTip("For dₖ > 2: draw q and k on the two directions that keep most of their length "
                                "(PCA, not centred: dot products keep their meaning), values on their own. "
                                "Dragging is off in this view.")
        self.pca_box.toggled.connect(self.set_pca)
        boxes = QVBoxLayout()
        boxes.setContentsMargins(0, 0, 0, 0)
        boxes.setSpacing(0)
        boxes.addWidget(self.values_box)
        boxes.addWidget(self.pca_box)
        boxes.addStretch(1)
        head.addLayout(boxes, 0)

        self.view_box = _PlaneViewBox()
        self.view_box.drag_handler = self._drag_event
        self.plot_widget = pg.PlotWidget(self, plotItem=plot_item(viewBox=self.view_box))
        self.plot = self.plot_widget.getPlotItem()
        show_only(self.plot, "left", "bottom")
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setAspectLocked(True, 1.0)
        self.plot.disableAutoRange()
        cache_axes(self.plot)

        self._origin_h = pg.InfiniteLine(pos=0, angle=0, movable=False)
        self._origin_v = pg.InfiniteLine(pos=0, angle=90, movable=False)
        self._values_item = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self._keys_item = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        # Keys and values stay put while a query moves over them: repaint them from a cached picture
        # (1024 antialiased arrows cost ~10 ms to draw).
        for item in (self._values_item, self._keys_item):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._best_halo = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self._best_item = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self._output_item = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self._query_item = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        for z, item in enumerate((self._origin_h, self._origin_v, self._values_item, self._keys_item,
                                  self._best_halo, self._best_item, self._output_item, self._query_item)):
            item.setZValue(z)
            self.plot.addItem(item, ignoreBounds=True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.plot_widget, 1)

        scene = self.plot_widget.scene()
        scene.sigMouseMoved.connect(self._on_hover)
        # Once a drag is ours, its moves come straight here: pyqtgraph's way to the view box — the
        # view's and the scene's mouse handling, a drag event built with every position mapped, and a
        # hit-test of every item under the pointer for hover events (~1.7 ms of each drag step) — is
        # skipped.  The press that starts the drag and the release that ends it still go through pyqtgraph.
        self.plot_widget.viewport().installEventFilter(self)

        session.scene_changed.connect(self._on_scene)
        session.result_changed.connect(self._on_result)
        session.query_changed.connect(self._on_query)
        session.stage_changed.connect(self._on_stage)
        session.tokens_changed.connect(self._on_tokens)
        session.head_changed.connect(self._on_tokens)  # another head of a split scene: its vectors, fitted

        self._read_vectors()
        self._read_result()
        # Styled and fitted as it is built, drawn when first shown, at its size (drawn here, every
        # arrow and label was placed for a plot without a size and then again: ~15 ms of start-up).
        self._apply_palette(self._theme)
        self._style(draw=False)
        self._fit()
        self._stale = 1
        # (connected after the first fit: its range change would draw everything once more at start-up)
        self.view_box.sigRangeChanged.connect(self._draw)
        self.view_box.sigResized.connect(self._draw)
        self.bind_appearance(appearance)

    # ---- look (see FollowsAppearance; the plane draws no colour-mapped data) -------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        """Colours and line widths of a theme."""
        self._apply_palette(theme)
        self._labels_clear()
        self._style()

    def _apply_palette(self, theme: Theme) -> None:
        self._theme = theme
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, QColor(theme.background))
        pal.setColor(QPalette.ColorRole.WindowText, QColor(theme.text))
        self.setPalette(pal)
        self.setAutoFillBackground(True)
        self.values_box.setStyleSheet(f"color: {theme.text}")
        self.plot_widget.setBackground(theme.background)

    def _restyle_scale(self, f: float) -> None:
        """Scale every font and pen width (zoom, projector)."""
        self._font_scale = f
        self._labels_clear()
        self._style()

    def set_pca(self, on: bool) -> None:
        """Show the vectors through their 2-D PCA (only for dₖ > 2) instead of their first two components."""
        on = bool(on)
        if self.pca_box.isChecked() != on:
            self.pca_box.setChecked(on)  # (comes back here)
            return
        if on == self._pca:
            return
        self._pca = on
        self._read_vectors()
        self._read_result()
        self._labels_sig = None
        self._redraw(refit=True, ensure=False)

    def pca_shown(self) -> bool:
        """True when the plane draws the PCA projection (asked for, and dₖ > 2)."""
        return self._pca and self._session.shown.d_k > 2

    def set_show_values(self, on: bool) -> None:
        """Show or hide the value vectors (the blend stage always shows them)."""
        on = bool(on)
        if self.values_box.isChecked() != on:
            self.values_box.setChecked(on)  # comes back here through toggled
            return
        if on == self._show_values:
            return
        self._show_values = on
        self._update_info()
        self._draw()
        self._ensure_visible()

    # ---- test hooks ---------------------------------------------------------------------------------
    def best_key(self) -> int | None:
        """Index of the key drawn as the best match (argmax of the selected query's weights)."""
        return self._best

    def values_visible(self) -> bool:
        return self._show_values or self._session.stage == "output"

    # ---- what the stage reveals (the stage registry's reveals) --------------------------------------
    def set_show_all_stages(self, on: bool) -> None:
        """Show every stage's results at every stage (View → Show all stages at once), or only those the
        current stage has reached."""
        if bool(on) != self._show_all_stages:
            self._show_all_stages = bool(on)
            self._next_frame.request()

    def _reveals(self, what: str) -> bool:
        return reveals(self._session.stage, what, all_stages=self._show_all_stages)

    def output_shown(self) -> bool:
        """True when the output arrow is drawn (from the blend stage on, or every stage shown at once)."""
        return self._output is not None and self._reveals("output")

    def _shown_best(self) -> int | None:
        """The best key, once the scores are revealed (before, it would answer the question)."""
        return self._best if self._reveals("scores") else None

    def read_only(self) -> bool:
        """True in projection mode (Q, K, V are derived) and in the PCA view: nothing can be dragged."""
        return self._session.scene.mode == "projection" or self.pca_shown()

    def head_view_pos(self, matrix: str, row: int) -> QPointF:
        """Where the head of a drawn vector is, in data coordinates."""
        if matrix == "Q":
            return QPointF(*self._query_vec[0])
        arr = self._keys if matrix == "K" else self._values
        return QPointF(*arr[row])

    def head_viewport_pos(self, matrix: str, row: int):
        """Where the head of a drawn vector is, in the viewport coordinates of ``plot_widget``."""
        return self.plot_widget.mapFromScene(self.view_box.mapViewToScene(self.head_view_pos(matrix, row)))

    def label_texts(self) -> list[str]:
        """The plain texts of the visible labels (coincident heads share one label)."""
        return list(self._label_texts)

    # ---- slots --------------------------------------------------------------------------------------
    def _on_scene(self) -> None:
        # Every scene change is followed by result_changed in the same event-loop turn (the Session
        # recomputes then): the vectors are read now and drawn once, with the result, in _on_result.
        self._read_vectors()

    def _on_result(self) -> None:
        if self._drag is not None and self.isVisible():
            # The hand is on this plane: the arrows follow it now, the numbers under it next frame.
            self._read_result()
            self._draw()
            self._info_frame.request()
            return
        self._next_frame.request()

    def _on_query(self, index: int) -> None:
        self._next_frame.request()

    def _on_stage(self, stage: str) -> None:
        self._next_frame.request()

    def _catch_up(self) -> None:
        """The next-frame redraw after an edit elsewhere, a query change or a stage step."""
        self._read_vectors()
        self._read_result()
        self._redraw(ensure=self._drag is None)

    def _on_tokens(self) -> None:
        self._read_vectors()
        self._redraw(refit=True, ensure=False)

    def _redraw(self, *, ensure: bool = True, refit: bool = False) -> None:
        """Draw what the vectors now are; while the plane is hidden (a tab behind the editors, or
        presentation mode) only remember to, and catch up when it is shown."""
        if not self.isVisible():
            self._stale = 2 if refit or self._stale == 2 else 1
            return
        if refit:
            self._style()  # (it updates the caption and draws)
            self._fit()
            self._draw()
            return
        self._update_info()
        self._draw()
        if ensure:
            self._ensure_visible()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._stale:
            refit, self._stale = self._stale == 2, 0
            self._redraw(refit=refit)

    # ---- model → drawing ----------------------------------------------------------------------------
    def _read_vectors(self) -> None:
        scene = self._session.shown  # (a split scene's selected head)
        q, k, v = scene.qkv()
        if self.pca_shown():
            self._bases = _pca_bases(q, k, v)
            basis, _, v_basis = self._bases
            with np.errstate(over="ignore", invalid="ignore"):  # (finite, if off the plane, near 1e308)
                self._keys = _finite(k @ basis)
                self._query_vec = _finite(q[self._session.query:self._session.query + 1] @ basis)
                self._values = _finite(v @ v_basis) if v_basis is not None else _first2(v)
        else:
            self._bases = None
            # (the same keys and values as last time, when a query was edited: the same arrays, so
            # that their arrows are not computed again — see _arrows)
            if self._read_from[0] is not k:
                self._keys = _first2(k)
            if self._read_from[1] is not v:
                self._values = _first2(v)
            self._query_vec = _first2(q[self._session.query:self._session.query + 1])
        self._read_from = (k, v) if self._bases is None else (None, None)
        # (last: showing the box re-lays out the plane, which may draw — with the vectors now read)
        self.pca_box.setVisible(scene.d_k > 2)  # nothing to project in two dimensions: no clutter

    def _read_result(self) -> None:
        result = self._session.result
        query = self._session.query
        if result.weights.shape[0] != self._session.scene.n or query >= result.weights.shape[0]:
            self._best, self._output = None, None
            return
        stats = row_stats(result, query)
        self._best = None if stats.fully_masked else stats.argmax
        self._best_weight = stats.max_weight
        out = result.output[query:query + 1]
        v_basis = self._bases[2] if self._bases is not None else None
        with np.errstate(over="ignore", invalid="ignore"):  # (numbers near 1e308 draw off the plane)
            self._output = _finite(out @ v_basis) if v_basis is not None else _first2(out)

    def _update_info(self) -> None:
        scene = self._session.shown
        t = self._theme
        d_k, d_v = scene.d_k, scene.d_v
        if self._bases is not None:
            dims = f"PCA of q and k: 2 directions keep {100 * self._bases[1].sum():.0f}% of dₖ = {d_k}"
            if self.values_visible():
                dims += " · values by their own PCA" if d_v > 2 else f" · values: dᵥ = {d_v}"
        else:
            dims = "dₖ = 2" if d_k == 2 else (
                f"first 2 of dₖ = {d_k} dimensions" if d_k > 2 else "dₖ = 1: one dimension, on the horizontal axis")
            if d_v != d_k:
                dims += f" · values: {'first 2 of ' if d_v > 2 else ''}dᵥ = {d_v}"
        if self._bases is not None:
            hint = "a projection: untick PCA to drag the first two components"
        elif self.read_only():
            hint = "derived: Q = X·W<sup>Q</sup>, K = X·W<sup>K</sup> — edit X or W to move them"
        else:
            hint = "drag an arrow head to edit that vector"
        best = self._shown_best()
        if best is not None and best < scene.n:
            q_name, k_name = (_html_escape(scene.token_label(i)) for i in (self._session.query, best))
            weight = f" (w&nbsp;=&nbsp;{self._best_weight:.2f})" if self._reveals("weights") else ""
            # (its own line, the weight kept with its number — "w", as on the heatmap: wrapped anywhere, "(weight" and "0.54)"
            # stood on two lines; the hint follows on the next)
            hint = (f'<span style="color:{t.text}">best match for <b style="color:{t.query_color}">q {q_name}'
                    f'</b>: <b style="color:{t.key_color}">k {k_name}</b>{weight}'
                    f'</span><br>{hint}')
        self.info.setText(
            f'<span style="font-size:{self._px(17)}px; font-weight:600; color:{t.text}">'
            f'{self._title()}</span>'
            f'<span style="font-size:{self._px(14)}px; color:{t.muted}"> &nbsp;({dims})<br>{hint}</span>')
        x_label = "dimension 1"
        y_label = "dimension 2" if d_k >= 2 else "(none: dₖ = 1)"
        if self._bases is not None:
            explained = self._bases[1]
            x_label, y_label = (f"PCA {i + 1} · {100 * explained[i]:.0f}%" for i in range(2))
        css = {"color": t.text, "font-size": f"{self._px(15)}px"}
        key = (x_label, y_label, tuple(css.items()))
        if key != getattr(self, "_axis_labels", None):  # a relabelled axis redraws itself (~8 ms)
            self._axis_labels = key
            self.plot.getAxis("bottom").setLabel(x_label, **css)
            self.plot.getAxis("left").setLabel(y_label, **css)

    def _title(self) -> str:
        if self._session.stage == "output":
            return "the output: a blend of the values v"
        return "q, k and v as arrows" if self.values_visible() else "q and k as arrows"

    def _px(self, base: float) -> int:
        return max(6, int(round(base * self._font_scale)))

    def _pen_w(self, base: float) -> float:
        return base * self._font_scale * self._theme.line_scale

    def _style(self, *, draw: bool = True) -> None:
        t = self._theme
        font = pg.QtGui.QFont()
        font.setPixelSize(self._px(15))
        for name in ("left", "bottom"):
            ax = self.plot.getAxis(name)
            # (major ticks and grid lines only: the minor ones were clutter on a projector, and half
            # of the plane's first paint)
            ax.setStyle(tickFont=font, maxTickLevel=0)
            ax.setPen(pg.mkPen(t.muted, width=max(1.0, self._pen_w(1))))
            ax.setTextPen(pg.mkPen(t.text))
        # A fixed axis width: with the aspect locked, a width that followed the tick labels ("−0.5" vs
        # "0") would change the range, which changes the labels, which changes the width… forever.
        self.plot.getAxis("left").setWidth(int(self._px(15) * 4.4) + 8)
        origin = pg.mkPen(t.muted, width=self._pen_w(1.5))
        self._origin_h.setPen(origin)
        self._origin_v.setPen(origin)
        self._keys_item.setPen(self._many_pen(t.key_color, 2.5))
        halo = QColor(t.key_color)
        halo.setAlpha(70)
        self._best_halo.setPen(pg.mkPen(halo, width=self._pen_w(13)))
        self._best_item.setPen(pg.mkPen(t.key_color, width=self._pen_w(5)))
        self._values_item.setPen(self._many_pen(t.value_color, 2.5, Qt.PenStyle.DashLine))
        dark = QColor(t.background).lightness() < 128
        self.plot.showGrid(x=True, y=True, alpha=0.1 if dark else 0.18)
        box_font = self.values_box.font()
        box_font.setPixelSize(self._px(14))
        self.values_box.setFont(box_font)
        self._output_item.setPen(pg.mkPen(t.output_color, width=self._pen_w(5)))
        self._query_item.setPen(pg.mkPen(t.query_color, width=self._pen_w(5)))
        self._update_info()
        if draw:
            self._draw()

    def _many_pen(self, colour: str, width: float, style=Qt.PenStyle.SolidLine):
        """A set's pen: fainter and thinner when there are many arrows, so q and the best key show."""
        n = len(self._keys)
        c = QColor(colour)
        if n > MAX_LABELLED:
            c.setAlpha(max(50, int(255 * math.sqrt(MAX_LABELLED / n))))
            width *= 0.6
        return pg.mkPen(c, width=self._pen_w(width), style=style)

    def _pixel_size(self) -> tuple[float, float]:
        """A screen pixel's size in view units, (x, y): what ``ViewBox.viewPixelSize()`` says for the
        plane's unrotated view, without inverting the view's transform (which is singular at extreme
        ranges, where pyqtgraph then falls back to a pseudo-inverse that warns on NumPy ≥ 2.5)."""
        (x0, x1), (y0, y1) = self.view_box.viewRange()
        rect = self.view_box.rect()
        scale = self.plot_widget.transform()
        wide, tall = rect.width() * scale.m11(), rect.height() * scale.m22()
        return ((x1 - x0) / wide if wide > 0 else 0.0, (y1 - y0) / tall if tall > 0 else 0.0)

    def _draw(self, *args) -> None:
        px = self._pixel_size()
        if not (px[0] > 0 and px[1] > 0 and math.isfinite(px[0]) and math.isfinite(px[1])):
            px = (0.01, 0.01)
        head = HEAD_PX * self._font_scale * self._theme.line_scale ** 0.5
        n = len(self._keys)
        best = self._shown_best()
        best = best if best is not None and best < n else None
        # All keys, the best one too (its bold arrow is drawn over it): the set then stays the same,
        # and cached, when only the best match changes (at 1024 keys a redraw costs ~15 ms).
        _set_arrows(self._segments, self._keys_item, *self._arrows("keys", self._keys, head, px))
        if best is not None:
            bx, by = arrow_segments(self._keys[best:best + 1], head * 1.15, px)
            _set_arrows(self._segments, self._best_halo, bx, by)
            _set_arrows(self._segments, self._best_item, bx, by)
        else:
            _set_arrows(self._segments, self._best_halo, _EMPTY, _EMPTY)
            _set_arrows(self._segments, self._best_item, _EMPTY, _EMPTY)
        show_v = self.values_visible()
        if show_v:
            _set_arrows(self._segments, self._values_item, *self._arrows("values", self._values, head, px))
        else:
            _set_arrows(self._segments, self._values_item, _EMPTY, _EMPTY)
        _set_arrows(self._segments, self._query_item, *arrow_segments(self._query_vec, head * 1.15, px))
        show_out = self.output_shown()
        if show_out:
            _set_arrows(self._segments, self._output_item, *arrow_segments(self._output, head * 1.15, px))
        else:
            _set_arrows(self._segments, self._output_item, _EMPTY, _EMPTY)
        self._draw_labels(show_v, show_out, px)

    def _arrows(self, name: str, vecs: np.ndarray, head: float, px) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~.arrows.arrow_segments`, remembered while the vectors (the same array), head and zoom stay: a drag
        of the query leaves 64 or 1024 key arrows as they are."""
        last = self._arrow_memo.get(name)
        if last is not None and last[0] is vecs and last[1] == (head, tuple(px)):
            return last[2]
        xy = arrow_segments(vecs, head, px)
        self._arrow_memo[name] = (vecs, (head, tuple(px)), xy)
        return xy

    def _labels_clear(self) -> None:
        for item in self._labels:
            self.plot.removeItem(item)
        self._labels = []
        self._label_shows.clear()
        self._labels_sig = None

    def _draw_labels(self, show_v: bool, show_out: bool, px: tuple[float, float] = (0.01, 0.01)) -> None:
        scene = self._session.shown
        t = self._theme
        n = len(self._keys)
        # The same labels at the same places as last time (the second draw of an edit): nothing to do.
        _, k_arr, v_arr = scene.qkv()
        best = self._shown_best()
        sig = (self._query_vec.tobytes(), self._output.tobytes() if show_out else None, best, show_v,
               scene.tokens, self._session.query, self._px(17), t, self._font_scale, tuple(f"{p:.3g}" for p in px))
        last = self._labels_sig
        if last is not None and last[0] == sig and last[1] is k_arr and last[2] is v_arr:
            return
        self._labels_sig = (sig, k_arr, v_arr)
        if self._names[0] is not scene.tokens:  # token_label is O(n): name them all once per token list
            self._names = (scene.tokens, [scene.token_label(j) for j in range(scene.n)])
        names = self._names[1]
        n = min(n, len(names), len(self._values))  # (vectors and names of one scene, even mid-change)
        entries: list[tuple[float, float, str, str, bool]] = []  # x, y, text, colour, bold
        for j in range(n):
            if n <= MAX_LABELLED or j == best:
                entries.append((*self._keys[j], f"k {names[j]}", t.key_color, j == best))
        if show_v and n <= MAX_LABELLED:
            for j in range(n):
                entries.append((*self._values[j], f"v {names[j]}", t.value_color, False))
        # The query after the keys: it moves on every edit, and a label it joins or leaves must not
        # shift every other label onto another item (each new text is laid out again, ~0.3 ms).
        entries.append((*self._query_vec[0], f"q {names[self._session.query]}", t.query_color, True))
        if show_out:  # last, so that its coming and going leaves the other labels' items alone
            entries.append((*self._output[0], "output (blend)", t.output_color, True))
        size = self._px(17)
        groups, anchors = _merge_close_labels(entries, px, size, lead=f"q {names[self._session.query]}")
        texts = []
        while len(self._labels) < len(groups):
            fill = QColor(t.background)
            fill.setAlpha(245)  # (an axis line behind a label must not strike through its text)
            item = pg.TextItem(fill=pg.mkBrush(fill))
            item.setZValue(20)
            # Rich text is laid out again on every paint: keep the drawn text as a picture instead
            # (the plane repaints under a moving arrow on every drag step).  Only the text: a cached
            # TextItem loses its background, and an axis line then strikes through the label.
            item.textItem.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            self.plot.addItem(item, ignoreBounds=True)
            self._labels.append(item)
        for item, ((x, y), parts) in zip(self._labels, groups.items()):
            words = tuple((sep, s, c, b) for sep, (s, c, b, _) in zip(_separators(parts), parts))
            key = (words, size, t.muted)
            html = self._html_cache.get(key)  # the same labels come back on every edit and drag step
            if html is None:
                # (arrows at other heads on a line of their own: a merged label grows down, not off the plot)
                html = "".join(
                    ("<br>" if sep == " · " else
                     f'<span style="color:{t.muted}; font-size:{size}px">{sep}</span>' if sep else "")
                    + f'<span style="color:{c}; font-size:{size}px; font-weight:{800 if b else 500}">'
                    f'{_html_escape(s)}</span>' for sep, s, c, b in words)
                if len(self._html_cache) > 4096:
                    self._html_cache.clear()
                self._html_cache[key] = html
            texts.append("".join(sep + s for sep, s, _, _ in words))
            # Re-laying out rich text costs ~0.3 ms a label: new text only for a label whose text changed
            # (the query's label moves on every edit, with the same words).
            shows = self._label_shows.setdefault(item, [None, None])
            if shows[0] != html:
                shows[0] = html
                item.setHtml(html)
            anchor = anchors.get((x, y)) or _anchor(x, y)
            if shows[1] != (x, y, anchor):
                shows[1] = (x, y, anchor)
                item.setAnchor(anchor)
                item.setPos(x, y)
            if not item.isVisible():
                item.setVisible(True)
        for item in self._labels[len(groups):]:
            if item.isVisible():
                item.setVisible(False)
        self._label_texts = texts

    # ---- range --------------------------------------------------------------------------------------
    def _shown_heads(self) -> np.ndarray:
        parts = [self._keys, self._query_vec, np.zeros((1, 2))]
        if self.values_visible():
            parts.append(self._values)
        if self.output_shown():
            parts.append(self._output)
        return np.vstack(parts)

    def _fit(self) -> None:
        """Range over every shown head and the origin, with room for labels."""
        pts = np.clip(self._shown_heads(), -1e300, 1e300)  # vectors near 1e308: keep pyqtgraph's range finite
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        span = float(max(hi[0] - lo[0], hi[1] - lo[1], 1e-9))
        if not math.isfinite(span):
            span = 1.0
        pad = 0.22 * span if span > 1e-9 else 1.0
        self.view_box.setRange(xRange=(lo[0] - pad, hi[0] + pad), yRange=(lo[1] - pad, hi[1] + pad), padding=0)

    def _ensure_visible(self) -> None:
        """Re-range only when a head has left the view (a stable range while working)."""
        (x0, x1), (y0, y1) = self.view_box.viewRange()
        pts = self._shown_heads()
        mx, my = 0.03 * (x1 - x0), 0.03 * (y1 - y0)
        inside = ((pts[:, 0] >= x0 + mx) & (pts[:, 0] <= x1 - mx) & (pts[:, 1] >= y0 + my)
                  & (pts[:, 1] <= y1 - my))
        if not inside.all():
            self._fit()

    # ---- dragging -----------------------------------------------------------------------------------
    def _pick(self, scene_pos) -> tuple[str, int, float, float] | None:
        """The draggable head nearest a scene position, within GRAB_PX pixels (the query first)."""
        tr = self.view_box.childGroup.sceneTransform()

        def dist(arr: np.ndarray) -> np.ndarray:
            sx = tr.m11() * arr[:, 0] + tr.m21() * arr[:, 1] + tr.dx()
            sy = tr.m12() * arr[:, 0] + tr.m22() * arr[:, 1] + tr.dy()
            return np.hypot(sx - scene_pos.x(), sy - scene_pos.y())

        radius = GRAB_PX * max(1.0, self._font_scale)
        query = self._session.query
        if dist(self._query_vec)[0] <= radius:
            return ("Q", query, *map(float, self._query_vec[0]))
        best: tuple[float, str, int] | None = None
        sets = [("K", self._keys)] + ([("V", self._values)] if self.values_visible() else [])
        for name, arr in sets:
            if len(arr):
                d = dist(arr)
                j = int(np.argmin(d))
                if d[j] <= radius and (best is None or d[j] < best[0]):
                    best = (float(d[j]), name, j)
        if best is None:
            return None
        _, name, j = best
        arr = self._keys if name == "K" else self._values
        return (name, j, float(arr[j, 0]), float(arr[j, 1]))

    def _snap_decimals(self) -> int:
        (x0, x1), _ = self.view_box.viewRange()
        span = max(x1 - x0, 1e-12)
        return int(-math.floor(math.log10(span / 200.0)))

    def _drag_event(self, ev) -> bool:
        if ev.button() != Qt.MouseButton.LeftButton:
            return False
        if ev.isStart():
            self._next_frame.flush()  # (pick from what is on screen, not from a frame still waiting)
            hit = None if self.read_only() else self._pick(ev.buttonDownScenePos())
            if hit is None:
                return False
            self._drag = hit
            self._drag_origin = self.view_box.mapSceneToView(ev.buttonDownScenePos())
            self._session.begin_drag()
            self.plot_widget.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
        if self._drag is None:
            return False
        ev.accept()
        self._drag_to(ev.scenePos())
        if ev.isFinish():
            self._drag = None
            self._session.end_drag()
            self.plot_widget.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            self._ensure_visible()
        return True

    def _drag_to(self, scene_pos: QPointF) -> None:
        """The dragged head follows the pointer (at ``scene_pos``) by as much as it moved."""
        matrix, row, x0, y0 = self._drag
        p = self.view_box.mapSceneToView(scene_pos)
        digits = self._snap_decimals()
        x = round(x0 + p.x() - self._drag_origin.x(), digits)
        y = round(y0 + p.y() - self._drag_origin.y(), digits)
        if matrix in ("Q", "K") and self._session.shown.d_k == 1 or matrix == "V" and self._session.shown.d_v == 1:
            y = 0.0
        self._session.drag_vector(matrix, row, x + 0.0, y + 0.0)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        # (the plot's viewport: a move of a drag already under way, see __init__)
        if (self._drag is not None and event.type() == QEvent.Type.MouseMove
                and event.buttons() & Qt.MouseButton.LeftButton):
            self._drag_to(self.plot_widget.mapToScene(event.position().toPoint()))
            return True
        return False

    def _on_hover(self, scene_pos) -> None:
        if self._drag is not None:
            return
        vp = self.plot_widget.viewport()
        if not self.read_only() and self._pick(scene_pos) is not None:
            vp.setCursor(Qt.CursorShape.OpenHandCursor)
        else:
            vp.unsetCursor()


def _anchor(x: float, y: float) -> tuple[float, float]:
    """Where a label sits on its head: on the side away from the origin."""
    x, y = float(x), float(y)
    r = math.hypot(x, y)
    ux, uy = (x / r, y / r) if 0 < r < math.inf else (0.7, 0.7)
    return 0.5 - 0.6 * ux, 0.5 + 0.6 * uy


def _merge_close_labels(entries: list[tuple[float, float, str, str, bool]], px: tuple[float, float],
                        size: int, lead: str = "") -> tuple[dict, dict]:
    """Labels whose boxes would overlap become one label, at the first one's head.

    ``entries`` are (x, y, text, colour, bold) in data coordinates; ``px`` is a pixel's size in data
    units and ``size`` the text's pixel size.  A label's box is estimated from its text (no layout: this
    runs on every drag step).  The merged parts keep their heads, so coinciding ones can read "k b = k c";
    the part ``lead`` (the query's) comes first in its label.  The lead's own label, when it would
    only meet a label of heads far from its own, moves above or below its head instead (returned as
    ``anchors``: head → anchor) — joined to them it would name an arrow it is not at.
    """
    groups: dict[tuple[float, float], list] = {}
    lines: dict[tuple[float, float], dict] = {}  # per label: its heads' lines, as characters
    boxes: dict[tuple[float, float], tuple[float, float, float, float]] = {}
    # (Python floats, not NumPy's: a far-off head's pixel position overflows to inf quietly)
    sx = 1.0 / float(px[0]) if px[0] > 0 and math.isfinite(px[0]) else 100.0
    sy = 1.0 / float(px[1]) if px[1] > 0 and math.isfinite(px[1]) else 100.0
    char, height = 0.6 * size, 1.3 * size

    def box(head: tuple[float, float], chars: int, rows: int, anchor=None) -> tuple[float, float, float, float]:
        """(left, right, bottom, top) in pixels, y up, of a label placed as the plane places it: anchored
        on the side of its head away from the origin (or at ``anchor``)."""
        x, y = float(head[0]), float(head[1])  # (Python floats: an overflow is inf, quietly)
        ax, ay = anchor or _anchor(x, y)
        w, h = (chars + 1) * char, rows * height
        cx, cy = x * sx, y * sy
        return cx - ax * w, cx + (1 - ax) * w, cy - (1 - ay) * h, cy + ay * h

    def meets(a, b) -> bool:  # (inf − inf is nan, and nan compares False: far-off heads stay apart)
        return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]

    anchors: dict[tuple[float, float], tuple[float, float]] = {}
    for x, y, text, colour, bold in entries:
        mine = box((x, y), len(text), 1)
        if text == lead and (x, y) not in boxes:
            near = [h for h, b in boxes.items() if meets(mine, b)]
            if near and all(math.hypot((float(h[0]) - float(x)) * sx, (float(h[1]) - float(y)) * sy) > 2 * height
                            for h in near):
                # above its head, else below it, a line further out at a time
                for anchor in ((0.5, 1.15), (0.5, -0.15), (0.5, 2.3), (0.5, -1.3), (0.5, 3.45), (0.5, -2.45)):
                    moved = box((x, y), len(text), 1, anchor)
                    if not any(meets(moved, b) for b in boxes.values()):
                        mine = moved
                        anchors[(x, y)] = anchor
                        break
        for head, b in boxes.items():
            if (x, y) not in anchors and meets(mine, b):
                groups[head].append((text, colour, bold, (x, y)))
                rows = lines[head]
                rows[(x, y)] = rows[(x, y)] + 3 + len(text) if (x, y) in rows else len(text)  # (" = ")
                boxes[head] = box(head, max(rows.values()), len(rows))
                break
        else:
            groups[(x, y)] = [(text, colour, bold, (x, y))]
            lines[(x, y)] = {(x, y): len(text)}
            boxes[(x, y)] = mine
    return {head: _ordered(parts, lead) for head, parts in groups.items()}, anchors


def _ordered(parts: list, lead: str = "") -> list[tuple[str, str, bool, tuple[float, float]]]:
    """The parts of one label with those at one head next to each other (in order of first appearance),
    the ``lead`` part and its head first."""
    heads: dict[tuple[float, float], list] = {}
    for part in sorted(parts, key=lambda p: p[0] != lead):  # (stable: the rest keep their order)
        heads.setdefault(part[3], []).append(part)
    return [part for same in heads.values() for part in same]


def _separators(parts: list) -> list[str]:
    """Before each part: nothing, " = " (the same head as the part before: the arrows coincide) or " · "."""
    return [""] + [" = " if b[3] == a[3] else " · " for a, b in zip(parts, parts[1:])]


def _html_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

