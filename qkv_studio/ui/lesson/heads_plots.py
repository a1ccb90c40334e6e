"""The drawing of the heads panel (:class:`~qkv_studio.ui.lesson.heads_view.HeadsView`), in three parts:

* :class:`LargeHead` — the selected head's weights large: a title with its formula, the heatmap with
  the tokens on both axes, the selected query's row outlined and the weights written in the cells when
  they fit;
* :class:`SmallMultiples` — every head's weights small, the selected one framed; a click picks a head;
* :class:`HeadDetail` — the selected head's Q_i, K_i, V_i and the concatenation with its columns
  outlined (then ·W^O when the scene has an output projection).

They hold no state of the scene: the view hands each what to draw (a
:class:`~qkv_studio.core.multihead.MultiHeadResult` and the selected head) and the look (theme, font
scale, colour table).  The sizes they decide from are in :mod:`qkv_studio.render.heads_layout`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QLabel, QVBoxLayout, QWidget

from qkv_studio.core.multihead import MultiHeadResult
from qkv_studio.core.scene import Scene
from qkv_studio.render.colormaps import DIVERGING, lut
from qkv_studio.render.heads_layout import dark_text, grid_columns, subscript, symmetric_limit, tick_step
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.ui.widgets.formatting import fmt, fmt_fixed

MAX_NUMBERS = 10  # the large heatmap writes its weights in the cells up to this many tokens
BASE_PT = 10.0


def scaled_font(base: QFont, scale: float, factor: float = 1.0, bold: bool = False) -> QFont:
    """``base`` at ``BASE_PT × scale × factor`` points."""
    font = QFont(base)
    font.setPointSizeF(BASE_PT * scale * factor)
    font.setBold(bold)
    return font


def _pen(colour: str, width: float) -> QPen:
    pen = QPen(QColor(colour))
    pen.setWidthF(width)
    pen.setCosmetic(True)
    return pen


def _still_plot(plot: pg.PlotItem) -> None:
    """A plot that only shows: no mouse, no buttons, no menu, rows downwards."""
    plot.setMouseEnabled(False, False)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.invertY(True)


class LargeHead(QWidget):
    """The selected head's softmax weights, large, with the tokens and (when they fit) the numbers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme: Theme = get_theme(DEFAULT_THEME)  # (the view restyles it as it is built)
        self._scale = 1.0
        self._scene: Scene | None = None
        self._weights: np.ndarray | None = None
        self._table: np.ndarray | None = None
        self._query = 0
        self.cell_texts: list[pg.TextItem] = []

        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.graphics = pg.GraphicsLayoutWidget(self)
        self.graphics.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.plot: pg.PlotItem = self.graphics.addPlot()
        _still_plot(self.plot)
        self.plot.setAspectLocked(True, 1.0)
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        for ax in ("left", "top"):
            self.plot.getAxis(ax).setStyle(tickLength=0)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.query_box = QGraphicsRectItem()
        self.query_box.setZValue(10)
        self.plot.addItem(self.query_box, ignoreBounds=True)
        self.plot.vb.sigResized.connect(self.update_ticks)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.graphics, 1)

    def _font(self, factor: float = 1.0) -> QFont:
        return scaled_font(self.font(), self._scale, factor)

    def restyle(self, theme: Theme, scale: float) -> None:
        """Colours, fonts and pens of a theme at a font scale."""
        self._theme, self._scale = theme, scale
        self.graphics.setBackground(theme.background)
        self.title.setFont(self._font())
        for ax in ("left", "top"):
            axis = self.plot.getAxis(ax)
            axis.setStyle(tickFont=self._font(0.95), tickTextOffset=int(4 * scale))
            axis.setPen(pg.mkPen(None))
            axis.setTextPen(pg.mkPen(theme.text))
        self.query_box.setPen(_pen(theme.highlight, 2.5 * scale * theme.line_scale))

    def clear(self) -> None:
        """Nothing to show (no scene, no split)."""
        self._weights = None
        self.image.clear()
        self.query_box.hide()
        for item in self.cell_texts:
            item.hide()

    def show_head(self, scene: Scene, weights: np.ndarray, table: np.ndarray, query: int) -> None:
        """Draw ``weights`` (a head's n×n softmax) for ``scene``'s tokens with colour table ``table``."""
        self._scene, self._weights, self._table = scene, weights, table
        n, m = weights.shape
        self.image.setImage(weights, levels=(0.0, 1.0), lut=table, autoLevels=False)
        self.image.setRect(QRectF(-0.5, -0.5, m, n))
        # (both at once: with the aspect locked, a second one-axis range would cut the first axis's cells)
        self.plot.setRange(QRectF(-0.5, -0.5, m, n), padding=0.0)
        self.update_ticks()
        self.place_query(query)

    def write_title(self, head: int, d_head_k: int, compact: bool) -> None:
        """"head i: softmax(QᵢKᵢᵀ / √d), rows sum to 1" (the formula alone in a short dock)."""
        t = self._theme
        k = subscript(head)
        formula = (f"softmax(Q{k}K{k}ᵀ/√{d_head_k})" if compact else
                   f"softmax(Q{k}K{k}ᵀ / √{d_head_k}), rows sum to 1")
        self.title.setText(f"<span style='color:{t.highlight}'><b>head {head}</b></span>"
                           f"<span style='color:{t.text}'>: {formula}</span>")

    def place_query(self, query: int) -> None:
        """Outline query row ``query`` (hidden when it is not one of the rows)."""
        self._query = int(query)
        if self._weights is None:
            return
        n, m = self._weights.shape
        if 0 <= self._query < n:
            self.query_box.setRect(QRectF(-0.5, self._query - 0.5, m, 1.0))
            self.query_box.show()
        else:
            self.query_box.hide()

    def _cell_font(self, w: np.ndarray) -> QFont | None:
        """The largest of three fonts whose "0.00" fits a cell of the large heatmap (of weights ``w``), or
        None."""
        n, m = w.shape
        if n > MAX_NUMBERS or m > MAX_NUMBERS:
            return None
        vb = self.plot.vb
        cell = min(vb.width() / m, vb.height() / n) if vb.width() > 10 else 40.0 * self._scale
        for factor in (0.9, 0.75, 0.6):
            font = self._font(factor)
            fm = QFontMetricsF(font)
            if fm.horizontalAdvance("0.00") <= 0.88 * cell and fm.height() <= 0.9 * cell:
                return font
        return None

    def _update_cells(self, w: np.ndarray, table: np.ndarray) -> None:
        """The weights ``w`` written in the large heatmap's cells (in colour table ``table``) when they fit."""
        n, m = w.shape
        font = self._cell_font(w)
        show = font is not None
        needed = n * m if show else 0
        while len(self.cell_texts) < needed:
            item = pg.TextItem(anchor=(0.5, 0.5))
            item.setZValue(5)
            self.plot.addItem(item, ignoreBounds=True)
            self.cell_texts.append(item)
        if show:
            dark = dark_text(w, table)
            for k, item in enumerate(self.cell_texts[:needed]):
                a, b = divmod(k, m)
                item.setText(fmt_fixed(float(w[a, b])))
                item.setColor("#000000" if dark[a, b] else "#ffffff")
                item.setFont(font)
                item.setPos(b, a)
                item.show()
        for item in self.cell_texts[needed:]:
            item.hide()

    def update_ticks(self, *_: object) -> None:
        """Token names on both axes: the key names a little smaller when that lets every one of them
        fit, else thinned to every k-th, never overlapping."""
        w, table, s = self._weights, self._table, self._scene
        if w is None or table is None or s is None:  # (weights and table come together: show_head)
            return
        n = m = s.n
        f = self._scale
        labels = [s.token_label(j) for j in range(n)]
        font = self._font(0.95)
        fm = QFontMetricsF(font)
        widest = max(fm.horizontalAdvance(x) for x in labels)
        vb = self.plot.vb
        cell = min(vb.width() / m, vb.height() / n) if vb.width() > 10 else 0.0
        top_font = font
        if cell <= 0:
            step_y = step_x = tick_step(n, 16)
        else:
            step_y = tick_step(fm.height() * 1.05, cell)
            for factor in (0.95, 0.85, 0.75, 0.65):
                top_font = self._font(factor)
                top_widest = max(QFontMetricsF(top_font).horizontalAdvance(x) for x in labels)
                step_x = tick_step(top_widest + 4 * f, cell)
                if step_x == 1:
                    break
            if step_x > 1:
                top_font = font
                step_x = tick_step(widest + 6 * f, cell)
        left = self.plot.getAxis("left")
        left.setWidth(int(widest + 10 * f))
        left.setTicks([[(j, labels[j]) for j in range(0, n, step_y)], []])
        top = self.plot.getAxis("top")
        # a fixed height, whatever the font: a smaller font must not grow the plot and so change the fit
        top.setHeight(int(fm.height() + 6 * f))
        if top.style.get("tickFont") is None or top.style["tickFont"].pointSizeF() != top_font.pointSizeF():
            top.setStyle(tickFont=top_font)
        top.setTicks([[(j, labels[j]) for j in range(0, m, step_x)], []])
        self._update_cells(w, table)


