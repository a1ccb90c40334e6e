"""Where the heatmap's texts go: token labels, axis titles, cell numbers and colour-bar ticks.

One layout for the live heatmap and the exported figure, so the window and a PNG/SVG agree.  It is
Qt-free: the caller passes a :class:`TextMeasure` (how wide a text is and how tall a line is at a given
size in px), the cell size in px and the sizes it would like; every function answers with what to draw.

The rules, per axis:

- every label is drawn when it fits: a label a little smaller (down to ``min_px``) beats a dropped one;
  key labels turn upright (90°) when they are wider than their column, and are abbreviated ("…") when
  they are longer than the room across the axis;
- only when even that does not fit (many tokens, small cells) are labels thinned to every k-th, and the
  ``keep`` indices (the selected query, a hovered cell) are always among them — their neighbours that
  would collide make way;
- an axis title is the long form when it fits its room, else the short one, else the short one
  abbreviated — never clipped;
- cell numbers are drawn only at a size where the widest number fits its cell and a line fits the row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

ELLIPSIS = "…"
#: Room between two neighbouring labels, as a fraction of their size.
GAP = 0.25
#: Key labels upright (90°, reading upwards) when they do not fit their column side by side.
UPRIGHT = 90


@dataclass(frozen=True)
class TextMeasure:
    """How the caller's font measures: ``width(text, px)`` in px, and a line's height per px of size."""

    width: Callable[[str, float], float]
    line: float

    def height(self, px: float) -> float:
        """A line's height at ``px``."""
        return self.line * px


@dataclass(frozen=True)
class AxisLabels:
    """The labels one axis draws: the indices ``shown`` with their ``texts`` (abbreviated where needed),
    at ``px``, turned by ``rotation`` degrees (0 or :data:`UPRIGHT`), every ``step``-th (1: all of them).
    ``extent`` is the room they take across the axis (px), ``pitch`` a label's room along it."""

    shown: tuple[int, ...]
    texts: tuple[str, ...]
    px: float
    rotation: int
    step: int
    extent: float
    pitch: float

    def pairs(self) -> list[tuple[int, str]]:
        """(index, text) of every shown label."""
        return list(zip(self.shown, self.texts, strict=False))


@dataclass(frozen=True)
class Title:
    """An axis title's text and size (the long form, a short form, or the short one abbreviated)."""

    text: str
    px: float
    width: float


def abbreviate(text: str, px: float, room: float, measure: TextMeasure) -> str:
    """``text`` whole if it is at most ``room`` wide at ``px``, else cut and ended with "…" (at least
    one character and the "…")."""
    if measure.width(text, px) <= room:
        return text
    lo, hi = 1, len(text) - 1
    while lo < hi:  # the longest prefix that fits with its "…"
        mid = (lo + hi + 1) // 2
        if measure.width(text[:mid] + ELLIPSIS, px) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[: max(1, lo)].rstrip() + ELLIPSIS


def thin(lo: int, hi: int, step: int, keep: Sequence[int] = ()) -> list[int]:
    """Indices lo, lo+step, … below ``hi``, with each of ``keep`` (inside lo…hi) forced in and the
    indices closer than ``step`` to a kept one dropped, so the kept label has its room."""
    step = max(1, int(step))
    start = lo if step == 1 else int(math.ceil(lo / step)) * step  # (the same grid at any zoom)
    chosen = list(range(start, hi, step))
    if step == 1:
        return chosen
    kept: list[int] = []  # of two kept ones closer than a step the first wins (a query over a hover)
    for k in keep:
        if lo <= k < hi and all(abs(int(k) - f) >= step for f in kept):
            kept.append(int(k))
    chosen = [i for i in chosen if all(abs(i - k) >= step for k in kept)] + kept
    return sorted(chosen)


def _visible(n: int, visible: tuple[int, int] | None) -> tuple[int, int]:
    if visible is None:
        return 0, n
    lo, hi = visible
    return max(0, int(lo)), min(n, int(hi))


def _step_for(pitch: float, cell: float) -> int:
    if cell <= 0:
        return 1 << 30
    return max(1, math.ceil(pitch / cell - 1e-9))


