"""Multi-head attention: one set of projections split into h heads that attend independently (NumPy only).

The standard arrangement (Vaswani et al. 2017, §3.2.2): W^Q, W^K, W^V are d_model × d_model (more
generally d_model × d_k and d_model × d_v); head i uses the i-th block of d_k/h columns of W^Q and W^K
and d_v/h columns of W^V.  So Q_i = X·W^Q[:, block i] is exactly the i-th column block of Q = X·W^Q,
and each head runs ordinary scaled dot-product attention with its own, smaller d_k (its scores are
divided by √(d_k/h)).  The heads' outputs are concatenated side by side (n × d_v) and, when W^O is
given, projected: MultiHead(X) = Concat(head₁, …, head_h)·W^O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from qkv_studio.core.attention import AttentionResult, MaskSpec, compute, project

if TYPE_CHECKING:
    from qkv_studio.core.scene import Scene

MIN_HEADS = 1
MAX_HEADS = 16


def valid_heads(d_k: int, d_v: int | None = None) -> list[int]:
    """Head counts 1–16 that divide both the query/key width and the value width."""
    d_v = d_k if d_v is None else d_v
    return [h for h in range(MIN_HEADS, MAX_HEADS + 1) if d_k % h == 0 and d_v % h == 0]


def check_heads(heads: int, d_k: int, d_v: int | None = None) -> int:
    """``heads`` as an int if it can split the widths, else a ValueError saying what would work."""
    d_v = d_k if d_v is None else d_v
    if isinstance(heads, bool) or not isinstance(heads, (int, np.integer)):
        raise ValueError(f"the number of heads must be a whole number, got {heads!r}")
    heads = int(heads)
    if not MIN_HEADS <= heads <= MAX_HEADS:
        raise ValueError(f"the number of heads must be from {MIN_HEADS} to {MAX_HEADS}, got {heads}")
    for name, width in (("d_k", d_k), ("d_v", d_v)):
        if width % heads:
            ok = ", ".join(map(str, valid_heads(d_k, d_v)))
            raise ValueError(f"{heads} heads cannot split {name} = {width} into equal parts: the number of heads "
                             f"must divide the width (possible here: {ok})")
    return heads


@dataclass(frozen=True)
class MultiHeadResult:
    """Every head's attention plus the concatenation and the optional output projection.

    ``q``, ``k``, ``v`` are the full projections (n × d_k, m × d_k, m × d_v); head i sees the column
    blocks ``q[:, head_columns(i, "k")]`` etc.  ``concat`` is n × d_v; ``output`` is ``concat @ wo`` when
    W^O is given, else ``concat``.
    """

    heads: tuple[AttentionResult, ...]
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    concat: np.ndarray
    output: np.ndarray
    wo: np.ndarray | None

    @property
    def h(self) -> int:
        return len(self.heads)

    @property
    def d_head_k(self) -> int:
        return int(self.q.shape[1]) // self.h

    @property
    def d_head_v(self) -> int:
        return int(self.v.shape[1]) // self.h

    def head_columns(self, i: int, which: str = "k") -> slice:
        """Columns of Q/K (``which="k"``) or of V and the concatenation (``"v"``) that belong to head i."""
        if not 0 <= i < self.h:
            raise IndexError(f"head {i} is out of range (0–{self.h - 1})")
        w = self.d_head_k if which in ("q", "k") else self.d_head_v
        return slice(i * w, (i + 1) * w)

    def head_qkv(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Head i's Q_i, K_i, V_i."""
        ck, cv = self.head_columns(i, "k"), self.head_columns(i, "v")
        return self.q[:, ck], self.k[:, ck], self.v[:, cv]

    def weights(self) -> np.ndarray:
        """All heads' weights stacked: h × n × m."""
        return np.stack([r.weights for r in self.heads])


