"""The √d_k explorer's caption in words, from the numbers of :mod:`qkv_studio.core.saturation`.

Rich text (``<b>``, ``<sub>``), no colours: the explorer wraps it in its theme's.  Every number in it
is one of the :class:`~qkv_studio.core.saturation.SoftmaxStats` the explorer's cards show.
"""

from __future__ import annotations

import numpy as np

from qkv_studio.core.saturation import SoftmaxStats

SATURATED = 0.8  # a mean top weight above this: "the softmax saturates"


def explorer_caption(d_k: int, temperature: float, raw: SoftmaxStats, scaled: SoftmaxStats, samples: int,
                     *, tight: bool = False) -> str:
    """What the explorer's numbers say: raw scores swing by ±√d_k, the softmax saturates (or not), ÷√d_k
    brings them back to ±1; ``tight`` gives it in one sentence (a very short dock)."""
    d = int(d_k)
    root = f"{np.sqrt(d):.3g}"
    if tight:
        if d == 1:
            return "d<sub>k</sub> = 1: √1 = 1, scaling changes nothing: slide d<sub>k</sub> up."
        verdict = "the softmax saturates" if raw.max_weight > SATURATED else "the softmax still spreads"
        return (f"Raw scores swing by <b>±√{d} = ±{root}</b>: {verdict} (mean top weight "
                f"{raw.max_weight:.2f}); ÷√{d} brings them back to ±1 (mean top {scaled.max_weight:.2f}).")
    parts = [f"q·k adds up d<sub>k</sub> = {d} products of unit-size numbers, so raw scores swing by "
             f"about <b>±√{d} = ±{root}</b>."]
    if raw.max_weight > SATURATED:
        parts.append(f"The softmax goes all-or-nothing (top weight <b>{raw.max_weight:.2f}</b> on average "
                     f"over {samples:,} random queries) and its gradient goes flat (<b>{raw.gradient:.2f}</b>): "
                     f"learning stalls.")
    elif d > 1:
        parts.append(f"Raw, the softmax still spreads its weight (mean top weight {raw.max_weight:.2f} over "
                     f"{samples:,} random queries).")
    if d > 1:
        parts.append(f"÷√{d} brings them back to about ±1 (mean top weight {scaled.max_weight:.2f}, "
                     f"gradient {scaled.gradient:.2f}).")
    else:
        parts.append("With one dimension √d<sub>k</sub> = 1, so scaling changes nothing: slide d<sub>k</sub> up.")
    if abs(temperature - 1) > 1e-9:
        parts.append(f"Temperature {temperature:g} divides the scores again "
                     f"({'sharper' if temperature < 1 else 'flatter'}).")
    return " ".join(parts)
