"""Colour scales that tell the truth.

Weights live on a fixed 0–1 scale (a sequential map); signed scores on a diverging map centred at 0
whose range is the data's own largest magnitude.  The window and every exporter take their colours
from here, so the screen and the figure agree pixel for pixel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qkv_studio.core.stages import SIGNED_STAGES, stage_spec

# Sequential maps for weights; a colour-blind-safe diverging map (CET-CBD1, blue–grey–yellow) for scores.
SEQUENTIAL = ("viridis", "cividis", "magma", "grayscale")
DIVERGING = "CET-CBD1"
DEFAULT_SEQUENTIAL = "viridis"

_LUT_CACHE: dict[str, np.ndarray] = {}


def lut(name: str, n: int = 256) -> np.ndarray:
    """An n×4 uint8 RGBA lookup table for a colormap name."""
    key = f"{name}:{n}"
    if key not in _LUT_CACHE:
        from qkv_studio.render.lut_data import TABLES  # (pyqtgraph's tables, kept: reading its CSV costs start-up time)

        if name == "grayscale":
            g = np.linspace(0, 255, n).round().astype(np.uint8)
            table = np.stack([g, g, g, np.full(n, 255, np.uint8)], axis=1)
        elif n == 256 and name in TABLES:
            table = np.frombuffer(bytes.fromhex(TABLES[name]), np.uint8).reshape(256, 4)
        else:
            import pyqtgraph as pg  # lazy: keeps pyqtgraph off the CSV/JSON export path

            cmap = pg.colormap.get(name)
            if cmap is None:
                raise ValueError(f"unknown colormap {name!r}")
            table = cmap.getLookupTable(0.0, 1.0, n, alpha=True)
        _LUT_CACHE[key] = np.ascontiguousarray(table, dtype=np.uint8)
    return _LUT_CACHE[key]


def is_signed(stage: str) -> bool:
    """Scores before the softmax are signed; weights are not (the stage registry says which is which)."""
    return stage in SIGNED_STAGES


@dataclass(frozen=True)
class ColorScale:
    """How values of one stage become colours: colormap, levels (lo, hi) and a legend title."""

    cmap: str
    lo: float
    hi: float
    label: str

    def normalise(self, values: np.ndarray) -> np.ndarray:
        """Values mapped to 0–1 on this scale (clipped); −∞ (masked) maps to NaN."""
        span = self.hi - self.lo
        with np.errstate(invalid="ignore", over="ignore"):
            t = (np.asarray(values, dtype=np.float64) - self.lo) / span
        t = np.where(np.isneginf(values), np.nan, t)
        return np.clip(t, 0.0, 1.0)

    def rgba(self, values: np.ndarray) -> np.ndarray:
        """RGBA uint8 colours of values (masked cells get alpha 0)."""
        table = lut(self.cmap)
        t = self.normalise(values)
        idx = np.nan_to_num(t * (len(table) - 1), nan=0).round().astype(int)
        out: np.ndarray = table[idx].copy()
        out[np.isnan(t)] = (0, 0, 0, 0)
        return out


LEGEND_LIMIT = 1e300
# Below this the legend's tick arithmetic underflows (scores of ±1e-323 made a tick spacing of 0 and a
# division by zero while painting): smaller scores are all but 0 and take the middle colours.
LEGEND_FLOOR = 1e-300


def scale_for(stage: str, matrix: np.ndarray, sequential: str = DEFAULT_SEQUENTIAL) -> ColorScale:
    """The honest scale for a stage's matrix: weights 0–1; scores symmetric about 0 at the data's max."""
    if not is_signed(stage):
        return ColorScale(sequential, 0.0, 1.0, stage_spec(stage).wording.legend)
    finite = matrix[np.isfinite(matrix)]
    m = float(np.max(np.abs(finite))) if finite.size else 1.0
    if m == 0:
        m = 1.0
    # Beyond this the legend's span (2m) and the axis arithmetic of the colour bar overflow; the few
    # cells past it take the end colours (their numbers are still printed exactly).
    m = min(max(m, LEGEND_FLOOR), LEGEND_LIMIT)
    return ColorScale(DIVERGING, -m, m, stage_spec(stage).wording.legend)


def text_is_dark(rgba: np.ndarray) -> np.ndarray:
    """True where dark text reads better than light text on the given cell colours (WCAG luminance)."""
    c = np.asarray(rgba, dtype=np.float64)[..., :3] / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    lum = 0.2126 * lin[..., 0] + 0.7152 * lin[..., 1] + 0.0722 * lin[..., 2]
    return lum > 0.179
