"""How numbers and vectors are written on screen (one place, so every panel agrees)."""

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


def parse_number(text: str) -> float:
    """Parse a typed number; raises ValueError with a message a person understands."""
    cleaned = text.strip().replace("−", "-").replace(",", ".") if text.count(",") == 1 and "." not in text \
        else text.strip().replace("−", "-")
    if not cleaned:
        raise ValueError("empty: type a number")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"“{text.strip()[:20]}” is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"“{text.strip()[:20]}” is not a finite number")
    return value
