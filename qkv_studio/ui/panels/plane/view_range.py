"""The plane's range: it fits the vectors — every arrow from the origin and every label, with a margin.

Labels are sized in pixels and arrows in data units, so "fits" is a question of scale: the smallest
number of data units per pixel at which the heads' box, each label's box around its head and the
margin all fit the view (:func:`fit_scale`, exact, no iteration) — up to :data:`LABEL_ROOM` times the
arrows' own fit: in a very narrow panel a label is cut rather than the arrows shrunk to dots.
:class:`PlaneRange` keeps the view box there without jumping on every small edit:

- after an edit, a scene load, a stage or query change (:meth:`PlaneRange.ensure`) it refits only when
  something is outside the view, or when everything is far inside it (a view more than
  :data:`LOOSE` times the fit's scale: after typing 1e200 and undoing it, say);
- during a drag (:meth:`PlaneRange.grow`) it only ever grows, with room to spare, when the dragged
  head or its label would leave the view; when a drag that grew it ends, it fits (the room to spare is
  no longer needed); any other drag's end is an edit like any other;
- :meth:`PlaneRange.fit` fits now (the fit key, new tokens, another projection).

Only pyqtgraph's public ViewBox API (``setRange``, ``viewRange``) is used.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg

LOOSE = 2.0  # refit when the fit needs less than 1/LOOSE of the view's scale: the arrows would fill < half
GROW = 1.5  # a drag that leaves the view grows it to this many times the fit's scale (room to go on)
MIN_SPAN = 1e-9  # heads all within this of the origin are drawn in a view of about ±1 (zero vectors)
# Labels may widen the view to at most this many times the arrows' own fit: in a narrow panel, labels wider
# than the plane (many merged into one) would otherwise shrink the arrows to dots — and at the smaller
# zoom more labels merge, into a wider label still.  There a label is cut rather than the arrows shrunk.
LABEL_ROOM = 2.0

Range = tuple[tuple[float, float], tuple[float, float]]


def _axis_scale(pos: np.ndarray, below: np.ndarray, above: np.ndarray, room: float) -> float:
    """The least scale s (data units per pixel) with every pos[i] + above[i]·s − (pos[j] − below[j]·s)
    ≤ room·s: the pairs' condition, solved for s pair by pair (a few dozen labels: a small matrix)."""
    gap = pos[:, None] - pos[None, :]
    free = room - above[:, None] - below[None, :]
    free = np.maximum(free, 0.25 * room)  # (a label wider than the plane: show the heads at least)
    with np.errstate(over="ignore", invalid="ignore"):
        need = np.max(gap / free)
    return float(need) if np.isfinite(need) and need > 0 else 0.0


