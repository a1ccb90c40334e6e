"""Rotary position embeddings (RoPE), as a lesson: why a rotated q·k depends only on the offset.

RoPE (Su et al. 2021; Llama, SmolLM2, Qwen) splits a head's d dimensions into d/2 pairs and turns pair i
of a vector at position p by the angle p·θᵢ, θᵢ = base^(−2i/d) (pair i is dimensions i and i + d/2, as in
transformers' ``rotate_half``; base 10 000 in the original, 100 000 in SmolLM2).  A query at position m
and a key at n then score

    R(m·θ)q · R(n·θ)k = q · R((n − m)·θ)k,

a function of the offset n − m alone: move both positions together and the score stays; move one and it
changes.  Float64, NumPy only; :mod:`qkv_studio.core.models.smollm2` applies the same rotation in
float32, as transformers does, inside the model.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

DEFAULT_BASE = 10_000.0


def _check(dim: int, base: float) -> None:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 2 or dim % 2:
        raise ValueError(f"RoPE needs an even dimension ≥ 2, not {dim!r}")
    if not (np.isfinite(base) and base > 1):
        raise ValueError(f"the RoPE base must be a number > 1, not {base!r}")


def pair_frequencies(dim: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """θᵢ = base^(−2i/d) for the d/2 pairs (radians per position): pair 0 turns fastest."""
    _check(dim, base)
    return base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)


def rotate(x: np.ndarray, position: float, base: float = DEFAULT_BASE) -> np.ndarray:
    """``x`` (…, d) turned as RoPE turns a vector at ``position``: pair (i, i + d/2) by position·θᵢ."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    angles = float(position) * pair_frequencies(d, base)
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def score(q: np.ndarray, k: np.ndarray, m: float, n: float, base: float = DEFAULT_BASE) -> float:
    """The dot product of q rotated to position ``m`` and k rotated to position ``n``."""
    return float(rotate(q, m, base) @ rotate(k, n, base))


def scores_by_offset(q: np.ndarray, k: np.ndarray, offsets: np.ndarray, base: float = DEFAULT_BASE) -> np.ndarray:
    """The score for each offset n − m (any m: it depends on the offset only), as q · R(offset·θ)k."""
    return np.array([float(np.asarray(q, dtype=np.float64) @ rotate(k, o, base)) for o in np.asarray(offsets)])


def pair_angles(offset: float, dim: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The angle (radians, in (−π, π]) between a pair of q and the same pair of k that the offset adds."""
    a = float(offset) * pair_frequencies(dim, base)
    out: np.ndarray = np.angle(np.exp(1j * a))
    return out


def pair_before_after(rotated: np.ndarray, positions: ArrayLike, pair: int, base: float = DEFAULT_BASE
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One rotary pair of vectors that RoPE has turned (a model's q or k rows, n × d, row j at
    ``positions[j]``): the pair's 2-D vectors before the turn (n × 2: the rows turned back), after it
    (n × 2: dimensions ``pair`` and ``pair + d/2`` as they are) and each row's angle position·θ_pair
    (radians, not wrapped) — what the vector plane's RoPE view draws."""
    x = np.atleast_2d(np.asarray(rotated, dtype=np.float64))
    n, d = x.shape
    _check(d, base)
    if isinstance(pair, bool) or not isinstance(pair, (int, np.integer)) or not 0 <= pair < d // 2:
        raise ValueError(f"the rotary pair must be 0–{d // 2 - 1}, not {pair!r}")
    pos = np.asarray(positions, dtype=np.float64).reshape(-1)
    if pos.shape != (n,):
        raise ValueError(f"one position per row: {n} rows, {pos.size} positions")
    angles = pos * pair_frequencies(d, base)[pair]
    a, b = x[:, pair], x[:, pair + d // 2]
    after = np.stack([a, b], axis=1)
    cos, sin = np.cos(angles), np.sin(angles)  # (turned back: the rotation by −angle)
    before = np.stack([a * cos + b * sin, b * cos - a * sin], axis=1)
    return before, after, angles
