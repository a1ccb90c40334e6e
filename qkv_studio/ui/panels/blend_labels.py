"""The blend's labels: each bar's weight above it, and the value arrows' names among them.

Both leave a label out rather than draw it over another, taking the largest weights first
(:func:`~qkv_studio.render.label_layout.spaced` for the bars' row, :func:`~qkv_studio.render.label_layout.placed`
for the names in the plane of the values).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QStaticText, QTransform

from qkv_studio.render.label_layout import Box, placed, spaced
from qkv_studio.ui.panels.plane.labels import anchor_of


class BarValueLabels(pg.GraphicsObject):
    """Each bar's weight written above it, all drawn in one paint from laid-out static texts.

    (A pg.TextItem per bar re-lays out its text document on every new number: sixteen of them cost
    ~4 ms an edit.)  Positions are in data coordinates; the text keeps its pixel size.  Only labels that
    fit side by side are drawn (:func:`~qkv_studio.render.label_layout.spaced`): all of them, a little
    smaller if need be (down to :data:`SMALLEST` of the size), else at that size the largest weights
    first — never two over each other.  A label that would stand above the plot's top is drawn inside
    it, on a backing of the plot's colour, over its bar.
    """

    SMALLEST = 0.7  # of the style's size: the legible floor before labels are left out

    def __init__(self) -> None:
        super().__init__()
        self._labels: list[tuple[float, float, str]] = []
        self._font = QFont()
        self._color = QColor("#000000")
        self._backing = QColor("#ffffff")
        self._static: dict[tuple[str, float], QStaticText] = {}
        self._layout_key: tuple | None = None
        self._laid_out: list[tuple[str, QRectF, QFont, bool]] = []

    def set_style(self, font: QFont, color: str, backing: str = "#ffffff") -> None:
        self._font = QFont(font)
        self._color = QColor(color)
        self._backing = QColor(backing)
        self._backing.setAlpha(220)
        self._static.clear()
        self._layout_key = None
        self.update()

    def set_labels(self, labels: list[tuple[float, float, str]]) -> None:
        """(x, y, text) per bar: the text is centred on x, just above y."""
        if labels != self._labels:
            self._labels = labels
            self._layout_key = None
            self.update()

    def labels(self) -> list[tuple[float, float, str]]:
        return list(self._labels)

    def drawn(self) -> list[tuple[str, QRectF]]:
        """The texts of the last paint and their rectangles in the view's pixels (for tests and checks)."""
        return [(text, QRectF(rect)) for text, rect, _, _ in self._laid_out]

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        vb = self.getViewBox()
        return QRectF() if vb is None else self.mapRectFromView(vb.viewRect())

    def _static_text(self, text: str, font: QFont) -> QStaticText:
        key = (text, font.pointSizeF())
        static = self._static.get(key)
        if static is None:
            if len(self._static) > 2048:
                self._static.clear()
            static = self._static[key] = QStaticText(text)
            static.prepare(QTransform(), font)
        return static

    def _lay_out(self, tr: QTransform) -> list[tuple[str, QRectF, QFont, bool]]:
        """Where each drawn label goes in pixels (under ``tr``, data → pixels): which fit, at what size."""
        vb = self.getViewBox()
        view = vb.viewRect() if vb is not None else QRectF()
        top_px = min(tr.map(QPointF(0, view.top())).y(), tr.map(QPointF(0, view.bottom())).y())
        anchors = [tr.map(QPointF(x, y)) for x, y, _ in self._labels]
        order = sorted(range(len(self._labels)), key=lambda i: -self._labels[i][1])  # largest weights first
        base = self._font.pointSizeF()
        chosen: list[int] = []
        font = QFont(self._font)
        for f in (1.0, 0.85, self.SMALLEST):
            font = QFont(self._font)
            font.setPointSizeF(base * f)
            fm = QFontMetricsF(font)
            widths = [fm.horizontalAdvance(text) for _, _, text in self._labels]
            chosen = spaced([a.x() for a in anchors], widths, order, gap=fm.averageCharWidth() / 2)
            if len(chosen) == len(self._labels):
                break
        out = []
        for i in chosen:
            text = self._labels[i][2]
            size = self._static_text(text, font).size()
            x, y = anchors[i].x() - size.width() / 2, anchors[i].y() - size.height() - 1
            inside = y < top_px  # (the top bar's label: inside the plot, not cut at its edge)
            if inside:
                y = top_px + 1
            out.append((text, QRectF(x, y, size.width(), size.height()), font, inside))
        return out

    def paint(self, p: QPainter, *args) -> None:
        if not self._labels:
            return
        tr = p.transform()
        vb = self.getViewBox()
        key = (tr.m11(), tr.m22(), tr.dx(), tr.dy(), None if vb is None else tuple(vb.viewRect().getRect()))
        if key != self._layout_key:  # (laid out anew only for new labels or a new size of the plot)
            self._layout_key = key
            self._laid_out = self._lay_out(tr)
        p.save()
        p.resetTransform()
        p.setPen(self._color)
        for text, rect, font, inside in self._laid_out:
            if inside:
                p.fillRect(rect.adjusted(-2, 0, 2, 0), self._backing)
            p.setFont(font)
            p.drawStaticText(rect.topLeft(), self._static_text(text, font))
        p.restore()


