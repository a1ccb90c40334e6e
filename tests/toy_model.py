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


class ToyGeneration:
    """A toy Generation (the interface the panel uses: ``run``, ``choices``, ``compute``, ``append``,
    ``back``, ``redo``, ``generated``, ``reused``): the next token's logits come from the last token's
    embedding; each step recomputes the whole toy run (a toy has no cache to speak of)."""

    def __init__(self, toy: ToyGenerating, text: str, seed: int = 0) -> None:
        self._toy, self._seed = toy, seed
        self._history = [toy.run(text)]
        self._undone: list = []
        self.prompt_length = self._history[0].n
        self.reused = 0

    @property
    def run(self) -> ModelRun:
        return self._history[-1]

    @property
    def generated(self) -> int:
        return self.run.n - self.prompt_length

    @property
    def logits(self) -> np.ndarray:
        return self._toy.logits(self.run.ids[-1])

    def choices(self, k=5, *, temperature=0.0, top_k=0):
        from qkv_studio.core.models.smollm2 import shown_probabilities, top_tokens

        probs = shown_probabilities(self.logits, temperature=temperature, top_k=top_k)
        top = [(i, p) for i, p in top_tokens(probs, k) if p > 0]  # (not those top-k rules out)
        return [(f"t{i}", p) for i, p in top]

    def compute(self, *, temperature=0.0, top_k=0, progress=None):
        from qkv_studio.core.models.smollm2 import probabilities

        probs = probabilities(self.logits, temperature=temperature, top_k=top_k)
        token = int(np.argmax(probs)) if temperature == 0 else int(
            np.random.default_rng((self._seed, self.run.n)).choice(len(probs), p=probs))
        run = self._toy.run(" ".join(self.run.tokens + (f"t{token}",)), progress=progress)
        return run, self._toy.logits(run.ids[-1])

    def append(self, run, logits):
        self._history.append(run)
        self._undone.clear()
        self.reused = run.n - 1
        return run

    def back(self):
        if len(self._history) > 1:
            self._undone.append(self._history.pop())
        return self.run

    def redo(self):
        if self._undone:
            self._history.append(self._undone.pop())
        return self.run


class ToyGenerating(ToyCausal):
    """The toy as a generating model (``start(text)``) that can be slow (``delay`` seconds per block
    reported through ``progress``) or broken (``fail`` set: its runs raise that exception)."""

    name = "toygen"
    title = "Toy generating LM"

    def __init__(self, *, delay: float = 0.0, blocks: int = 10) -> None:
        super().__init__()
        self.delay, self.blocks, self.fail = delay, blocks, None
        self._out = np.random.default_rng(7).normal(size=(self._width, self._vocab)) * 3

    def logits(self, token_id) -> np.ndarray:
        return self._embed[int(token_id)] @ self._out

    def tokenize(self, text: str) -> tuple[str, ...]:
        return tuple(t if t.startswith("t") and t[1:].isdigit() else t for t in super().tokenize(text))

    def run(self, text: str, progress=None) -> ModelRun:
        import time

        for i in range(self.blocks):
            if progress is not None:
                progress(i / self.blocks, f"block {i + 1} of {self.blocks}")
            if self.delay:
                time.sleep(self.delay)
        if self.fail is not None:
            raise self.fail
        run = super().run(text)
        ids = np.array([int(t[1:]) if t.startswith("t") and t[1:].isdigit() else int(i)
                        for t, i in zip(run.tokens, run.ids, strict=False)])
        return ModelRun(model=run.model, label=run.label, text=run.text, tokens=run.tokens, q=run.q, k=run.k,
                        v=run.v, weights=run.weights, mask=run.mask, ids=ids)

    def start(self, text: str, *, seed: int = 0, progress=None) -> ToyGeneration:
        gen = ToyGeneration.__new__(ToyGeneration)
        gen._toy, gen._seed, gen._undone, gen.reused = self, seed, [], 0
        gen._history = [self.run(text, progress=progress)]
        gen.prompt_length = gen._history[0].n
        return gen


def register_toy_generating(monkeypatch, **kw) -> ToyGenerating:
    """Register a fresh generating toy (``toygen``) for the length of one test."""
    toy = ToyGenerating(**kw)
    monkeypatch.setitem(registry.MODELS, toy.name, toy)
    return toy
