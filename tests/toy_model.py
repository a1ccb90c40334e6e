"""A tiny causal attention model for the model registry's tests: fixed random NumPy weights, no files.

2 layers × 4 query heads of 3, sharing 2 K/V heads (grouped-query attention, as a Llama-style model
does), ``causal = True``.  ``register_toy(monkeypatch)`` puts it in the registry for one test.
"""

from __future__ import annotations

import numpy as np

from qkv_studio.core.models import ModelInputError, ModelRun, registry


class ToyCausal:
    """Satisfies :class:`qkv_studio.core.models.AttentionModel`."""

    name = "toy"
    title = "Toy causal LM"
    label = "Toy"
    description = "a tiny causal model with random weights"
    causal = True
    n_layers = 2
    n_heads = 4
    n_kv_heads = 2
    head_dim = 3
    install_hint = ""
    install_note = ""
    _width = 8
    _vocab = 97

    def __init__(self) -> None:
        rng = np.random.default_rng(26)
        self._embed = rng.normal(size=(self._vocab, self._width))
        L, d = self.n_layers, self.head_dim
        self._wq = rng.normal(size=(L, self.n_heads, self._width, d))
        self._wk = rng.normal(size=(L, self.n_kv_heads, self._width, d))
        self._wv = rng.normal(size=(L, self.n_kv_heads, self._width, d))
        self.runs = 0

    def available(self) -> bool:
        return True

    def tokenize(self, text: str) -> tuple[str, ...]:
        if not isinstance(text, str) or not text.strip():
            raise ModelInputError("type a sentence first: the text is empty")
        return tuple(text.lower().split())

    def run(self, text: str) -> ModelRun:
        tokens = self.tokenize(text)
        ids = np.array([sum(map(ord, t)) % self._vocab for t in tokens])
        x = self._embed[ids]  # n × width, the same input to every layer (a toy has no residual stream)
        q = np.einsum("nw,lhwd->lhnd", x, self._wq)
        k = np.einsum("nw,lhwd->lhnd", x, self._wk)
        v = np.einsum("nw,lhwd->lhnd", x, self._wv)
        self.runs += 1
        return ModelRun.from_qkv(self, text, tokens, q, k, v, ids=ids)


def register_toy(monkeypatch) -> ToyCausal:
    """Register a fresh toy model (after MiniLM) for the length of one test."""
    toy = ToyCausal()
    monkeypatch.setitem(registry.MODELS, toy.name, toy)
    return toy
