"""Offering autosaved work back after a crash, and putting it into a window."""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from qkv_studio.core import Scene, SessionFileError, View, read_session
from qkv_studio.reliability.autosave import Recovered, _forget, pending_recovery, take_notices
from qkv_studio.reliability.window import attach

APP_NAME = "QKV Studio"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "an earlier session"


def offer_recovery(parent: QWidget | None = None, folder: str | os.PathLike | None = None
                   ) -> tuple[Scene, str] | None:
    """Ask whether to restore work left behind by a crash; returns ``(scene, original_path)`` or None.

    *Restore* returns the work (hand it to :func:`restore`); *Discard* deletes it; *Not now* (or
    closing the box) keeps it for the next start.
    """
    rec = pending_recovery(folder)
    notes = take_notices()
    if notes:  # a corrupt autosave was moved aside: say so once, and where it is kept
        QMessageBox.warning(parent, APP_NAME, "\n\n".join(notes))
    if rec is None:
        return None
    scene, path = rec
    name = Path(path).name if path else (scene.title or "an untitled scene")
    box = QMessageBox(QMessageBox.Icon.Question, APP_NAME,
                      "QKV Studio did not close normally last time. Your unsaved work was kept.",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Discard
                      | QMessageBox.StandardButton.Cancel, parent)
    box.button(QMessageBox.StandardButton.Yes).setText("Restore")
    box.button(QMessageBox.StandardButton.Cancel).setText("Not now")
    box.setDefaultButton(QMessageBox.StandardButton.Yes)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    box.setInformativeText(f"{name} — {scene.n} token{'s' if scene.n != 1 else ''}, autosaved "
                           f"{_when(rec.saved_at)}.\n\nRestore it? (Discard deletes it for good; "
                           "Not now asks again next time.)")
    choice = box.exec()
    if choice == QMessageBox.StandardButton.Yes:
        return rec
    if choice == QMessageBox.StandardButton.Discard:
        rec.discard()
    else:
        rec.release()
    return None


def restore(window, recovered: tuple[Scene, str] | tuple[Scene, str, View]) -> None:
    """Put recovered work into ``window`` as unsaved changes, then let its autosave take over.

    ``recovered`` is ``(scene, path)`` (a :class:`Recovered` also carries the ``view`` it was looked at
    with) or ``(scene, path, view)``; the window then shows that query and stage.

    When the original file can still be read, the window opens it and the recovered scene is one
    undoable step on top ("Restore unsaved work"), so Ctrl+Z shows what is on disk.  Otherwise the
    recovered scene is loaded and marked modified.  Either way closing the window asks to save.

    The recovered notes and ink (a :class:`Recovered`'s) go to the window's presenter: the strokes are
    back on their stages, one ink undo step ("Restore unsaved ink") on top of the file's own ink.
    """
    scene, path = recovered[0], recovered[1]
    view = recovered[2] if len(recovered) > 2 else getattr(recovered, "view", View())
    session = window.session
    base = None
    if path:
        try:
            base = read_session(path)
        except SessionFileError:
            base = None
    if base is not None:
        session.load(base.scene, path, base.view)
        session.replace_scene(scene, "Restore unsaved work", query=view.query)
        session.set_query(view.query)
        session.set_stage(view.stage)
    else:
        session.load(scene, path, view)
    if not session.modified:
        session.undo_stack.resetClean()
    _restore_annotations(window, path, base, recovered)
    if isinstance(recovered, Recovered):
        _forget(recovered)  # this window takes it over (attach must not adopt it a second time)
    autosave = attach(window)
    if isinstance(recovered, Recovered):
        autosave.adopt(recovered.entry)


def _restore_annotations(window, path: str, base, recovered) -> None:
    """The recovered notes and ink into the window's presenter (the scene's as its file holds them first)."""
    presenter = getattr(window, "presenter", None)
    if presenter is None:
        return
    from qkv_studio.core.ink import EMPTY_INK, NO_NOTES

    saved_notes, saved_ink = (NO_NOTES, EMPTY_INK) if base is None else (base.notes, base.ink)
    # (a plain (scene, path) tuple carries no annotations: the file's stay as they are)
    ink = getattr(recovered, "ink", saved_ink)
    notes = getattr(recovered, "notes", NO_NOTES) or saved_notes
    presenter.scene_opened(os.path.abspath(path) if path else "recovered", notes, saved_ink)
    if ink != saved_ink:
        presenter.book.restore_ink(ink)
