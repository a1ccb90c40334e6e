"""A lecture: stepping through the stages, and across the scenes of a deck (File → Open deck…).

A deck's scenes are read when they are stepped to (:class:`qkv_studio.core.deck.Deck`): a deck of many
large scenes opens at once.  A scene whose file cannot be read (missing, corrupt, a pipe …) is skipped
when it is reached, with a message naming the deck entry and its file, and the lecture goes on with the
next scene in the direction of the step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox

from qkv_studio.core import STAGES, SessionFileError
from qkv_studio.ui.window.files import APP_NAME

if TYPE_CHECKING:
    from qkv_studio.core.deck import Deck
    from qkv_studio.ui.window.main_window import MainWindow


class Lecture:
    """The deck open in the window (if any) and the position in it; next/back step through the
    stages and, past a scene's first or last stage, into the deck's neighbouring scene."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self.deck: Deck | None = None
        self.index = 0
        self._told: set[int] = set()  # entries of this deck whose problem was shown in a dialog

    def next_step(self) -> None:
        """Next stage; after the last stage of a deck's scene, the next scene's first stage."""
        if self._window.session.step_stage(+1):
            return
        if self.deck is not None and self.index + 1 < len(self.deck):
            self.show_scene(self.index + 1, STAGES[0], step=+1)

    def back_step(self) -> None:
        if self._window.session.step_stage(-1):
            return
        if self.deck is not None and self.index > 0:
            self.show_scene(self.index - 1, STAGES[-1], step=-1)

    def can_step(self, delta: int) -> bool:
        i = STAGES.index(self._window.session.stage) + delta
        if 0 <= i < len(STAGES):
            return True
        if self.deck is None:
            return False
        return 0 <= self.index + delta < len(self.deck)

    def open_deck(self, path: str, *, ask: bool = True) -> bool:
        """Open a lecture deck and show its first scene that can be read; a bad deck (or one of which no
        scene can be read) is refused with its message and the window keeps what it shows."""
        w = self._window
        if ask and not w.confirm_discard():
            return False
        from qkv_studio.core.deck import read_deck

        try:
            deck = read_deck(path)
        except SessionFileError as exc:
            QMessageBox.warning(w, APP_NAME, f"Could not open the deck.\n\n{exc}")
            return False
        before = self.deck, self.index, self._told
        self.deck, self._told = deck, set()
        w.presenter.scene_opened("")  # (a new lecture: the ink of the last one goes)
        shown, skipped = self._show_first(0, STAGES[0], +1)
        if shown is None:
            self.deck, self.index, self._told = before
            if skipped:
                QMessageBox.warning(w, APP_NAME, f"Could not open the deck: none of its {len(deck)} scenes can be "
                                                 f"read.\n\n" + _listed(skipped))
            return False
        self._tell(skipped)
        return True

    def open_deck_dialog(self) -> None:
        w = self._window
        if not w.confirm_discard():
            return
        path = w.files.pick_deck()
        if path:
            self.open_deck(path, ask=False)

    def show_scene(self, index: int, stage: str, *, step: int = +1) -> bool:
        """Show entry ``index`` of the deck at ``stage``; an entry that cannot be read is skipped (with a
        message) for the next one in the direction of ``step``.  False if nothing was shown (the user
        kept unsaved work, or no entry that way can be read: the scene shown stays)."""
        shown, skipped = self._show_first(index, stage, step)
        self._tell(skipped)
        return shown is not None

    def _show_first(self, index: int, stage: str, step: int) -> tuple[int | None, list[tuple[int, str]]]:
        """Load the first entry from ``index`` on (in the direction of ``step``) that can be read: its
        index (None if none, or the user kept unsaved work) and the (index, message) of those skipped."""
        w = self._window
        if w.session.modified and not w.confirm_discard():
            return None, []
        deck = self.deck
        if deck is None:
            return None, []
        skipped: list[tuple[int, str]] = []
        while 0 <= index < len(deck):
            try:
                doc = deck.document(index)
            except SessionFileError as exc:
                skipped.append((index, str(exc)))
                index += step
                continue
            self.index = index
            w.session.load(doc.scene, deck.path_of(index), doc.view.with_stage(stage))
            w.presenter.scene_opened(f"deck:{index}", deck.notes_of(index), doc.ink,
                                     keep=True)  # (its ink as drawn when it was shown before)
            note = f"Deck: scene {index + 1} of {len(deck)}"
            if skipped:
                note += f" (skipped {', '.join(str(i + 1) for i, _ in skipped)}: cannot be read)"
            w.statusBar().showMessage(note, 10000 if skipped else 4000)
            w.stepper.set_deck_position(index, len(deck))
            return index, skipped
        return None, skipped

    def _tell(self, skipped: list[tuple[int, str]]) -> None:
        """A dialog for the skipped entries not told of before (each deck entry once); the status bar
        says the rest."""
        new = [(i, message) for i, message in skipped if i not in self._told]
        if not new:
            if skipped:
                self._window.statusBar().showMessage(
                    f"Deck: skipped scene {', '.join(str(i + 1) for i, _ in skipped)} (cannot be read)", 10000)
            return
        self._told.update(i for i, _ in new)
        scenes = ", ".join(str(i + 1) for i, _ in new)
        QMessageBox.warning(self._window, APP_NAME,
                            f"Scene{'s' if len(new) > 1 else ''} {scenes} of the deck could not be read and "
                            f"{'were' if len(new) > 1 else 'was'} skipped.\n\n" + _listed(new))

    def leave(self) -> None:
        """Another scene is opened: the deck is closed."""
        self.deck = None
        self.index = 0
        self._told = set()
        self._window.stepper.set_deck_position(0, 0)


def _listed(skipped: list[tuple[int, str]], most: int = 8) -> str:
    """The messages of skipped entries, one a line (the first ``most``, then how many more)."""
    lines = [message for _, message in skipped[:most]]
    if len(skipped) > most:
        lines.append(f"… and {len(skipped) - most} more")
    return "\n".join(lines)
