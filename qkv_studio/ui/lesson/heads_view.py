"""Multi-head attention: every head's weights as small multiples, one selected and shown large.

The scene's W^Q, W^K, W^V (projection mode; in direct mode its Q, K, V, which is the same thing) are
split column-wise into h heads — the scene's own ``heads`` (and its output projection ``wo``) unless
told otherwise.  Heads are counted from 0 (head 0, Q₀ …), as on the command line (``--head N``) and
in the real-model panel.  Each head runs ordinary attention on its own slice, so each has its
own softmax weights: drawn here as one small heatmap per head (fixed 0–1 levels on the sequential
colormap), the selected one large with the tokens, and under it that head's Q_i, K_i, V_i and the
concatenated output with the head's columns outlined (then ·W^O when an output projection is given).

With a Session (``HeadsView(scene, session=s)``) a new count in the spin box is an undoable edit of
the scene (``Scene.with_heads``, "Heads: 4" in the Edit menu); the window then hands the new scene
back through ``set_scene``, which follows its ``heads``.  Without one the count is the view's own.

Public API: ``set_scene(scene, heads=None, wo=None)``, ``set_heads(h)``, ``select_head(i)``; signals
``head_selected(int)`` and ``heads_changed(int)``.  Drawn in the look of the
:class:`~qkv_studio.state.appearance.Appearance` it is bound to (``appearance=`` or ``bind_appearance``).
Test hooks: ``heads_spin``, ``graphics`` (the small multiples), ``small_images``, ``big_image``,
``detail_images``, ``title``, ``message``, ``result()``, ``selected()``, ``heads()``,
``head_center(i)`` (viewport coordinates of ``graphics``).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPalette, QPen
from PySide6.QtWidgets import (
    QGraphicsRectItem,
    QBoxLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from qkv_studio.core.multihead import MAX_HEADS, MIN_HEADS, MultiHeadResult, multihead_scene, valid_heads
from qkv_studio.core.scene import Scene, nearest_heads
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, DIVERGING, lut, text_is_dark
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.formatting import fmt, fmt_fixed

MAX_NUMBERS = 10  # the large heatmap writes its weights in the cells up to this many tokens
_BASE_PT = 10.0


class _HeadsSpin(QSpinBox):
    """1–16 heads; the arrows and keys step straight to the next count that splits the widths."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setRange(MIN_HEADS, MAX_HEADS)
        self.allowed: list[int] = list(range(MIN_HEADS, MAX_HEADS + 1))

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt's name
        v = self.value()
        for _ in range(abs(steps)):
            nxt = [a for a in self.allowed if (a > v if steps > 0 else a < v)]
            if not nxt:
                break
            v = min(nxt) if steps > 0 else max(nxt)
        self.setValue(v)

    def stepEnabled(self):  # noqa: N802 - Qt's name
        v = self.value()
        flags = QSpinBox.StepEnabledFlag.StepNone
        if any(a > v for a in self.allowed):
            flags |= QSpinBox.StepEnabledFlag.StepUpEnabled
        if any(a < v for a in self.allowed):
            flags |= QSpinBox.StepEnabledFlag.StepDownEnabled
        return flags


def _sub(i: int) -> str:
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


