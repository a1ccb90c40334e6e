"""The live heatmap of the current attention stage.

One :class:`~qkv_studio.ui.widgets.rgba_image.RgbaImage` shows the stage's n×n matrix as RGBA colours
from :func:`qkv_studio.render.colormaps.scale_for` (weights on a fixed 0–1 scale, signed scores on a
diverging map centred at 0), so the colours never re-normalise per edit and agree with the exported
figures.  One painted overlay (:class:`~qkv_studio.ui.panels.heatmap_overlay.CellOverlay`) draws
everything per cell in a single ``paint()``: the numbers when they fit, "−∞" in masked cells before the
softmax, a hatch over masked cells, the outline of the selected query row and the row-sum column "Σ" at
the softmax stages.  Nothing builds a widget or an item per cell, so 1024 tokens stay fast.

Its parts, one job each: the token axes and titles laid out with the figure's label layout
(:mod:`~qkv_studio.ui.panels.heatmap_axes`), the colour bar (:mod:`~qkv_studio.ui.panels.heatmap_legend`),
the hover read-out (:mod:`~qkv_studio.ui.panels.heatmap_hover`) and Ctrl+wheel zoom for many tokens
(:mod:`~qkv_studio.ui.panels.heatmap_zoom`).

The widget binds to a :class:`~qkv_studio.state.session.Session` only through its signals and slots and
never edits it in response to them; only a user's click does (select a query, Ctrl/Alt+click to
block a key for that query).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEasingCurve, QEvent, QPointF, Qt, QTimer, QVariantAnimation
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QGraphicsView, QSizePolicy, QVBoxLayout, QWidget

from qkv_studio.core import STAGES
from qkv_studio.core.morph import blend_colours, blend_values
from qkv_studio.core.stages import shown_matrix, stage_spec
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, ColorScale, is_signed, scale_for
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.changes import ResultChange
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.heatmap_axes import AxisLabeller, TokenAxis, pixel_font
from qkv_studio.ui.panels.heatmap_hover import CellHover
from qkv_studio.ui.panels.heatmap_legend import HeatmapLegend
from qkv_studio.ui.panels.heatmap_overlay import MIN_CELL_PX, SIGMA_GAP, CellOverlay, CellTexts, format_value, text_plan
from qkv_studio.ui.panels.heatmap_zoom import ZOOM_FROM, HeatmapZoom
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.frame_throttle import FRAME_MS
from qkv_studio.ui.widgets.layout_barrier import LayoutBarrier
from qkv_studio.ui.widgets.plot_cache import cache_axes, plot_item, remembering_axes, show_only
from qkv_studio.ui.widgets.rgba_image import RgbaImage
from qkv_studio.ui.widgets.rich_label import RichLabel
from qkv_studio.ui.widgets.view_caches import keep_caches_while_hidden

__all__ = ["SHOWN_STAGE", "HeatmapView", "format_value"]

# The matrix a stage shows (the stage registry's): the vectors stage previews the scores, the blend
# stage shows its weights.
SHOWN_STAGE = {name: shown_matrix(name) for name in STAGES}
MAX_LABEL_CHARS = 14
_DIM_OPACITY = 0.35


ANIMATION_MS = 250
ANIMATE_MAX_N = 256  # beyond this a morph costs more than it shows


def _minus(s: str) -> str:
    return s.replace("-", "\u2212")


def _elide(name: str) -> str:
    return name if len(name) <= MAX_LABEL_CHARS else name[: MAX_LABEL_CHARS - 1] + "…"


def _rgba_of(color: str) -> np.ndarray:
    c = QColor(color)
    return np.array([c.red(), c.green(), c.blue(), 255], dtype=np.uint8)


class HeatmapView(FollowsAppearance, QWidget):
    """The current stage's matrix as a heatmap with numbers, legend, token labels and Σ column.

    Drawn in the look of the :class:`Appearance` it is bound to (``appearance=`` or
    ``bind_appearance``): theme, the weights' colour map, the scale of text and lines.
    Test hooks: ``image_item``, ``overlay``, ``plot``, ``graphics``, ``color_bar``, ``title``,
    ``displayed_matrix()``, ``displayed_stage()``, ``color_levels()``, ``cell_texts()``,
    ``cell_center(row, col)`` (viewport coordinates of ``graphics``), ``labeller`` (the axes' layout),
    ``legend``, ``hover`` and ``hovered_cell()``, ``zoom``, ``zoom_at(row, col, factor)`` and
    ``reset_zoom()``.
    """

    def __init__(self, session: Session, parent: QWidget | None = None, *,
                 appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._cmap_name = DEFAULT_SEQUENTIAL
        self._font_scale = 1.0
        self._titles_shown: tuple[str, str, tuple[tuple[str, str], ...]] | None = None  # (axis titles, css)
        self._matrix: np.ndarray | None = None
        self._rgba: np.ndarray | None = None
        self._blocked: np.ndarray | None = None
        self._scale: ColorScale | None = None
        self._legend_n = -1  # (the token count the colour bar's label room was measured for)
        self._legend_measured = False  # (and whether for the numbers shown now)
        self._coloured: tuple | None = None  # (scale key, matrix, mask) the image was coloured from
        # The colours of each stage's matrix of the current result, for stepping back and forth
        # (dropped when the result changes): {(scale key, shown matrix's name): rgba}
        self._colours: dict[tuple, np.ndarray] = {}
        self._shown = SHOWN_STAGE[session.stage]
        self._stage = session.stage
        self._sigma = False
        self._query = session.query
        self._n_range: tuple[int, bool] | None = None  # (n, Σ shown) the view range was set for
        self._labels: list[str] = []
        # Stage changes morph colours and numbers (≤ 300 ms, never blocking input); off with `animate`.
        self.animate = True
        self._text_matrix: np.ndarray | None = None
        self._cell_texts_cache = CellTexts()  # (the numbers as printed, re-formatted only where they changed)
        self._anim_from: tuple[np.ndarray, np.ndarray] | None = None
        self._keep_image = False  # (set while a stage step that will morph recolours)
        self._anim = QVariantAnimation(self)
        self._anim.setDuration(ANIMATION_MS)
        self._anim.setStartValue(0.0)
        self._anim.setEndValue(1.0)
        self._anim.setEasingCurve(QEasingCurve.Type.InOutCubic)
        self._anim.valueChanged.connect(self._on_anim_step)
        self._anim.finished.connect(self._on_anim_end)
        # The step's own frame shows the morph's first picture (the new title, legend and ticks over
        # the old colours and numbers); the motion starts at the next frame, so the step's frame does
        # not also carry an animation tick and a second repaint.
        self._anim_wait = QTimer(self)
        self._anim_wait.setSingleShot(True)
        self._anim_wait.setTimerType(Qt.TimerType.PreciseTimer)
        self._anim_wait.setInterval(FRAME_MS)
        self._anim_wait.timeout.connect(self._anim.start)

        self.title = RichLabel(parent=self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self.graphics = pg.GraphicsLayoutWidget(self)
        self.graphics.ci.layout.setContentsMargins(4, 4, 4, 4)
        # (no menu to build; the axes keep their pictures: a stage step to or from the softmax moves
        # the right edge for the Σ column and back, and every range change redrew both axes)
        axes = {**remembering_axes(("right", "bottom")), "left": TokenAxis("left"), "top": TokenAxis("top")}
        self.plot: pg.PlotItem = plot_item(axisItems=axes)
        self.graphics.addItem(self.plot, row=0, col=0)
        vb = self.plot.vb
        cache_axes(self.plot)  # (before the axes are set up: see plot_cache)
        keep_caches_while_hidden(self.graphics)  # (hidden behind a slide of the plane or the blend)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.invertY(True)
        self.plot.setDefaultPadding(0.0)
        self.plot.setAspectLocked(False)  # cells fill the panel: labels hug the matrix, no empty bands
        self.plot.disableAutoRange()
        show_only(self.plot, "left", "top")
        self.plot.getAxis("left").setStyle(tickLength=0)
        self.plot.getAxis("top").setStyle(tickLength=0)

        self.image_item = RgbaImage()
        self.plot.addItem(self.image_item)
        self.overlay = CellOverlay(self)
        self.overlay.setZValue(10)
        self.plot.addItem(self.overlay, ignoreBounds=True)

        self.labeller = AxisLabeller(self.plot.getAxis("left"), self.plot.getAxis("top"))
        # The legend spans the matrix, not the key names above it: its end labels ("1.0", "0") then sit
        # beside the first and last rows instead of being cut off at the panel's edge.
        self.legend = HeatmapLegend(self.graphics, self.plot, self.image_item, self.labeller.measure)
        self.color_bar = self.legend.bar
        self.hover = CellHover(session, self.plot, self.graphics, n=lambda: self._n(),
                               text_px=lambda: self._px(15), shown_stage=lambda: self._shown, parent=self)
        self.hover.cell_changed.connect(self._on_hover)
        session.cell_changed.connect(self._on_cell)
        self.zoom = HeatmapZoom(vb, self.graphics, full=self._full_range, n=lambda: self._n(), parent=self)
        self.graphics.viewport().installEventFilter(self)  # (the pointer leaving ends the hover)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(2)
        # A new title re-lays out this panel only; one that wraps at some stage keeps its room at the
        # others, so the matrix does not jump (and every axis re-lay out) as the stages are stepped.
        layout.addWidget(LayoutBarrier(self.title, grow_only=True))
        layout.addWidget(self.graphics, 1)

        self.graphics.scene().sigMouseClicked.connect(self._on_click)
        vb.sigResized.connect(self._on_geometry)
        vb.sigRangeChanged.connect(self._on_geometry)

        session.result_changed.connect(self._on_new_result)
        session.stage_changed.connect(self._on_stage)
        session.query_changed.connect(self._on_query)
        session.tokens_changed.connect(self._on_tokens)

        self._restyle_theme(self._theme)
        self._on_tokens()
        self._on_result()
        self.bind_appearance(appearance)

    # ---- look (see FollowsAppearance) ---------------------------------------------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        """Colours and line widths of a theme (background, axes, outline, masked cells, Σ column)."""
        self._theme = theme
        self._take_theme_colours(theme)
        self.graphics.setBackground(theme.background)
        if hasattr(self, "hover"):
            self.hover.set_colours(theme.panel, theme.text, theme.muted)
        self._apply_fonts()
        if self._matrix is not None:
            self._recolour()
        self._update_title()
        self._update_ticks()

    def _restyle_colormap(self, name: str) -> None:
        """The sequential colormap of the weights (scores keep their diverging map)."""
        if name == self._cmap_name:
            return
        self._cmap_name = name
        if self._matrix is not None:
            self._recolour()

    def _restyle_scale(self, f: float) -> None:
        """Scale every font and pen width (zoom, projector)."""
        self._font_scale = f
        self._apply_fonts()
        self._update_title()
        self._update_ticks()
        self.overlay.update()

    # ---- hover and zoom -----------------------------------------------------------------------------
    def selected_cell(self) -> tuple[int, int] | None:
        """(query, key) of the cell worked out term by term, at the stages that show it (else None)."""
        from qkv_studio.core.cellwise import CELL_STAGES

        s = self._session
        if s.cell_key is None or s.stage not in CELL_STAGES:
            return None
        return s.query, s.cell_key

    def _on_cell(self, _key: int) -> None:
        self.overlay.update()

    def hovered_cell(self) -> tuple[int, int] | None:
        """The (row, col) under the pointer, or None."""
        return self.hover.hovered

    def reset_zoom(self) -> None:
        """Show the whole grid again (after Ctrl+wheel zoomed in)."""
        self.zoom.reset()

    def zoom_at(self, row: float, col: float, factor: float) -> None:
        """Zoom by ``factor`` (< 1 in) around cell (row, col), as Ctrl+wheel there does (from
        :data:`~qkv_studio.ui.panels.heatmap_zoom.ZOOM_FROM` tokens)."""
        if self._n() >= ZOOM_FROM:
            self.zoom.zoom_at(QPointF(col, row), factor)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Leave and obj is self.graphics.viewport():
            self.hover.leave()
        return False

    def _on_hover(self, row: int, col: int) -> None:
        old = getattr(self, "_hover_shown", None)
        new = (row, col) if row >= 0 else None
        self._hover_shown = new
        margin = (2.0 * self._font_scale + 2.0) / max(1.0, self._cell_px())
        self._repaint_scope(rows=True)
        self.overlay.update_cell(old, margin)
        self.overlay.update_cell(new, margin)
        if self._n() > 32:  # (a thinned axis names the hovered row and column too)
            self._update_ticks()

    def _n(self) -> int:
        return 0 if self._matrix is None else int(self._matrix.shape[0])

    # ---- test hooks ---------------------------------------------------------------------------------
    def displayed_matrix(self) -> np.ndarray:
        """The n×n matrix currently shown (a stage of ``session.result``)."""
        if self._matrix is None:  # (never after construction: the view shows the Session's result at once)
            raise RuntimeError("the heatmap shows no matrix yet")
        return self._matrix

    def displayed_stage(self) -> str:
        """The result stage whose matrix is shown: scores, scaled or weights."""
        return self._shown

    def color_levels(self) -> tuple[float, float]:
        """(lo, hi) of the colour scale in use — equal to the legend's range."""
        if self._scale is None:  # (never after construction: the view colours the Session's result at once)
            raise RuntimeError("the heatmap shows no colour scale yet")
        return (self._scale.lo, self._scale.hi)

    def cell_texts(self) -> list[tuple[int, int, str]]:
        """(row, col, text) the overlay draws at the current size; col = n is the Σ column."""
        plan = self._text_plan()
        if plan["font"] is None:
            return []
        n = self._n()
        out = [(r, c, t) for r, c, t, _ in plan["cells"]]
        out += [(r, n, t) for r, t in plan["sums"]]
        return out

    def cell_center(self, row: int, col: float):
        """Where a cell's centre is, in the viewport coordinates of ``graphics`` (a QPoint)."""
        scene_pt = self.plot.vb.mapViewToScene(QPointF(col, row))
        return self.graphics.mapFromScene(scene_pt)

    # ---- slots --------------------------------------------------------------------------------------
    def _on_new_result(self, change: ResultChange) -> None:
        self._colours.clear()  # (each stage's colours were of the numbers before this change)
        self._legend_measured = False  # (the next stage step measures the bar's label room again)
        self._on_result(change)

    def _on_result(self, change: ResultChange | None = None) -> None:
        """Show the result; ``change`` says what changed in it (None: nothing, another stage is shown)."""
        if self.is_animating():
            self._anim_wait.stop()
            self._anim.stop()
            self._on_anim_end()
        result = self._session.result
        self._matrix = result.stage(self._shown)
        self._blocked = result.blocked
        if self._matrix.shape[0] != self._legend_n:  # (a new scene: the colour bar's room for its stages)
            self._reserve_legend()
        self._sigma = stage_spec(self._session.stage).row_sums
        self._recolour(change)
        self._update_range()
        self._update_title()
        if self.hover.hovered is not None:  # (the read-out follows the numbers and the stage)
            self.hover.show_tip()

    def _reserve_legend(self) -> None:
        """Room beside the colour bar for the labels of every stage's scale (HeatmapLegend.reserve_for):
        measured at a new scene and at a stage step, not at each edit (an edit only widens it)."""
        result = self._session.result
        self._legend_n = result.stage(self._shown).shape[0]
        self._legend_measured = True
        self.legend.reserve_for([scale_for(shown, result.stage(shown), self._cmap_name)
                                 for shown in dict.fromkeys(SHOWN_STAGE.values())])

    def _on_stage(self, stage: str) -> None:
        shown = SHOWN_STAGE[stage]
        sigma = stage_spec(stage).row_sums
        if shown != self._shown and not self._legend_measured:
            self._reserve_legend()
        if shown != self._shown or sigma != self._sigma:
            old = None
            if self.animate and self._matrix is not None and self._rgba is not None \
                    and self._matrix.shape[0] <= ANIMATE_MAX_N and shown != self._shown:
                old = (self._matrix.copy(), self._rgba.copy())
            self._shown = shown
            # The morph's first frame shows the old colours, which the image shows now: it keeps them
            # (setting the new ones, then the old ones again, took two renders of the image).
            self._keep_image = old is not None and old[0].shape[0] == self._session.scene.n
            try:
                self._on_result()
            finally:
                self._keep_image = False
            self._update_ticks()
            m, rgba = self._matrix, self._rgba  # (both set by _on_result)
            if old is not None and m is not None and old[0].shape == m.shape:
                self._anim_from = old
                self._show_morph(0.0)
                self._anim_wait.start()
            elif old is not None and rgba is not None:
                self.image_item.set_image(rgba)
        else:
            self._apply_dim()
            self._update_title()
            if (stage_spec(stage).previews or stage_spec(self._stage).previews) and self._cell_px() >= MIN_CELL_PX:
                self.overlay.update()  # (the numbers show from the scores on; nothing else changes)
        self._stage = stage

    def _on_anim_step(self, t) -> None:
        t = float(t)
        if self._anim_from is None or t <= 0.0:  # (the step showed the first frame itself)
            return
        self._show_morph(t)

    def _show_morph(self, t: float) -> None:
        # Its first frame comes with the stage step (new legend, title and ticks: the view whole);
        # the frames after it change the matrix only: repaint that, not the legend and axes around it.
        start, m, rgba = self._anim_from, self._matrix, self._rgba
        if start is None or m is None or rgba is None:  # (a morph starts from a matrix shown to one shown)
            return
        self._repaint_scope(rows=t > 0.0)
        old_m, old_rgba = start
        if t > 0.0:  # (at 0 the image still shows the old colours: the step kept them)
            self.image_item.set_image(blend_colours(old_rgba, rgba, t))
        self._text_matrix = blend_values(old_m, m, t)  # (masked −∞ cells are not interpolated)
        self.overlay.update()

    def _on_anim_end(self) -> None:
        self._anim_from = None
        self._text_matrix = None
        self._repaint_scope(rows=True)  # (the matrix only; a new result that stopped it sets its own)
        if self._rgba is not None:
            self.image_item.set_image(self._rgba)
        self.overlay.update()

    def is_animating(self) -> bool:
        """Whether a stage step's morph is under way (or waiting for the next frame to move)."""
        return self._anim.state() == QVariantAnimation.State.Running or self._anim_wait.isActive()

    def _on_query(self, index: int) -> None:
        old, self._query = self._query, index
        self._update_ticks()  # (the query's name is always shown, in bold)
        cell_px = self._cell_px()
        if cell_px > 0 and self._matrix is not None and 0 <= old < self._matrix.shape[0]:
            # The outline moves from one row to another: repaint those two rows, not the matrix.
            pen_px = 3.0 * self._font_scale * self._theme.line_scale
            self._repaint_scope(rows=True)
            self.overlay.update_rows((old, index), (pen_px + 2.0) / cell_px)
        else:
            self.overlay.update()

    def _on_tokens(self) -> None:
        scene = self._session.scene
        self._labels = [_elide(scene.token_label(i)) for i in range(scene.n)]
        self._update_ticks()

    def _on_geometry(self, *args) -> None:
        self._update_ticks()

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton or ev.double() or self._matrix is None:
            return
        n = self._matrix.shape[0]
        pos = ev.scenePos()
        pt = self.plot.vb.mapSceneToView(pos)
        row, col = int(math.floor(pt.y() + 0.5)), int(math.floor(pt.x() + 0.5))
        on_left = self.plot.getAxis("left").sceneBoundingRect().contains(pos)
        on_top = self.plot.getAxis("top").sceneBoundingRect().contains(pos)
        in_matrix = self.plot.vb.sceneBoundingRect().contains(pos) and 0 <= row < n and 0 <= col < n
        mods = ev.modifiers()
        toggle = bool(mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier))
        if in_matrix:
            if toggle:
                self._session.toggle_blocked(row, col)
            else:  # the query's row, and the cell: worked out term by term at Q·Kᵀ (core/cellwise.py)
                self._session.select_cell(col, row)
            ev.accept()
        elif on_left and 0 <= row < n:
            self._session.set_query(row)
            ev.accept()
        elif on_top and toggle and 0 <= col < n:
            self._session.toggle_blocked(None, col)
            ev.accept()

    # ---- drawing ------------------------------------------------------------------------------------
    def _recolour(self, change: ResultChange | None = None) -> None:
        """Colour the displayed matrix; when only some rows (or columns) changed, only those."""
        m = self._matrix
        if m is None:  # (nothing shown yet: the first result colours it)
            return
        scale = scale_for(self._shown, m, self._cmap_name)
        blocked = self._blocked if self._blocked is not None and self._blocked.shape == m.shape else None
        masked = _rgba_of(self._theme.masked)
        key = (scale, self._theme.masked)
        prev = self._coloured
        rgba: np.ndarray | None = None
        partial: np.ndarray | None = None  # the rows recoloured in place, when that is all that changed
        rows_only = change is not None and not change.everything  # (a row edit keeps the mask)
        if prev is not None and prev[0] == key and prev[1].shape == m.shape and self._rgba is not None \
                and (rows_only or (blocked is None) == (prev[2] is None)
                     and (blocked is None or np.array_equal(prev[2], blocked))):
            # Same colour scale and mask: recolour only what changed (one query row while dragging).
            if rows_only and change is not None:  # the change says which rows (the Session wrote them in place)
                rows = np.asarray(change.rows, dtype=int)
                cols = np.arange(m.shape[1])
            else:
                changed = prev[1] != m
                rows = np.flatnonzero(changed.any(axis=1))
                cols = np.flatnonzero(changed.any(axis=0))
            rgba = self._rgba
            if len(rows) <= len(cols):
                partial = rows
                if len(rows):
                    rgba[rows] = scale.rgba(m[rows])
                    if blocked is not None:
                        rgba[rows] = np.where(blocked[rows][..., None], masked, rgba[rows])
            else:
                rgba[:, cols] = scale.rgba(m[:, cols])
                if blocked is not None:
                    rgba[:, cols] = np.where(blocked[:, cols][..., None], masked, rgba[:, cols])
        if rgba is None:
            rgba = self._colours.get((key, self._shown))
            if rgba is None:
                rgba = scale.rgba(m)
                if blocked is not None and blocked.any():
                    rgba[blocked] = masked
                self._colours[(key, self._shown)] = rgba
        self._rgba = rgba
        self._coloured = (key, m, blocked)
        n = m.shape[0]
        if partial is not None and self.image_item.shows(rgba):
            # The image shows this very array: repaint the changed rows, not the matrix (and not the
            # axes around it).  An edit of one query changes one row.
            self._repaint_scope(rows=True)
            if len(partial):
                self.image_item.update_rows(int(partial.min()), int(partial.max()))
        else:
            partial = None
            self._repaint_scope(rows=False)
            if not self._keep_image:
                self.image_item.set_image(rgba)
        self._apply_dim()
        if scale != self._scale:
            self.legend.show_scale(scale)
        self._scale = scale
        self.overlay.set_extent(n, self._sigma, rows=partial)

    def _repaint_scope(self, *, rows: bool) -> None:
        """How the next repaint is clipped: to the changed rows (an edit of one query), or not at all.

        Qt clips a repaint to the region that changed.  For a row or two that saves drawing the
        matrix; for a region of many pieces (a new stage changes the matrix, its legend and Σ) the
        clipping costs more than it saves: a 64-token stage step took 8.6 ms clipped, 6.2 ms whole.
        """
        mode = (QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate if rows
                else QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        if self.graphics.viewportUpdateMode() != mode:
            self.graphics.setViewportUpdateMode(mode)

    def _apply_dim(self) -> None:
        # The vectors stage only previews the scores: image and legend fade together (never apart).
        opacity = _DIM_OPACITY if stage_spec(self._session.stage).previews else 1.0
        if self.image_item.opacity() != opacity:  # (every edit and drag step comes here: ~0.1 ms)
            self.image_item.setOpacity(opacity)
            self.color_bar.setOpacity(opacity)

    def _full_range(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The whole grid's (x, y) view range, with the Σ column when it is shown."""
        n = self._n()
        right = n - 0.5 + (1 + SIGMA_GAP if self._sigma else 0)
        pad = 0.02 * n
        return (-0.5 - pad, right + pad), (-0.5 - pad, n - 0.5 + pad)

    def _update_range(self) -> None:
        if self._matrix is None:
            return
        n = int(self._matrix.shape[0])
        key = (n, self._sigma)
        if key == self._n_range:
            return
        old, self._n_range = self._n_range, key
        if not (self.zoom.zoomed and isinstance(old, tuple) and old[0] == n):  # (a zoom outlives a stage step)
            self.zoom.reset()
        self._update_ticks()

    def _px(self, base: float) -> int:
        return max(6, int(round(base * self._font_scale)))

    def _apply_fonts(self) -> None:
        t = self._theme
        tick_font = pixel_font(self._px(17))
        width = max(1.0, self._font_scale * t.line_scale)
        for name in ("left", "top"):
            ax = self.plot.getAxis(name)
            ax.setStyle(tickFont=tick_font, tickTextOffset=int(6 * self._font_scale))
            ax.setPen(pg.mkPen(None))  # no axis line: the matrix edge is the frame
            ax.setTickPen(QPen(QBrush(Qt.BrushStyle.NoBrush), 0, Qt.PenStyle.NoPen))
            ax.setTextPen(pg.mkPen(t.text))
        self._titles_shown = None
        self._set_titles()
        # (major ticks only: minor ones every 0.02 were clutter, and a third of the legend's drawing time)
        self.legend.style(t, tick_font, self._px(17), self._px(15), width, self._font_scale)

    def _set_titles(self) -> None:
        """The axis titles the label layout chose (one each, at one size; short when the long one does not
        fit): set only on change (a relabelled axis redraws itself)."""
        left, top = self.labeller.titles
        css = {"color": self._theme.text, "font-size": f"{self._px(15)}px"}
        shown = (left, top, tuple(css.items()))
        if shown == getattr(self, "_titles_shown", None):
            return
        self._titles_shown = shown
        for name, text in (("left", left), ("top", top)):
            axis = self.plot.getAxis(name)
            axis.setLabel(text, **css)
            axis.showLabel(bool(text))

    def _update_title(self) -> None:
        if self._matrix is None:
            return
        words = stage_spec(self._session.stage).words(self._session.scene.scale)
        main = words.heatmap.format(d_k=self._session.result.d_k)
        t = self._theme
        html = (f'<span style="font-size:{self._px(19)}px; font-weight:600; color:{t.text}">{main}</span>')
        if self._blocked is not None and self._blocked.any():
            blocked = "−∞" if is_signed(self._shown) else "0"
            html += (f'<br><span style="font-size:{self._px(14)}px; color:{t.muted}">'
                     f'<span style="background-color:{t.masked}; color:{t.masked}">&nbsp;███&nbsp;</span>'
                     f'&nbsp;masked (blocked) key: {blocked} &nbsp;·&nbsp; Ctrl+click a cell to block/unblock'
                     f'</span>')
        self.title.setText(html)

    def _update_ticks(self) -> None:
        """Token names on both axes and the axis titles, as the shared label layout places them for the
        cells in view: all of them when they fit (smaller, upright or abbreviated), else every k-th — and
        always the query's row and the hovered cell's row and column."""
        if self._matrix is None:
            return
        n = self._matrix.shape[0]
        labels = self._labels if len(self._labels) == n else [str(i) for i in range(n)]
        (x0, x1), (y0, y1) = self.plot.vb.viewRange()
        rows = (max(0, math.floor(y0 + 0.5)), min(n, math.ceil(y1 + 0.5)))
        cols = (max(0, math.floor(x0 + 0.5)), min(n, math.ceil(x1 + 0.5)))
        keep = [self._query] if 0 <= self._query < n else []
        hover = self.hover.hovered
        if hover is not None:
            keep += [hover[0], hover[1]]
        vb_rect = self.plot.vb.rect()
        t = self.graphics.transform()
        changed = self.labeller.update(
            labels, cell_w=self._cell_px(), cell_h=self._cell_h_px(), px=self._px(17), title_px=self._px(15),
            scale=self._font_scale, keep=keep, visible_rows=rows, visible_cols=cols,
            sigma_at=n + SIGMA_GAP if self._sigma and self._cell_px() >= MIN_CELL_PX else None,
            room_h=vb_rect.height() * t.m22(), room_w=vb_rect.width() * t.m11(), panel_h=self.graphics.height(),
            colours=(self._theme.text, self._theme.highlight))
        if changed:
            self._set_titles()
            self.legend.relabel()  # (the bar's room follows the axes' new sizes)

    def _cell_px(self) -> float:
        """A cell's width in screen pixels.  (What ``ViewBox.viewPixelSize()`` says for the heatmap's
        unscaled view, without mapping three points through inverted transforms: a stage step asks
        five times, at ~80 µs each.)"""
        vb = self.plot.vb
        (x0, x1), _ = vb.state["viewRange"]
        span = x1 - x0
        px = vb.rect().width() * self.graphics.transform().m11() / span if span > 0 else 0.0
        return px if px > 0 and math.isfinite(px) else 0.0

    def _cell_h_px(self) -> float:
        """A cell's height in screen pixels (rows are stretched to the plot's height, not square)."""
        vb = self.plot.vb
        _, (y0, y1) = vb.state["viewRange"]
        span = y1 - y0
        px = vb.rect().height() * self.graphics.transform().m22() / span if span > 0 else 0.0
        return px if px > 0 and math.isfinite(px) else 0.0

    def _text_plan(self) -> dict:
        """Which cells get text at the current size, with which font and colour (see :func:`text_plan`)."""
        return text_plan(self)
