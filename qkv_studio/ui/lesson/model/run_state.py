"""What the Real model panel is showing: the chosen model, its last run, the chosen layer and head.

A plain object (no widget, no signal) that the panel binds to: it calls :meth:`ModelRunState.add_listener`
and redraws when told what changed — ``"model"`` (another model was picked: no run yet), ``"run"`` (a new
text was run) or ``"head"`` (another layer or head was chosen).  The models are those of
:mod:`qkv_studio.core.models.registry`, read when asked.

How heads reach the Session
    Browsing (a run, another layer or head) *shows* a head: it is loaded like a preset,
    ``Session.load(scene, "")`` — no undo step per head, the document clean and untitled, so Save can
    never overwrite the file the user had open with a model head.  When the session holds unsaved
    changes the state first asks ``confirm()`` (the window passes its save/discard/cancel prompt); on
    cancel nothing changes.  :meth:`ModelRunState.edit_copy` then copies the head into an editable scene
    with ``Session.replace_scene(…, "Edit MiniLM head")``: one undo step (undo returns to the model's own
    head), the document modified, so closing or browsing on asks before dropping the edits.
"""

from __future__ import annotations

from typing import Callable, Literal

import numpy as np

from qkv_studio.core.models import (
    AttentionModel, ModelInputError, ModelRun, ModelUnavailable, get_model, models,
)
from qkv_studio.core.scene import Scene
from qkv_studio.core.view import View
from qkv_studio.state.session import Session

Change = Literal["model", "run", "head"]
NEXT_TOKENS_SHOWN = 5  # the top-k bars of a causal model's next token


def edit_text(model: AttentionModel) -> str:
    """The undo text of "Edit this head": "Edit MiniLM head"."""
    return f"Edit {model.label} head"


