"""The plane's arrows: one curve item per set (keys, values, the best key, the query, the output).

One ``PlotCurveItem`` draws a whole set of arrows (shafts and heads as ``connect="pairs"`` segments),
so 1024 keys cost one item (a curve, not a ``PlotDataItem``: setting a dragged arrow's six points took
~180 µs through the data item's processing, ~20 µs on the curve).  A set is given new segments only
when they differ from what it shows, and the key and value sets repaint from a cached picture: they
stay put while a query moves over them.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem

from qkv_studio.render.theme import Theme
from qkv_studio.ui.panels.plane.labels import MAX_LABELLED
from qkv_studio.ui.panels.plane.vectors import PlaneVectors
from qkv_studio.ui.widgets.arrows import arrow_segments

HEAD_PX = 15.0  # arrow-head length in pixels (times the font scale)

_EMPTY = np.zeros(0)


class PlaneArrows:
    """The origin's axis lines and the arrow sets, added to ``plot`` in drawing order.

    ``style`` gives them a theme's pens; ``draw`` the segments of what :class:`PlaneVectors` holds.
    The items are public for tests: ``keys``, ``values``, ``best``, ``best_halo``, ``query``, ``output``.
    """

    def __init__(self, plot: pg.PlotItem) -> None:
        self.origin_h = pg.InfiniteLine(pos=0, angle=0, movable=False)
        self.origin_v = pg.InfiniteLine(pos=0, angle=90, movable=False)
        self.values = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self.keys = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        # Keys and values stay put while a query moves over them: repaint them from a cached picture
        # (1024 antialiased arrows cost ~10 ms to draw).
        for item in (self.values, self.keys):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.best_halo = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self.best = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self.output = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        self.query = pg.PlotCurveItem(antialias=True, skipFiniteCheck=True)
        for z, item in enumerate((self.origin_h, self.origin_v, self.values, self.keys,
                                  self.best_halo, self.best, self.output, self.query)):
            item.setZValue(z)
            plot.addItem(item, ignoreBounds=True)
        self._segments: dict[pg.PlotCurveItem, tuple] = {}  # arrow set -> the segments it shows now
        self._memo: dict[str, tuple] = {}

    def style(self, theme: Theme, pen_w, n_keys: int) -> None:
        """Pens of ``theme``; ``pen_w(base)`` is a line width at the current font scale."""
        origin = pg.mkPen(theme.muted, width=pen_w(1.5))
        self.origin_h.setPen(origin)
        self.origin_v.setPen(origin)
        self.keys.setPen(_many_pen(theme.key_color, pen_w(2.5), n_keys))
        halo = QColor(theme.key_color)
        halo.setAlpha(70)
        self.best_halo.setPen(pg.mkPen(halo, width=pen_w(13)))
        self.best.setPen(pg.mkPen(theme.key_color, width=pen_w(5)))
        self.values.setPen(_many_pen(theme.value_color, pen_w(2.5), n_keys, Qt.PenStyle.DashLine))
        self.output.setPen(pg.mkPen(theme.output_color, width=pen_w(5)))
        self.query.setPen(pg.mkPen(theme.query_color, width=pen_w(5)))

    def draw(self, vecs: PlaneVectors, best: int | None, show_v: bool, show_out: bool, head: float,
             px: tuple[float, float]) -> None:
        """Every set's segments: heads ``head`` pixels long, ``px`` a pixel's size in data units."""
        # All keys, the best one too (its bold arrow is drawn over it): the set then stays the same,
        # and cached, when only the best match changes (at 1024 keys a redraw costs ~15 ms).
        self._set(self.keys, *self._arrows("keys", vecs.keys, head, px))
        if best is not None:
            bx, by = arrow_segments(vecs.keys[best:best + 1], head * 1.15, px)
            self._set(self.best_halo, bx, by)
            self._set(self.best, bx, by)
        else:
            self._set(self.best_halo, _EMPTY, _EMPTY)
            self._set(self.best, _EMPTY, _EMPTY)
        if show_v:
            self._set(self.values, *self._arrows("values", vecs.values, head, px))
        else:
            self._set(self.values, _EMPTY, _EMPTY)
        self._set(self.query, *arrow_segments(vecs.query_vec, head * 1.15, px))
        if show_out and vecs.output is not None:
            self._set(self.output, *arrow_segments(vecs.output, head * 1.15, px))
        else:
            self._set(self.output, _EMPTY, _EMPTY)

    def _set(self, item: pg.PlotCurveItem, xs: np.ndarray, ys: np.ndarray) -> None:
        """Give ``item`` new segments only when they differ from those it shows: an unchanged set is
        neither re-set nor repainted (an edit of one query leaves the 1024 key arrows alone)."""
        old = self._segments.get(item)
        if old is not None and ((old[0] is xs and old[1] is ys)
                                or (np.array_equal(old[0], xs) and np.array_equal(old[1], ys))):
            return
        self._segments[item] = (xs, ys)
        item.setData(xs, ys, connect="pairs")

    def _arrows(self, name: str, vecs: np.ndarray, head: float, px) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~qkv_studio.ui.widgets.arrows.arrow_segments`, remembered while the vectors (the same
        array), head and zoom stay: a drag of the query leaves 64 or 1024 key arrows as they are."""
        last = self._memo.get(name)
        if last is not None and last[0] is vecs and last[1] == (head, tuple(px)):
            return last[2]
        xy = arrow_segments(vecs, head, px)
        self._memo[name] = (vecs, (head, tuple(px)), xy)
        return xy


def _many_pen(colour: str, width: float, n: int, style=Qt.PenStyle.SolidLine):
    """A set's pen: fainter and thinner when there are many arrows, so q and the best key show."""
    c = QColor(colour)
    if n > MAX_LABELLED:
        c.setAlpha(max(50, int(255 * math.sqrt(MAX_LABELLED / n))))
        width *= 0.6
    return pg.mkPen(c, width=width, style=style)
