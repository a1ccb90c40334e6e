"""The Llama forward pass's elementwise parts in NumPy, as transformers computes them (float32): RMSNorm,
RoPE's cos/sin tables and rotation, SiLU, softmax.  :mod:`qkv_studio.core.rope` is the same rotation as a
lesson (float64)."""

from __future__ import annotations

import numpy as np

from qkv_studio.core.models.smollm2_gguf import HEAD_DIM, ROPE_BASE


def frozen(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (a run's arrays are shared by every view and the KV cache)."""
    a.flags.writeable = False
    return a


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """transformers' LlamaRMSNorm in float32: x / √(mean(x²) + ε) · w."""
    var = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    out: np.ndarray = (x * (1.0 / np.sqrt(var + np.float32(eps)))).astype(np.float32) * w
    return out


def rope_tables(positions: np.ndarray, dim: int = HEAD_DIM, base: float = ROPE_BASE) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (len(positions) × dim) as transformers' Llama computes them (float32 angles).

    Dimension i and i + dim/2 share the frequency base^(−2i/dim).
    """
    inv_freq = (1.0 / (np.float32(base) ** (np.arange(0, dim, 2,
                                                      dtype=np.float32) / np.float32(dim)))).astype(np.float32)
    freqs = np.asarray(positions, dtype=np.float32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x·cos + rotate_half(x)·sin, rotate_half(x) = (−x₂, x₁) of x's two halves (transformers' RoPE)."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    out: np.ndarray = x * cos + rotated * sin
    return out


def silu(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = x / (np.float32(1.0) + np.exp(-x))
    return out


def softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out
