"""Why divide by √d_k: seeded random q·k scores and what they do to the softmax (NumPy only).

The lesson's argument, made measurable.  Draw a query q and ``n_keys`` keys k, each with d_k
independent unit-variance components; every score q·k = Σ_t q_t k_t is a sum of d_k unit-variance
terms, so its variance is d_k and its typical size √d_k (±8 at d_k = 64).  Fed raw into the softmax,
scores that large saturate it: one weight near 1, the rest near 0, and the softmax's gradient — the
Jacobian ∂w/∂s = diag(w) − w wᵀ — collapses towards 0, so learning stalls.  Divided by √d_k, the scores
are back at unit size and the softmax stays responsive.

Draws are made component by component (dimension-major), so the scores at d_k + 1 are the scores at
d_k plus one more term: sliding d_k grows the same sample instead of redrawing it.  :class:`ScoreBank`
keeps the running sums so a slider can move over all of 1–512 instantly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_D_K = 1
MAX_D_K = 512
DEFAULT_SEED = 26
_CHUNK = 4_000_000  # numbers drawn at a time (bounds memory at d_k = 512 with 10 000 samples)


def _check(d_k: int, n_keys: int, samples: int, temperature: float) -> None:
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or not MIN_D_K <= d_k <= MAX_D_K:
        raise ValueError(f"d_k must be a whole number from {MIN_D_K} to {MAX_D_K}, got {d_k!r}")
    if isinstance(n_keys, bool) or not isinstance(n_keys, (int, np.integer)) or n_keys < 1:
        raise ValueError(f"n_keys must be a whole number ≥ 1, got {n_keys!r}")
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples must be a whole number ≥ 1, got {samples!r}")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a positive finite number, got {temperature!r}")


def divisor(d_k: int, scale: bool, temperature: float = 1.0) -> float:
    """What the raw scores are divided by before the softmax: √d_k (when scaled) times the temperature."""
    return (float(np.sqrt(d_k)) if scale else 1.0) * float(temperature)


def expected_std(d_k: int, scale: bool, temperature: float = 1.0) -> float:
    """The theory: unit-variance q and k give scores of standard deviation √d_k, or 1 once ÷√d_k."""
    return float(np.sqrt(d_k)) / divisor(d_k, scale, temperature)


def _draw_raw(d_k: int, n_keys: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """Raw scores q·k (samples × n_keys), drawn dimension by dimension from ``rng``."""
    per_dim = samples * (n_keys + 1)
    block = max(1, _CHUNK // per_dim)
    raw = np.zeros((samples, n_keys))
    done = 0
    while done < d_k:
        b = min(block, d_k - done)
        z = rng.standard_normal((b, samples, n_keys + 1))  # [..., 0] = q_t, [..., 1:] = the keys' k_t
        raw += np.einsum("tsj,ts->sj", z[:, :, 1:], z[:, :, 0])
        done += b
    return raw


def sample_scores(
    d_k: int,
    n_keys: int = 8,
    samples: int = 1000,
    seed: int = DEFAULT_SEED,
    scale: bool = True,
    temperature: float = 1.0,
) -> np.ndarray:
    """Scores that reach the softmax for ``samples`` random queries against ``n_keys`` random keys each.

    q and k have d_k independent standard-normal (unit-variance) components, drawn from
    ``numpy.random.default_rng(seed)``.  Row s holds q_s·k_sj / (√d_k if ``scale``) / ``temperature``.
    """
    _check(d_k, n_keys, samples, temperature)
    raw = _draw_raw(int(d_k), int(n_keys), int(samples), np.random.default_rng(seed))
    return raw / divisor(d_k, scale, temperature)


@dataclass(frozen=True)
class SoftmaxStats:
    """How saturated the softmax of a batch of score rows is (means over the rows).

    ``gradient`` is the mean Frobenius norm of the softmax Jacobian diag(w) − w wᵀ: how much the
    weights move when the scores move.  It is √(n−1)/n for a uniform row, at most ½ (two keys sharing
    the weight), and falls to 0 as a row becomes one-hot — the flat gradient of a saturated softmax.
    """

    score_std: float
    score_range: float  # the largest |score|
    max_weight: float
    entropy_bits: float
    entropy_max_bits: float  # log₂ n_keys: the entropy of a uniform row
    gradient: float


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row softmax (max subtracted first, as in the lesson)."""
    s = np.asarray(scores, dtype=np.float64)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


def entropy_bits(weights: np.ndarray) -> np.ndarray:
    """Entropy of each row of weights in bits (0·log 0 = 0)."""
    w = np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, -w * np.log2(np.where(w > 0, w, 1.0)), 0.0)
    out: np.ndarray = np.maximum(terms.sum(axis=-1), 0.0)
    return out


def jacobian_norm(weights: np.ndarray) -> np.ndarray:
    """Frobenius norm of each row's softmax Jacobian J = diag(w) − w wᵀ.

    ‖J‖² = Σ(wᵢ − wᵢ²)² + Σ_{i≠j} wᵢ² wⱼ² = Σwᵢ² − 2Σwᵢ³ + (Σwᵢ²)², computed without forming J.
    """
    w = np.asarray(weights, dtype=np.float64)
    s2 = (w * w).sum(axis=-1)
    s3 = (w * w * w).sum(axis=-1)
    out: np.ndarray = np.sqrt(np.maximum(s2 - 2.0 * s3 + s2 * s2, 0.0))
    return out


def jacobian(weights: np.ndarray) -> np.ndarray:
    """The softmax Jacobian diag(w) − w wᵀ of one row of weights (∂wᵢ/∂sⱼ)."""
    w = np.asarray(weights, dtype=np.float64)
    return np.diag(w) - np.outer(w, w)


