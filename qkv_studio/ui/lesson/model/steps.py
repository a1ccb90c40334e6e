"""The Real model panel's undo steps: a head shown over the user's edits, and a generated token.

Both are :class:`~qkv_studio.state.session.SceneEdit` commands on the Session's QUndoStack (so the Edit
menu names them and Undo/Redo work as for any edit) that also put the panel's
:class:`~qkv_studio.ui.lesson.model.run_state.ModelRunState` back where it was — the run, its
Generation (KV cache), the layer and head — through ``state.restore(place)``.

* :class:`ModelShow` — a head that replaced the user's unsaved edits ("Show SmolLM2 head"); the heads
  browsed after it merge into it, so one Undo brings the edits back.
* :class:`TokenStep` — one token appended by "Next token"; Undo takes it back (the Generation's
  :meth:`back`), Redo puts the same token back (``redo``) without computing it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtGui import QUndoCommand

from qkv_studio.core.models import AttentionModel, ModelRun, TokenGeneration
from qkv_studio.core.scene import Scene
from qkv_studio.state.session import SceneEdit, Session

if TYPE_CHECKING:
    from qkv_studio.ui.lesson.model.run_state import ModelRunState


class Place(NamedTuple):
    """Where the model state is: its run, Generation (or None), layer and head, and the model."""

    run: ModelRun | None
    generation: TokenGeneration | None
    layer: int
    head: int
    model: AttentionModel | None = None  # the registry entry (None: whichever is chosen)


class ModelShow(SceneEdit):
    """A model head shown in place of the user's edited scene: one undo step, merging the browsing after it."""

    def __init__(self, session: Session, state: ModelRunState, before: Scene, after: Scene, text: str,
                 place_before: Place, place_after: Place, *, queries: tuple[int, int]) -> None:
        super().__init__(session, before, after, text, merge_key=("model-show", id(state)), queries=queries)
        self._state = state
        self.places = (place_before, place_after)
        self._shown_before = state.shown_scene  # (the head the state showed before, if any)

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(other, ModelShow) or not super().mergeWith(other):
            return False
        self.places = (self.places[0], other.places[1])
        return True

    def redo(self) -> None:
        super().redo()
        self._state.shown(self.after)
        self._state.restore(self.places[1])

    def undo(self) -> None:
        super().undo()
        self._state.shown(self._shown_before)
        self._state.restore(self.places[0])


class TokenStep(SceneEdit):
    """One generated token: the longer run's head in the session; Undo takes the token back."""

    def __init__(self, session: Session, state: ModelRunState, before: Scene, after: Scene, text: str,
                 place_before: Place, place_after: Place, *, queries: tuple[int, int]) -> None:
        super().__init__(session, before, after, text, queries=queries)
        self._state = state
        self.places = (place_before, place_after)
        self._shown_before = state.shown_scene  # (the head the state showed before, if any)
        self._done = False  # the Generation holds the token already when the step is first pushed

    def redo(self) -> None:
        gen = self.places[1].generation
        if self._done and gen is not None:
            gen.redo()
        self._done = True
        super().redo()
        self._state.shown(self.after)
        self._state.restore(self.places[1])

    def undo(self) -> None:
        gen = self.places[1].generation
        if gen is not None:
            gen.back()
        super().undo()
        self._state.shown(self._shown_before)
        self._state.restore(self.places[0])
