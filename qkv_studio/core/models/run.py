"""What any attention model gives back for one text: every layer's and head's Q, K, V and weights.

:class:`ModelRun` is model-neutral (the registry's :class:`~qkv_studio.core.models.registry.AttentionModel`
protocol returns it): ``q`` is (layers, heads, n, d); ``k`` and ``v`` are (layers, kv_heads, n, d), where
``kv_heads`` divides ``heads`` (grouped-query attention shares one K/V head among ``heads // kv_heads``
query heads; an ordinary model has ``kv_heads == heads``); ``weights`` are (layers, heads, n, n), each
query row summing to 1 over the keys ``mask`` allows (``"none"`` or ``"causal"``).
:meth:`ModelRun.head_scene` turns one head into an ordinary direct-mode :class:`Scene` with the run's
mask, whose own ``compute()`` gives back the model's weights.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from qkv_studio.core.scene import MAX_TOKEN_CHARS, Scene
from qkv_studio.core.scene_checks import frozen_mask

if TYPE_CHECKING:
    from qkv_studio.core.models.registry import AttentionModel

MASKS = ("none", "causal")


class ModelUnavailable(RuntimeError):
    """The model (or a library it needs) is not installed or its files cannot be read."""


class ModelInputError(ValueError):
    """A request the model cannot answer: empty text, a layer or head out of range."""


class Cancelled(Exception):
    """A run stopped early because its progress callback raised it (the user pressed Cancel)."""


#: ``progress(fraction, what)``: how far a long step is (0–1) and what it is doing ("block 3 of 30").
#: A model calls it now and then; the caller may raise :class:`Cancelled` from it to stop the run.
Progress = Callable[[float, str], None]


def takes_progress(fn: Callable[..., object]) -> bool:
    """True when ``fn`` accepts a ``progress=`` keyword (models that report how far a run is)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "progress" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def causal_blocked(n: int) -> np.ndarray:
    """The n×n causal mask (True = blocked: a query never sees a later key)."""
    return np.triu(np.ones((n, n), dtype=bool), k=1)


