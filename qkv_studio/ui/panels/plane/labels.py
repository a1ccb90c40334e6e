"""The plane's labels: "q sat", "k cat", "v mat", "output (blend)" at their arrows' heads.

A label sits on the side of its head away from the origin.  Labels whose boxes would overlap become one
("k b = k c" for coinciding heads, lines joined by " · " for close ones), the query's label moves
above or below its head rather than join labels of heads far from its own.  Keys and values are
labelled up to :data:`MAX_LABELLED` tokens (the query and the best key always).  :class:`PlaneLabels`
keeps the text items and says where their boxes reach (:meth:`PlaneLabels.boxes`), for the range.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem

from qkv_studio.core.scene import Scene
from qkv_studio.render.theme import Theme
from qkv_studio.ui.panels.plane.vectors import PlaneVectors

MAX_LABELLED = 16  # above this many tokens keys/values get no labels (the query and best key still do):
# more labels than this overlap into a grey mass in a panel-sized plane, and each costs a rich-text item

_NO_BOXES = np.zeros((0, 6))


class PlaneLabels:
    """The labels' text items on ``plot``, drawn by :meth:`draw`, with what they say
    (:meth:`texts`) and where they reach (:meth:`boxes`)."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self._plot = plot
        self.items: list[pg.TextItem] = []
        self._shows: dict[pg.TextItem, list] = {}  # label -> [html, (x, y, anchor), its size in px]
        self._texts: list[str] = []
        self._html_cache: dict[tuple, str] = {}
        self._sig: tuple | None = None  # what the labels show now
        self._boxes: np.ndarray | None = _NO_BOXES  # (None: to be measured)
        self._names: tuple = (None, [])  # (tokens, their labels): token_label is O(n), once per token list

    def texts(self) -> list[str]:
        """The plain texts of the visible labels (coincident heads share one label)."""
        return list(self._texts)

    def clear(self) -> None:
        """Remove every label (a new theme or font scale: each is made again)."""
        for item in self.items:
            self._plot.removeItem(item)
        self.items = []
        self._shows.clear()
        self._sig = None
        self._texts = []
        self._boxes = _NO_BOXES

    def forget(self) -> None:
        """Draw again next time, even if the heads and names are the same (another projection)."""
        self._sig = None

    def boxes(self) -> np.ndarray:
        """One row per visible label: its head (x, y) in data units and how far its box reaches from
        it in pixels, (left, right, down, up) — what a range needs to hold the label at any zoom."""
        if self._boxes is None:
            rows = []
            for item in self.items:
                if not item.isVisible():
                    continue
                shows = self._shows[item]
                x, y, (ax, ay) = shows[1]
                size = shows[2]
                if size is None:  # (measured once per text: the size of the laid-out rich text)
                    r = item.textItem.boundingRect()
                    size = shows[2] = (r.width(), r.height())
                w, h = size
                rows.append((x, y, ax * w, (1 - ax) * w, (1 - ay) * h, ay * h))
            self._boxes = np.clip(np.array(rows, dtype=np.float64), -1e300, 1e300) if rows else _NO_BOXES
        return self._boxes

    def hide(self) -> None:
        """Hide every label (another view draws the plane: the RoPE pair); the next draw shows them again."""
        for item in self.items:
            if item.isVisible():
                item.setVisible(False)
        self._sig = None
        self._texts = []
        self._boxes = _NO_BOXES

    def draw_entries(self, entries: list[tuple[float, float, str, str, bool]], theme: Theme, size: int,
                     px: tuple[float, float], lead: str = "") -> None:
        """Label the heads ``entries`` name ((x, y, text, colour, bold), as :func:`merge_close_labels`
        takes them): labels of heads other than the scene's vectors (the RoPE view's)."""
        self._sig = None
        self._boxes = None
        groups, anchors = merge_close_labels(entries, px, size, lead=lead)
        self._place(groups, anchors, theme, size)

    def draw(self, scene: Scene, vecs: PlaneVectors, query: int, best: int | None, show_v: bool,
             show_out: bool, theme: Theme, size: int, scale: float, px: tuple[float, float]) -> None:
        """Label the heads of ``vecs`` (``size``: the text's pixel size; ``px``: a pixel in data units)."""
        t = theme
        n = len(vecs.keys)
        # The same labels at the same places as last time (the second draw of an edit): nothing to do.
        _, k_arr, v_arr = scene.qkv()
        sig = (vecs.query_vec.tobytes(), vecs.output.tobytes() if show_out and vecs.output is not None else None,
               best, show_v, scene.tokens, query, size, t, scale, tuple(f"{p:.3g}" for p in px))
        last = self._sig
        if last is not None and last[0] == sig and last[1] is k_arr and last[2] is v_arr:
            return
        self._sig = (sig, k_arr, v_arr)
        self._boxes = None
        if self._names[0] is not scene.tokens:
            self._names = (scene.tokens, [scene.token_label(j) for j in range(scene.n)])
        names = self._names[1]
        n = min(n, len(names), len(vecs.values))  # (vectors and names of one scene, even mid-change)
        entries: list[tuple[float, float, str, str, bool]] = []  # x, y, text, colour, bold
        for j in range(n):
            if n <= MAX_LABELLED or j == best:
                entries.append((*vecs.keys[j], f"k {names[j]}", t.key_color, j == best))
        if show_v and n <= MAX_LABELLED:
            for j in range(n):
                entries.append((*vecs.values[j], f"v {names[j]}", t.value_color, False))
        # The query after the keys: it moves on every edit, and a label it joins or leaves must not
        # shift every other label onto another item (each new text is laid out again, ~0.3 ms).
        lead = f"q {names[query]}" if query < len(names) else "q"
        entries.append((*vecs.query_vec[0], lead, t.query_color, True))
        if show_out and vecs.output is not None:  # last: its coming and going leaves the others' items alone
            entries.append((*vecs.output[0], "output (blend)", t.output_color, True))
        groups, anchors = merge_close_labels(entries, px, size, lead=lead)
        self._place(groups, anchors, t, size)

    def _place(self, groups: dict, anchors: dict, t: Theme, size: int) -> None:
        texts = []
        while len(self.items) < len(groups):
            fill = QColor(t.background)
            fill.setAlpha(245)  # (an axis line behind a label must not strike through its text)
            item = pg.TextItem(fill=pg.mkBrush(fill))
            item.setZValue(20)
            # Rich text is laid out again on every paint: keep the drawn text as a picture instead
            # (the plane repaints under a moving arrow on every drag step).  Only the text: a cached
            # TextItem loses its background, and an axis line then strikes through the label.
            item.textItem.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            self._plot.addItem(item, ignoreBounds=True)
            self.items.append(item)
        for item, ((x, y), parts) in zip(self.items, groups.items(), strict=False):
            words = tuple((sep, s, c, b) for sep, (s, c, b, _) in zip(separators(parts), parts, strict=False))
            key = (words, size, t.muted)
            html = self._html_cache.get(key)  # the same labels come back on every edit and drag step
            if html is None:
                # (arrows at other heads on a line of their own: a merged label grows down, not off the plot)
                html = "".join(
                    ("<br>" if sep == " · " else
                     f'<span style="color:{t.muted}; font-size:{size}px">{sep}</span>' if sep else "")
                    + f'<span style="color:{c}; font-size:{size}px; font-weight:{800 if b else 500}">'
                    f'{html_escape(s)}</span>' for sep, s, c, b in words)
                if len(self._html_cache) > 4096:
                    self._html_cache.clear()
                self._html_cache[key] = html
            texts.append("".join(sep + s for sep, s, _, _ in words))
            # Re-laying out rich text costs ~0.3 ms a label: new text only for a label whose text changed
            # (the query's label moves on every edit, with the same words).
            shows = self._shows.setdefault(item, [None, None, None])
            if shows[0] != html:
                shows[0] = html
                shows[2] = None
                item.setHtml(html)
            anchor = anchors.get((x, y)) or anchor_of(x, y)
            if shows[1] != (x, y, anchor):
                shows[1] = (x, y, anchor)
                item.setAnchor(anchor)
                item.setPos(x, y)
            if not item.isVisible():
                item.setVisible(True)
        for item in self.items[len(groups):]:
            if item.isVisible():
                item.setVisible(False)
        self._texts = texts