class _Points:
    """The heads' box (as Python floats) and the labels' heads and reach (arrays), read once per question."""

    def __init__(self, heads: np.ndarray, boxes: np.ndarray) -> None:
        lo, hi = np.clip(heads.min(axis=0), -1e300, 1e300), np.clip(heads.max(axis=0), -1e300, 1e300)
        self.x0, self.y0, self.x1, self.y1 = float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])
        if not max(self.x1 - self.x0, self.y1 - self.y0) > MIN_SPAN:  # (zero vectors: about ±1)
            self.x0, self.y0 = min(self.x0, -1.0), min(self.y0, -1.0)
            self.x1, self.y1 = max(self.x1, 1.0), max(self.y1, 1.0)
        self.boxes = boxes

    def heads_reach(self, scale: float, margin: float) -> tuple[float, float, float, float]:
        """(x0, x1, y0, y1) of the heads' box, ``margin`` pixels beyond it at ``scale``."""
        m = margin * scale
        return self.x0 - m, self.x1 + m, self.y0 - m, self.y1 + m

    def reach(self, scale: float, margin: float) -> tuple[float, float, float, float]:
        """(x0, x1, y0, y1) reached by the heads and labels at ``scale``, ``margin`` pixels beyond them."""
        x0, x1, y0, y1 = self.heads_reach(scale, margin)
        b = self.boxes
        if len(b):
            with np.errstate(over="ignore", invalid="ignore"):
                x0 = min(x0, float(np.min(b[:, 0] - (b[:, 2] + margin) * scale)))
                x1 = max(x1, float(np.max(b[:, 0] + (b[:, 3] + margin) * scale)))
                y0 = min(y0, float(np.min(b[:, 1] - (b[:, 4] + margin) * scale)))
                y1 = max(y1, float(np.max(b[:, 1] + (b[:, 5] + margin) * scale)))
        return x0, x1, y0, y1

    def scale(self, size: tuple[float, float], margin: float) -> float:
        """See :func:`fit_scale`."""
        w, h = size[0] - 2 * margin, size[1] - 2 * margin
        alone = max((self.x1 - self.x0) / w, (self.y1 - self.y0) / h)
        b = self.boxes
        if not len(b):
            return alone
        zeros = np.zeros(2)
        x = np.concatenate([[self.x0, self.x1], b[:, 0]])
        y = np.concatenate([[self.y0, self.y1], b[:, 1]])
        left, right, down, up = (np.concatenate([zeros, b[:, i]]) for i in range(2, 6))
        both = max(_axis_scale(x, left, right, w), _axis_scale(y, down, up, h))
        return min(both, LABEL_ROOM * alone)


def fit_scale(heads: np.ndarray, boxes: np.ndarray, size: tuple[float, float], margin: float) -> float:
    """Data units per pixel of the tightest view of ``size`` pixels holding the ``heads`` (n × 2, data
    units) and the label ``boxes`` (rows of x, y and the left, right, down, up reach in pixels, as
    :meth:`~qkv_studio.ui.panels.plane.labels.PlaneLabels.boxes` gives them), ``margin`` pixels inside
    each edge; at most :data:`LABEL_ROOM` times the scale that holds the heads alone."""
    return _Points(heads, boxes).scale(size, margin)


def fitted_range(heads: np.ndarray, boxes: np.ndarray, size: tuple[float, float], margin: float,
                 at_least: float = 0.0) -> Range:
    """The view of ``size`` pixels that fits (see :func:`fit_scale`), at a scale of at least
    ``at_least``, centred on what it holds.  A plane too small for its margins (not yet laid out)
    gets the heads with a fifth of their span around them."""
    w, h = float(size[0]), float(size[1])
    pts = _Points(heads, boxes)
    if w - 2 * margin < 8 or h - 2 * margin < 8:
        pad = 0.22 * max(pts.x1 - pts.x0, pts.y1 - pts.y0)
        return (pts.x0 - pad, pts.x1 + pad), (pts.y0 - pad, pts.y1 + pad)
    scale = max(pts.scale(size, margin), at_least)
    x0, x1, y0, y1 = pts.reach(scale, margin)
    cx, cy = 0.5 * x0 + 0.5 * x1, 0.5 * y0 + 0.5 * y1  # (halves first: no overflow near 1e300)
    half_w, half_h = max(0.5 * w * scale, 0.5 * (x1 - x0)), max(0.5 * h * scale, 0.5 * (y1 - y0))
    return (cx - half_w, cx + half_w), (cy - half_h, cy + half_h)


