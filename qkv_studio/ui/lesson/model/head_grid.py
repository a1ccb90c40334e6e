"""The small multiples of the Real model panel: one layer's heads as little heatmaps, click one to choose it.

Each head's n×n softmax weights are drawn on the fixed 0–1 scale of the heatmap, one pixel per cell,
scaled without smoothing; the chosen head is framed in the theme's highlight colour.  With grouped-query
attention (``set_kv_group(g)``, g > 1) each label names the K/V head it reads ("head 4 · kv 1"), and the
heads sharing the chosen head's K/V head are underlined.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QKeyEvent, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, lut
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance


def _weights_image(weights: np.ndarray, table: np.ndarray) -> QImage:
    """An n×n RGBA image of weights on the fixed 0–1 scale (one pixel per cell)."""
    idx = np.clip(np.rint(np.asarray(weights) * (len(table) - 1)), 0, len(table) - 1).astype(np.intp)
    rgba = np.ascontiguousarray(table[idx])
    h, w = rgba.shape[:2]
    img = QImage(rgba.data, w, h, 4 * w, QImage.Format.Format_RGBA8888)
    return img.copy()  # own the pixels (rgba goes away)


class HeadGrid(FollowsAppearance, QWidget):
    """The heads of one layer as small heatmaps; click (or arrow keys) to choose one.

    Images are built when the data change (``set_weights``), never in ``paintEvent``.
    """

    head_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._cmap = DEFAULT_SEQUENTIAL
        self._weights: np.ndarray | None = None  # heads × n × n
        self._images: list[QImage] = []
        self._selected = 0
        self._font_scale = 1.0
        self._n_heads = 12
        self._kv_group = 1  # query heads per K/V head (grouped-query attention when > 1)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(120, 90)  # (scaled down in a narrow panel: a 1024-px window)

    # ---- data ------------------------------------------------------------------------------------
    def set_weights(self, weights: np.ndarray | None) -> None:
        """The weights of one layer's heads (heads × n × n), or None for an empty grid."""
        self._weights = None if weights is None else np.asarray(weights)
        if self._weights is not None:
            self._n_heads = int(self._weights.shape[0])
        self._rebuild()

    def set_head_count(self, n: int) -> None:
        """How many (empty) thumbnails to lay out before there are weights: the model's head count."""
        if self._weights is None and int(n) != self._n_heads:
            self._n_heads = int(n)
            self.update()

    def set_kv_group(self, group: int) -> None:
        """How many query heads share one K/V head (1: none share)."""
        group = max(1, int(group))
        if group != self._kv_group:
            self._kv_group = group
            self.update()

    def kv_head(self, head: int) -> int:
        """The K/V head a query head reads."""
        return int(head) // self._kv_group

    def shares_kv(self, head: int) -> bool:
        """True when ``head`` reads the chosen head's K/V head and K/V heads are shared."""
        return self._kv_group > 1 and self.kv_head(head) == self.kv_head(self._selected)

    def set_selected(self, head: int) -> None:
        if head != self._selected:
            self._selected = int(head)
            self.update()

    def selected(self) -> int:
        return self._selected

    # ---- look (see FollowsAppearance) ---------------------------------------------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.update()

    def _restyle_colormap(self, name: str) -> None:
        self._cmap = name
        self._rebuild()

    def _restyle_scale(self, f: float) -> None:
        self._font_scale = float(f)
        self.update()

    def _rebuild(self) -> None:
        table = lut(self._cmap)
        self._images = [] if self._weights is None else [_weights_image(w, table) for w in self._weights]
        self.update()

    # ---- geometry --------------------------------------------------------------------------------
    def _label_h(self) -> float:
        return QFontMetricsF(self._label_font()).height() + 2

    def _label_font(self) -> QFont:
        f = QFont(self.font())
        return f

    def _grid(self) -> tuple[int, int, float]:
        """(columns, rows, square side) that make the thumbnails largest in the current size."""
        n = self._n_heads
        best = (4, 3, 0.0)
        gap, lab = 6.0, self._label_h()
        for cols in range(1, n + 1):
            rows = -(-n // cols)
            side = min((self.width() - gap * (cols + 1)) / cols, (self.height() - gap * (rows + 1)) / rows - lab)
            if side > best[2]:
                best = (cols, rows, side)
        return best

    def head_rect(self, head: int) -> QRectF:
        """Where a head's thumbnail is drawn (widget coordinates)."""
        cols, rows, side = self._grid()
        side = max(side, 4.0)
        gap, lab = 6.0, self._label_h()
        total_w = cols * side + (cols + 1) * gap
        x0 = max(0.0, (self.width() - total_w) / 2)
        r, c = divmod(head, cols)
        return QRectF(x0 + gap + c * (side + gap), gap + r * (side + gap + lab) + lab, side, side)

    def head_at(self, pos: QPointF) -> int | None:
        for h in range(self._n_heads):
            rect = self.head_rect(h)
            if rect.adjusted(-3, -self._label_h(), 3, 3).contains(pos):
                return h
        return None

    def head_label(self, head: int) -> tuple[str, QFont]:
        """The text and font of a thumbnail's label: "head 3" if it fits over it, else "3", else "10" in a
        font small enough that neighbours never run into each other."""
        font = QFont(self._label_font())
        font.setBold(head == self._selected)
        fm = QFontMetricsF(font)
        width = self.head_rect(head).width()
        if self._kv_group > 1:
            kv = self.kv_head(head)
            text = next((t for t in (f"head {head} · kv {kv}", f"{head} · kv {kv}") if fm.horizontalAdvance(t)
                         <= width + 4), f"{head}·{kv}")
        else:
            text = f"head {head}" if fm.horizontalAdvance(f"head {head}") <= width + 4 else str(head)
        room = width + 5.0  # the thumbnail and most of the gap beside it
        if fm.horizontalAdvance(text) > room:
            font.setPointSizeF(max(1.0, font.pointSizeF() * room / fm.horizontalAdvance(text)))
        return text, font

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(420, 330)

    # ---- events ----------------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:  # noqa: N802
        h = self.head_at(event.position())
        if h is not None and event.button() == Qt.MouseButton.LeftButton:
            self.head_clicked.emit(h)
            event.accept()
            return
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        cols = self._grid()[0]
        step = {Qt.Key.Key_Left.value: -1, Qt.Key.Key_Right.value: 1, Qt.Key.Key_Up.value: -cols,
                Qt.Key.Key_Down.value: cols}  # (by value: QKeyEvent.key() is an int)
        delta = step.get(event.key())
        if delta is not None and 0 <= self._selected + delta < self._n_heads:
            self.head_clicked.emit(self._selected + delta)
            event.accept()
            return
        super().keyPressEvent(event)

    def paintEvent(self, event) -> None:  # noqa: N802
        t = self._theme
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(t.background))
        p.setFont(self._label_font())
        lab = self._label_h()
        line = max(1.0, self._font_scale * t.line_scale)
        for h in range(self._n_heads):
            rect = self.head_rect(h)
            label_rect = QRectF(rect.left(), rect.top() - lab, rect.width(), lab)
            sel = h == self._selected
            p.setPen(QColor(t.highlight if sel else t.text))
            text, font = self.head_label(h)
            p.setFont(font)
            p.drawText(label_rect, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, text)
            if h < len(self._images):
                p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
                p.drawImage(rect, self._images[h])
            else:
                p.fillRect(rect, QColor(t.panel))
            if self.shares_kv(h):  # reads the same K/V head as the chosen one: a bar under it
                p.fillRect(QRectF(rect.left(), rect.bottom() + 3, rect.width(), max(2.0, 2 * min(line, 2.0))),
                           QColor(t.highlight))
            pen = QPen(QColor(t.highlight if sel else t.grid), (3.0 if sel else 1.0) * min(line, 2.0))
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect.adjusted(-pen.widthF() / 2, -pen.widthF() / 2, pen.widthF() / 2, pen.widthF() / 2))
        if self.hasFocus():
            p.setPen(QPen(QColor(t.accent), 1, Qt.PenStyle.DotLine))
            p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        p.end()
