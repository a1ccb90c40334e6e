"""A lecture: stepping through the stages, and across the scenes of a deck (File → Open deck…)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox

from qkv_studio.core import STAGES, SessionFileError
from qkv_studio.core.deck import Deck, read_deck
from qkv_studio.core.ink import EMPTY_INK
from qkv_studio.ui.window.files import APP_NAME

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


class Lecture:
    """The deck open in the window (if any) and the position in it; next/back step through the
    stages and, past a scene's first or last stage, into the deck's neighbouring scene."""

    def __init__(self, window: "MainWindow") -> None:
        self._window = window
        self.deck: Deck | None = None
        self.index = 0

    def next_step(self) -> None:
        """Next stage; after the last stage of a deck's scene, the next scene's first stage."""
        if self._window.session.step_stage(+1):
            return
        if self.deck is not None and self.index + 1 < len(self.deck):
            self.show_scene(self.index + 1, STAGES[0])

    def back_step(self) -> None:
        if self._window.session.step_stage(-1):
            return
        if self.deck is not None and self.index > 0:
            self.show_scene(self.index - 1, STAGES[-1])

    def can_step(self, delta: int) -> bool:
        i = STAGES.index(self._window.session.stage) + delta
        if 0 <= i < len(STAGES):
            return True
        if self.deck is None:
            return False
        return 0 <= self.index + delta < len(self.deck)

    def open_deck(self, path: str, *, ask: bool = True) -> bool:
        """Open a lecture deck and show its first scene; a bad deck is refused with its message."""
        w = self._window
        if ask and not w.confirm_discard():
            return False
        try:
            deck = read_deck(path)
        except SessionFileError as exc:
            QMessageBox.warning(w, APP_NAME, f"Could not open the deck.\n\n{exc}")
            return False
        self.deck = deck
        w.presenter.scene_opened("")  # (a new lecture: the ink of the last one goes)
        self.show_scene(0, STAGES[0])
        return True

    def open_deck_dialog(self) -> None:
        w = self._window
        if not w.confirm_discard():
            return
        path = w.files.pick_deck()
        if path:
            self.open_deck(path, ask=False)

    def show_scene(self, index: int, stage: str) -> None:
        w = self._window
        if w.session.modified and not w.confirm_discard():
            return
        self.index = index
        scene = self.deck.scenes[index]
        w.session.load(scene, self.deck.path_of(index), self.deck.view_of(index).with_stage(stage))
        doc = self.deck.docs[index] if index < len(self.deck.docs) else None
        w.presenter.scene_opened(f"deck:{index}", self.deck.notes_of(index), doc.ink if doc is not None else EMPTY_INK,
                                 keep=True)  # (its ink as drawn when it was shown before)
        w.statusBar().showMessage(f"Deck: scene {index + 1} of {len(self.deck)}", 4000)
        w.stepper.set_deck_position(index, len(self.deck))

    def leave(self) -> None:
        """Another scene is opened: the deck is closed."""
        self.deck = None
        self.index = 0
        self._window.stepper.set_deck_position(0, 0)
