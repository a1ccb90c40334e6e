"""The stage morph's interpolation, shared by the window's heatmap and the exported animations.

When the stepper moves to a stage that shows another matrix, the heatmap blends from the old cell
colours and numbers to the new ones (``ui/panels/heatmap_view.py``); an animated export
(``export/motion.py``) draws the same blend frame by frame through the figure renderer.  Both call
these functions, so a GIF's frames are the window's morph.  NumPy only.

* :func:`ease` — Qt's ``QEasingCurve.InOutCubic`` (the window's animation curve), for frames drawn
  outside a ``QVariantAnimation``;
* :func:`blend_colours` — RGBA colours mixed linearly (``t`` = 0: the old, 1: the new);
* :func:`blend_values` — the numbers printed in the cells; a masked (−∞) cell is not interpolated,
  it shows the new value throughout.
"""

from __future__ import annotations

import numpy as np


def ease(t: float) -> float:
    """In-out cubic easing of ``t`` in [0, 1] (clamped), as ``QEasingCurve.InOutCubic``."""
    t = min(1.0, max(0.0, float(t)))
    if t < 0.5:
        return 4.0 * t * t * t
    u = -2.0 * t + 2.0
    return 1.0 - u * u * u / 2.0


def blend_colours(old: np.ndarray, new: np.ndarray, t: float) -> np.ndarray:
    """``old`` and ``new`` uint8 colour arrays of one shape, mixed at ``t`` (uint8, truncated as the window does)."""
    return (old.astype(np.float32) * (1.0 - t) + new.astype(np.float32) * t).astype(np.uint8)


def blend_values(old: np.ndarray, new: np.ndarray, t: float) -> np.ndarray:
    """The cell numbers at ``t``: interpolated where both are finite, else the new value."""
    both = np.isfinite(old) & np.isfinite(new)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(both, old * (1.0 - t) + new * t, new)