#: Where a value's name may stand on its arrow's head, after the side away from the origin: the four
#: corners, then above and below it, then a line further above and below (pyqtgraph's anchors: (0, 1)
#: puts the label's bottom-left on the head).
_ANCHORS = ((0.0, 1.0), (1.0, 1.0), (0.0, 0.0), (1.0, 0.0), (0.5, 1.1), (0.5, -0.1), (0.5, 1.8), (0.5, -0.8))


def label_box(x: float, y: float, anchor: tuple[float, float], size: tuple[float, float]) -> Box:
    """The box (px, y up) of a label ``size`` (w, h) px standing at ``anchor`` on the point (x, y) px."""
    ax, ay = anchor
    w, h = size
    return x - ax * w, x + (1 - ax) * w, y - (1 - ay) * h, y + ay * h


class ValueLabels:
    """The names of the value arrows ("v cat") on ``plot``: one per head (values at one point share one,
    "v mat = v sat"), beside the head on the side away from the origin, else on another side of it.
    A name that would cover another, another arrow's head, the output or its label, or stand outside the
    plot is left out — the largest weights' names placed first, as the bars' numbers are."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self._plot = plot
        self.items: list[pg.TextItem] = []
        self._font = QFont()
        self._color = "#000000"
        self._heads = np.zeros((0, 2))  # one per label (values at one point share one)
        self._members: list[list[int]] = []  # per label: the values it names
        self._all_heads = np.zeros((0, 2))  # every value's head
        self._key: tuple | None = None  # what the last layout was for

    def set_style(self, font: QFont, color: str) -> None:
        """The names' font and colour (every item made again)."""
        self.clear()
        self._font, self._color = QFont(font), color

    def clear(self) -> None:
        """Remove every name from the plot."""
        for item in self.items:
            self._plot.removeItem(item)
        self.items = []
        self._heads = self._all_heads = np.zeros((0, 2))
        self._members = []
        self._key = None

    def set_values(self, heads: np.ndarray, names: list[str]) -> None:
        """The value vectors' heads (n×2, data units) and the tokens' names."""
        first: dict[tuple[float, float], int] = {}
        groups: dict[int, list[str]] = {}
        for j in range(len(heads)):
            at = first.setdefault((float(heads[j, 0]), float(heads[j, 1])), j)
            groups.setdefault(at, []).append(f"v {names[j]}")
        while len(self.items) < len(groups):
            item = pg.TextItem("", color=self._color, anchor=(0, 1))
            item.setFont(self._font)
            self._plot.addItem(item, ignoreBounds=True)
            self.items.append(item)
        self._members = [[j for j in range(len(heads)) if first[(float(heads[j, 0]), float(heads[j, 1]))] == at]
                         for at in groups]
        self._heads = np.array([heads[at] for at in groups], dtype=float).reshape(-1, 2)
        self._all_heads = np.asarray(heads, dtype=float).reshape(-1, 2)
        for item, text in zip(self.items, (" = ".join(g) for g in groups.values()), strict=False):
            if item.toPlainText() != text:
                item.setText(text)
        for item in self.items[len(groups):]:
            item.setVisible(False)
        self._key = None

    def lay_out(self, weights: np.ndarray | None, px: tuple[float, float], view: QRectF, head_px: float,
                output: tuple[float, float, pg.TextItem, float] | None = None) -> None:
        """Place the names for a pixel of ``px`` data units in a plot showing ``view`` (data), clear of
        every other arrow's head (a square ``head_px`` across); ``weights`` (None: not shown yet) rank
        them, else their order.  ``output`` (x, y, its label, its dot's size in px), once it is shown,
        has its label placed too, right after the leading value's name and clear of the values' heads:
        the output lies towards the values that lead the blend, and its label, always beyond its head,
        covered the leading value's."""
        dx, dy = px
        if not (dx > 0 and dy > 0):
            return
        rank = [max(float(weights[j]) for j in m) if weights is not None else -i
                for i, m in enumerate(self._members)]
        out_key = None if output is None else (output[0], output[1], output[3])
        in_view = (view.x(), view.y(), view.width(), view.height())
        key = (self._heads.tobytes(), tuple(rank), dx, dy, in_view, head_px, out_key)
        if key == self._key:
            return
        self._key = key
        r = head_px / 2
        heads_px = [(float(x) / dx, float(y) / dy) for x, y in self._all_heads]
        head_weight = ([float(v) for v in weights] if weights is not None and len(weights) == len(heads_px)
                       else [1.0] * len(heads_px))
        inside = (view.left() / dx, view.right() / dx, view.top() / dy, view.bottom() / dy)
        taken: list[Box] = []

        def place(x: float, y: float, item: pg.TextItem, crowd: bool, always: bool = False) -> bool:
            """The first of the head's sides where ``item`` has room clear of the other heads and the
            names placed; over the other heads if ``crowd`` and there is no such side; at the first side
            anyway if ``always``."""
            rect = item.textItem.boundingRect()
            cx, cy = x / dx, y / dy
            anchors = [anchor_of(x, y)] + [a for a in _ANCHORS if a != anchor_of(x, y)]
            boxes = [label_box(cx, cy, a, (rect.width(), rect.height())) for a in anchors]
            others = [j for j, h in enumerate(heads_px) if h != (cx, cy)]
            heads = [(heads_px[j][0] - r, heads_px[j][0] + r, heads_px[j][1] - r, heads_px[j][1] + r) for j in others]
            got = placed([boxes], [0], gap=2.0, obstacles=heads + taken, inside=inside)
            if not got and crowd:
                # Over the crowd's heads rather than not at all (still not on a name): the side that covers
                # the least weight — the output's label covered the leading value's head, and its name
                # then had no room.
                free = [c for c in range(len(boxes)) if placed([[boxes[c]]], [0], gap=2.0, obstacles=taken,
                                                               inside=inside)]
                if free:
                    got = {0: min(free, key=lambda c: sum(head_weight[j] for j, h in zip(others, heads, strict=False)
                                                           if not placed([[boxes[c]]], [0], gap=0.0, obstacles=[h])))}
            if not got and always:
                got = {0: 0}
            if got:
                item.setAnchor(anchors[got[0]])
                taken.append(boxes[got[0]])
            return bool(got)

        # The largest weight's name first — over the crowd's heads, if it has no room clear of them (a
        # crowd of short values), rather than left out: the caption names it as the blend's lead — then
        # the output's label, as it must (the output lies towards the values that lead the blend: placed
        # first, its label took the lead's room), its dot an obstacle too, then the other names.
        order = sorted(range(len(self._heads)), key=lambda i: -rank[i])
        lead = order[:1] if weights is not None else []
        dot_box: list[Box] = []
        if output is not None:
            ox, oy, label, dot = output
            cx, cy = ox / dx, oy / dy
            dot_box = [(cx - dot / 2, cx + dot / 2, cy - dot / 2, cy + dot / 2)]
        shown = {}
        for i in lead:
            taken[:0] = dot_box  # (the lead's name clear of the output's dot, which its label may touch)
            shown[i] = place(float(self._heads[i, 0]), float(self._heads[i, 1]), self.items[i], True)
            del taken[:len(dot_box)]
        if output is not None:
            place(ox, oy, label, True, always=True)
            taken.extend(dot_box)
        for i in order:
            if i not in shown:
                shown[i] = place(float(self._heads[i, 0]), float(self._heads[i, 1]), self.items[i], False)
        for i in order:
            item = self.items[i]
            if shown[i]:
                item.setPos(float(self._heads[i, 0]), float(self._heads[i, 1]))
            item.setVisible(shown[i])

    def drawn(self) -> list[tuple[str, QRectF]]:
        """The names shown and their rectangles in the scene (for tests and checks)."""
        return [(item.toPlainText(), item.mapRectToScene(item.boundingRect())) for item in self.items
                if item.isVisible()]
