"""The attention models QKV Studio can run: one protocol, one table (NumPy only, never Qt).

Everything that offers a real model reads :data:`MODELS` when it runs: ``qkv-studio export/screenshot
--model NAME`` (its choices, and the layer/head ranges in its help), and the Real model panel (its model
picker, the layer and head ranges, the title, the install hint).  An entry is light — it loads its
weights on the first ``tokenize``/``run`` — and satisfies :class:`AttentionModel`.  ``run(text)`` returns a
:class:`~qkv_studio.core.models.run.ModelRun`: every layer's and head's q, k, v and attention weights,
and the mask it used ("causal" for a causal model, "none" for an encoder), so that any head becomes an
ordinary Scene whose own softmax gives back the model's weights.

How to add a model
    1. one new module ``qkv_studio/core/models/<name>.py`` with a class satisfying :class:`AttentionModel`
       (NumPy only; import heavy libraries inside ``run``, and raise ``ModelUnavailable`` with the install
       command when they are missing, ``ModelInputError`` for text it cannot take);
    2. one line in :data:`MODELS` below (its position is its place in the picker and in ``--help``);
    3. its test in ``tests/core/`` (against a reference made with the original implementation).
    Nothing else changes: the CLI, the panel and the screenshot command pick it up.

Five lines (a toy causal model: random projections, 1 layer × 2 heads of 4) and its registry line::

    class Toy:
        name, title, label, description, causal = "toy", "A toy causal model", "Toy", "random heads", True
        n_layers, n_heads, n_kv_heads, head_dim, install_hint, install_note = 1, 2, 2, 4, "", ""
        def available(self): return True
        def tokenize(self, text): return tuple(text.split())
        def run(self, s): t = s.split(); return ModelRun.from_qkv(self, s, t, *RNG.normal(size=(3, 1, 2, len(t), 4)))

    MODELS = {m.name: m for m in (MiniLMModel(), Toy())}

Grouped-query attention: ``n_kv_heads`` < ``n_heads`` (dividing it); the run's ``k`` and ``v`` then hold
``n_kv_heads`` heads and ``ModelRun.kv_head(h)`` says which one query head ``h`` reads.

Generation (causal language models) has one name: ``start(text)``, the :class:`GeneratingModel` protocol's
method, gives a :class:`TokenGeneration` — the prompt's run, growing one token at a time (SmolLM2's is a
:class:`~qkv_studio.core.models.generation.Generation` with a KV cache).  :func:`generates` says whether a
model has it (the Real model panel's Next token, ``qkv-studio export/screenshot --generate N``), and
:func:`generate` appends N greedy tokens with it (what ``--generate N`` and ``qkv_studio`` scripts call).
"""

from __future__ import annotations

from typing import Protocol, TypeGuard, runtime_checkable

import numpy as np

from qkv_studio.core.models.minilm import MiniLMModel
from qkv_studio.core.models.run import ModelInputError, ModelRun, Progress
from qkv_studio.core.models.smollm2 import SmolLM2Model


@runtime_checkable
class AttentionModel(Protocol):
    """A model whose attention heads the app can show; see the module notes for how to add one.

    ``name`` is the registry key and the command line's ``--model`` value (lower case, no spaces);
    ``title`` the model as people know it ("all-MiniLM-L6-v2"); ``label`` its short name in scene titles
    ("MiniLM layer 3 head 5") and the undo text; ``description`` one line for the panel and ``--help``.
    ``causal`` is True when a token attends only to itself and earlier tokens (its runs carry
    ``mask="causal"``).  Sizes are known before anything is loaded; layers and heads count from 0.
    ``install_hint`` is the command that installs what the model needs ("" if nothing), ``install_note``
    a sentence about it ("" if none).
    """

    name: str
    title: str
    label: str
    description: str
    causal: bool
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    install_hint: str
    install_note: str

    def available(self) -> bool:
        """True when everything the model needs is installed (cheap: nothing is loaded)."""
        ...

    def tokenize(self, text: str) -> tuple[str, ...]:
        """The model's tokens for ``text``; raises ModelInputError (empty text) or ModelUnavailable."""
        ...

    def run(self, text: str) -> ModelRun:
        """Every layer and head on ``text``; raises ModelInputError or ModelUnavailable."""
        ...


class TokenGeneration(Protocol):
    """A prompt and the tokens appended to it one at a time (what :meth:`GeneratingModel.start` gives).

    ``run`` is the current run (prompt + generated tokens), ``generated`` how many tokens were appended,
    ``reused`` how many K/V rows the last step read from a cache (0 without one).  :meth:`choices` are the
    next-token bars (the ``k`` likeliest tokens as readable pieces, with their probabilities) under the
    sampling settings; :meth:`compute` works out the next step without appending it (safe on a worker
    thread while the run is shown) and :meth:`append` appends it; :meth:`back` takes the last token back
    and :meth:`redo` puts it on again.  Each returns the run it leaves.
    """

    @property
    def run(self) -> ModelRun: ...

    @property
    def generated(self) -> int: ...

    @property
    def reused(self) -> int: ...

    def choices(self, k: int = 5, *, temperature: float = 0.0, top_k: int = 0) -> list[tuple[str, float]]: ...

    def compute(self, *, temperature: float = 0.0, top_k: int = 0,
                progress: Progress | None = None) -> tuple[ModelRun, np.ndarray]: ...

    def append(self, run: ModelRun, logits: np.ndarray) -> ModelRun: ...

    def back(self) -> ModelRun: ...

    def redo(self) -> ModelRun: ...


@runtime_checkable
class GeneratingModel(AttentionModel, Protocol):
    """An :class:`AttentionModel` that writes text (a causal language model): ``start(text)`` runs the prompt
    and returns its :class:`TokenGeneration`; ``seed`` makes sampled tokens repeatable, ``progress`` hears of
    the prompt's run.  Raises ModelInputError or ModelUnavailable as ``run`` does."""

    def start(self, text: str, *, seed: int | None = 0, progress: Progress | None = None) -> TokenGeneration: ...


def generates(model: AttentionModel) -> TypeGuard[GeneratingModel]:
    """True for a causal model that can append tokens (it has :meth:`GeneratingModel.start`)."""
    return bool(model.causal) and isinstance(model, GeneratingModel)


def generate(model: AttentionModel, text: str, steps: int) -> ModelRun:
    """``text`` run by ``model`` with ``steps`` greedy tokens appended through its :class:`TokenGeneration`
    (with its KV cache where it has one); ModelInputError for a model that does not generate or a bad
    ``steps``."""
    if not generates(model):
        raise ModelInputError(f"{model.name} does not generate text (only a causal language model does)")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ModelInputError(f"the number of tokens to generate must be ≥ 0, not {steps!r}")
    gen = model.start(text)
    for _ in range(steps):
        gen.append(*gen.compute())
    return gen.run


# the registry: one line per model, in the order the picker and --help list them
MODELS: dict[str, AttentionModel] = {m.name: m for m in (
    MiniLMModel(),
    SmolLM2Model(),
)}


def models() -> tuple[AttentionModel, ...]:
    """The registered models, in order."""
    return tuple(MODELS.values())


def model_names() -> tuple[str, ...]:
    """The ``--model`` names, in order."""
    return tuple(MODELS)


def get_model(name: str) -> AttentionModel:
    """The model registered as ``name``; raises :class:`ModelInputError` naming the known ones."""
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise ModelInputError(f"unknown model {name!r} (models: {', '.join(MODELS) or 'none'})") from None

