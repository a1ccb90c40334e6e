"""Scaled dot-product attention, stage by stage, in NumPy only.

``compute(q, k, v)`` returns every intermediate the lesson walks through: the raw scores Q·Kᵀ, the
scores divided by √d_k, the row softmax and the weighted blend of the values.  Ordinary inputs take
the textbook path (``q @ k.T``, subtract the row max, ``exp``, normalise), so the numbers are exactly
the lesson's.  Only cells whose product overflows the double range (inputs near 1e300) are evaluated
from row-normalised vectors in log space, which keeps them finite and the softmax exact (one-hot or a
tie, as it must be at that magnitude).  Each cell depends only on its own query and key, so a key the
mask hides can never change another key's result.  A fully masked row gives zero weights (flagged)
instead of NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

import numpy as np

from qkv_studio.core.stages import shown_matrix

MaskSpec = Literal["none", "causal"] | np.ndarray

_FMAX = np.finfo(np.float64).max
# Beyond this factor every softmax is one-hot to double precision; capping it avoids inf·0.
_SCALE_CAP = 1e300


@dataclass(frozen=True)
class AttentionResult:
    """All stages of one attention computation (n queries, m keys).

    ``scores`` and ``scaled`` hold −∞ where the mask blocks a key; ``weights`` holds exactly 0 there.
    ``fully_masked`` flags query rows whose every key is blocked (their weights and output are 0).
    The fields marked ``per_query`` hold one row per query, computed from that query alone (an edit of a
    few queries recomputes just their rows: :func:`update_rows`, and the Session's live result);
    :data:`ROW_FIELDS` lists them.
    """

    scores: np.ndarray = field(metadata={"per_query": True})
    scaled: np.ndarray = field(metadata={"per_query": True})
    weights: np.ndarray = field(metadata={"per_query": True})
    output: np.ndarray = field(metadata={"per_query": True})
    blocked: np.ndarray
    fully_masked: np.ndarray = field(metadata={"per_query": True})
    d_k: int
    scale: bool

    @property
    def n(self) -> int:
        return int(self.weights.shape[0])

    def stage(self, name: str) -> np.ndarray:
        """The n×n matrix shown for a stage (``vectors``/``output`` fall back to their neighbours)."""
        out: np.ndarray = getattr(self, shown_matrix(name))
        return out


#: The result's fields with one row per query (``scores`` … ``fully_masked``), read from the type.
ROW_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AttentionResult) if f.metadata.get("per_query"))


def causal_mask(n: int, m: int | None = None) -> np.ndarray:
    """Boolean n×m mask, True above the diagonal: token i may not look at tokens after i."""
    m = n if m is None else m
    return np.triu(np.ones((n, m), dtype=bool), k=1)


def resolve_mask(mask: MaskSpec, n: int, m: int) -> np.ndarray:
    """Turn ``"none"``, ``"causal"`` or a boolean array into an n×m boolean array (True = blocked)."""
    if isinstance(mask, str):
        if mask == "none":
            return np.zeros((n, m), dtype=bool)
        if mask == "causal":
            return causal_mask(n, m)
        raise ValueError(f"unknown mask {mask!r}: expected 'none', 'causal' or a boolean matrix")
    arr = np.asarray(mask)
    if arr.shape != (n, m):
        raise ValueError(f"mask has shape {arr.shape} but the scores are {n}×{m}")
    if arr.dtype != bool:
        raise ValueError("a custom mask must be a boolean matrix (True = blocked)")
    return arr


def _row_norms(a: np.ndarray) -> np.ndarray:
    """Largest absolute entry of each row, 1 for all-zero rows (a safe divisor)."""
    s = np.max(np.abs(a), axis=1) if a.shape[1] else np.zeros(a.shape[0])
    return np.where(s > 0, s, 1.0)


def _check(name: str, a: np.ndarray) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (rows = tokens), got {arr.ndim}-D")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite numbers")
    return arr


def masked_softmax(unit: np.ndarray, factor: np.ndarray, blocked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row softmax of ``unit * factor`` (factor ≥ 0 per row) with blocked entries at exactly 0.

    Subtracting the row maximum *before* multiplying by the factor keeps every exponent ≤ 0 and
    finite whatever the magnitude.  Returns (weights, fully_masked_rows).
    """
    n = unit.shape[0]
    fully = np.all(blocked, axis=1) if unit.shape[1] else np.ones(n, dtype=bool)
    work = np.where(blocked, -np.inf, unit)
    row_max = np.max(np.where(blocked, -np.inf, unit), axis=1, keepdims=True) if unit.shape[1] else np.zeros((n, 1))
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    f = np.minimum(factor, _SCALE_CAP)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        shifted = work - row_max  # ≤ 0 (−∞ where blocked or too far below the max to matter)
        z = np.where(shifted == 0, 0.0, shifted * f)
        e = np.exp(z)
    e = np.where(blocked, 0.0, e)
    total = e.sum(axis=1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights, fully


def _extreme(q: np.ndarray, k: np.ndarray, scores: np.ndarray, scaled: np.ndarray, exact: np.ndarray,
             blocked: np.ndarray, divisor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scores, scaled scores and weights when some products overflow the double range.

    Every cell is written ``sign · exp(L)`` with ``L = log|q̂·k̂| + log‖q‖ + log‖k‖ − log divisor``
    (q̂, k̂ row-normalised, so nothing overflows).  Cells that fit in a double keep their exact value
    (or the estimate, when only an intermediate overflowed); the rest are shown as ±max-double.  A
    softmax row holding a value beyond the double range is one-hot (or a tie) in double arithmetic:
    neighbouring doubles there are ~1e292 apart.
    """
    sq, sk = _row_norms(q), _row_norms(k)
    unit = (q / sq[:, None]) @ (k / sk[:, None]).T  # |unit| ≤ d_k: always finite
    sign = np.sign(unit)
    with np.errstate(divide="ignore"):
        log_mag = np.log(np.abs(unit)) + np.log(sq)[:, None] + np.log(sk)[None, :]
    log_fmax = np.log(_FMAX)
    with np.errstate(over="ignore", invalid="ignore"):
        est_scores = np.clip(sign * np.exp(log_mag), -_FMAX, _FMAX)
        est_scaled = np.clip(sign * np.exp(log_mag - np.log(divisor)), -_FMAX, _FMAX)
    scores = np.where(np.isfinite(scores), scores, est_scores)
    scaled = np.where(exact, scaled, est_scaled)
    scaled_log = log_mag - np.log(divisor)
    huge = ~exact & (scaled_log > log_fmax) & ~blocked
    weights, fully = masked_softmax(scaled, np.ones((scores.shape[0], 1)), blocked | huge)
    for i in np.flatnonzero(huge.any(axis=1)):
        pos = huge[i] & (sign[i] > 0)
        if pos.any():  # the largest value beyond the double range takes everything
            top = pos & (scaled_log[i] == scaled_log[i][pos].max())
        elif (~blocked[i] & ~huge[i]).any():  # only hugely negative extras: they get 0, already so
            continue
        else:  # every allowed value is hugely negative: the least negative wins
            top = huge[i] & (scaled_log[i] == scaled_log[i][huge[i]].min())
        weights[i] = top / top.sum()
        fully[i] = False
    return scores, scaled, weights, fully


def compute(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    mask: MaskSpec = "none",
    scale: bool = True,
    temperature: float = 1.0,
) -> AttentionResult:
    """Scaled dot-product attention ``softmax(Q·Kᵀ/√d_k)·V`` with every stage kept.

    ``mask`` is ``"none"``, ``"causal"`` or an n×m boolean array (True = blocked).  ``scale=False``
    skips the division by √d_k; ``temperature`` (> 0) further divides the scores before the softmax.
    """
    q = _check("Q", q)
    k = _check("K", k)
    v = _check("V", v)
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"Q rows have {q.shape[1]} numbers but K rows have {k.shape[1]}: they must share d_k")
    if k.shape[0] != v.shape[0]:
        raise ValueError(f"K has {k.shape[0]} rows but V has {v.shape[0]}: one key and one value per token")
    if q.shape[1] == 0:
        raise ValueError("d_k must be at least 1")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError("temperature must be a positive finite number")
    n, d_k = q.shape
    m = k.shape[0]
    blocked = resolve_mask(mask, n, m)
    root = np.sqrt(d_k) if scale else 1.0
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        scores = q @ k.T
        scaled = scores / root if scale else scores.copy()
        if temperature != 1.0:
            scaled = scaled / temperature
    exact = np.isfinite(scores) & np.isfinite(scaled)
    if exact.all():
        weights, fully = masked_softmax(scaled, np.ones((n, 1)), blocked)
    else:
        scores, scaled, weights, fully = _extreme(q, k, scores, scaled, exact, blocked, root * temperature)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        output = weights @ v
        if not np.all(np.isfinite(output)):  # a blend of values near max-double rounded past it
            col = _row_norms(v.T)
            output = np.clip((weights @ (v / col)) * col, -_FMAX, _FMAX)
    scores = np.where(blocked, -np.inf, scores)
    scaled = np.where(blocked, -np.inf, scaled)
    return AttentionResult(scores, scaled, weights, output, blocked, fully, int(d_k), bool(scale))


def update_rows(
    prev: AttentionResult,
    rows: np.ndarray | list[int],
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    mask: MaskSpec = "none",
    scale: bool = True,
    temperature: float = 1.0,
) -> AttentionResult:
    """``compute`` for a few changed query rows, reusing every other row of ``prev``.

    An edit to one query changes one row of every stage; this costs O(m·d) instead of O(n·m·d).
    """
    rows = np.asarray(rows, dtype=int)
    n = q.shape[0]
    blocked_full = resolve_mask(mask, n, k.shape[0])
    part = compute(q[rows], k, v, mask=blocked_full[rows], scale=scale, temperature=temperature)
    arrays = {name: getattr(prev, name).copy() for name in ROW_FIELDS}
    for name, a in arrays.items():
        a[rows] = getattr(part, name)
    return AttentionResult(**arrays, blocked=blocked_full, d_k=prev.d_k, scale=prev.scale)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The lesson's numerically stable softmax (subtract the max first)."""
    x = np.asarray(x, dtype=np.float64)
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    out: np.ndarray = e / e.sum(axis=axis, keepdims=True)
    return out


def project(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three learned projections of the same embeddings: Q = X·W^Q, K = X·W^K, V = X·W^V."""
    x = _check("X", x)
    mats = []
    for name, w in (("W^Q", wq), ("W^K", wk), ("W^V", wv)):
        w = _check(name, w)
        if w.shape[0] != x.shape[1]:
            raise ValueError(f"{name} has {w.shape[0]} rows but X rows have {x.shape[1]} numbers (d_model)")
        with np.errstate(over="ignore", invalid="ignore"):
            p = x @ w
        if not np.isfinite(p).all():  # (a finite product had no overflow on the way: it is exact)
            p = _scaled_product(x, w, name)
        mats.append(p)
    return mats[0], mats[1], mats[2]


def _scaled_product(x: np.ndarray, w: np.ndarray, name: str) -> np.ndarray:
    """X·W where a partial product or sum overflowed: each row of X and each column of W is scaled by
    a power of two near its largest magnitude (exact), multiplied, and scaled back with ``ldexp``, so
    every entry whose true value is a double comes out right.  Raises ValueError otherwise.
    """
    _, ex = np.frexp(np.abs(x).max(axis=1))
    _, ew = np.frexp(np.abs(w).max(axis=0))
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        r = np.ldexp(x, -ex[:, None]) @ np.ldexp(w, -ew[None, :])
        p = np.ldexp(r, ex[:, None] + ew[None, :])
    bad = ~np.isfinite(p)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        product = name.replace("W^", "")
        raise ValueError(f"{product} = X·{name} is too large: row {i + 1}, column {j + 1} would be beyond "
                         f"±{_FMAX:.3g}, the largest number a double holds; make X or {name} smaller")
    out: np.ndarray = p
    return out


@dataclass(frozen=True)
class RowStats:
    """What the views show about one query's weights: their sum, the largest and where, the entropy."""

    row_sum: float
    max_weight: float
    argmax: int
    entropy_bits: float
    fully_masked: bool


def row_stats(result: AttentionResult, row: int) -> RowStats:
    """Per-query statistics of the softmax row ``row``."""
    w = result.weights[row]
    nz = w[w > 0]
    entropy = float(-(nz * np.log2(nz)).sum()) if nz.size else 0.0
    return RowStats(
        row_sum=float(w.sum()),
        max_weight=float(w.max()) if w.size else 0.0,
        argmax=int(np.argmax(w)) if w.size else 0,
        entropy_bits=max(entropy, 0.0),
        fully_masked=bool(result.fully_masked[row]),
    )


def contributions(result: AttentionResult, v: np.ndarray, row: int) -> np.ndarray:
    """What each value adds to query ``row``'s output: wⱼ·vⱼ (their sum is the output)."""
    out: np.ndarray = result.weights[row][:, None] * np.asarray(v, dtype=np.float64)
    return out