class HeadsView(FollowsAppearance, QWidget):
    """All heads' attention weights as small multiples; click one to see it large with its Q, K, V.

    Signals: ``head_selected(int)`` when another head (0-based) is shown large; ``heads_changed(int)``
    when the head count was changed in the view (the spin box or :meth:`set_heads`).
    """

    head_selected = Signal(int)
    heads_changed = Signal(int)

    def __init__(self, scene: Scene | None = None, parent: QWidget | None = None, *, heads: int = 2,
                 session=None, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session  # a qkv_studio.state.session.Session: head counts become undoable scene edits
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._cmap = DEFAULT_SEQUENTIAL
        self._font_scale = 1.0
        self._scene: Scene | None = None
        self._wo: np.ndarray | None = None
        self._heads = int(heads)
        self._selected = 0
        self._result: MultiHeadResult | None = None
        self._error = ""
        self._query = 0
        self._stale = False  # a scene arrived while hidden: computed when shown (or asked for)
        self._built: tuple | None = None  # (heads, tokens, with W^O) the plots were made for
        self.small_boxes: list[pg.ViewBox] = []
        self.small_images: list[pg.ImageItem] = []
        self._frames: list[QGraphicsRectItem] = []
        self._columns = 0
        self._small_labels: list[pg.LabelItem] = []
        self._cell_texts: list[pg.TextItem] = []
        self._all_detail: list[tuple[pg.PlotItem, pg.ImageItem]] = []
        self._detail_plots: list[pg.PlotItem] = []
        self.detail_images: list[pg.ImageItem] = []
        self._outline: QGraphicsRectItem | None = None
        self._compact = False  # short titles in a short dock

        # ---- header ----------------------------------------------------------------------------------
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.message = QLabel(self)  # a head count that does not split the widths, or no scene
        self.message.setWordWrap(True)
        self.message.hide()
        self.heads_label = QLabel("heads")
        self.heads_spin = _HeadsSpin(self)
        self.heads_spin.setValue(self._heads)
        self.heads_spin.setToolTip("number of heads h: W<sup>Q</sup>, W<sup>K</sup>, W<sup>V</sup> are split into h blocks of columns")
        self.heads_spin.setKeyboardTracking(False)
        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.heads_label)
        header.addWidget(self.heads_spin)

        # ---- the selected head large ------------------------------------------------------------------
        self.big_title = QLabel(self)
        self.big_title.setTextFormat(Qt.TextFormat.RichText)
        self.big_title.setWordWrap(True)
        self.big_title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.big_graphics = pg.GraphicsLayoutWidget(self)
        self.big_graphics.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.big_plot: pg.PlotItem = self.big_graphics.addPlot()
        self.big_plot.setMouseEnabled(False, False)
        self.big_plot.hideButtons()
        self.big_plot.setMenuEnabled(False)
        self.big_plot.invertY(True)
        self.big_plot.setAspectLocked(True, 1.0)
        self.big_plot.showAxis("top")
        self.big_plot.hideAxis("bottom")
        for ax in ("left", "top"):
            self.big_plot.getAxis(ax).setStyle(tickLength=0)
        self.big_image = pg.ImageItem(axisOrder="row-major")
        self.big_plot.addItem(self.big_image)
        self._query_box = QGraphicsRectItem()
        self._query_box.setZValue(10)
        self.big_plot.addItem(self._query_box, ignoreBounds=True)
        self.big_plot.vb.sigResized.connect(self._update_ticks)

        # ---- all heads, small -------------------------------------------------------------------------
        self.graphics = pg.GraphicsLayoutWidget(self)
        self.graphics.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.graphics.scene().sigMouseClicked.connect(self._on_click)
        self.graphics.setToolTip("click a head to show it large")
        self.graphics.installEventFilter(self)  # re-arrange the grid when its shape changes

        # ---- the selected head's Q, K, V and the concatenation -----------------------------------------
        self.detail = pg.GraphicsLayoutWidget(self)
        self.detail.ci.layout.setContentsMargins(2, 2, 2, 2)

        big = QVBoxLayout()
        big.setSpacing(0)
        big.addWidget(self.big_title)
        big.addWidget(self.big_graphics, 1)
        middle = self._middle = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        middle.setSpacing(4)
        middle.addLayout(big, 3)
        middle.addWidget(self.graphics, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self.message)
        layout.addLayout(middle, 3)
        layout.addWidget(self.detail, 1)

        self.heads_spin.valueChanged.connect(self.set_heads)
        self._restyle_theme(self._theme)
        if scene is not None:
            self.set_scene(scene)
        else:
            self._compute()
        self.bind_appearance(appearance)

    # ---- public API -------------------------------------------------------------------------------
    def set_scene(self, scene: Scene, heads: int | None = None, wo: np.ndarray | None = None) -> None:
        """Show a scene split into heads: ``heads`` (None: the scene's own) with W^O ``wo`` (None: the
        scene's own, if any)."""
        self._scene = scene
        wo = scene.wo if wo is None else wo
        self._wo = None if wo is None else np.asarray(wo, dtype=np.float64)
        self._heads = int(scene.heads if heads is None else heads)
        q, _, v = scene.qkv()
        allowed = valid_heads(q.shape[1], v.shape[1])
        self.heads_spin.allowed = allowed
        if self._heads not in allowed:  # e.g. a new scene of another width: the nearest count that splits it
            self._heads = nearest_heads(self._heads, q.shape[1], v.shape[1])
        self.heads_spin.blockSignals(True)
        self.heads_spin.setValue(self._heads)
        self.heads_spin.blockSignals(False)
        if self.isVisible():
            self._compute()
        else:  # a hidden dock does no work on every edit
            self._stale = True

    def set_query(self, index: int) -> None:
        """Outline query row ``index`` in the large heatmap (the window's selected token)."""
        self._query = int(index)
        if self._result is not None and not self._stale:
            self._place_query_box()

    def set_heads(self, heads: int) -> None:
        """Split into ``heads`` heads; a count that does not divide the widths is explained, not shown."""
        heads = int(heads)
        if self.heads_spin.value() != heads:
            self.heads_spin.setValue(heads)  # comes back here through valueChanged
            return
        before = self._heads
        self._heads = heads
        self._compute()
        if self._result is not None and self._heads != before and not self._error:
            self.heads_changed.emit(self._heads)
            self._edit_scene(heads)

    def _edit_scene(self, heads: int) -> None:
        """The new count as an undoable edit of the session's scene (when bound to a Session)."""
        s = self._session
        if s is None or s.scene.heads == heads:
            return
        s.edit(lambda scene: scene.with_heads(heads), f"Heads: {heads}")

    def select_head(self, i: int) -> None:
        """Show head ``i`` (0-based) large; emits ``head_selected``."""
        if self._result is None:
            return
        i = int(max(0, min(self._result.h - 1, i)))
        changed = i != self._selected
        self._selected = i
        self._draw_selection()
        if changed:
            self.head_selected.emit(i)

    def selected(self) -> int:
        return self._selected

    def heads(self) -> int:
        return self._heads

    def result(self) -> MultiHeadResult | None:
        if self._stale:
            self._compute()
        return self._result

    # ---- look (see FollowsAppearance) ---------------------------------------------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        """Colours and line widths of a theme."""
        self._theme = theme
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, QColor(theme.background))
        pal.setColor(QPalette.ColorRole.WindowText, QColor(theme.text))
        self.setPalette(pal)
        self.setAutoFillBackground(True)
        for g in (self.big_graphics, self.graphics, self.detail):
            g.setBackground(theme.background)
        self._style()

    def _restyle_scale(self, f: float) -> None:
        """Scale every font and pen width (zoom, projector)."""
        self._font_scale = f
        self._style()

    def _restyle_colormap(self, name: str) -> None:
        """The sequential colormap of the weights."""
        self._cmap = name
        self._draw_all()

    # ---- test hooks -----------------------------------------------------------------------------------
    def head_center(self, i: int):
        """Where small head ``i``'s centre is, in the viewport coordinates of ``graphics`` (a QPoint)."""
        rect = self.small_boxes[i].sceneBoundingRect()
        return self.graphics.mapFromScene(rect.center())

    def cell_texts(self) -> list[str]:
        return [t.toPlainText() for t in self._cell_texts if t.isVisible()]

    # ---- computing ----------------------------------------------------------------------------------
    def _compute(self) -> None:
        if self._scene is None:
            self._result = None
            self._error = "No scene yet: open one (the multihead preset splits d_model = 8 into 2 heads)."
        else:
            try:
                self._result = multihead_scene(self._scene, self._heads, self._wo)
                self._error = ""
            except ValueError as exc:  # e.g. 3 heads typed for d_k = 8: say why, keep showing the last split
                self._error = str(exc)
        self._stale = False
        selected = self._selected
        if self._result is not None:
            self._selected = min(self._selected, self._result.h - 1)
        r = self._result
        key = None if r is None else (r.h, r.heads[0].weights.shape, r.wo is not None)
        if key is not None and key == self._built:  # same plots: only new numbers (an edit, a drag)
            self._show_message()
            self._draw_all()
        else:
            self._rebuild()
        if self._selected != selected:  # fewer heads than the selected one: the last is selected now
            self.head_selected.emit(self._selected)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._stale:
            self._compute()

    def _show_message(self) -> None:
        self.message.setVisible(bool(self._error))
        self.message.setText(self._error)

    # ---- drawing ------------------------------------------------------------------------------------
    def _font(self, factor: float = 1.0, bold: bool = False) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(_BASE_PT * self._font_scale * factor)
        font.setBold(bold)
        return font

    def _style(self) -> None:
        t = self._theme
        f = self._font_scale
        base = self._font()
        for w in (self.title, self.heads_label, self.heads_spin, self.message, self.big_title):
            w.setFont(base)
        self.message.setStyleSheet(f"color: {t.highlight}; font-weight: bold;")
        fm = QFontMetricsF(base)
        self.detail.setMinimumHeight(int(fm.height() * 1.6 + 70 * f))
        self._adapt()
        self.heads_spin.setMinimumSize(int(fm.horizontalAdvance("16") + 40 * f), int(fm.height() + 10 * f))
        tick_font = self._font(0.95)
        for ax in ("left", "top"):
            axis = self.big_plot.getAxis(ax)
            axis.setStyle(tickFont=tick_font, tickTextOffset=int(4 * f))
            axis.setPen(pg.mkPen(None))
            axis.setTextPen(pg.mkPen(t.text))
        pen = QPen(QColor(t.highlight))
        pen.setWidthF(2.5 * f * t.line_scale)
        pen.setCosmetic(True)
        self._query_box.setPen(pen)
        self._rebuild()

    def _rebuild(self) -> None:
        """(Re)create the small multiples and detail plots for the current head count, then draw."""
        self.graphics.clear()
        self.small_boxes, self.small_images, self._small_labels, self._frames = [], [], [], []
        self._built = None
        self._show_message()
        r = self._result
        if r is None:
            self.big_image.clear()
            self._query_box.hide()
            for item in self._cell_texts:
                item.hide()
            self._write_title()
            return
        t = self._theme
        h = r.h
        cols = self._columns = self._best_columns(h)
        for i in range(h):
            row, col = divmod(i, cols)
            label = pg.LabelItem(f"head {i}", color=t.text, size=f"{_BASE_PT * self._font_scale * 0.9:.0f}pt")
            self.graphics.addItem(label, row=2 * row, col=col)
            vb = self.graphics.addViewBox(row=2 * row + 1, col=col, lockAspect=True, enableMouse=False,
                                          invertY=True, enableMenu=False)
            img = pg.ImageItem(axisOrder="row-major")
            vb.addItem(img)
            frame = QGraphicsRectItem()
            frame.setZValue(10)
            vb.addItem(frame, ignoreBounds=True)
            self._frames.append(frame)
            self.small_boxes.append(vb)
            self.small_images.append(img)
            self._small_labels.append(label)
        self._place_detail(5 if r.wo is not None else 4)
        self._built = (r.h, r.heads[0].weights.shape, r.wo is not None)
        self._draw_all()

    def _place_detail(self, count: int) -> None:
        """Q_i, K_i, V_i, Concat (and ·W^O): made once, the fifth shown only with an output projection."""
        while len(self._all_detail) < 5:
            p = pg.PlotItem()
            p.setMouseEnabled(False, False)
            p.hideButtons()
            p.setMenuEnabled(False)
            p.invertY(True)
            p.hideAxis("left")
            p.hideAxis("bottom")
            img = pg.ImageItem(axisOrder="row-major")
            p.addItem(img)
            self._all_detail.append((p, img))
        if len(self._detail_plots) == count:
            return
        for p in self._detail_plots:
            self.detail.removeItem(p)
        self._detail_plots = [p for p, _ in self._all_detail[:count]]
        self.detail_images = [img for _, img in self._all_detail[:count]]
        for c, p in enumerate(self._detail_plots):
            self.detail.addItem(p, row=0, col=c)

    def _draw_all(self) -> None:
        r = self._result
        if r is None or len(self.small_images) != r.h:
            return
        table = lut(self._cmap)
        for i, img in enumerate(self.small_images):
            w = r.heads[i].weights
            img.setImage(w, levels=(0.0, 1.0), lut=table, autoLevels=False)
            img.setRect(QRectF(-0.5, -0.5, w.shape[1], w.shape[0]))
            self._frames[i].setRect(QRectF(-0.5, -0.5, w.shape[1], w.shape[0]))
            self.small_boxes[i].setRange(QRectF(-0.5, -0.5, w.shape[1], w.shape[0]), padding=0.04)
        self._draw_selection()

    def _draw_selection(self) -> None:
        r = self._result
        if r is None or len(self.small_images) != r.h:
            return
        t = self._theme
        f = self._font_scale
        i = self._selected
        for j, frame in enumerate(self._frames):
            chosen = j == i
            pen = QPen(QColor(t.highlight if chosen else t.muted))
            pen.setWidthF((3.0 if chosen else 1.0) * f * t.line_scale)
            pen.setCosmetic(True)
            frame.setPen(pen)
            self._small_labels[j].setText(f"{'▶ ' if chosen else ''}head {j}",
                                          color=t.highlight if chosen else t.text, bold=chosen,
                                          size=f"{_BASE_PT * f * 0.9:.0f}pt")
        self._draw_big()
        self._draw_detail()
        self._write_title()

    def _draw_big(self) -> None:
        r = self._result
        t = self._theme
        w = r.heads[self._selected].weights
        n, m = w.shape
        table = lut(self._cmap)
        self.big_image.setImage(w, levels=(0.0, 1.0), lut=table, autoLevels=False)
        self.big_image.setRect(QRectF(-0.5, -0.5, m, n))
        self.big_plot.setXRange(-0.5, m - 0.5, padding=0.0)
        self.big_plot.setYRange(-0.5, n - 0.5, padding=0.0)
        self._update_ticks()
        self._write_big_title()
        self._place_query_box()

    def _write_big_title(self) -> None:
        r = self._result
        if r is None:
            return
        t = self._theme
        k = _sub(self._selected)
        formula = (f"softmax(Q{k}K{k}ᵀ/√{r.d_head_k})" if self._compact else
                   f"softmax(Q{k}K{k}ᵀ / √{r.d_head_k}), rows sum to 1")
        self.big_title.setText(f"<span style='color:{t.highlight}'><b>head {self._selected}</b></span>"
                               f"<span style='color:{t.text}'>: {formula}</span>")

    def _place_query_box(self) -> None:
        n, m = self._result.heads[self._selected].weights.shape
        if 0 <= self._query < n:
            self._query_box.setRect(QRectF(-0.5, self._query - 0.5, m, 1.0))
            self._query_box.show()
        else:
            self._query_box.hide()

    def _cell_font(self) -> QFont | None:
        """The largest of two fonts whose "0.00" fits a cell of the large heatmap, or None."""
        r = self._result
        n, m = r.heads[self._selected].weights.shape
        if n > MAX_NUMBERS or m > MAX_NUMBERS:
            return None
        vb = self.big_plot.vb
        cell = min(vb.width() / m, vb.height() / n) if vb.width() > 10 else 40.0 * self._font_scale
        for factor in (0.9, 0.75, 0.6):
            font = self._font(factor)
            fm = QFontMetricsF(font)
            if fm.horizontalAdvance("0.00") <= 0.88 * cell and fm.height() <= 0.9 * cell:
                return font
        return None

    def _update_cells(self) -> None:
        """The weights written in the large heatmap's cells when they fit."""
        r = self._result
        if r is None:
            return
        w = r.heads[self._selected].weights
        n, m = w.shape
        table = lut(self._cmap)
        font = self._cell_font()
        show = font is not None
        needed = n * m if show else 0
        while len(self._cell_texts) < needed:
            item = pg.TextItem(anchor=(0.5, 0.5))
            item.setZValue(5)
            self.big_plot.addItem(item, ignoreBounds=True)
            self._cell_texts.append(item)
        if show:
            rgba = table[np.clip((w * (len(table) - 1)).round().astype(int), 0, len(table) - 1)]
            dark = text_is_dark(rgba)
            for k, item in enumerate(self._cell_texts[:needed]):
                a, b = divmod(k, m)
                item.setText(fmt_fixed(float(w[a, b])))
                item.setColor("#000000" if dark[a, b] else "#ffffff")
                item.setFont(font)
                item.setPos(b, a)
                item.show()
        for item in self._cell_texts[needed:]:
            item.hide()

    def _update_ticks(self, *_: object) -> None:
        """Token names on both axes of the large heatmap: the key names a little smaller when that lets every
        one of them fit, else thinned to every k-th, never overlapping."""
        if self._result is None or self._scene is None:
            return
        s = self._scene
        n = m = s.n
        labels = [s.token_label(j) for j in range(n)]
        font = self._font(0.95)
        fm = QFontMetricsF(font)
        widest = max(fm.horizontalAdvance(x) for x in labels)
        vb = self.big_plot.vb
        cell = min(vb.width() / m, vb.height() / n) if vb.width() > 10 else 0.0
        top_font = font
        if cell <= 0:
            step_y = step_x = max(1, math.ceil(n / 16))
        else:
            step_y = max(1, math.ceil(fm.height() * 1.05 / cell))
            for factor in (0.95, 0.85, 0.75, 0.65):
                top_font = self._font(factor)
                top_widest = max(QFontMetricsF(top_font).horizontalAdvance(x) for x in labels)
                step_x = max(1, math.ceil((top_widest + 4 * self._font_scale) / cell))
                if step_x == 1:
                    break
            if step_x > 1:
                top_font = font
                step_x = max(1, math.ceil((widest + 6 * self._font_scale) / cell))
        left = self.big_plot.getAxis("left")
        left.setWidth(int(widest + 10 * self._font_scale))
        left.setTicks([[(j, labels[j]) for j in range(0, n, step_y)], []])
        top = self.big_plot.getAxis("top")
        # a fixed height, whatever the font: a smaller font must not grow the plot and so change the fit
        top.setHeight(int(fm.height() + 6 * self._font_scale))
        if top.style.get("tickFont") is None or top.style["tickFont"].pointSizeF() != top_font.pointSizeF():
            top.setStyle(tickFont=top_font)
        top.setTicks([[(j, labels[j]) for j in range(0, m, step_x)], []])
        self._update_cells()

    def _best_columns(self, h: int) -> int:
        """Columns of the small-multiples grid that make each (square) head the largest."""
        w, ht = max(self.graphics.width(), 1), max(self.graphics.height(), 1)
        label_h = QFontMetricsF(self._font(0.9)).height() + 4

        def side(c: int) -> float:
            rows = math.ceil(h / c)
            return min(w / c, ht / rows - label_h)

        return max(range(1, h + 1), key=lambda c: (side(c), -c))

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.graphics and event.type() == QEvent.Type.Resize and self._result is not None:
            QTimer.singleShot(0, self._maybe_relayout)
        return super().eventFilter(obj, event)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._adapt()

    def _adapt(self) -> None:
        """Fit the dock's shape: heads beside the large one when wide, below it when tall and narrow; the
        Q/K/V strip only when there is height to spare (the weights come first)."""
        w, h = self.width(), self.height()
        direction = (QBoxLayout.Direction.TopToBottom if w < 0.9 * h else QBoxLayout.Direction.LeftToRight)
        if self._middle.direction() != direction:
            self._middle.setDirection(direction)
        self.detail.setVisible(h >= 480 * self._font_scale)
        compact = h < 640 * self._font_scale
        if compact != self._compact:
            self._compact = compact
            self._middle.setStretch(0, 2 if compact else 3)  # the large head first when room is short
            self._middle.setStretch(1, 1 if compact else 2)
            self._write_title()
            self._write_big_title()

    def _maybe_relayout(self) -> None:
        if self._result is not None and self._best_columns(self._result.h) != self._columns:
            self._rebuild()

    def _draw_detail(self) -> None:
        r = self._result
        t = self._theme
        f = self._font_scale
        i = self._selected
        qi, ki, vi = r.head_qkv(i)
        sub = _sub(i)
        mats = [(qi, f"Q{sub} {qi.shape[0]}×{qi.shape[1]}"), (ki, f"K{sub} {ki.shape[0]}×{ki.shape[1]}"),
                (vi, f"V{sub} {vi.shape[0]}×{vi.shape[1]}"),
                (r.concat, f"Concat {r.concat.shape[0]}×{r.concat.shape[1]}")]
        if r.wo is not None:
            mats.append((r.output, f"·W<sup>O</sup> = {r.output.shape[0]}×{r.output.shape[1]}"))
        table = lut(DIVERGING)
        for (m, label), img, p in zip(mats, self.detail_images, self._detail_plots):
            lim = float(np.max(np.abs(m))) if m.size else 1.0
            lim = lim if lim > 0 and np.isfinite(lim) else 1.0
            img.setImage(np.asarray(m), levels=(-lim, lim), lut=table, autoLevels=False)
            img.setRect(QRectF(-0.5, -0.5, m.shape[1], m.shape[0]))
            p.setXRange(-0.5, m.shape[1] - 0.5, padding=0.02)
            p.setYRange(-0.5, m.shape[0] - 0.5, padding=0.02)
            p.setTitle(label, color=t.text, size=f"{_BASE_PT * f * 0.9:.0f}pt")
            img.setToolTip(f"{label}: largest |value| {fmt(lim)} (blue negative, yellow positive)")
        # the selected head's block of columns in the concatenation
        cat = self._detail_plots[3]
        if self._outline is None:
            self._outline = QGraphicsRectItem()
            self._outline.setZValue(10)
            cat.addItem(self._outline, ignoreBounds=True)
        cols = r.head_columns(i, "v")
        self._outline.setRect(QRectF(cols.start - 0.5, -0.5, cols.stop - cols.start, r.concat.shape[0]))
        pen = QPen(QColor(t.highlight))
        pen.setWidthF(2.5 * f * t.line_scale)
        pen.setCosmetic(True)
        self._outline.setPen(pen)

    def _write_title(self) -> None:
        t = self._theme
        r = self._result
        s = self._scene
        if r is None:
            self.title.setText(f"<span style='color:{t.text}'><b>Multi-head attention</b></span>")
            return
        source = (f"d<sub>model</sub> = {s.d_model}: W<sup>Q</sup>, W<sup>K</sup> {s.d_model}×{r.q.shape[1]}"
                  if s.mode == "projection" else f"Q, K {r.q.shape[0]}×{r.q.shape[1]}")
        per = f"{r.d_head_k}" + (f" (values {r.d_head_v})" if r.d_head_v != r.d_head_k else "")
        wo = " · W<sup>O</sup>" if r.wo is not None else ""
        heads = f"<b>{r.h} head{'s' if r.h != 1 else ''}</b>"
        if self._compact:  # a short dock (the projector): one line, the weights get the room
            self.title.setText(f"<span style='color:{t.text}'>{heads} × {per} columns</span>")
            return
        self.title.setText(
            f"<span style='color:{t.text}'>{heads} — {source} split into {r.h} × {per} columns; each head attends "
            f"on its own, then Concat(head<sub>0</sub>…head<sub>{r.h - 1}</sub>){wo}. Click a head.</span>")

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton or self._result is None:
            return
        pos = ev.scenePos()
        for i, (vb, label) in enumerate(zip(self.small_boxes, self._small_labels)):
            if vb.sceneBoundingRect().contains(pos) or label.sceneBoundingRect().contains(pos):
                self.select_head(i)
                ev.accept()
                return

