"""What the Real model panel is showing: the chosen model, its last run, the chosen layer and head.

A plain object (no widget, no signal) that the panel binds to: it calls :meth:`ModelRunState.add_listener`
and redraws when told what changed — ``"model"`` (another model was picked: no run yet), ``"run"`` (a new
text was run) or ``"head"`` (another layer or head was chosen).  The models are those of
:mod:`qkv_studio.core.models.registry`, read when asked.

How heads reach the Session
    Browsing (a run, another layer or head) *shows* a head.  On a clean session it is loaded like a
    preset, ``Session.load(scene, "")`` — no undo step per head, the document clean and untitled.  When
    the session holds the user's unsaved edits the state first asks ``confirm()`` (the panel's
    "Replace your edited scene?", which reads :attr:`ModelRunState.replacing`); on cancel nothing changes,
    on yes the head comes in as **one undo step** ("Show SmolLM2 head", :class:`~.steps.ModelShow`):
    Undo brings the edits back.  Further browsing merges into that step (one undo still restores them).
    Each generated token is an undo step of its own (:class:`~.steps.TokenStep`: Undo takes it back,
    Redo puts it back as it was computed).  :meth:`ModelRunState.edit_copy` copies the head into an
    editable scene with ``Session.replace_scene(…, "Edit MiniLM head")``: one undo step (undo returns to
    the model's own head), the document modified, so closing or browsing on asks before dropping the edits.

Runs off the GUI thread
    :meth:`ModelRunState.prepare_run` / :meth:`prepare_next` do the model's work and touch no Session (a
    worker thread may call them, with ``progress`` — see :class:`~qkv_studio.core.models.Progress`);
    :meth:`finish_run` / :meth:`finish_next` then show the result on the GUI thread.  :meth:`run_text`
    and :meth:`next_token` do both at once (scripts, the command line).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from qkv_studio.core.models import (
    AttentionModel,
    ModelInputError,
    ModelRun,
    ModelUnavailable,
    TokenGeneration,
    generates,
    get_model,
    models,
)
from qkv_studio.core.models.run import Progress, takes_progress
from qkv_studio.core.models.sampling import check_sampling
from qkv_studio.core.scene import Scene
from qkv_studio.core.view import View
from qkv_studio.state.session import Session
from qkv_studio.ui.lesson.model.steps import ModelShow, Place, TokenStep

Change = Literal["model", "run", "head"]
NEXT_TOKENS_SHOWN = 5  # the top-k bars of a causal model's next token


def edit_text(model: AttentionModel) -> str:
    """The undo text of "Edit this head": "Edit MiniLM head"."""
    return f"Edit {model.label} head"


def show_text(model: AttentionModel) -> str:
    """The undo text of a head shown over the user's edits: "Show SmolLM2 head"."""
    return f"Show {model.label} head"


@dataclass(frozen=True, eq=False)
class Prepared:
    """A text run by a model (off the GUI thread, perhaps), not shown yet: :meth:`ModelRunState.finish_run`."""

    model: AttentionModel
    run: ModelRun
    generation: TokenGeneration | None  # a generating model's Generation, else None