def verdict(view: Range, heads: np.ndarray, boxes: np.ndarray, size: tuple[float, float],
            margin: float, *, loose: bool = True) -> str:
    """How ``view`` holds the heads and labels: "outside" (a head, or a label the fit would hold, reaches
    past an edge, within half the margin), "loose" (the fit's scale is under 1/:data:`LOOSE` of the
    view's; only asked if ``loose``) or "fits"."""
    (vx0, vx1), (vy0, vy1) = view
    w, h = float(size[0]), float(size[1])
    if not (w > 0 and h > 0):
        return "fits"
    scale = max((vx1 - vx0) / w, (vy1 - vy0) / h)
    pts = _Points(heads, boxes)

    def past(x0, x1, y0, y1) -> bool:
        return x0 < vx0 or x1 > vx1 or y0 < vy0 or y1 > vy1

    if past(*pts.heads_reach(scale, 0.5 * margin)):
        return "outside"
    if w - 2 * margin < 8 or h - 2 * margin < 8:
        return "fits"
    fit = None
    if past(*pts.reach(scale, 0.5 * margin)):
        # (labels past the edge: a refit helps if the fit holds them, not where they cannot all fit)
        fit = pts.scale(size, margin)
        x0, x1, y0, y1 = pts.reach(fit, margin)
        if x1 - x0 <= w * fit * (1 + 1e-9) and y1 - y0 <= h * fit * (1 + 1e-9):
            return "outside"
    if loose and scale > LOOSE * (pts.scale(size, margin) if fit is None else fit):
        return "loose"
    return "fits"


class PlaneRange:
    """Keeps ``view_box`` fitted to what the plane draws.

    ``content()`` gives (heads, label boxes) as drawn now; ``size()`` the view box's size in pixels;
    ``margin()`` the margin in pixels.  Setting the range redraws the plane (it listens to the view
    box), so labels that merge or part at the new zoom are measured again: at most a few passes.
    """

    def __init__(self, view_box: pg.ViewBox, content: Callable[[], tuple[np.ndarray, np.ndarray]],
                 size: Callable[[], tuple[float, float]], margin: Callable[[], float]) -> None:
        self._view_box = view_box
        self.grown = False  # the view grew under a drag since the last fit (the drag's end fits it)
        self._content = content
        self._size = size
        self._margin = margin

    def state(self, *, loose: bool = True) -> str:
        """:func:`verdict` of the current view."""
        heads, boxes = self._content()
        return verdict(self._view_box.viewRange(), heads, boxes, self._size(), self._margin(), loose=loose)

    def fit(self) -> None:
        """Fit now, however the view holds the vectors."""
        self.grown = False
        seen: list = []
        for _ in range(4):  # (the labels, drawn again for the new zoom, may merge or part: fit what they are then)
            if not self._set(0.0):
                return
            now = self._view_box.viewRange()
            if any(np.allclose(now, r, rtol=1e-9, atol=1e-12) for r in seen):
                # A cycle: labels that merge at one zoom part at the other, each fitting the other zoom —
                # the fit ended on either, as the view started (the fit key gave another view than Fit).
                # The loosest holds the labels in both forms.
                (x0, x1), (y0, y1) = max(seen, key=lambda r: (r[0][1] - r[0][0]) * (r[1][1] - r[1][0]))
                self._view_box.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
                return
            seen.append(now)

    def ensure(self) -> bool:
        """Fit if something is outside the view or everything far inside it; True if it did."""
        if self.state() == "fits":
            return False
        self.fit()
        return True

    def grow(self) -> bool:
        """During a drag: if something would leave the view, widen it (never narrow it) to room to
        spare; True if it did."""
        if self.state(loose=False) != "outside":
            return False
        (x0, x1), (y0, y1) = self._view_box.viewRange()
        w, h = self._size()
        now = max((x1 - x0) / w, (y1 - y0) / h) if w > 0 and h > 0 else 0.0
        heads, boxes = self._content()
        need = fit_scale(heads, boxes, self._size(), self._margin())
        self._set(max(now, GROW * need))
        self.grown = True
        return True

    def _set(self, at_least: float) -> bool:
        """Set the fitted range (at a scale of at least ``at_least``); False if the view is already there."""
        heads, boxes = self._content()
        xr, yr = fitted_range(heads, boxes, self._size(), self._margin(), at_least)
        (x0, x1), (y0, y1) = self._view_box.viewRange()
        tol = 1e-9 * max(x1 - x0, y1 - y0, 1e-300)
        if max(abs(xr[0] - x0), abs(xr[1] - x1), abs(yr[0] - y0), abs(yr[1] - y1)) <= tol:
            return False
        self._view_box.setRange(xRange=xr, yRange=yr, padding=0)
        return True