def anchor_of(x: float, y: float) -> tuple[float, float]:
    """Where a label sits on its head: on the side away from the origin."""
    x, y = float(x), float(y)
    r = math.hypot(x, y)
    ux, uy = (x / r, y / r) if 0 < r < math.inf else (0.7, 0.7)
    return 0.5 - 0.6 * ux, 0.5 + 0.6 * uy


def merge_close_labels(entries: list[tuple[float, float, str, str, bool]], px: tuple[float, float],
                       size: int, lead: str = "") -> tuple[dict, dict]:
    """Labels whose boxes would overlap become one label, at the first one's head.

    ``entries`` are (x, y, text, colour, bold) in data coordinates; ``px`` is a pixel's size in data
    units and ``size`` the text's pixel size.  A label's box is estimated from its text (no layout: this
    runs on every drag step).  The merged parts keep their heads, so coinciding ones can read "k b = k c";
    the part ``lead`` (the query's) comes first in its label.  The lead's own label, when it would
    only meet a label of heads far from its own, moves above or below its head instead (returned as
    ``anchors``: head → anchor) — joined to them it would name an arrow it is not at.
    """
    groups: dict[tuple[float, float], list] = {}
    lines: dict[tuple[float, float], dict] = {}  # per label: its heads' lines, as characters
    boxes: dict[tuple[float, float], tuple[float, float, float, float]] = {}
    # (Python floats, not NumPy's: a far-off head's pixel position overflows to inf quietly)
    sx = 1.0 / float(px[0]) if px[0] > 0 and math.isfinite(px[0]) else 100.0
    sy = 1.0 / float(px[1]) if px[1] > 0 and math.isfinite(px[1]) else 100.0
    char, height = 0.6 * size, 1.3 * size

    def box(head: tuple[float, float], chars: int, rows: int, anchor=None) -> tuple[float, float, float, float]:
        """(left, right, bottom, top) in pixels, y up, of a label placed as the plane places it: anchored
        on the side of its head away from the origin (or at ``anchor``)."""
        x, y = float(head[0]), float(head[1])  # (Python floats: an overflow is inf, quietly)
        ax, ay = anchor or anchor_of(x, y)
        w, h = (chars + 1) * char, rows * height
        cx, cy = x * sx, y * sy
        return cx - ax * w, cx + (1 - ax) * w, cy - (1 - ay) * h, cy + ay * h

    def meets(a, b) -> bool:  # (inf − inf is nan, and nan compares False: far-off heads stay apart)
        return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]

    anchors: dict[tuple[float, float], tuple[float, float]] = {}
    for x, y, text, colour, bold in entries:
        mine = box((x, y), len(text), 1)
        if text == lead and (x, y) not in boxes:
            near = [h for h, b in boxes.items() if meets(mine, b)]
            if near and all(math.hypot((float(h[0]) - float(x)) * sx, (float(h[1]) - float(y)) * sy) > 2 * height
                            for h in near):
                # above its head, else below it, a line further out at a time
                for anchor in ((0.5, 1.15), (0.5, -0.15), (0.5, 2.3), (0.5, -1.3), (0.5, 3.45), (0.5, -2.45)):
                    moved = box((x, y), len(text), 1, anchor)
                    if not any(meets(moved, b) for b in boxes.values()):
                        mine = moved
                        anchors[(x, y)] = anchor
                        break
        for head, b in boxes.items():
            if (x, y) not in anchors and meets(mine, b):
                groups[head].append((text, colour, bold, (x, y)))
                rows = lines[head]
                rows[(x, y)] = rows[(x, y)] + 3 + len(text) if (x, y) in rows else len(text)  # (" = ")
                boxes[head] = box(head, max(rows.values()), len(rows))
                break
        else:
            groups[(x, y)] = [(text, colour, bold, (x, y))]
            lines[(x, y)] = {(x, y): len(text)}
            boxes[(x, y)] = mine
    return {head: _ordered(parts, lead) for head, parts in groups.items()}, anchors


def _ordered(parts: list, lead: str = "") -> list[tuple[str, str, bool, tuple[float, float]]]:
    """The parts of one label with those at one head next to each other (in order of first appearance),
    the ``lead`` part and its head first."""
    heads: dict[tuple[float, float], list] = {}
    for part in sorted(parts, key=lambda p: p[0] != lead):  # (stable: the rest keep their order)
        heads.setdefault(part[3], []).append(part)
    return [part for same in heads.values() for part in same]


def separators(parts: list) -> list[str]:
    """Before each part: nothing, " = " (the same head as the part before: the arrows coincide) or " · "."""
    return [""] + [" = " if b[3] == a[3] else " · " for a, b in zip(parts, parts[1:], strict=False)]


def html_escape(s: str) -> str:
    """``s`` safe inside rich text."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
