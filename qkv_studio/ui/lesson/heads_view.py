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
back through ``set_scene``, which follows its ``heads`` (every scene the window loads, one head or
many).  In the window the selected head is the Session's (``Session.head``): picking one here makes every
other view show that head.  Without a Session the count and the head are the view's own.

Public API: ``set_scene(scene, heads=None, wo=None)``, ``set_heads(h)``, ``select_head(i)``; signals
``head_selected(int)`` and ``heads_changed(int)``.  Drawn in the look of the
:class:`~qkv_studio.state.appearance.Appearance` it is bound to (``appearance=`` or ``bind_appearance``).
Test hooks: ``heads_spin``, ``graphics`` (the small multiples), ``small_images``, ``big_image``,
``detail_images``, ``title``, ``message``, ``result()``, ``selected()``, ``heads()``,
``head_center(i)`` (viewport coordinates of ``graphics``).

This module holds the controls and the state (scene, count, selected head); the drawing is in
:mod:`qkv_studio.ui.lesson.heads_plots` (the large head, the small multiples, the Q/K/V strip).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import (
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
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, lut
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.lesson.heads_plots import HeadDetail, LargeHead, SmallMultiples, scaled_font
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance


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
        self.heads_spin.setToolTip(
            "number of heads h: W<sup>Q</sup>, W<sup>K</sup>, W<sup>V</sup> are split into h blocks of columns"
        )
        self.heads_spin.setKeyboardTracking(False)
        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.heads_label)
        header.addWidget(self.heads_spin)

        # ---- the selected head large, all heads small, the selected head's Q, K, V ----------------------
        self.large = LargeHead(self)
        self.big_title = self.large.title
        self.big_graphics = self.large.graphics
        self.big_plot = self.large.plot
        self.big_image = self.large.image
        self.graphics = SmallMultiples(self)
        self.graphics.head_clicked.connect(self.select_head)
        self.graphics.shape_changed.connect(self._rebuild)
        self.detail = HeadDetail(self)

        middle = self._middle = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        middle.setSpacing(4)
        middle.addWidget(self.large, 3)
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
            self.large.place_query(self._query)

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
        """Show head ``i`` (0-based) large; emits ``head_selected``.  Before the split is computed (a
        hidden panel) the head is remembered and shown with it (the last head when there are fewer)."""
        if self._result is None or self._stale:
            self._selected = max(0, int(i))
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
        self._take_theme_colours(theme)
        for g in (self.graphics, self.detail):
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
    @property
    def small_boxes(self):
        return self.graphics.boxes

    @property
    def small_images(self):
        return self.graphics.images

    @property
    def detail_images(self):
        return self.detail.images

    def head_center(self, i: int):
        """Where small head ``i``'s centre is, in the viewport coordinates of ``graphics`` (a QPoint)."""
        return self.graphics.head_center(i)

    def cell_texts(self) -> list[str]:
        return [t.toPlainText() for t in self.large.cell_texts if t.isVisible()]

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

    # ---- drawing (by the parts of heads_plots) --------------------------------------------------------
    def _font(self, factor: float = 1.0, bold: bool = False) -> QFont:
        return scaled_font(self.font(), self._font_scale, factor, bold)

    def _style(self) -> None:
        t = self._theme
        f = self._font_scale
        base = self._font()
        for w in (self.title, self.heads_label, self.heads_spin, self.message):
            w.setFont(base)
        self.message.setStyleSheet(f"color: {t.highlight}; font-weight: bold;")
        fm = QFontMetricsF(base)
        self.detail.setMinimumHeight(int(fm.height() * 1.6 + 70 * f))
        self._adapt()
        self.heads_spin.setMinimumSize(int(fm.horizontalAdvance("16") + 40 * f), int(fm.height() + 10 * f))
        self.large.restyle(t, f)
        self._rebuild()

    def _rebuild(self) -> None:
        """(Re)create the small multiples and detail plots for the current head count, then draw."""
        r = self._result
        self.graphics.build(0 if r is None else r.h, self._theme, self._font_scale)
        self._built = None
        self._show_message()
        if r is None:
            self.large.clear()
            self._write_title()
            return
        self.detail.place(5 if r.wo is not None else 4)
        self._built = (r.h, r.heads[0].weights.shape, r.wo is not None)
        self._draw_all()

    def _draw_all(self) -> None:
        r = self._result
        if r is None or len(self.small_images) != r.h:
            return
        self.graphics.draw(r, lut(self._cmap))
        self._draw_selection()

    def _draw_selection(self) -> None:
        r, s = self._result, self._scene
        if r is None or s is None or len(self.small_images) != r.h:  # (a result is always of a scene)
            return
        self.graphics.mark(self._selected, self._theme, self._font_scale)
        self.large.show_head(s, r.heads[self._selected].weights, lut(self._cmap), self._query)
        self._write_big_title()
        self.detail.draw(r, self._selected, self._theme, self._font_scale)
        self._write_title()

    def _write_big_title(self) -> None:
        if self._result is not None:
            self.large.write_title(self._selected, self._result.d_head_k, self._compact)

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

    def _write_title(self) -> None:
        t = self._theme
        r = self._result
        s = self._scene
        if r is None or s is None:  # (a result is always of a scene)
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
