"""How numbers and vectors are written as text (one place, so every panel and caption agrees).

NumPy only: the stage captions (:mod:`qkv_studio.core.captions`) and the widgets both use it.
"""

from __future__ import annotations

import math

import numpy as np


def fmt(value: float, digits: int = 4) -> str:
    """A number as a person writes it: up to ``digits`` significant digits, no trailing zeros."""
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    if math.isnan(value):
        return "?"
    if value == 0:
        return "0"
    text = f"{value:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text.replace("-", "−")


def fmt_fixed(value: float, decimals: int = 2) -> str:
    """A weight-style number with a fixed number of decimals (0.54)."""
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    return f"{value:.{decimals}f}".replace("-", "−")


def fmt_vector(vec: np.ndarray, digits: int = 3, limit: int = 4) -> str:
    """``[1, 2]``; long vectors show their first components and the width: ``[0.1, −2, … (64)]``."""
    items = [fmt(float(x), digits) for x in vec[:limit]]
    if len(vec) > limit:
        items.append(f"… ({len(vec)})")
    return "[" + ", ".join(items) + "]"