def _check_wo(given: ArrayLike | None, d_v: int) -> np.ndarray | None:
    if given is None:
        return None
    wo = np.asarray(given, dtype=np.float64)
    if wo.ndim != 2:
        raise ValueError(f"W^O must be a 2-D matrix, got {wo.ndim}-D")
    if wo.shape[0] != d_v:
        raise ValueError(f"W^O has {wo.shape[0]} rows but the concatenated heads have {d_v} columns (d_v): "
                         f"W^O must be d_v × d_out")
    if wo.shape[1] < 1:
        raise ValueError("W^O needs at least one column")
    if not np.all(np.isfinite(wo)):
        raise ValueError("W^O contains NaN or infinite numbers")
    return wo


def multihead_qkv(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    heads: int,
    wo: np.ndarray | None = None,
    *,
    mask: MaskSpec = "none",
    scale: bool = True,
    temperature: float = 1.0,
) -> MultiHeadResult:
    """Multi-head attention from already projected Q, K, V (split by columns into ``heads`` blocks)."""
    q = np.array(q, dtype=np.float64)  # copies: the result's arrays are made read-only, the caller's are not
    k = np.array(k, dtype=np.float64)
    v = np.array(v, dtype=np.float64)
    for name, a in (("Q", q), ("K", k), ("V", v)):
        if a.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix (rows = tokens), got {a.ndim}-D")
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"Q rows have {q.shape[1]} numbers but K rows have {k.shape[1]}: they must share d_k")
    h = check_heads(heads, q.shape[1], v.shape[1])
    wo = _check_wo(wo, v.shape[1])
    dk, dv = q.shape[1] // h, v.shape[1] // h
    results = tuple(
        compute(q[:, i * dk:(i + 1) * dk], k[:, i * dk:(i + 1) * dk], v[:, i * dv:(i + 1) * dv],
                mask=mask, scale=scale, temperature=temperature)
        for i in range(h)
    )
    concat = np.concatenate([r.output for r in results], axis=1)
    output = concat @ wo if wo is not None else concat
    for a in (q, k, v, concat, output):
        a.flags.writeable = False
    return MultiHeadResult(results, q, k, v, concat, output, wo)


def multihead(
    x: np.ndarray,
    wq: np.ndarray,
    wk: np.ndarray,
    wv: np.ndarray,
    heads: int,
    wo: np.ndarray | None = None,
    mask: MaskSpec = "none",
    scale: bool = True,
    temperature: float = 1.0,
) -> MultiHeadResult:
    """Multi-head self-attention of embeddings X (n × d_model) with W^Q, W^K (d_model × d_k), W^V
    (d_model × d_v) split column-wise into ``heads`` heads (1–16, dividing d_k and d_v).

    Head i: softmax(Q_i K_iᵀ / √(d_k/h))·V_i with Q_i = X·W^Q[:, block i]; the heads' outputs are
    concatenated (n × d_v) and multiplied by ``wo`` (d_v × d_out) when given.
    """
    wq_a, wk_a, wv_a = (np.asarray(w, dtype=np.float64) for w in (wq, wk, wv))
    if wq_a.ndim == 2 and wk_a.ndim == 2 and wq_a.shape[1] != wk_a.shape[1]:
        raise ValueError(f"W^Q makes queries of width {wq_a.shape[1]} but W^K makes keys of width "
                         f"{wk_a.shape[1]}: they must share d_k")
    q, k, v = project(x, wq_a, wk_a, wv_a)
    return multihead_qkv(q, k, v, heads, wo, mask=mask, scale=scale, temperature=temperature)


def multihead_scene(scene: Scene, heads: int, wo: np.ndarray | None = None) -> MultiHeadResult:
    """Multi-head attention of a Scene: its Q, K, V (projected from X in projection mode), mask and ÷√d_k.

    In direct mode the heads split the given Q, K, V by columns — the same thing, since the column
    blocks of X·W are X times the column blocks of W.
    """
    q, k, v = scene.qkv()
    return multihead_qkv(q, k, v, heads, wo, mask=scene.mask, scale=scene.scale)