@dataclass(frozen=True, eq=False)
class ModelRun:
    """One text through a model.

    ``model`` is the model's title (e.g. "all-MiniLM-L6-v2") and ``label`` its short name in scene titles
    ("MiniLM layer 3 head 5"); ``tokens`` are the tokenizer's pieces; ``mask`` the attention mask the model
    used ("none" or "causal").  ``ids`` (token ids) and ``hidden`` (the embeddings and every layer's
    output, (layers + 1, n, hidden)) are kept when the model gives them; ``truncated`` is True when the
    text was longer than the model takes and cut.
    """

    model: str
    text: str
    tokens: tuple[str, ...]
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    weights: np.ndarray
    mask: str = "none"
    label: str = ""
    ids: np.ndarray | None = None
    hidden: np.ndarray | None = None
    truncated: bool = False
    _scenes: dict[tuple[int, int], Scene] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.mask not in MASKS:
            raise ValueError(f"a model run's mask must be one of {', '.join(MASKS)}, not {self.mask!r}")
        if not self.q.ndim == self.k.ndim == self.v.ndim == self.weights.ndim == 4:
            raise ValueError("q, k, v and weights must each be (layers, heads, n, ·)")
        n, (layers, heads) = len(self.tokens), self.weights.shape[:2]
        if self.weights.shape != (layers, heads, n, n) or self.q.shape[:3] != (layers, heads, n):
            raise ValueError(f"q {self.q.shape} and weights {self.weights.shape} do not fit {n} tokens")
        kv = self.k.shape[1]
        if (self.k.shape[:1] + self.k.shape[2:3] != (layers, n) or self.v.shape[:3] != self.k.shape[:3]
                or kv == 0 or heads % kv or self.k.shape[3] != self.q.shape[3]):
            raise ValueError(f"k {self.k.shape} and v {self.v.shape} do not fit q {self.q.shape}")
        if not self.label:
            object.__setattr__(self, "label", self.model)

    @classmethod
    def from_qkv(cls, model: AttentionModel, text: str, tokens: Sequence[str], q: ArrayLike, k: ArrayLike,
                 v: ArrayLike, **extra: Any) -> ModelRun:
        """A run from a model's q (layers, heads, n, d), k and v (layers, kv_heads, n, d): the weights are
        softmax(q·kᵀ/√d) over the keys the model's mask allows (``model.causal``).  ``model`` gives
        ``title``, ``label`` and ``causal``; ``extra`` the optional fields (``ids``, ``hidden``, ``truncated``).
        """
        q, k, v = (np.array(a, dtype=np.float64) for a in (q, k, v))  # own copies, made read-only below
        if q.ndim != 4 or k.ndim != 4 or k.shape[1] == 0 or q.shape[1] % k.shape[1]:
            raise ValueError(f"q {q.shape} and k {k.shape} must be (layers, heads, n, d) with whole K/V groups")
        kk = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
        scores = q @ kk.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
        if model.causal:
            scores[..., causal_blocked(q.shape[2])] = -np.inf
        scores -= scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        for a in (q, k, v, weights):
            a.flags.writeable = False
        return cls(model=model.title, label=model.label, text=text, tokens=tuple(tokens), q=q, k=k, v=v,
                   weights=weights, mask="causal" if model.causal else "none", **extra)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def n_layers(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.weights.shape[1])

    @property
    def n_kv_heads(self) -> int:
        return int(self.k.shape[1])

    @property
    def head_dim(self) -> int:
        return int(self.q.shape[-1])

    def kv_head(self, head: int) -> int:
        """The K/V head a query head reads (itself unless K/V heads are shared)."""
        return int(head) // (self.n_heads // self.n_kv_heads)

    def check(self, layer: int, head: int) -> tuple[int, int]:
        """Validate a 0-based layer and head; raises :class:`ModelInputError` naming the valid range."""
        for what, value, count in (("layer", layer, self.n_layers), ("head", head, self.n_heads)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < count:
                raise ModelInputError(f"{what} must be 0–{count - 1} (counted from 0), not {value!r}")
        return int(layer), int(head)

    def scene_tokens(self) -> tuple[str, ...]:
        """The tokens as a Scene takes them: the tokenizer's own, cut to 64 characters if ever longer."""
        return tuple(t if 0 < len(t) <= MAX_TOKEN_CHARS else (t[: MAX_TOKEN_CHARS - 1] + "…" if t else "?")
                     for t in self.tokens)

    def head_scene(self, layer: int, head: int) -> Scene:
        """One head as a direct-mode Scene: its Q, K, V, ÷√d_k on, the run's mask.

        The scene's ``result().weights`` equal ``weights[layer, head]`` (to ~1e-16).
        """
        layer, head = self.check(layer, head)
        key = (layer, head)
        if key not in self._scenes:
            kv = self.kv_head(head)
            self._scenes[key] = Scene.create(
                self.scene_tokens(), q=self.q[layer, head], k=self.k[layer, kv], v=self.v[layer, kv],
                mask=self.mask, scale=True,
                title=f"{self.label} layer {layer} head {head}",
                description=(f"{self.model}, layer {layer}, head {head} (counted from 0, as in transformers) "
                             f"on “{_short(self.text, 80)}”: the head's own queries, keys and values "
                             f"(d_k = {self.head_dim}); its softmax weights are the model's."),
            )
        return self._scenes[key]

    def unprojected_scene(self, layer: int) -> Scene:
        """The layer's input X as the scene without projections (Q = K = V = X, ÷√d on, the run's mask):
        what attention would be if the embeddings were dotted directly (the lesson's "why three
        projections?").  Needs the run's ``hidden`` states; a model that does not keep them says so."""
        from qkv_studio.core.unprojected import from_embeddings

        layer, _ = self.check(layer, 0)
        if self.hidden is None:
            raise ModelInputError(f"{self.model} does not keep its layers' inputs, so “without projections” "
                             "cannot be shown for it")
        return from_embeddings(self.scene_tokens(), self.hidden[layer], mask=frozen_mask(self.mask), scale=True,
                               title=f"{self.label} layer {layer} input")
