"""The plane's RoPE view: one rotation pair of the selected query and a key, before and after RoPE.

For a head of a model that uses RoPE (SmolLM2, or the user's copy of one: :func:`qkv_studio.core.rope_pair.
rotary_of` decides) the plane can draw, instead of every vector's first two components, pair *i* of the
selected query q and of a key k — dimensions i and i + d/2, which RoPE turns together: both as the model
turned them (solid) and turned back to before RoPE (dashed, fainter), with an arc from before to after
marking each turn (position × the pair's frequency θᵢ) and the header reading the angles out.  The key is
the selected cell's (a lecturer points at the cell whose score they explain), else the strongest key
of the query's row (the one the plane marks anyway).

:class:`PlaneRope` holds the view's switch and pair (the plane's "RoPE pair" box and spin box, and View →
RoPE pair on the vector plane, kept in step without echoing), its items on the plot, and what it draws —
the maths in :mod:`qkv_studio.core.rope_pair`, read once per edit (two rows), never per paint.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QSpinBox, QVBoxLayout, QWidget

from qkv_studio.core import rope_pair as R
from qkv_studio.render.theme import Theme
from qkv_studio.ui.panels.plane.labels import PlaneLabels, html_escape, merge_close_labels
from qkv_studio.ui.widgets.arrows import arrow_segments

if TYPE_CHECKING:
    from qkv_studio.core.models.registry import AttentionModel
    from qkv_studio.core.models.run import ModelRun
    from qkv_studio.ui.panels.plane.widget import VectorPlane

#: ``source()`` → (the model, its last run) the scene may be a head of, or None (no model has run)
Source = Callable[[], "tuple[AttentionModel, ModelRun] | None"]

ACTION_TIP = ("The vector plane draws one rotation pair of q and k before and after RoPE turned them by "
              "their positions (a RoPE model's head: SmolLM2)")
_EMPTY = np.zeros(0)
_FAINT = 150  # the before-arrows' alpha


class PlaneRope(QObject):
    """The RoPE view of a :class:`~qkv_studio.ui.panels.plane.widget.VectorPlane`.

    Signal ``switched(bool)``: the view was asked for (True) or not, and came on or went off; the plane
    redraws and refits.  (A scene that gains or loses its RoPE switches it in :meth:`follow`, which the
    plane calls as it reads a scene's vectors: it says so by its return value, no signal.)
    ``set_source(source)`` says where the model run comes from (the window: the Real model panel's).
    Public: ``box`` and ``pair_box`` (the plane's controls), ``shown()``, ``available()``, ``why_not()``,
    ``pair``, ``wanted``, ``view`` (the drawn :class:`~qkv_studio.core.rope_pair.PairView`),
    ``set_wanted(on)``, ``set_pair(i)``, ``bind_action(act)``, the items ``q_before``, ``q_after``,
    ``k_before``, ``k_after``, ``q_arc``, ``k_arc`` and ``labels``.
    """

    switched = Signal(bool)

    def __init__(self, plane: VectorPlane, parent: QWidget) -> None:
        super().__init__(plane)
        self._plane = plane
        self._source: Source = lambda: None
        self._wanted = False
        # (no source yet: no model has run)
        self._rotary, self._why = R.rotary_of(plane.session.shown, None, None)
        self._pair = 0
        self._shown = False
        self._action: QAction | None = None
        self._key_reason = ""
        self._row: QHBoxLayout | None = None  # (see place_controls)
        self._column: QVBoxLayout | None = None
        self._column_at = 0
        self._synced: tuple | None = None  # what the controls show (see _sync_controls)
        self.view: R.PairView | None = None

        # Built when first needed (the plane is built at start-up, and most scenes have no RoPE: ~3 ms
        # of widgets and plot items saved there): the controls once a scene has RoPE, the items once shown.
        self._parent = parent
        self._box: QCheckBox | None = None
        self._pair_box: QSpinBox | None = None
        self._curves: dict[str, pg.PlotCurveItem] = {}
        self._look: tuple | None = None  # (theme, pen_w, px_size) of the last style()
        self.labels = PlaneLabels(plane.plot)
        plane.session.cell_changed.connect(self._on_cell)

    # ---- the controls and items, built when first needed ---------------------------------------------
    @property
    def box(self) -> QCheckBox:
        """The plane's "RoPE pair" box (hidden while the scene has no RoPE)."""
        return self._build_controls()[0]

    @property
    def pair_box(self) -> QSpinBox:
        """The plane's spin box of the pair (shown while the view is on)."""
        return self._build_controls()[1]

    def _build_controls(self) -> tuple[QCheckBox, QSpinBox]:
        """The box and the spin box, built the first time they are asked for."""
        if self._box is not None and self._pair_box is not None:
            return self._box, self._pair_box
        self._box = box = QCheckBox("RoPE pair", self._parent)
        box.setToolTip(ACTION_TIP)
        box.setVisible(False)
        box.toggled.connect(self._asked)
        self._pair_box = spin = QSpinBox(self._parent)
        spin.setPrefix("pair ")
        spin.setToolTip("The rotation pair: dimensions i and i + d/2, which RoPE turns together by "
                        "position × θᵢ (pair 0 turns fastest)")
        spin.setKeyboardTracking(False)
        spin.setVisible(False)
        spin.valueChanged.connect(self.set_pair)
        if self._row is not None and self._column is not None:  # (placed: see place_controls)
            self._row.insertWidget(0, spin)
            self._column.insertWidget(self._column_at, box)
        self._style_controls()
        return box, spin

    def place_controls(self, column: QVBoxLayout, at: int) -> QHBoxLayout:
        """Where the controls go in the plane's header: the box in its ``column`` of toggles (at ``at``)
        while the view is off — no room taken from the plane — and, with the spin box, in a row of their
        own under the header while it is on (the toggles beside it are hidden then, so the header's text
        keeps the panel's whole width: a slide's narrow side panel wrapped the angles a word a line).
        Returns the row, for the plane's layout (empty, and no room, while the view is off)."""
        self._column, self._column_at = column, at
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        return self._row

    def _move_controls(self, on: bool) -> None:
        if self._row is None or self._column is None or self._box is None:
            return
        self._column.removeWidget(self._box)
        self._row.removeWidget(self._box)
        if on:
            self._row.insertWidget(0, self._box)
        else:
            self._column.insertWidget(self._column_at, self._box)

    def _item(self, name: str) -> pg.PlotCurveItem:
        self._build_items()
        return self._curves[name]

    q_before = property(lambda self: self._item("q_before"), doc="q's pair before RoPE (a dashed arrow)")
    k_before = property(lambda self: self._item("k_before"), doc="k's pair before RoPE (a dashed arrow)")
    q_after = property(lambda self: self._item("q_after"), doc="q's pair as the model has it (an arrow)")
    k_after = property(lambda self: self._item("k_after"), doc="k's pair as the model has it (an arrow)")
    q_arc = property(lambda self: self._item("q_arc"), doc="the arc of q's turn, before → after")
    k_arc = property(lambda self: self._item("k_arc"), doc="the arc of k's turn, before → after")

    def _build_items(self) -> None:
        if self._curves:
            return
        plot = self._plane.plot
        for z, name in enumerate(("q_before", "k_before", "k_arc", "q_arc", "k_after", "q_after"), start=10):
            item = self._curves[name] = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
            item.setZValue(z)
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=True)
        self._style_items()

    def _items(self) -> tuple[pg.PlotCurveItem, ...]:
        """The items built so far (none before the view first showed)."""
        return tuple(self._curves.values())

    # ---- state ------------------------------------------------------------------------------------
    def set_source(self, source: Source) -> None:
        """Where the model and run come from (``source()`` → (model, run) or None), then look again."""
        self._source = source
        if self.follow():
            self.switched.emit(self._shown)

    def shown(self) -> bool:
        """True while the plane draws the RoPE pair (asked for, and the scene has RoPE)."""
        return self._shown

    def available(self) -> bool:
        """True when the plane's scene is a head whose q and k RoPE turned."""
        return self._rotary is not None

    def why_not(self) -> str:
        """Why the view is unavailable ("" when it is available)."""
        return self._why

    @property
    def pair(self) -> int:
        return self._pair

    @property
    def wanted(self) -> bool:
        return self._wanted

    def set_wanted(self, on: bool) -> None:
        """Ask for the RoPE view (or not); it shows while the scene has RoPE, and comes back with it."""
        on = bool(on)
        if on == self._wanted:
            return
        self._wanted = on
        if self._update():
            self.switched.emit(self._shown)

    def _asked(self, on: bool) -> None:
        """The box or the menu entry was toggled: the view follows, and both show what it now is (a check
        the view could not follow — no RoPE — is taken back)."""
        self.set_wanted(on)
        self._synced = None
        self._sync_controls()

    def set_pair(self, pair: int) -> None:
        """Draw pair ``pair`` (0 … d/2 − 1; out of range: the nearest)."""
        d = self._plane.session.shown.d_k
        pair = max(0, min(int(pair), R.pair_count(d) - 1))
        if pair == self._pair:
            return
        self._pair = pair
        self._sync_controls()
        if self._shown:
            self._plane.redraw_soon()  # (which reads the pair again: follow)

    def _on_cell(self, key: int) -> None:
        if self._shown:
            self._plane.redraw_soon()

    def follow(self) -> bool:
        """Look again whether the session's scene has RoPE and read the pair to draw (after an edit, a new
        scene, a query or cell change); True when the view came on or went off."""
        scene = self._plane.session.shown
        found = self._source()
        model, run = found if found is not None else (None, None)
        self._rotary, self._why = R.rotary_of(scene, model, run)
        if self._rotary is not None:
            self._pair = min(self._pair, R.pair_count(scene.d_k) - 1)
        return self._update()

    def _update(self) -> bool:
        rotary = self._rotary
        shown = self._wanted and rotary is not None
        flipped = shown != self._shown
        self._shown = shown
        if shown and rotary is not None:
            self._read(rotary)
        else:
            self.view = None
        self._sync_controls()
        if flipped:
            self._switch_items(shown)
            self._move_controls(shown)
        return flipped

    def _read(self, rotary: R.Rotary) -> None:
        """The pair view of the selected query and its key (the selected cell's, else the strongest), under
        the scene's ``rotary``."""
        s = self._plane.session
        q, k, _ = s.shown.qkv()
        query = s.query
        cell = s.cell_key
        best = self._plane.best_key()
        if cell is not None and 0 <= cell < s.shown.n:
            key, self._key_reason = cell, "the selected cell's"
        elif best is not None and best < s.shown.n:  # (the last result's, until the new one is read)
            key, self._key_reason = best, "the strongest (select a cell for another)"
        else:
            key, self._key_reason = query, "the query's own (no key is allowed)"
        self.view = R.pair_view(q, k, rotary, query, int(key), self._pair)

    def _sync_controls(self) -> None:
        """The box, the spin box and the window's action show the state (no echo: signals blocked — Qt's
        blocker, as superqt's ``signals_blocked``: the plane is built at start-up, which does not import superqt)."""
        on, ok = self._shown, self._rotary is not None
        pairs = R.pair_count(self._plane.session.shown.d_k)
        state = (on, ok, self._pair, pairs, self._why, self._action)
        if state == self._synced:  # (the plane asks after every edit: Qt's setters are not free, an action's
            return                 # tip re-lays out its menu)
        self._synced = state
        if ok or self._box is not None:
            box, spin = self.box, self.pair_box
            with QSignalBlocker(box):
                box.setChecked(on)
            box.setVisible(ok)
            with QSignalBlocker(spin):
                spin.setRange(0, max(0, pairs - 1))
                spin.setValue(self._pair)
            spin.setVisible(on)
        act = self._action
        if act is not None:
            with QSignalBlocker(act):
                act.setChecked(on)
            act.setEnabled(ok)
            tip = ACTION_TIP if ok else self._why
            act.setToolTip(tip)
            act.setStatusTip(tip)

    def bind_action(self, act: QAction) -> None:
        """Keep ``act``, the window's checkable View-menu entry, in step with the view: disabled, with the
        reason as its tip, while the scene has no RoPE (the plane may be built after the menus)."""
        act.toggled.connect(self._asked)
        self._action = act
        self._sync_controls()

    # ---- drawing ------------------------------------------------------------------------------------
    def _switch_items(self, on: bool) -> None:
        """The RoPE items in place of the plane's arrows and labels (or back)."""
        p = self._plane
        if on:
            self._build_items()
        for item in self._items():
            item.setVisible(on)
        a = p.arrows
        for item in (a.values, a.keys, a.best_halo, a.best, a.output, a.query):
            item.setVisible(not on)
        if on:
            p.labels.hide()
        else:
            self.labels.hide()
            p.labels.forget()
        p.values_box.setVisible(not on)  # (they do not apply to a pair: out of the narrow header's way)
        p.pca_box.setVisible(not on and p.session.shown.d_k > 2)

    def style(self, theme: Theme, pen_w, px_size: int) -> None:
        """Pens of ``theme`` (``pen_w(base)``: a width at the font scale), the controls' font and colour."""
        self._look = (theme, pen_w, px_size)
        self.labels.clear()
        self._style_items()
        self._style_controls()

    def _style_items(self) -> None:
        if self._look is None or not self._curves:
            return
        theme, pen_w, _ = self._look

        def faint(colour: str) -> QColor:
            c = QColor(colour)
            c.setAlpha(_FAINT)
            return c

        c = self._curves
        c["q_before"].setPen(pg.mkPen(faint(theme.query_color), width=pen_w(3), style=Qt.PenStyle.DashLine))
        c["k_before"].setPen(pg.mkPen(faint(theme.key_color), width=pen_w(3), style=Qt.PenStyle.DashLine))
        c["q_after"].setPen(pg.mkPen(theme.query_color, width=pen_w(5)))
        c["k_after"].setPen(pg.mkPen(theme.key_color, width=pen_w(5)))
        c["q_arc"].setPen(pg.mkPen(theme.query_color, width=pen_w(2.5)))
        c["k_arc"].setPen(pg.mkPen(theme.key_color, width=pen_w(2.5)))

    def _style_controls(self) -> None:
        if self._look is None or self._box is None or self._pair_box is None:
            return
        theme, _, px_size = self._look
        for w in (self._box, self._pair_box):
            font = w.font()
            font.setPixelSize(px_size)
            w.setFont(font)
        self._box.setStyleSheet(f"color: {theme.text}")

    def draw(self, head: float, px: tuple[float, float], theme: Theme, size: int) -> None:
        """The pair's arrows, arcs and labels (``head``: an arrow head's length in pixels; ``px``: a pixel's
        size in data units; ``size``: the labels' pixel size)."""
        v = self.view
        if v is None:
            for item in self._items():
                item.setData(_EMPTY, _EMPTY)
            self.labels.hide()
            return
        for item, vec, length in ((self.q_before, v.q_before, 0.9), (self.k_before, v.k_before, 0.9),
                                  (self.q_after, v.q_after, 1.15), (self.k_after, v.k_after, 1.15)):
            item.setData(*arrow_segments(vec[None, :], head * length, px), connect="pairs")
        entries = []
        scene = self._plane.session.shown
        for item, start, angle, share in ((self.q_arc, v.q_before, v.q_angle, 0.62),
                                          (self.k_arc, v.k_before, v.k_angle, 0.4)):
            arc = R.arc_points(start, angle, share * float(np.hypot(*start)))
            xs, ys = _arc_segments(arc, head * 0.7, px)
            item.setData(xs, ys, connect="pairs")
            if len(arc):
                mid = arc[len(arc) // 2]
                q_arc = item is self.q_arc
                colour = theme.query_color if q_arc else theme.key_color
                position = v.m if q_arc else v.n
                entries.append((float(mid[0]), float(mid[1]), f"{'' if position == 1 else f'{position:g}'}θ",
                                colour, False))  # (position × θ: the caption has the radians)
        q_name, k_name = scene.token_label(v.query), scene.token_label(v.key)
        lead = f"q {q_name}"
        named = [(*map(float, v.q_after), lead, theme.query_color, True),
                 (*map(float, v.k_after), f"k {k_name}", theme.key_color, True)]
        extra = [(*map(float, v.q_before), "q before", theme.query_color, False),
                 (*map(float, v.k_before), "k before", theme.key_color, False)] + entries
        self.labels.draw_entries(_unmerged(named, extra, px, size, lead), theme, size, px, lead=lead)

    def content(self) -> tuple[np.ndarray, np.ndarray]:
        """The drawn heads (and the origin) and the labels' boxes, for the plane's range."""
        heads = self.view.heads() if self.view is not None else np.zeros((1, 2))
        return heads, self.labels.boxes()

    # ---- words --------------------------------------------------------------------------------------
    def header_html(self, theme: Theme, px) -> str:
        """The plane's header while the view is on (``px(base)``: a font's pixel size)."""
        v = self.view
        if v is None:
            return ""
        scene = self._plane.session.shown
        k_name = html_escape(scene.token_label(v.key))
        t = theme
        # (the caption's clauses a line each: a narrow side panel of a slide wrapped the sentence anywhere)
        lines = "<br>".join(html_escape(part) for part in R.caption(v).split("; "))
        return (f'<span style="font-size:{px(17)}px; font-weight:600; color:{t.text}">RoPE turns q and k</span>'
                f'<span style="font-size:{px(14)}px; color:{t.muted}"> &nbsp;(dashed: before)<br>'
                f'<span style="color:{t.text}">{lines}</span><br>'
                f'<b style="color:{t.key_color}">k {k_name}</b>: {self._key_reason} · '
                f'{html_escape(R.score_note(v))}</span>')

    def axis_titles(self) -> tuple[str, str]:
        v = self.view
        if v is None:
            return "", ""
        i, j = v.dims
        return f"dimension {i}", f"dimension {j}"  # (the header names the pair; a narrow plane cut a longer title)


def _unmerged(named: list, extra: list, px: tuple[float, float], size: int, lead: str) -> list:
    """The ``named`` labels (q and k after the turn) and those of ``extra`` (before, the arcs' angles) that
    find room of their own: merged into another label they were a stack of words far from their arrows
    (the dashes say "before" anyway, the header the angles)."""
    kept = list(named)
    groups = len(merge_close_labels(kept, px, size, lead=lead)[0])
    for entry in extra:
        more = len(merge_close_labels(kept + [entry], px, size, lead=lead)[0])
        if more > groups:
            kept.append(entry)
            groups = more
    return kept


def _arc_segments(arc: np.ndarray, head_px: float, px: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """``connect="pairs"`` segments of an arc (its points joined) with an arrow head at its end."""
    if len(arc) < 2:
        return _EMPTY, _EMPTY
    xs = np.repeat(arc[:, 0], 2)[1:-1]
    ys = np.repeat(arc[:, 1], 2)[1:-1]
    sx, sy = px
    (x0, y0), (x1, y1) = arc[-2], arc[-1]
    dx, dy = (x1 - x0) / sx, (y1 - y0) / sy
    length = math.hypot(dx, dy)
    if not length > 0:
        return xs, ys
    ux, uy = dx / length, dy / length
    c, s = math.cos(math.radians(28)), math.sin(math.radians(28))
    wings = []
    for sign in (1, -1):
        bx = x1 - head_px * (ux * c - sign * uy * s) * sx
        by = y1 - head_px * (uy * c + sign * ux * s) * sy
        wings += [(x1, y1), (bx, by)]
    w = np.array(wings)
    return np.concatenate([xs, w[:, 0]]), np.concatenate([ys, w[:, 1]])