def row_labels(names: Sequence[str], cell_h: float, px: float, measure: TextMeasure, *,
               min_px: float, max_width: float, keep: Sequence[int] = (),
               visible: tuple[int, int] | None = None) -> AxisLabels:
    """The query axis: one label per row, side by side with its row (never rotated).

    All of them at the largest size in ``min_px``…``px`` whose line fits a row; when even ``min_px``
    does not fit, at ``min_px`` every k-th (and the ``keep`` rows).  Each at most ``max_width`` wide.
    ``visible`` (lo, hi) limits them to the rows in view (zoomed in)."""
    lo, hi = _visible(len(names), visible)
    shown, texts, size, step, extent = _line_per_cell(names, cell_h, px, min(min_px, px), max_width,
                                                      measure, lo, hi, keep)
    return AxisLabels(shown, texts, size, 0, step, extent, measure.height(size))


def key_labels(names: Sequence[str], cell_w: float, px: float, measure: TextMeasure, *,
               min_px: float, max_extent: float, keep: Sequence[int] = (),
               visible: tuple[int, int] | None = None, gap: float | None = None,
               flat_min_px: float | None = None) -> AxisLabels:
    """The key axis: side by side when every label and a ``gap`` fit its column (at down to
    ``flat_min_px``, by default ``min_px``), else upright (90°) one per column (down to ``min_px``), else
    upright at ``min_px`` every k-th (and the ``keep`` columns).  Upright labels are at most
    ``max_extent`` long (abbreviated)."""
    n = len(names)
    lo, hi = _visible(n, visible)
    min_px = min(min_px, px)
    flat_min = min(px, min_px if flat_min_px is None else flat_min_px)
    idx = range(lo, hi)
    gap = GAP * px if gap is None else gap
    widest = max((measure.width(names[i], 1.0) for i in idx), default=0.0)
    # side by side: the largest size at which the widest label and a gap fit a column
    if widest > 0 and cell_w > 0:
        flat = min(px, (cell_w - gap) / widest)
        if flat >= flat_min:
            every = tuple(idx)
            return AxisLabels(every, tuple(names[i] for i in every), flat, 0, 1, measure.height(flat), cell_w)
    # upright: a line per column
    shown, texts, size, step, extent = _line_per_cell(names, cell_w, px, min_px, max_extent, measure,
                                                      lo, hi, keep)
    return AxisLabels(shown, texts, size, UPRIGHT, step, extent, measure.height(size))


def _line_per_cell(names: Sequence[str], cell: float, px: float, min_px: float, max_len: float,
                   measure: TextMeasure, lo: int, hi: int, keep: Sequence[int]
                   ) -> tuple[tuple[int, ...], tuple[str, ...], float, int, float]:
    """One line of text per cell ``cell`` px across, at the largest size in ``min_px``…``px`` that
    fits, else at ``min_px`` every k-th (and the ``keep`` cells); each at most ``max_len`` long.
    Returns (shown indices, their texts, size, step, the longest text's length)."""
    fit = cell / (measure.line * (1 + GAP / 2)) if cell > 0 else 0.0
    if fit >= min_px:
        size, step = min(px, fit), 1
    else:  # (at the smallest legible size: the most names that fit)
        size = min_px
        step = _step_for(measure.height(size) * (1 + GAP / 2), cell)
    shown = tuple(thin(lo, hi, step, keep)) if hi > lo else ()
    texts = tuple(abbreviate(names[i], size, max_len, measure) for i in shown)
    extent = max((measure.width(t, size) for t in texts), default=0.0)
    return shown, texts, size, step, extent


def axis_title(forms: Sequence[str], px: float, room: float, measure: TextMeasure, *,
               min_px: float) -> Title:
    """The first of ``forms`` (longest first, e.g. "attending from (query)", "query") that fits ``room``
    at ``px``, else at a smaller size down to ``min_px``; else the last form abbreviated to fit (or
    nothing, when not even its first letter and "…" fit)."""
    min_px = min(min_px, px)
    for size in (px, min_px):
        for text in forms:
            w = measure.width(text, size)
            if w <= room:
                if size < px:  # (as large as the room allows)
                    size = min(px, size * room / w) if w > 0 else px
                    w = measure.width(text, size)
                return Title(text, size, w)
    text = abbreviate(forms[-1], min_px, max(room, 0.0), measure)
    if measure.width(text, min_px) > room:  # (not even "q…": no title rather than a clipped one)
        return Title("", min_px, 0.0)
    return Title(text, min_px, measure.width(text, min_px))


