"""How numbers and vectors are written on screen (one place, so every panel agrees).

The writers themselves live in :mod:`qkv_studio.core.text` (the stage captions use them too).
"""

from __future__ import annotations

import math

from qkv_studio.core.text import fmt, fmt_fixed, fmt_vector  # noqa: F401 - (re-exported: the widgets' name for them)


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