def softmax_stats(scores: np.ndarray) -> SoftmaxStats:
    """Statistics of the softmax of each row of ``scores`` (rows = queries, columns = keys)."""
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    n = s.shape[-1]
    w = softmax_rows(s)
    return SoftmaxStats(
        score_std=float(s.std()),
        score_range=float(np.abs(s).max()) if s.size else 0.0,
        max_weight=float(w.max(axis=-1).mean()),
        entropy_bits=float(entropy_bits(w).mean()),
        entropy_max_bits=float(np.log2(n)),
        gradient=float(jacobian_norm(w).mean()),
    )


def histogram(scores: np.ndarray, bins: int = 41, limit: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges and densities (area 1) of the scores on the symmetric range ±``limit``.

    ``limit`` defaults to the largest |score|; scores beyond it are counted in the outermost bins so
    none goes missing.
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    if bins < 1:
        raise ValueError("bins must be at least 1")
    if limit is None:
        limit = float(np.abs(s).max()) if s.size else 1.0
    limit = float(limit) if limit > 0 else 1.0
    edges = np.linspace(-limit, limit, bins + 1)
    counts, _ = np.histogram(np.clip(s, -limit, limit), bins=edges)
    width = edges[1] - edges[0]
    density = counts / (max(s.size, 1) * width)
    return edges, density


def normal_density(x: np.ndarray, std: float) -> np.ndarray:
    """The N(0, std²) curve the histogram should follow for large d_k."""
    x = np.asarray(x, dtype=np.float64)
    out: np.ndarray = np.exp(-0.5 * (x / std) ** 2) / (std * np.sqrt(2.0 * np.pi))
    return out


class ScoreBank:
    """Raw scores for every d_k from 1 up, grown lazily from one seeded stream.

    ``raw(d_k)`` equals ``sample_scores(d_k, n_keys, samples, seed, scale=False)`` (up to summation
    rounding) but costs nothing once d_k has been reached: the bank keeps the running sums
    Σ_{t≤d} q_t k_t for d = 1 … the largest d_k asked for.
    """

    def __init__(self, n_keys: int = 8, samples: int = 1000, seed: int = DEFAULT_SEED) -> None:
        _check(1, n_keys, samples, 1.0)
        self.n_keys = int(n_keys)
        self.samples = int(samples)
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        # Allocated once; the operating system only commits the pages that get filled.
        self._sums = np.zeros((MAX_D_K, self.samples, self.n_keys))
        self._depth = 0
        self._block = max(1, _CHUNK // (self.samples * (self.n_keys + 1)))

    @property
    def depth(self) -> int:
        """The largest d_k computed so far."""
        return self._depth

    def _grow(self, d_k: int) -> None:
        if d_k <= self._depth:
            return
        target = max(d_k, min(MAX_D_K, self._depth + 16))  # a little ahead: sliders move in small steps
        done = self._depth
        last = self._sums[done - 1] if done else np.zeros((self.samples, self.n_keys))
        while done < target:
            b = min(self._block, target - done)
            z = self._rng.standard_normal((b, self.samples, self.n_keys + 1))
            run = np.cumsum(z[:, :, 1:] * z[:, :, :1], axis=0)
            run += last
            self._sums[done:done + b] = run
            last = self._sums[done + b - 1]
            done += b
        self._depth = done

    def raw(self, d_k: int) -> np.ndarray:
        """Unscaled scores q·k (samples × n_keys) with d_k components."""
        _check(d_k, self.n_keys, self.samples, 1.0)
        self._grow(int(d_k))
        out: np.ndarray = self._sums[int(d_k) - 1]
        return out

    def scores(self, d_k: int, scale: bool = True, temperature: float = 1.0) -> np.ndarray:
        """The scores that reach the softmax: raw / (√d_k if scale) / temperature."""
        _check(d_k, self.n_keys, self.samples, temperature)
        return self.raw(d_k) / divisor(d_k, scale, temperature)


@dataclass(frozen=True)
class Saturation:
    """One setting of the explorer: d_k, ÷√d_k on/off, temperature, and what the softmax does there."""

    d_k: int
    scale: bool
    temperature: float
    expected_std: float
    stats: SoftmaxStats


def saturation(
    d_k: int,
    scale: bool,
    temperature: float = 1.0,
    *,
    n_keys: int = 8,
    samples: int = 1000,
    seed: int = DEFAULT_SEED,
    bank: ScoreBank | None = None,
) -> Saturation:
    """The explorer's readouts for one setting (from ``bank`` when given, else freshly sampled)."""
    if bank is not None:
        scores = bank.scores(d_k, scale, temperature)
    else:
        scores = sample_scores(d_k, n_keys, samples, seed, scale, temperature)
    return Saturation(int(d_k), bool(scale), float(temperature), expected_std(d_k, scale, temperature),
                      softmax_stats(scores))


def typical_query(bank: ScoreBank, d_k: int = 64) -> int:
    """The query of ``bank`` whose raw top weight at ``d_k`` is the median one: the explorer's sample.

    Fixed for every d_k (its bars grow continuously as d_k slides) and typical rather than extreme.
    """
    top = softmax_rows(bank.raw(d_k)).max(axis=1)
    return int(np.argsort(top)[len(top) // 2])


def histogram_limit(d_k: int, temperature: float = 1.0) -> float:
    """The half-range of the explorer's histogram: the raw scores' ±4σ (σ = √d_k ÷ temperature), one range
    for both settings, so switching ÷√d_k visibly narrows the scores."""
    return 4.0 * float(np.sqrt(d_k)) / temperature