class ModelRunState:
    """The chosen model (an entry of the registry; the first by default), run, layer and head.

    Every change goes through a method that returns False when the user cancelled (or nothing could be
    shown) and raises :class:`ModelInputError` / :class:`ModelUnavailable` with a one-line message; the
    listeners hear of each change that happened.
    """

    def __init__(self, session: Session, *, confirm: Callable[[], bool] | None = None,
                 model: str | None = None) -> None:
        self._session = session
        self._confirm = confirm
        self._model: AttentionModel = get_model(model) if model is not None else models()[0]
        self._run: ModelRun | None = None
        self._generation = None  # a generating model's Generation (KV cache) for the run, else None
        self._layer = 0
        self._head = 0
        self._shown: Scene | None = None  # the head scene last put into the session
        self._failed: dict[str, str] = {}  # model name → why it could not be loaded
        self._installed: dict[str, bool] = {}  # model name → available(), asked once (the panel asks often)
        self._listeners: list[Callable[[Change], None]] = []

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call ``listener(change)`` after each change ("model", "run" or "head")."""
        self._listeners.append(listener)

    def _tell(self, change: Change) -> None:
        for listener in self._listeners:
            listener(change)

    # ---- reading ---------------------------------------------------------------------------------
    @property
    def models(self) -> tuple[AttentionModel, ...]:
        """The models to pick from (the registry's, in order)."""
        return models()

    @property
    def model(self) -> AttentionModel:
        return self._model

    @property
    def run(self) -> ModelRun | None:
        """The last text's run with the chosen model (None before the first)."""
        return self._run

    @property
    def layer(self) -> int:
        return self._layer

    @property
    def head(self) -> int:
        return self._head

    @property
    def n_layers(self) -> int:
        return self._run.n_layers if self._run is not None else self._model.n_layers

    @property
    def n_heads(self) -> int:
        return self._run.n_heads if self._run is not None else self._model.n_heads

    @property
    def head_dim(self) -> int:
        return self._run.head_dim if self._run is not None else self._model.head_dim

    def available(self) -> bool:
        """True when the chosen model is installed and has not failed to load."""
        name = self._model.name
        if name not in self._installed:
            self._installed[name] = bool(self._model.available())
        return name not in self._failed and self._installed[name]

    def failure(self) -> str:
        """Why the chosen model could not be loaded ("" when it has not failed)."""
        return self._failed.get(self._model.name, "")

    @property
    def can_generate(self) -> bool:
        """True when the chosen model appends tokens one at a time (a causal model with ``start(text)``)."""
        return bool(self._model.causal) and callable(getattr(self._model, "start", None))

    @property
    def generated(self) -> int:
        """How many tokens "Next token" appended to the typed text (0 without a generation)."""
        return 0 if self._generation is None else int(self._generation.generated)

    @property
    def reused(self) -> int:
        """How many K/V rows per layer the last "Next token" read from the cache (0 before one)."""
        return 0 if self._generation is None or not self.generated else int(self._generation.reused)

    def next_tokens(self, k: int = NEXT_TOKENS_SHOWN) -> list[tuple[str, float]]:
        """The ``k`` most likely next tokens (readable pieces) and their probabilities; [] without a generation."""
        return [] if self._generation is None else self._generation.top(k)

    def head_scene(self) -> Scene | None:
        """The chosen head as a Scene (None before a run)."""
        return None if self._run is None else self._run.head_scene(self._layer, self._head)

    def showing_model_head(self) -> bool:
        """True while the session shows the chosen head exactly as the model computed it."""
        if self._shown is None:
            return False
        s, shown = self._session.scene, self._shown
        return (s.mode == "direct" and s.tokens == shown.tokens and s.title == shown.title
                and all(np.array_equal(a, b) for a, b in zip(s.qkv(), shown.qkv())))

    # ---- changing --------------------------------------------------------------------------------
    def set_model(self, name: str) -> bool:
        """Pick another registered model: no run until the next text; layer and head kept where they fit."""
        model = get_model(name)
        if model is self._model:
            return True
        self._model, self._run, self._shown, self._generation = model, None, None, None
        self._layer = min(self._layer, model.n_layers - 1)
        self._head = min(self._head, model.n_heads - 1)
        self._tell("model")
        return True

    def run_text(self, text: str) -> bool:
        """Run the chosen model on ``text`` and show the chosen head; False when the user cancelled."""
        try:
            # a generating model starts a Generation: the run plus its next-token logits and KV cache
            generation = self._model.start(text) if self.can_generate else None
            run = self._model.run(text) if generation is None else generation.run
        except ModelUnavailable as exc:
            self._failed[self._model.name] = str(exc)
            raise
        layer, head = min(self._layer, run.n_layers - 1), min(self._head, run.n_heads - 1)
        if not self._show(run.head_scene(layer, head)):
            return False
        self._run, self._layer, self._head, self._generation = run, layer, head, generation
        self._tell("run")
        return True

    def next_token(self) -> bool:
        """Append the most likely next token (greedy), computing only its row with the KV cache, and show
        the chosen head of the longer run; False without a generation or when the user cancelled."""
        gen = self._generation
        if gen is None:
            return False
        run = gen.step()
        if not self._show(run.head_scene(self._layer, self._head)):
            gen.back()
            return False
        self._run = run
        self._tell("run")
        return True

    def select(self, layer: int, head: int) -> bool:
        """Choose a head (0-based); shows it in the session when a text has been run."""
        layer, head = int(layer), int(head)
        if (layer, head) == (self._layer, self._head):
            return True
        if self._run is not None:
            if not self._show(self._run.head_scene(layer, head)):  # raises ModelInputError out of range
                return False
        else:
            for what, value, count in (("layer", layer, self.n_layers), ("head", head, self.n_heads)):
                if not 0 <= value < count:
                    raise ModelInputError(f"{what} must be 0–{count - 1} (counted from 0), not {value!r}")
        self._layer, self._head = layer, head
        self._tell("head")
        return True

    def edit_copy(self) -> bool:
        """Copy the chosen head into an editable scene: one undo step, the document modified."""
        if self._run is None:
            return False
        head = self._run.head_scene(self._layer, self._head)
        s = self._session.scene
        copy = Scene.create(head.tokens, q=head.q, k=head.k, v=head.v, mask=head.mask, scale=True,
                            title=f"{head.title} (your copy)",
                            description=head.description + " Copied for editing: change any number.")
        return self._session.replace_scene(copy, edit_text(self._model), query=0 if s.n != head.n else None)

    def _show(self, scene: Scene) -> bool:
        """Show a head in the session like a preset (clean history); ask first if edits would be lost."""
        if self._session.modified and self._confirm is not None and not self._confirm():
            return False
        query = self._session.query if self._session.scene.n == scene.n else 0
        self._session.load(scene, "", View(query, self._session.stage))
        self._shown = scene
        return True