class SmallMultiples(pg.GraphicsLayoutWidget):
    """Every head's weights small, in the grid that makes them largest; the selected one framed.

    Signals: ``head_clicked(int)`` when a head (or its label) is clicked; ``shape_changed()`` when a
    resize would give the grid another number of columns (the view then rebuilds it).
    """

    head_clicked = Signal(int)
    shape_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.boxes: list[pg.ViewBox] = []
        self.images: list[pg.ImageItem] = []
        self._frames: list[QGraphicsRectItem] = []
        self._labels: list[pg.LabelItem] = []
        self._columns = 0
        self._scale = 1.0
        self.scene().sigMouseClicked.connect(self._on_click)
        self.setToolTip("click a head to show it large")
        self.installEventFilter(self)  # re-arrange the grid when its shape changes

    def _label_size(self) -> str:
        return f"{BASE_PT * self._scale * 0.9:.0f}pt"

    def best_columns(self, h: int) -> int:
        """Columns of the grid that make each (square) head the largest."""
        label_h = QFontMetricsF(scaled_font(self.font(), self._scale, 0.9)).height() + 4
        return grid_columns(h, self.width(), self.height(), label_h)

    def build(self, h: int, theme: Theme, scale: float) -> None:
        """(Re)create ``h`` small heatmaps (0: none)."""
        self._scale = scale
        self.clear()
        self.boxes, self.images, self._labels, self._frames = [], [], [], []
        if h == 0:
            return
        cols = self._columns = self.best_columns(h)
        for i in range(h):
            row, col = divmod(i, cols)
            label = pg.LabelItem(f"head {i}", color=theme.text, size=self._label_size())
            self.addItem(label, row=2 * row, col=col)
            vb = self.addViewBox(row=2 * row + 1, col=col, lockAspect=True, enableMouse=False,
                                 invertY=True, enableMenu=False)
            img = pg.ImageItem(axisOrder="row-major")
            vb.addItem(img)
            frame = QGraphicsRectItem()
            frame.setZValue(10)
            vb.addItem(frame, ignoreBounds=True)
            self._frames.append(frame)
            self.boxes.append(vb)
            self.images.append(img)
            self._labels.append(label)

    def draw(self, result: MultiHeadResult, table: np.ndarray) -> None:
        """Every head's weights on the fixed 0–1 levels."""
        for i, img in enumerate(self.images):
            w = result.heads[i].weights
            rect = QRectF(-0.5, -0.5, w.shape[1], w.shape[0])
            img.setImage(w, levels=(0.0, 1.0), lut=table, autoLevels=False)
            img.setRect(rect)
            self._frames[i].setRect(rect)
            self.boxes[i].setRange(rect, padding=0.04)

    def mark(self, selected: int, theme: Theme, scale: float) -> None:
        """Frame and label the selected head ("▶ head i") in the highlight colour."""
        for j, frame in enumerate(self._frames):
            chosen = j == selected
            frame.setPen(_pen(theme.highlight if chosen else theme.muted,
                              (3.0 if chosen else 1.0) * scale * theme.line_scale))
            self._labels[j].setText(f"{'▶ ' if chosen else ''}head {j}",
                                    color=theme.highlight if chosen else theme.text, bold=chosen,
                                    size=self._label_size())

    def head_center(self, i: int):
        """Where head ``i``'s centre is, in viewport coordinates (a QPoint)."""
        return self.mapFromScene(self.boxes[i].sceneBoundingRect().center())

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self and event.type() == QEvent.Type.Resize and self.images:
            QTimer.singleShot(0, self, self._maybe_relayout)  # (dropped if the widget goes first)
        return super().eventFilter(obj, event)

    def _maybe_relayout(self) -> None:
        if self.images and self.best_columns(len(self.images)) != self._columns:
            self.shape_changed.emit()

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        pos = ev.scenePos()
        for i, (vb, label) in enumerate(zip(self.boxes, self._labels, strict=False)):
            if vb.sceneBoundingRect().contains(pos) or label.sceneBoundingRect().contains(pos):
                ev.accept()
                self.head_clicked.emit(i)
                return


