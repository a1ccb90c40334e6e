"""A causal model's text growing one token at a time with a KV cache (SmolLM2's :class:`Generation`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from qkv_studio.core.models.blas import one_blas_thread
from qkv_studio.core.models.llama_ops import frozen
from qkv_studio.core.models.run import ModelInputError, ModelRun, Progress
from qkv_studio.core.models.sampling import probabilities, shown_probabilities, top_tokens
from qkv_studio.core.models.smollm2_gguf import MAX_TOKENS

if TYPE_CHECKING:
    from qkv_studio.core.models.smollm2 import SmolLM2


class Generation:
    """A prompt and the tokens appended to it, one at a time, with a KV cache.

    ``run`` is the current :class:`ModelRun` (prompt + generated tokens); its ``k`` and ``v`` (after
    RoPE) *are* the cache: :meth:`step` computes the new token's row only — its q, k, v in every layer,
    its attention over every earlier key read from the cache — and gives the longer run, whose earlier
    rows are the earlier run's unchanged (a causal model's earlier rows never see a later token).
    ``reused`` is how many K/V rows the last step read from the cache.  :meth:`back` takes a token back
    and :meth:`redo` puts it back again (until the next :meth:`step`).
    Sampling is seeded (``seed``) per position: the token drawn at position n depends only on the seed, the
    tokens before it and the settings — a lecture is repeatable, also after taking tokens back.
    """

    def __init__(self, model: SmolLM2, run: ModelRun, logits: np.ndarray, *, seed: int | None = 0) -> None:
        self.model = model
        self.prompt_length = run.n
        self._history: list[tuple[ModelRun, np.ndarray]] = [(run, logits)]
        self._undone: list[tuple[ModelRun, np.ndarray]] = []  # taken back, most recent last
        self._seed = seed if seed is not None else int(cast(int, np.random.SeedSequence().entropy) % (2 ** 63))
        self.reused = 0

    @property
    def run(self) -> ModelRun:
        return self._history[-1][0]

    @property
    def logits(self) -> np.ndarray:
        """The logits of the token after the last."""
        return self._history[-1][1]

    @property
    def ids(self) -> np.ndarray:
        return _ids(self.run)

    @property
    def generated(self) -> int:
        return self.run.n - self.prompt_length

    def distribution(self, *, temperature: float = 1.0, top_k: int = 0) -> np.ndarray:
        """The next token's probabilities (see :func:`probabilities`)."""
        return probabilities(self.logits, temperature=temperature, top_k=top_k)

    def top(self, k: int = 5, *, temperature: float = 1.0, top_k: int = 0) -> list[tuple[str, float]]:
        """The ``k`` most likely next tokens as readable pieces ("␣mat") with their probabilities."""
        top = top_tokens(self.distribution(temperature=temperature, top_k=top_k), k)
        return list(zip(self.model.pieces([i for i, _ in top]), (p for _, p in top), strict=False))

    def choices(self, k: int = 5, *, temperature: float = 0.0, top_k: int = 0) -> list[tuple[str, float]]:
        """What the next-token bars show: the ``k`` most likely tokens under these settings (see
        :func:`shown_probabilities`), as readable pieces with their probabilities."""
        probs = shown_probabilities(self.logits, temperature=temperature, top_k=top_k)
        top = [(i, p) for i, p in top_tokens(probs, k) if p > 0]  # (not those top-k rules out)
        return list(zip(self.model.pieces([i for i, _ in top]), (p for _, p in top), strict=False))

    def choose(self, *, temperature: float = 0.0, top_k: int = 0) -> int:
        """The next token: the most likely (temperature 0, the default) or sampled with a generator seeded
        by (seed, position)."""
        probs = self.distribution(temperature=temperature, top_k=top_k)
        if temperature == 0:
            return int(np.argmax(probs))
        return int(np.random.default_rng((self._seed, self.run.n)).choice(len(probs), p=probs))

    def step(self, token: int | None = None, *, temperature: float = 0.0, top_k: int = 0,
             progress: Progress | None = None) -> ModelRun:
        """Append ``token`` (default: :meth:`choose`) and compute its row with the cache; the new run.
        ``progress`` hears of each block (it may raise to stop the step: nothing is appended then)."""
        return self.append(*self.compute(token, temperature=temperature, top_k=top_k, progress=progress))

    def compute(self, token: int | None = None, *, temperature: float = 0.0, top_k: int = 0,
                progress: Progress | None = None) -> tuple[ModelRun, np.ndarray]:
        """The next step — the longer run and the logits after it — computed with the cache but **not
        appended** (:meth:`append` does that): safe on a worker thread while the generation is shown."""
        if token is None:
            token = self.choose(temperature=temperature, top_k=top_k)
        model, run = self.model, self.run
        if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token < model.vocab_size:
            raise ModelInputError(f"a token id must be 0–{model.vocab_size - 1}, not {token!r}")
        if run.n + 1 > MAX_TOKENS:
            raise ModelInputError(f"{MAX_TOKENS} tokens at most")
        ids = np.append(_ids(run), np.int64(token))
        past = [(run.k[i], run.v[i]) for i in range(run.n_layers)]
        with one_blas_thread():
            rows = model._rows(ids[-1:], run.n, past, progress=progress)
        n = run.n + 1
        q = np.concatenate([run.q, np.stack(rows.q)], axis=2)
        k = np.concatenate([run.k, np.stack(rows.k)], axis=2)
        v = np.concatenate([run.v, np.stack(rows.v)], axis=2)
        w = np.zeros(run.weights.shape[:2] + (n, n))
        w[:, :, :-1, :-1] = run.weights  # earlier rows: unchanged, and 0 on the new key (masked)
        w[:, :, -1:, :] = np.stack(rows.weights)
        new = ModelRun(model=run.model, label=run.label, text=model.decode(ids),
                       tokens=run.tokens + model.pieces(ids[-1:]), q=frozen(q), k=frozen(k), v=frozen(v),
                       weights=frozen(w), mask="causal", ids=frozen(ids))
        return new, rows.logits

    def append(self, run: ModelRun, logits: np.ndarray) -> ModelRun:
        """Append a step :meth:`compute` gave for the current run; raises :class:`ModelInputError` when the
        generation moved on meanwhile (a token was taken back or added)."""
        base = self.run
        if run.n != base.n + 1 or run.ids is None or not np.array_equal(run.ids[:-1], _ids(base)):
            raise ModelInputError("the text changed while the next token was computed: press Next token again")
        self._history.append((run, logits))
        self._undone.clear()
        self.reused = base.n
        return run

    def back(self) -> ModelRun:
        """Take the last generated token back (the prompt stays); the run before it."""
        if len(self._history) > 1:
            self._undone.append(self._history.pop())
        self.reused = max(0, self.run.n - 1) if self.generated else 0
        return self.run

    def redo(self) -> ModelRun:
        """Put the token last taken back on again (as it was computed); the run with it."""
        if self._undone:
            self._history.append(self._undone.pop())
            self.reused = self.run.n - 1
        return self.run


def _ids(run: ModelRun) -> np.ndarray:
    """The token ids of a run a generation continues (a run of a generating model always has them)."""
    if run.ids is None:
        raise ModelInputError("this run keeps no token ids, so no token can be appended to it")
    return run.ids
