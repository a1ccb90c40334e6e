"""The numbers behind the heads panel's drawing (Qt-free): the grid of small multiples, how thinly the
token names are ticked, the colour levels of a signed matrix and which cells take dark text.

The widgets in :mod:`qkv_studio.ui.lesson.heads_plots` measure text with Qt and pass the sizes in;
everything decided from those sizes is here, where it can be tested without a window.
"""

from __future__ import annotations

import math

import numpy as np

from qkv_studio.render.colormaps import text_is_dark


def grid_columns(h: int, width: float, height: float, label_height: float) -> int:
    """Columns of a grid of ``h`` square cells, each under a label, that make the cells the largest in a
    ``width`` × ``height`` room (the fewer columns on a tie)."""
    w, ht = max(width, 1.0), max(height, 1.0)

    def side(c: int) -> float:
        rows = math.ceil(h / c)
        return min(w / c, ht / rows - label_height)

    return max(range(1, h + 1), key=lambda c: (side(c), -c))


def tick_step(size_px: float, cell_px: float) -> int:
    """Every how many-th of the cells a label of ``size_px`` can be ticked without overlapping (≥ 1)."""
    return max(1, math.ceil(size_px / cell_px))


def symmetric_limit(m: np.ndarray) -> float:
    """The colour levels ±limit of a signed matrix: its largest |value| (1 for an empty, zero or
    non-finite one)."""
    lim = float(np.max(np.abs(m))) if m.size else 1.0
    return lim if lim > 0 and np.isfinite(lim) else 1.0


def dark_text(weights: np.ndarray, table: np.ndarray) -> np.ndarray:
    """True where dark text reads better on a 0–1 weight drawn with colour table ``table``."""
    idx = np.clip((weights * (len(table) - 1)).round().astype(int), 0, len(table) - 1)
    return text_is_dark(table[idx])


def subscript(i: int) -> str:
    """``i`` in subscript digits (head 1 → "₁", as in Q₁)."""
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))
