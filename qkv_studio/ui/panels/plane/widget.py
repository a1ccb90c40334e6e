"""The vector plane: q, k (and v, and the blend) as arrows you can grab.

Every vector is an arrow from the origin on a 2-D plane (for d > 2 its first two components, labelled
so, or its PCA projection).  The selected query and its best-matching key stand out.  Dragging an arrow
head edits that vector live (see :mod:`~qkv_studio.ui.panels.plane.drag`); in projection mode Q, K and V
are derived from X and the W matrices, so they are shown read-only.  The view fits the arrows and their
labels (see :mod:`~qkv_studio.ui.panels.plane.view_range`); :meth:`VectorPlane.fit_view` (the Fit button,
View → Fit the vector plane) fits it now.

:class:`VectorPlane` composes the parts: the vectors read from the Session (``vectors``), the arrow
items (``arrows``), the labels (``labels``), the range (``view_range``), the drag (``drag``) and the
header (``caption``).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from qkv_studio.core.stages import reveals
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.plane import caption
from qkv_studio.ui.panels.plane.arrows import HEAD_PX, PlaneArrows
from qkv_studio.ui.panels.plane.drag import PlaneDrag, PlaneViewBox
from qkv_studio.ui.panels.plane.labels import PlaneLabels
from qkv_studio.ui.panels.plane.rope_view import PlaneRope
from qkv_studio.ui.panels.plane.vectors import PlaneVectors
from qkv_studio.ui.panels.plane.view_range import PlaneRange
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.frame_throttle import FrameThrottle
from qkv_studio.ui.widgets.indicators import style_indicators
from qkv_studio.ui.widgets.layout_barrier import LayoutBarrier
from qkv_studio.ui.widgets.plot_cache import cache_axes, plot_item, show_only
from qkv_studio.ui.widgets.rich_label import RichLabel
from qkv_studio.ui.widgets.view_caches import keep_caches_while_hidden, paint_opaquely

MARGIN_PX = 6.0  # the fitted view keeps arrows and labels this far (times the font scale) from its edges,
MARGIN_SHARE = 0.025  # and this share of its narrower side more (air around them, room to drag outwards)


class VectorPlane(FollowsAppearance, QWidget):
    """Queries, keys, values and the output as arrows on a plane; drag a head to edit the vector.

    Drawn in the look of the :class:`Appearance` it is bound to (``appearance=`` or ``bind_appearance``).
    Public API: ``set_show_values(on)``, ``set_pca(on)``, ``set_show_all_stages(on)``, ``fit_view()``.
    Test hooks: ``plot_widget``, ``view_box``, ``best_key()``, ``values_visible()``, ``read_only()``,
    ``head_view_pos(matrix, row)``, ``head_viewport_pos(matrix, row)``, ``label_texts()``,
    ``label_items()``, ``fit_button``.
    """

    def __init__(self, session: Session, parent: QWidget | None = None, *,
                 appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._font_scale = 1.0
        self._show_values = False
        self._show_all_stages = False
        self._pca = False
        self._stale = 0  # 1: redraw when shown; 2: re-style and re-fit too (new tokens)
        self._fitted_shown = False  # fitted since first shown (as built, it was fitted without a size)
        self._axis_labels: tuple | None = None
        self._rope_refit = False  # the RoPE view switched with the scene: the next catch-up refits
        self.vectors = PlaneVectors()
        # What follows from an edit elsewhere is drawn at the next frame (see frame_throttle).
        self._next_frame = FrameThrottle(self._catch_up, self)
        self._info_frame = FrameThrottle(self._update_info, self)
        self._range_frame = FrameThrottle(self._ensure_visible, self)  # (after a resize)

        # header: what is shown, the values and PCA toggles
        self.info = RichLabel(parent=self)
        self.info.setTextFormat(Qt.TextFormat.RichText)
        self.info.setWordWrap(True)
        # (Preferred, not Maximum: a wrapped label's size hint can be shorter than the height its text needs at
        # a narrow panel's width, and a Maximum policy then cut off its last line)
        self.info.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.values_box = QCheckBox("show values v", self)
        self.values_box.setToolTip("Draw the value vectors v (dashed). The blend stage always shows them.")
        self.values_box.toggled.connect(self.set_show_values)
        self.pca_box = QCheckBox("PCA", self)
        self.pca_box.setToolTip("For dₖ > 2: draw q and k on the two directions that keep most of their length "
                                "(PCA, not centred: dot products keep their meaning), values on their own. "
                                "Dragging is off in this view.")
        self.pca_box.toggled.connect(self.set_pca)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(LayoutBarrier(self.info, grow_only=True), 1)  # new numbers re-lay out this line only
        boxes = QVBoxLayout()
        boxes.setContentsMargins(0, 0, 0, 0)
        boxes.setSpacing(0)
        boxes.addWidget(self.values_box)
        boxes.addWidget(self.pca_box)
        boxes.addStretch(1)
        head.addLayout(boxes, 0)

        self.view_box = PlaneViewBox()
        self.plot_widget = pg.PlotWidget(self, plotItem=plot_item(viewBox=self.view_box))
        self.plot = self.plot_widget.getPlotItem()
        show_only(self.plot, "left", "bottom")
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.setAspectLocked(True, 1.0)
        self.plot.disableAutoRange()
        cache_axes(self.plot)
        keep_caches_while_hidden(self.plot_widget)  # (a slide's step to the heatmap and back: nothing redrawn)
        paint_opaquely(self.plot_widget)  # (its background is the theme's: _apply_palette)
        # The fit button sits in the plot's free corner, below the vertical axis and left of the horizontal
        # one (where pyqtgraph puts its own "A" button): it takes no room from the header or the plane.
        self.fit_button = QToolButton(self.plot_widget)
        self.fit_button.setText("Fit")
        self.fit_button.setToolTip("Fit the view to every arrow and label (View → Fit the vector plane, Ctrl+Shift+V)")
        self.fit_button.clicked.connect(self.fit_view)
        self.plot_widget.installEventFilter(self)
        self.arrows = PlaneArrows(self.plot)
        self.labels = PlaneLabels(self.plot)
        self.view_range = PlaneRange(self.view_box, self._content, self._view_size, self._margin)
        self.drag = PlaneDrag(self)
        self.rope = PlaneRope(self, self)  # (the RoPE pair view of a RoPE model's head: see rope_view)
        self.rope.switched.connect(self._on_rope_switched)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addLayout(self.rope.place_controls(boxes, 2))  # (the box under PCA; a row while it is on)
        layout.addWidget(self.plot_widget, 1)

        session.scene_changed.connect(self._on_scene)
        session.result_changed.connect(self._on_result)
        session.query_changed.connect(self._on_query)
        session.stage_changed.connect(self._on_stage)
        session.tokens_changed.connect(self._on_tokens)
        session.head_changed.connect(self._on_tokens)  # another head of a split scene: its vectors, fitted

        self._read_vectors()
        self.vectors.read_result(session)
        # Styled and fitted as it is built, drawn when first shown, at its size (drawn here, every
        # arrow and label was placed for a plot without a size and then again: ~15 ms of start-up).
        self._apply_palette(self._theme)
        self._style(draw=False)
        self.view_range.fit()
        self._stale = 1
        # (connected after the first fit: its range change would draw everything once more at start-up)
        self.view_box.sigRangeChanged.connect(self._on_range)
        self.view_box.sigResized.connect(self._on_resized)
        self.bind_appearance(appearance)

    # ---- the items the tests and the benchmarks look at ----------------------------------------------
    @property
    def _drag(self) -> tuple | None:
        """The drag under way: (matrix, row, x, y at its start), or None."""
        return self.drag.state

    @property
    def _keys_item(self) -> pg.PlotCurveItem:
        return self.arrows.keys

    @property
    def _best_item(self) -> pg.PlotCurveItem:
        return self.arrows.best

    @property
    def _query_item(self) -> pg.PlotCurveItem:
        return self.arrows.query

    @property
    def _output_item(self) -> pg.PlotCurveItem:
        return self.arrows.output

    @property
    def _labels(self) -> list[pg.TextItem]:
        return self.labels.items

    def label_items(self) -> list[pg.TextItem]:
        """The visible labels' text items."""
        return [item for item in self.labels.items if item.isVisible()]

    # ---- look (see FollowsAppearance; the plane draws no colour-mapped data) -------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        """Colours and line widths of a theme."""
        self._apply_palette(theme)
        self.labels.clear()
        self._style()

    def _apply_palette(self, theme: Theme) -> None:
        self._theme = theme
        self._take_theme_colours(theme)
        style_indicators((self.values_box, self.pca_box), theme)  # (a box that shows on a dark theme)
        self.fit_button.setStyleSheet(f"color: {theme.text}")
        self.plot_widget.setBackground(theme.background)

    def _restyle_scale(self, f: float) -> None:
        """Scale every font and pen width (zoom, projector)."""
        self._font_scale = f
        self.labels.clear()
        self._style()
        self._ensure_visible()  # (labels of another size)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.plot_widget and event.type() == QEvent.Type.Resize:
            self._place_fit_button()
        return False

    def _place_fit_button(self) -> None:
        """The fit button in the bottom-left corner of the plot, inside the corner the axes leave free."""
        button = self.fit_button
        button.adjustSize()
        corner_w = self.plot.getAxis("left").width()
        corner_h = self.plot.getAxis("bottom").height()
        size = button.sizeHint()
        w, h = min(size.width(), max(1, int(corner_w) - 4)), min(size.height(), max(1, int(corner_h) - 4))
        button.setGeometry(2, self.plot_widget.height() - h - 2, w, h)

    def font_scale(self) -> float:
        """The font scale the plane is drawn at (labels, pens, the grab radius)."""
        return self._font_scale

    # ---- public API -----------------------------------------------------------------------------------
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
        self.vectors.read_result(self.session)
        self.labels.forget()
        self._redraw(refit=True, ensure=False)

    def pca_shown(self) -> bool:
        """True when the plane draws the PCA projection (asked for, and dₖ > 2)."""
        return self._pca and self.session.shown.d_k > 2

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

    def fit_view(self) -> None:
        """Fit the view to every drawn arrow and label now (the fit key, the Fit button)."""
        self.catch_up_now()
        if self.isVisible():
            self.view_range.fit()
        else:
            self._stale = 2  # (fitted when shown, at its size)

    def set_show_all_stages(self, on: bool) -> None:
        """Show every stage's results at every stage (View → Show all stages at once), or only those the
        current stage has reached."""
        if bool(on) != self._show_all_stages:
            self._show_all_stages = bool(on)
            self._next_frame.request()

    # ---- test hooks ---------------------------------------------------------------------------------
    def best_key(self) -> int | None:
        """Index of the key drawn as the best match (argmax of the selected query's weights)."""
        return self.vectors.best

    def values_visible(self) -> bool:
        return self._show_values or self.session.stage == "output"

    def output_shown(self) -> bool:
        """True when the output arrow is drawn (from the blend stage on, or every stage shown at once)."""
        return self.vectors.output is not None and self._reveals("output")

    def read_only(self) -> bool:
        """True in projection mode (Q, K, V are derived) and in the PCA and RoPE views: nothing can be dragged."""
        return self.session.scene.mode == "projection" or self.pca_shown() or self.rope.shown()

    def head_view_pos(self, matrix: str, row: int) -> QPointF:
        """Where the head of a drawn vector is, in data coordinates."""
        return QPointF(*self.vectors.head(matrix, row))

    def head_viewport_pos(self, matrix: str, row: int):
        """Where the head of a drawn vector is, in the viewport coordinates of ``plot_widget``."""
        return self.plot_widget.mapFromScene(self.view_box.mapViewToScene(self.head_view_pos(matrix, row)))

    def label_texts(self) -> list[str]:
        """The plain texts of the visible labels (coincident heads share one label)."""
        return self.labels.texts()

    # ---- what the stage reveals (the stage registry's reveals) --------------------------------------
    def _reveals(self, what: str) -> bool:
        return reveals(self.session.stage, what, all_stages=self._show_all_stages)

    def _shown_best(self) -> int | None:
        """The best key, once the scores are revealed (before, it would answer the question)."""
        return self.vectors.best if self._reveals("scores") else None

    # ---- slots --------------------------------------------------------------------------------------
    def _on_scene(self) -> None:
        # Every scene change is followed by result_changed in the same event-loop turn (the Session
        # recomputes then): the vectors are read now and drawn once, with the result, in _on_result.
        self._read_vectors()

    def _on_result(self) -> None:
        if self.drag.state is not None and self.isVisible():
            # The hand is on this plane: the arrows follow it now, the numbers under it next frame.
            self.vectors.read_result(self.session)
            self._draw()
            self.view_range.grow()  # (a head dragged out of the view: it grows; see view_range)
            self._info_frame.request()
            return
        self._next_frame.request()

    def _on_query(self, index: int) -> None:
        self._next_frame.request()

    def _on_stage(self, stage: str) -> None:
        self._next_frame.request()

    def _on_tokens(self) -> None:
        self._read_vectors()
        self._redraw(refit=True, ensure=False)

    def _on_range(self, *args) -> None:
        # A plane with a draw owed for its show (as built, or changed while hidden) draws in showEvent, at
        # the size and range it shows with: drawn at each step of its first layout too, it drew 5 times.
        if not self._stale:
            self._draw()

    def _on_resized(self, *args) -> None:
        if self._stale:  # (see _on_range; showEvent fits it or checks its range too)
            return
        self._draw()
        if self.drag.state is None:
            self._range_frame.request()  # (labels are sized in pixels: a smaller plane may cut them)

    def _catch_up(self) -> None:
        """The next-frame redraw after an edit elsewhere, a query change or a stage step."""
        self._read_vectors()
        self.vectors.read_result(self.session)
        refit, self._rope_refit = self._rope_refit, False
        self._redraw(ensure=self.drag.state is None, refit=refit)

    def redraw_soon(self) -> None:
        """Draw again at the next frame (the RoPE view's pair or key changed)."""
        self._next_frame.request()

    def _on_rope_switched(self, on: bool) -> None:
        self._rope_refit = False
        self._redraw(refit=True)

    def catch_up_now(self) -> None:
        """Draw a redraw still waiting for the next frame now."""
        self._next_frame.flush()

    def drag_finished(self) -> None:
        """A drag ended: the view fits what it left (see view_range), the header says what is next."""
        self._update_info()
        if self.view_range.grown and self.isVisible():
            self.view_range.fit()  # (it grew with room to spare under the hand: fitted to where it ended)
        else:
            self._ensure_visible()

    def snapping_changed(self) -> None:
        """Shift came or went during a drag: the header says so at the next frame."""
        self._info_frame.request()

    def _redraw(self, *, ensure: bool = True, refit: bool = False) -> None:
        """Draw what the vectors now are; while the plane is hidden (a tab behind the editors, or
        presentation mode) only remember to, and catch up when it is shown."""
        if not self.isVisible():
            self._stale = 2 if refit or self._stale == 2 else 1
            return
        if refit:
            self._style()  # (it updates the caption and draws)
            self.view_range.fit()
            self._fitted_shown = True
            return
        self._update_info()
        self._draw()
        if not self._fitted_shown:
            self._fitted_shown = True
            self.view_range.fit()
        elif ensure:
            self._ensure_visible()

    def _ensure_visible(self) -> None:
        """Refit when the arrows or labels left the view or fill only a small part of it (see view_range)."""
        if self.isVisible() and self.drag.state is None:
            self.view_range.ensure()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._stale:
            refit, self._stale = self._stale == 2, 0
            self._redraw(refit=refit)

    # ---- model → drawing ----------------------------------------------------------------------------
    def _read_vectors(self) -> None:
        self.vectors.read_vectors(self.session, self.pca_shown())
        if self.rope.follow():  # (a RoPE model's head came or went: the RoPE view switched; refit next frame)
            self._rope_refit = True
        # (last: showing the box re-lays out the plane, which may draw — with the vectors now read)
        # nothing to project in two dimensions (or in the RoPE view's pair): no clutter
        self.pca_box.setVisible(self.session.shown.d_k > 2 and not self.rope.shown())

    def _content(self) -> tuple[np.ndarray, np.ndarray]:
        """The drawn heads and label boxes, for the range."""
        if self.rope.shown():
            return self.rope.content()
        return self.vectors.heads_box(self.values_visible(), self.output_shown()), self.labels.boxes()

    def _view_size(self) -> tuple[float, float]:
        """The view box's size in screen pixels."""
        rect = self.view_box.rect()
        scale = self.plot_widget.transform()
        return rect.width() * scale.m11(), rect.height() * scale.m22()

    def _margin(self) -> float:
        w, h = self._view_size()
        return MARGIN_PX * max(1.0, self._font_scale) + MARGIN_SHARE * max(0.0, min(w, h))

    def _update_info(self) -> None:
        c = caption.PlaneCaption(
            scene=self.session.shown, query=self.session.query, stage=self.session.stage,
            bases=self.vectors.bases, values_shown=self.values_visible(), read_only=self.read_only(),
            best=self._shown_best(), best_weight=self.vectors.best_weight, weight_shown=self._reveals("weights"),
            step=self.drag.step(), snapping=self.drag.snapping and self.drag.state is not None)
        if self.rope.shown():
            self.info.setText(self.rope.header_html(self._theme, self._px))
            x_label, y_label = self.rope.axis_titles()
        else:
            self.info.setText(caption.header_html(c, self._theme, self._px))
            x_label, y_label = caption.axis_titles(self.session.shown.d_k, self.vectors.bases)
        css = {"color": self._theme.text, "font-size": f"{self._px(15)}px"}
        key = (x_label, y_label, tuple(css.items()))
        if key != self._axis_labels:  # a relabelled axis redraws itself (~8 ms)
            self._axis_labels = key
            self.plot.getAxis("bottom").setLabel(x_label, **css)
            self.plot.getAxis("left").setLabel(y_label, **css)

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
        self.arrows.style(t, self._pen_w, len(self.vectors.keys))
        self.rope.style(t, self._pen_w, self._px(14))
        dark = QColor(t.background).lightness() < 128
        self.plot.showGrid(x=True, y=True, alpha=0.1 if dark else 0.18)
        for box in (self.values_box, self.pca_box, self.fit_button):
            box_font = box.font()
            box_font.setPixelSize(self._px(14))
            box.setFont(box_font)
        self._place_fit_button()
        self._update_info()
        if draw:
            self._draw()

    def pixel_size(self) -> tuple[float, float]:
        """A screen pixel's size in view units, (x, y): what ``ViewBox.viewPixelSize()`` says for the
        plane's unrotated view, without inverting the view's transform (which is singular at extreme
        ranges, where pyqtgraph then falls back to a pseudo-inverse that warns on NumPy ≥ 2.5)."""
        (x0, x1), (y0, y1) = self.view_box.viewRange()
        wide, tall = self._view_size()
        return ((x1 - x0) / wide if wide > 0 else 0.0, (y1 - y0) / tall if tall > 0 else 0.0)

    def _draw(self, *args) -> None:
        px = self.pixel_size()
        if not (px[0] > 0 and px[1] > 0 and math.isfinite(px[0]) and math.isfinite(px[1])):
            px = (0.01, 0.01)
        head = HEAD_PX * self._font_scale * self._theme.line_scale ** 0.5
        n = len(self.vectors.keys)
        best = self._shown_best()
        best = best if best is not None and best < n else None
        if self.rope.shown():
            self.rope.draw(head, px, self._theme, self._px(17))
            return
        show_v, show_out = self.values_visible(), self.output_shown()
        self.arrows.draw(self.vectors, best, show_v, show_out, head, px)
        self.labels.draw(self.session.shown, self.vectors, self.session.query, best, show_v, show_out,
                         self._theme, self._px(17), self._font_scale, px)