class HeadDetail(pg.GraphicsLayoutWidget):
    """The selected head's Q_i, K_i, V_i and the concatenation (its columns outlined), then ·W^O."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ci.layout.setContentsMargins(2, 2, 2, 2)
        self._all: list[tuple[pg.PlotItem, pg.ImageItem]] = []
        self.plots: list[pg.PlotItem] = []
        self.images: list[pg.ImageItem] = []
        self._outline: QGraphicsRectItem | None = None

    def place(self, count: int) -> None:
        """Q_i, K_i, V_i, Concat (and ·W^O): made once, the fifth shown only with an output projection."""
        while len(self._all) < 5:
            p = pg.PlotItem()
            _still_plot(p)
            p.hideAxis("left")
            p.hideAxis("bottom")
            img = pg.ImageItem(axisOrder="row-major")
            p.addItem(img)
            self._all.append((p, img))
        if len(self.plots) == count:
            return
        for p in self.plots:
            self.removeItem(p)
        self.plots = [p for p, _ in self._all[:count]]
        self.images = [img for _, img in self._all[:count]]
        for c, p in enumerate(self.plots):
            self.addItem(p, row=0, col=c)

    def draw(self, r: MultiHeadResult, i: int, theme: Theme, scale: float) -> None:
        """Head ``i``'s matrices on a diverging map centred at 0, each with its shape in the title."""
        qi, ki, vi = r.head_qkv(i)
        sub = subscript(i)
        mats = [(qi, f"Q{sub} {qi.shape[0]}×{qi.shape[1]}"), (ki, f"K{sub} {ki.shape[0]}×{ki.shape[1]}"),
                (vi, f"V{sub} {vi.shape[0]}×{vi.shape[1]}"),
                (r.concat, f"Concat {r.concat.shape[0]}×{r.concat.shape[1]}")]
        if r.wo is not None:
            mats.append((r.output, f"·W<sup>O</sup> = {r.output.shape[0]}×{r.output.shape[1]}"))
        table = lut(DIVERGING)
        for (m, label), img, p in zip(mats, self.images, self.plots, strict=False):
            lim = symmetric_limit(m)
            img.setImage(np.asarray(m), levels=(-lim, lim), lut=table, autoLevels=False)
            img.setRect(QRectF(-0.5, -0.5, m.shape[1], m.shape[0]))
            p.setXRange(-0.5, m.shape[1] - 0.5, padding=0.02)
            p.setYRange(-0.5, m.shape[0] - 0.5, padding=0.02)
            p.setTitle(label, color=theme.text, size=f"{BASE_PT * scale * 0.9:.0f}pt")
            img.setToolTip(f"{label}: largest |value| {fmt(lim)} (blue negative, yellow positive)")
        # the selected head's block of columns in the concatenation
        cat = self.plots[3]
        if self._outline is None:
            self._outline = QGraphicsRectItem()
            self._outline.setZValue(10)
            cat.addItem(self._outline, ignoreBounds=True)
        cols = r.head_columns(i, "v")
        self._outline.setRect(QRectF(cols.start - 0.5, -0.5, cols.stop - cols.start, r.concat.shape[0]))
        self._outline.setPen(_pen(theme.highlight, 2.5 * scale * theme.line_scale))
