"""What one heatmap cell is, worked out: the text of the hover read-out (NumPy only, never Qt).

For the cell (query i, key j) at a stage, the computation of every stage up to that one::

    q_sat · k_cat = 1×2 + 2×1 = 4
    ÷ √2: 4 / 1.41 = 2.83
    w(sat→cat) = exp(2.83) / Σⱼ exp(s̃ⱼ) = 0.54

Long dot products are folded (the first terms, "…", how many there are).  A masked cell says so.
The widget only shows the text; the maths is here, from the Scene's vectors and the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from qkv_studio.core.attention import AttentionResult
from qkv_studio.core.stages import shown_matrix
from qkv_studio.core.text import fmt, fmt_fixed

#: Dot products with more terms than this show the first ones and "… (d terms)".
MAX_TERMS = 4


def _term(a: float, b: float) -> str:
    return f"{fmt(a, 3)}×{_paren(fmt(b, 3))}"


def _paren(text: str) -> str:
    return f"({text})" if text.startswith("−") else text


def dot_text(q: np.ndarray, k: np.ndarray, *, max_terms: int = MAX_TERMS) -> str:
    """``1×2 + 2×1`` — the products of a dot product, folded after ``max_terms`` terms."""
    d = len(q)
    terms = [_term(float(q[t]), float(k[t])) for t in range(min(d, max_terms if d > max_terms else d))]
    if d > max_terms:
        terms = terms[: max_terms - 1] + [f"… ({d} terms)"]
    return " + ".join(terms) if terms else "0"


def cell_readout(tokens: Sequence[str], q: np.ndarray | None, k: np.ndarray | None,
                 result: AttentionResult, stage: str, i: int, j: int) -> str:
    """The hover text of cell (query ``i``, key ``j``) at ``stage``: the query and key tokens, then one
    line per stage up to the one shown.  ``q``/``k`` (n×d_k) give the dot product's terms; without them
    (or of another width) only its value is given."""
    n = result.n
    if not (0 <= i < n and 0 <= j < result.scores.shape[1]):
        raise IndexError(f"cell ({i}, {j}) is outside the {n}×{result.scores.shape[1]} matrix")
    qi, kj = tokens[i], tokens[j]
    shown = shown_matrix(stage)
    lines = [f"query “{qi}” → key “{kj}”"]
    if result.blocked[i, j]:
        lines.append("blocked by the mask: score −∞, weight 0")
        return "\n".join(lines)
    score = float(result.scores[i, j])
    if q is not None and k is not None and q.shape[0] == n and k.shape[0] > j and q.shape[1] == k.shape[1]:
        lines.append(f"q·k = {dot_text(q[i], k[j])} = {fmt(score, 3)}")
    else:
        lines.append(f"q·k = {fmt(score, 3)}")
    if shown == "scores":
        return "\n".join(lines)
    scaled = float(result.scaled[i, j])
    if result.scale:
        root = math.sqrt(result.d_k)
        lines.append(f"÷ √{result.d_k}: {fmt(score, 3)} / {fmt(root, 3)} = {fmt(scaled, 3)}")
    else:
        lines.append(f"not scaled: {fmt(scaled, 3)}")
    if shown == "scaled":
        return "\n".join(lines)
    weight = float(result.weights[i, j])
    lines.append(f"w({qi}→{kj}) = exp({fmt(scaled, 3)}) / Σⱼ exp(s̃ⱼ) = {fmt_fixed(weight)}")
    return "\n".join(lines)
