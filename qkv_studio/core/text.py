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
        text = f"{mant}e{int(exp)}"
    return text.replace("-", "−")  # (the typographic minus, as the heatmap writes it: "−2.28e3", "1e−5")


_FIXED_LIMIT = 1e6  # from here on a fixed-decimals number is written in significant digits (1e+200)


def fmt_fixed(value: float, decimals: int = 2) -> str:
    """A weight-style number with a fixed number of decimals (0.54), as the cells show it.

    Rounded, never float noise: 8.84e-16 is "0.00" (and −1e-9 is "0.00", not "−0.00"); a huge
    number keeps its size in significant digits ("1.5e200") rather than 200 digits.
    """
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    if math.isnan(value):
        return "?"
    if abs(value) >= _FIXED_LIMIT:
        return fmt(value, 3)
    text = f"{value:.{decimals}f}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text.replace("-", "−")


def fmt_vector(vec: np.ndarray, digits: int = 3, limit: int = 4, *, decimals: int | None = None) -> str:
    """``[1, 2]``; long vectors show their first components and the width: ``[0.1, −2, … (64)]``.

    With ``decimals`` the components are written as :func:`fmt_fixed` writes a weight (``[1.00, 0.00]``):
    the form for a blend (an output, a weighted value), whose float noise must not read as a number.
    """
    if decimals is None:
        items = [fmt(float(x), digits) for x in vec[:limit]]
    else:
        items = [fmt_fixed(float(x), decimals) for x in vec[:limit]]
    if len(vec) > limit:
        items.append(f"… ({len(vec)})")
    return "[" + ", ".join(items) + "]"


def elide_words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, ending in "…" when cut.

    ("blocks the future" at 12 is "blocks the…", never "blocks th…"; a single word longer than the limit
    is cut inside it, as there is no boundary to cut at.)
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit]  # room for the "…" is made by the cut at the last space
    cut = head.rfind(" ")
    head = head[:cut] if cut > 0 else text[:max(1, limit - 1)]
    return head.rstrip(" ,;:—–-.") + "…"