def value_px(samples: Sequence[str], cell_w: float, cell_h: float, measure: TextMeasure, *,
             max_px: float, min_px: float, width_frac: float = 0.86, height_frac: float = 0.8) -> float:
    """The size of the numbers in the cells: the largest (≤ ``max_px``) at which the widest of
    ``samples`` takes at most ``width_frac`` of a cell's width and a line ``height_frac`` of its height;
    0 when that is below ``min_px`` (no numbers)."""
    widest = max((measure.width(t, 1.0) for t in samples), default=0.0)
    if cell_w <= 0 or cell_h <= 0 or widest <= 0:
        return 0.0
    size = min(value_px_cap(cell_h, measure, max_px=max_px, height_frac=height_frac), width_frac * cell_w / widest)
    return size if size >= min_px else 0.0


def value_px_cap(cell_h: float, measure: TextMeasure, *, max_px: float, height_frac: float = 0.8) -> float:
    """The largest size :func:`value_px` can answer for any numbers (the row's height and ``max_px``
    bound it): below ``min_px`` there are no numbers to format or measure at all."""
    return min(max_px, height_frac * cell_h / measure.line)


def bar_ticks(positions: Sequence[float], px: float, measure: TextMeasure) -> list[int]:
    """Which of a colour bar's ticks (their positions along the bar, in px) to label so that no two
    labels of size ``px`` overlap: both ends always, then the others in order where they have room."""
    if not positions:
        return []
    room = measure.height(px) * (1 + GAP / 2)
    order = [0, len(positions) - 1] + list(range(1, len(positions) - 1))
    kept: list[int] = []
    for i in order:
        if i in kept:
            continue
        if all(abs(positions[i] - positions[k]) >= room for k in kept):
            kept.append(i)
    return sorted(kept)


def spaced(centres: Sequence[float], widths: Sequence[float], order: Sequence[int], *,
           gap: float) -> list[int]:
    """Which of a row of labels (centred at ``centres``, ``widths`` wide, in px) to draw so that no two
    overlap and each keeps ``gap`` from its neighbours: taken in ``order`` (the most important first —
    the largest weights above a blend's bars), each where it has room.  Returns the indices, sorted.
    (:func:`placed` along one line.)"""
    boxes = [[(c - w / 2, c + w / 2, 0.0, 1.0)] for c, w in zip(centres, widths, strict=False)]
    return sorted(placed(boxes, order, gap=gap))


Box = tuple[float, float, float, float]
"""A label's box in px: (left, right, bottom, top), y up."""


def placed(candidates: Sequence[Sequence[Box]], order: Sequence[int], *, gap: float,
           obstacles: Sequence[Box] = (), inside: Box | None = None) -> dict[int, int]:
    """Where labels go so that no two overlap: label ``i`` may stand at any of its ``candidates[i]``
    boxes (tried in turn — beside its arrow's head, then on the head's other sides); taken in ``order``
    (the most important first — the largest weights of a blend), each at its first candidate that keeps
    ``gap`` from the labels placed before it and from every ``obstacles`` box (other arrows' heads,
    another label drawn anyway) and lies within ``inside`` (the plot), else left out.
    Returns label → the index of its chosen candidate."""

    def apart(a: Box, b: Box) -> bool:
        return a[1] + gap <= b[0] or b[1] + gap <= a[0] or a[3] + gap <= b[2] or b[3] + gap <= a[2]

    def within(a: Box) -> bool:
        return inside is None or (inside[0] <= a[0] and a[1] <= inside[1] and inside[2] <= a[2] and a[3] <= inside[3])

    taken: list[Box] = []
    chosen: dict[int, int] = {}
    for i in order:
        for c, box in enumerate(candidates[i]):
            if within(box) and all(apart(box, b) for b in obstacles) and all(apart(box, b) for b in taken):
                chosen[i] = c
                taken.append(box)
                break
    return chosen
