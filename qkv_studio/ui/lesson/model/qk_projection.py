"""One head's queries and keys in 2-D, for the Real model panel (a real head has dₖ of 32 or more).

The two directions are the PCA of the stacked rows [Q; K], not centred (see
:mod:`qkv_studio.core.models.projection`), so the origin and dot products keep their meaning.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from qkv_studio.core.models import pca_basis
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance

MAX_LABELLED = 24   # the projection labels every key up to this many tokens, else only the strongest
TOP_KEYS = 5        # … and these many keys the query attends to most


class QKProjection(FollowsAppearance, QWidget):
    """One head's queries and keys in 2-D: the PCA directions of [Q; K], not centred (origin kept).

    The selected query is an arrow; every key is a dot whose size and strength follow the weight the
    query gives it, so the picture shows which keys the query attends to.  Axis labels say how much of
    the vectors' squared length each direction keeps.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._font_scale = 1.0
        self._q2 = np.zeros((0, 2))
        self._k2 = np.zeros((0, 2))
        self._explained = np.zeros(2)
        self._tokens: tuple[str, ...] = ()
        self._query = 0
        self._row = np.zeros(0)
        self._labelled: list[int] = []
        self._extents = (1.0, 1.0)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(120, 100)  # (scaled down in a narrow panel: a 1024-px window)

    def set_head(self, q: np.ndarray, k: np.ndarray, tokens: tuple[str, ...], weights: np.ndarray) -> None:
        """A head's Q, K (n×d), token labels and its n×n weights; projects them once here."""
        basis, self._explained = pca_basis(q, k)
        self._q2 = np.asarray(q) @ basis
        self._k2 = np.asarray(k) @ basis
        self._tokens = tuple(tokens)
        self._weights = np.asarray(weights)
        both = np.abs(np.concatenate([self._q2, self._k2]))
        ext = both.max(axis=0) if len(both) else np.ones(2)
        top = float(ext.max()) if ext.max() > 0 else 1.0
        # an axis with almost nothing on it still gets a tenth of the other's room
        self._extents = (float(max(ext[0], 0.1 * top)), float(max(ext[1], 0.1 * top)))
        self.set_query(min(self._query, len(self._tokens) - 1) if self._tokens else 0)

    def clear(self) -> None:
        self._q2 = np.zeros((0, 2))
        self._k2 = np.zeros((0, 2))
        self._tokens = ()
        self._row = np.zeros(0)
        self._labelled = []
        self.update()

    def set_query(self, query: int) -> None:
        self._query = int(query)
        if not self._tokens:
            return
        self._row = self._weights[self._query]
        n = len(self._tokens)
        top = [int(i) for i in np.argsort(-self._row, kind="stable")[:TOP_KEYS]]
        self._labelled = list(range(n)) if n <= MAX_LABELLED else top
        self.update()

    def explained(self) -> np.ndarray:
        return self._explained.copy()

    def projected(self) -> tuple[np.ndarray, np.ndarray]:
        """The drawn 2-D queries and keys (test hook)."""
        return self._q2.copy(), self._k2.copy()

    # ---- look (see FollowsAppearance) ---------------------------------------------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.update()

    def _restyle_scale(self, f: float) -> None:
        self._font_scale = float(f)
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(420, 300)

    def paintEvent(self, event) -> None:  # noqa: N802
        t = self._theme
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.fillRect(self.rect(), QColor(t.background))
        font = QFont(self.font())
        p.setFont(font)
        fm = QFontMetricsF(font)
        line = max(1.0, min(self._font_scale * t.line_scale, 2.5))
        if not self._tokens:  # nothing to draw yet: the hint alone, across the whole box
            p.setPen(QColor(t.muted))
            p.drawText(QRectF(self.rect()).adjusted(6, 6, -6, -6),
                       int(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap), "Run a sentence to see this "
                       "head's queries and keys")
            p.end()
            return
        pad = fm.height() * 1.4
        area = QRectF(self.rect()).adjusted(pad, fm.height() * 0.4, -fm.height() * 0.4, -pad)
        # equal units on both axes (dot products are about angles and lengths), fitted to the data
        ext_x, ext_y = self._extents
        scale = min(area.width() / 2 / ext_x, area.height() / 2 / ext_y) / 1.08
        centre = area.center()

        def to_px(xy: np.ndarray) -> QPointF:
            return QPointF(centre.x() + xy[0] * scale, centre.y() - xy[1] * scale)

        # axes through the origin, labelled with the share of Σ‖q‖²+‖k‖² each keeps
        p.setPen(QPen(QColor(t.muted), line))
        p.drawLine(QPointF(area.left(), centre.y()), QPointF(area.right(), centre.y()))
        p.drawLine(QPointF(centre.x(), area.top()), QPointF(centre.x(), area.bottom()))
        e1, e2 = (100 * self._explained).round().astype(int) if self._tokens else (0, 0)
        p.setPen(QColor(t.text))
        labels = (f"PCA axis 1 · keeps {e1}%", f"PCA axis 2 · keeps {e2}%")
        if fm.horizontalAdvance(labels[0]) > area.width() or fm.horizontalAdvance(labels[1]) > area.height():
            labels = (f"PCA 1 · {e1}%", f"PCA 2 · {e2}%")  # a small box for its font: short, not elided
        x_text = fm.elidedText(labels[0], Qt.TextElideMode.ElideRight, area.width())
        x_box = QRectF(area.left(), area.bottom(), area.width(), pad)
        p.drawText(x_box, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter, x_text)
        y_text = fm.elidedText(labels[1], Qt.TextElideMode.ElideRight, area.height())
        p.save()
        p.translate(area.left() - pad / 2, centre.y())
        p.rotate(-90)
        p.drawText(QRectF(-area.height() / 2, -pad / 2, area.height(), pad), Qt.AlignmentFlag.AlignCenter, y_text)
        p.restore()
        y_w = fm.horizontalAdvance(y_text)
        x_w = fm.horizontalAdvance(x_text)
        axis_boxes = [QRectF(area.left() - pad, centre.y() - y_w / 2, pad, y_w),
                      QRectF(centre.x() - x_w / 2, area.bottom(), x_w, pad)]
        key = QColor(t.key_color)
        rmax = max(float(self._row.max()), 1e-12)
        order = np.argsort(self._row, kind="stable")  # strongest keys drawn last, on top
        for j in order:
            w = float(self._row[j]) / rmax
            c = QColor(key)
            c.setAlphaF(0.35 + 0.65 * w)
            r = (2.5 + 6.0 * w ** 0.5) * min(line, 2.0)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(c)
            p.drawEllipse(to_px(self._k2[j]), r, r)
        # the query's arrow
        qc = QColor(t.query_color)
        tip = to_px(self._q2[self._query])
        origin = to_px(np.zeros(2))
        p.setPen(QPen(qc, 2.5 * line, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.drawLine(origin, tip)
        d = tip - origin
        length = (d.x() ** 2 + d.y() ** 2) ** 0.5
        if length > 1:
            ux, uy = d.x() / length, d.y() / length
            hl = min(14.0 * line, 0.45 * length)
            head = QPolygonF([tip, QPointF(tip.x() - hl * ux + hl * 0.45 * uy, tip.y() - hl * uy - hl * 0.45 * ux),
                              QPointF(tip.x() - hl * ux - hl * 0.45 * uy, tip.y() - hl * uy + hl * 0.45 * ux)])
            p.setBrush(qc)
            p.setPen(Qt.PenStyle.NoPen)
            p.drawPolygon(head)
        # labels: the query's first (beyond its arrow head), then keys from the strongest down, each at
        # the first of four places around its dot that overlaps no label drawn before, else left out
        # (a crowded corner keeps its most attended keys readable)
        bold = QFont(font)
        bold.setBold(True)
        q_text = f"q {self._tokens[self._query]}"
        q_box = QFontMetricsF(bold).boundingRect(q_text)
        ux, uy = (d.x() / length, d.y() / length) if length > 1 else (1.0, 0.0)
        beyond = tip + QPointF(ux * 10 * line, uy * 10 * line)
        dy = (fm.ascent() if uy > 0 else -fm.descent()) * (abs(uy) > 0.3) \
            + (fm.ascent() / 2 - fm.descent() / 2) * (abs(uy) <= 0.3)
        q_at = QPointF(beyond.x() - (q_box.width() if ux < 0 else 0) - q_box.left(), beyond.y() + dy)
        inside = QRectF(self.rect())
        if any(q_box.translated(q_at).intersects(r) for r in axis_boxes) \
                or not inside.contains(q_box.translated(q_at)):
            # no room beyond the head: put the name on the other side of it
            q_at = QPointF(tip.x() + (8 * line if ux < 0 else -8 * line - q_box.width()) - q_box.left(), tip.y() + dy)
            # … and never out of the box: a tip near an edge pulls the name inside
            q_at = QPointF(min(max(q_at.x(), -q_box.left()), inside.right() - q_box.right()),
                           min(max(q_at.y(), -q_box.top()), inside.bottom() - q_box.bottom()))
        taken = axis_boxes + [q_box.translated(q_at)]
        p.setFont(font)
        gap = 6 * line
        for j in sorted(self._labelled, key=lambda j: -self._row[j]):
            text = f"k {self._tokens[j]}"
            box = fm.boundingRect(text)
            dot = to_px(self._k2[j])
            for at in (QPointF(dot.x() + gap, dot.y() - gap / 2), QPointF(dot.x() - gap - box.width(),
                                                                          dot.y() - gap / 2),
                       QPointF(dot.x() - box.width() / 2, dot.y() - gap - fm.descent()),
                       QPointF(dot.x() - box.width() / 2, dot.y() + gap + fm.ascent())):
                placed = box.translated(at)
                if inside.contains(placed) and not any(placed.intersects(r) for r in taken):
                    break
            else:
                continue
            taken.append(placed)
            strong = self._row[j] >= 0.5 * rmax
            p.setPen(QColor(t.key_color if strong else t.muted))
            p.drawText(at, text)
        p.setFont(bold)
        p.setPen(qc)
        p.drawText(q_at, q_text)
        p.end()

