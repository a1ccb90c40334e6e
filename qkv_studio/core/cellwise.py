"""Q·Kᵀ cell by cell: one score as the lesson's matrix-multiply step, row · column, term by term.

The lesson points back to matrix multiplication "cell by cell, row · column": the score of query i
and key j is q_i · k_j = Σ_t q_it k_jt.  :func:`cell_text` writes that step for the selected cell
(``“sat” · “cat” = 1×2 + 2×1 = 4``), folding a long sum after :data:`MAX_TERMS` terms
(``… (64 terms)``), with the ÷√dₖ that follows at the scaled stage; :func:`step_cell` walks the grid
row by row, as a lecturer steps through it with a key.  NumPy only; the stepper's caption shows it.
"""

from __future__ import annotations

import math

from qkv_studio.core.attention import AttentionResult
from qkv_studio.core.cell_readout import dot_text
from qkv_studio.core.scene import Scene
from qkv_studio.core.text import fmt

#: Up to this many products are written out; a longer sum shows the first ones and "… (d terms)".
MAX_TERMS = 8
#: The stages at which the selected cell is worked out (the score, and the score scaled).
CELL_STAGES = ("scores", "scaled")


def products(scene: Scene, i: int, j: int) -> list[float]:
    """The terms q_it · k_jt of the score of query ``i`` and key ``j`` (their sum is the score)."""
    q, k, _ = scene.qkv()
    return [float(a) * float(b) for a, b in zip(q[i], k[j], strict=False)]


def cell_text(scene: Scene, result: AttentionResult, i: int, j: int, stage: str, *,
              max_terms: int = MAX_TERMS) -> str:
    """The selected cell's computation as rich text, or "" outside :data:`CELL_STAGES`.

    ``“sat” · “cat” = 1×2 + 2×1 = 4`` at Q·Kᵀ; at ÷√dₖ ``… = 4, ÷ √2 = 2.83``; a masked cell says so."""
    if stage not in CELL_STAGES:
        return ""
    n = result.n
    if not (0 <= i < n and 0 <= j < result.scores.shape[1]):
        raise IndexError(f"cell ({i}, {j}) is outside the {n}×{result.scores.shape[1]} grid")
    q, k, _ = scene.qkv()
    head = (f"<b>Cell q<sub>{scene.token_label(i)}</sub> · k<sub>{scene.token_label(j)}</sub></b> "
            f"(row “{scene.token_label(i)}” · column “{scene.token_label(j)}”)")
    score = float(result.scores[i, j]) if not result.blocked[i, j] else float(q[i] @ k[j])
    text = f"{head} = {dot_text(q[i], k[j], max_terms=max_terms)} = {fmt(score, 4)}"
    if stage == "scaled" and result.scale:
        root = math.sqrt(result.d_k)
        text += f", ÷ √{result.d_k} = {fmt(score / root, 4)}"
    if result.blocked[i, j]:
        text += "; the mask blocks this cell (−∞)"
    return text


def step_cell(i: int, j: int, n: int, delta: int = 1) -> tuple[int, int]:
    """The next (``delta`` = 1) or previous (−1) cell, row by row, wrapping at the grid's ends."""
    index = (i * n + j + delta) % (n * n)
    return divmod(index, n)