@dataclass(frozen=True, eq=False)
class PreparedToken:
    """A next token computed for a Generation (off the GUI thread, perhaps), not appended yet."""

    generation: TokenGeneration
    run: ModelRun
    logits: np.ndarray


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
        self._generation: TokenGeneration | None = None  # a generating model's Generation for the run, else None
        self._layer = 0
        self._head = 0
        self._shown: Scene | None = None  # the head scene last put into the session
        self._failed: dict[str, str] = {}  # model name → why it could not be loaded
        self._installed: dict[str, bool] = {}  # model name → available(), asked once (the panel asks often)
        self._listeners: list[Callable[[Change], None]] = []
        self._temperature = 0.0  # greedy
        self._top_k = 0  # every token
        #: what a pending show would put in place of the user's edits ("SmolLM2 layer 0 head 0"), read by
        #: the ``confirm`` question while it is asked
        self.replacing = ""

    @property
    def confirm(self) -> Callable[[], bool] | None:
        """Asked before a head replaces the user's unsaved edits; False cancels."""
        return self._confirm

    @confirm.setter
    def confirm(self, ask: Callable[[], bool] | None) -> None:
        self._confirm = ask

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
        """True when the chosen model appends tokens one at a time (the registry's ``generates``: a causal
        model with ``start(text)``)."""
        return generates(self._model)

    @property
    def generated(self) -> int:
        """How many tokens "Next token" appended to the typed text (0 without a generation)."""
        return 0 if self._generation is None else int(self._generation.generated)

    @property
    def reused(self) -> int:
        """How many K/V rows per layer the last "Next token" read from the cache (0 before one)."""
        return 0 if self._generation is None or not self.generated else int(self._generation.reused)

    def next_tokens(self, k: int = NEXT_TOKENS_SHOWN) -> list[tuple[str, float]]:
        """The ``k`` most likely next tokens (readable pieces) and their probabilities under the sampling
        settings (greedy: the model's own probabilities); [] without a generation."""
        if self._generation is None:
            return []
        return self._generation.choices(k, temperature=self._temperature, top_k=self._top_k)

    @property
    def temperature(self) -> float:
        """Sampling temperature of "Next token": 0 = greedy (the most likely token)."""
        return self._temperature

    @property
    def top_k(self) -> int:
        """Sample only among the ``top_k`` most likely tokens (0: all)."""
        return self._top_k

    def set_sampling(self, temperature: float, top_k: int) -> None:
        """Set how "Next token" chooses (seeded: the same settings give the same tokens); raises
        :class:`ModelInputError` for a negative temperature or top-k."""
        check_sampling(temperature, top_k)
        self._temperature, self._top_k = float(temperature), int(top_k)

    def _place(self, run: ModelRun | None = None, generation: TokenGeneration | None = None,
               layer: int | None = None, head: int | None = None) -> Place:
        """Where the state is now, or (with arguments) where it goes, with the chosen model."""
        if run is None:
            return Place(self._run, self._generation, self._layer, self._head, self._model)
        return Place(run, generation, self._layer if layer is None else layer,
                     self._head if head is None else head, self._model)

    def restore(self, place: Place) -> None:
        """Put the state back where an undo step says it was (the steps call this); listeners hear."""
        if place.model is not None and place.model is not self._model:  # (undone across a change of model)
            self._model = place.model
            self._tell("model")
        change: Change = "run" if place.run is not self._run else "head"
        self._run, self._generation, self._layer, self._head = place[:4]
        self._tell(change)

    def head_scene(self) -> Scene | None:
        """The chosen head as a Scene (None before a run)."""
        return None if self._run is None else self._run.head_scene(self._layer, self._head)

    def showing_model_head(self) -> bool:
        """True while the session shows the chosen head exactly as the model computed it."""
        if self._shown is None:
            return False
        s, shown = self._session.scene, self._shown
        return (s.mode == "direct" and s.tokens == shown.tokens and s.title == shown.title
                and all(np.array_equal(a, b) for a, b in zip(s.qkv(), shown.qkv(), strict=False)))

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
        return self.finish_run(self.prepare_run(text))

    def prepare_run(self, text: str, progress: Progress | None = None) -> Prepared:
        """The chosen model's run on ``text`` (nothing shown: see :meth:`finish_run`).  Safe off the GUI
        thread; ``progress`` hears how far it is (when the model reports it) and may raise
        :class:`~qkv_studio.core.models.run.Cancelled`."""
        model = self._model
        extra = {"progress": progress} if progress is not None else {}
        try:
            # a generating model starts a Generation: the run plus its next-token logits and KV cache
            if generates(model):
                generation = model.start(text, progress=progress)
                run = generation.run
            else:
                generation = None
                run = model.run(text, **(extra if takes_progress(model.run) else {}))
        except ModelUnavailable as exc:
            self._failed[model.name] = str(exc)
            raise
        return Prepared(model, run, generation)

    def finish_run(self, prepared: Prepared, *, ask: bool = True) -> bool:
        """Show a prepared run's chosen head; False when the user cancelled (``ask`` False: the user was
        asked before the run began) or another model was picked meanwhile."""
        if prepared.model is not self._model:
            return False
        run = prepared.run
        layer, head = min(self._layer, run.n_layers - 1), min(self._head, run.n_heads - 1)
        return self._show(run.head_scene(layer, head), self._place(run, prepared.generation, layer, head), ask=ask)

    def may_replace(self, what: str) -> bool:
        """Ask (once, before a run begins) whether a head may replace the user's unsaved edits; True when
        nothing would be lost or the user agreed.  ``what`` names the head ("SmolLM2 on “The cat”")."""
        if not self._session.modified or self.showing_model_head() or self._confirm is None:
            return True
        self.replacing = what
        try:
            return bool(self._confirm())
        finally:
            self.replacing = ""

    def next_token(self) -> bool:
        """Append the next token (greedy by default: see :meth:`set_sampling`), computing only its row with
        the KV cache, and show the chosen head of the longer run; False without a generation or when the
        user cancelled."""
        if self._generation is None:
            return False
        return self.finish_next(self.prepare_next())

    def prepare_next(self, progress: Progress | None = None) -> PreparedToken:
        """Compute the next token's row with the KV cache (nothing shown or appended: :meth:`finish_next`).
        Safe off the GUI thread."""
        gen = self._generation
        if gen is None:
            raise ModelInputError("run a prompt first: there is nothing to continue")
        run, logits = gen.compute(temperature=self._temperature, top_k=self._top_k, progress=progress)
        return PreparedToken(gen, run, logits)

    def finish_next(self, prepared: PreparedToken, *, ask: bool = True) -> bool:
        """Append a prepared token and show the longer run's head, as one undo step; False when the user
        cancelled or the generation moved on meanwhile (another run, a token taken back)."""
        gen = self._generation
        if gen is None or gen is not prepared.generation or prepared.run.n != gen.run.n + 1:
            return False
        if ask and not self.may_replace(f"{self._model.label} with one more token"):
            return False
        before = self._place()
        run = gen.append(prepared.run, prepared.logits)
        after = self._place(run, gen)
        s = self._session
        follow = s.query == s.scene.n - 1  # (a query on the last token follows it to the new one)
        s.undo_stack.push(TokenStep(s, self, s.scene, run.head_scene(self._layer, self._head),
                                    f"Next token “{run.tokens[-1]}”", before, after,
                                    queries=(s.query, run.n - 1 if follow else s.query)))
        return True

    def select(self, layer: int, head: int) -> bool:
        """Choose a head (0-based); shows it in the session when a text has been run."""
        layer, head = int(layer), int(head)
        if (layer, head) == (self._layer, self._head):
            return True
        if self._run is not None:
            # (raises ModelInputError out of range)
            return self._show(self._run.head_scene(layer, head), self._place(self._run, self._generation, layer, head))
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

    def _show(self, scene: Scene, place: Place, *, ask: bool = True) -> bool:
        """Show a head and move the state to ``place``: on a clean session like a preset (clean history);
        over the user's edits, after asking, as one undo step (merged with the browsing that follows)."""
        s = self._session
        query = s.query if s.scene.n == scene.n else 0
        if not s.modified:
            s.load(scene, "", View(query, s.stage))
            self._shown = scene
            self.restore(place)
            return True
        if ask and not self.may_replace(scene.title):
            return False
        s.undo_stack.push(ModelShow(s, self, s.scene, scene, show_text(self._model), self._place(), place,
                                    queries=(s.query, query)))
        return True

    @property
    def shown_scene(self) -> Scene | None:
        """The head scene last put into the session (None before one)."""
        return self._shown

    def shown(self, scene: Scene | None) -> None:
        """The steps tell which head scene they put into the session."""
        self._shown = scene
