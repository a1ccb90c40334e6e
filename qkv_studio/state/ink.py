"""The ink of a lecture and the presenter's notes, per scene and stage, with an undo history of its own.

:class:`InkBook` keeps one :class:`~qkv_studio.core.ink.Ink` per scene of the lecture (a deck's scenes
each keep theirs while the lecturer steps between them) and shows the current stage's strokes.  Its
undo history is separate from the Session's: drawing on a slide never marks the scene as edited (which
would ask "save changes?" at the next scene of a deck), and undoing ink never undoes a matrix edit.

It knows whether the current scene's ink is saved (:meth:`unsaved`: it differs from the ink the scene was
opened with or last saved with, :meth:`mark_saved`), so that the autosave keeps unsaved ink safe from a
crash as it keeps unsaved edits (:mod:`qkv_studio.reliability.autosave`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from qkv_studio.core.ink import EMPTY_INK, NO_NOTES, Ink, Notes, Stroke

if TYPE_CHECKING:
    from qkv_studio.state.session import Session


class _InkEdit(QUndoCommand):
    def __init__(self, book: InkBook, key: str, before: Ink, after: Ink, text: str) -> None:
        super().__init__(text)
        self._book, self._key, self._before, self._after = book, key, before, after

    def redo(self) -> None:
        self._book._put(self._key, self._after)

    def undo(self) -> None:
        self._book._put(self._key, self._before)


class InkBook(QObject):
    """The ink of every scene of the lecture and the notes of the current one.

    ``changed()``: the strokes shown (the current scene's, the current stage's) changed — drawn,
    erased, cleared, undone, or another stage or scene is shown.
    ``unsaved_changed(bool)``: the current scene's ink came to differ from its saved ink, or no longer does.
    """

    changed = Signal()
    unsaved_changed = Signal(bool)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._books: dict[str, Ink] = {}
        self._notes: dict[str, Notes] = {}
        self._saved: dict[str, Ink] = {}  # (each scene's ink as its file holds it)
        self._was_unsaved = False
        self.key = ""
        self.undo_stack = QUndoStack(self)
        session.stage_changed.connect(lambda *_: self.changed.emit())

    # ---- which scene -------------------------------------------------------------------------------
    def open_scene(self, key: str, notes: Notes = NO_NOTES, ink: Ink = EMPTY_INK, *, keep: bool = False) -> None:
        """The lecture shows scene ``key`` now (a deck's ``"deck:3"``, a file's path).  Its ink is the
        ink drawn on it before when ``keep`` (a deck's scene visited again), else ``ink`` (the file's);
        ``keep`` False starts the lecture afresh: every other scene's ink and the undo history go."""
        if not keep:
            self._books.clear()
            self._notes.clear()
            self._saved.clear()
            self.undo_stack.clear()
        self.key = key
        if key not in self._books:
            self._books[key] = ink
            self._saved[key] = ink
        self._notes[key] = notes
        self.changed.emit()
        self._check_unsaved()

    # ---- saved or not ----------------------------------------------------------------------------------
    def unsaved(self) -> bool:
        """The current scene's ink differs from the ink its file holds (drawn, erased or restored since)."""
        return self.ink() != self._saved.get(self.key, EMPTY_INK)

    def mark_saved(self) -> None:
        """The current scene was saved with its ink (the file holds :meth:`ink` now)."""
        self._saved[self.key] = self.ink()
        self._check_unsaved()

    def restore_ink(self, ink: Ink) -> None:
        """Put ``ink`` (recovered after a crash) on the current scene: one undo step back to the file's."""
        self._edit(ink, "Restore unsaved ink")

    def _check_unsaved(self) -> None:
        unsaved = self.unsaved()
        if unsaved != self._was_unsaved:
            self._was_unsaved = unsaved
            self.unsaved_changed.emit(unsaved)

    # ---- reading -------------------------------------------------------------------------------------
    def ink(self) -> Ink:
        """The current scene's ink (every stage)."""
        return self._books.get(self.key, EMPTY_INK)

    def strokes(self, stage: str | None = None) -> tuple[Stroke, ...]:
        """The strokes on ``stage`` (default: the stage shown) of the current scene."""
        return self.ink().strokes(self._session.stage if stage is None else stage)

    def notes(self) -> Notes:
        return self._notes.get(self.key, NO_NOTES)

    # ---- drawing (each one undo step) ----------------------------------------------------------------
    def add_stroke(self, stroke: Stroke) -> None:
        if stroke.points:
            self._edit(self.ink().with_stroke(self._session.stage, stroke), "Draw")

    def erase_at(self, x: float, y: float, radius: float = 0.015) -> bool:
        """Erase the strokes of the stage shown that pass near (x, y); True if one did."""
        return self._edit(self.ink().erased_at(self._session.stage, x, y, radius), "Erase ink")

    def clear(self) -> bool:
        """Clear the stage shown of ink (one undo step); True if there was some."""
        return self._edit(self.ink().cleared(self._session.stage), "Clear ink")

    def undo(self) -> None:
        self.undo_stack.undo()

    def redo(self) -> None:
        self.undo_stack.redo()

    def _edit(self, after: Ink, text: str) -> bool:
        before = self.ink()
        if after is before:
            return False
        self.undo_stack.push(_InkEdit(self, self.key, before, after, text))
        return True

    def _put(self, key: str, ink: Ink) -> None:
        self._books[key] = ink
        if key == self.key:
            self.changed.emit()
            self._check_unsaved()
