"""Choosing the next token from a causal model's logits: temperature, top-k, greedy, the bars' top tokens."""

from __future__ import annotations

import math

import numpy as np

from qkv_studio.core.models.llama_ops import softmax
from qkv_studio.core.models.run import ModelInputError


def check_sampling(temperature: float, top_k: int) -> None:
    """Raise :class:`ModelInputError` unless ``temperature`` ≥ 0 (a finite number) and ``top_k`` a whole
    number ≥ 0 (0: every token)."""
    if isinstance(temperature, bool) or not (isinstance(temperature, (int, float, np.floating))
                                             and math.isfinite(temperature) and temperature >= 0):
        raise ModelInputError(f"the temperature must be a number ≥ 0, not {temperature!r}")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 0:
        raise ModelInputError(f"top-k must be a whole number ≥ 0, not {top_k!r}")


def probabilities(logits: np.ndarray, *, temperature: float = 1.0, top_k: int = 0) -> np.ndarray:
    """softmax(logits / temperature), keeping only the ``top_k`` most likely tokens (0: all).

    ``temperature`` 0 puts all the probability on the most likely token (greedy).
    """
    logits = np.asarray(logits, dtype=np.float64)
    check_sampling(temperature, top_k)
    if temperature == 0:
        p = np.zeros_like(logits)
        p[int(np.argmax(logits))] = 1.0
        return p
    z = logits / temperature
    if 0 < top_k < len(z):
        cut = np.partition(z, -top_k)[-top_k]
        z = np.where(z >= cut, z, -np.inf)
    return softmax(z)


def shown_probabilities(logits: np.ndarray, *, temperature: float = 0.0, top_k: int = 0) -> np.ndarray:
    """The probabilities the next-token bars show: those the token is drawn from, or — greedy
    (temperature 0), where all of it sits on one token — the model's own (temperature 1), top-k kept."""
    return probabilities(logits, temperature=1.0 if temperature == 0 else temperature, top_k=top_k)


def top_tokens(probs: np.ndarray, k: int = 5) -> list[tuple[int, float]]:
    """The ``k`` most likely token ids and their probabilities, most likely first (ties by id)."""
    probs = np.asarray(probs)
    order = np.lexsort((np.arange(len(probs)), -probs))[:k]
    return [(int(i), float(probs[i])) for i in order]
