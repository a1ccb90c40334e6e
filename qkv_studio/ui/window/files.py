"""File → New, Open, Open preset, Open recent, Save, Save As, and the prompt before unsaved work is lost.

A bad file is refused with its message in a box; the work that was open stays.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from qkv_studio.core import SessionFileError, list_presets, preset_document, read_session, write_session
from qkv_studio.core.sessionfile import suggested_file_name
from qkv_studio.core.text import elide_words

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow

APP_NAME = "QKV Studio"
FILE_FILTER = "QKV Studio sessions (*.qkv.json);;JSON files (*.json);;All files (*)"
DECK_FILTER = "QKV Studio decks (*.qkvdeck.json *.json);;All files (*)"


class Files:
    """The window's files: opening and saving sessions, the recent files and presets menus, the title."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self._recent_stale = True
        self.recent_menu: QMenu | None = None
        self.preset_menu: QMenu | None = None

    # ---- menus ------------------------------------------------------------------------------------
    def bind_menus(self, file_menu: QMenu, preset_menu: QMenu, recent_menu: QMenu) -> None:
        """The presets (read from disk) and the recent files (from the settings) are listed when the
        menu opens, not while the window starts."""
        self.preset_menu, self.recent_menu = preset_menu, recent_menu
        preset_menu.setToolTipsVisible(True)  # (each entry's whole description)
        preset_menu.aboutToShow.connect(self._fill_preset_menu)
        file_menu.aboutToShow.connect(self._rebuild_recent_if_stale)

    def _fill_preset_menu(self) -> None:
        menu = self.preset_menu
        if menu is None or menu.actions():
            return
        for preset in list_presets():
            act = menu.addAction(f"{preset.name} — {elide_words(preset.description, 60)}")
            act.setStatusTip(preset.description)  # (the whole of it: the menu's line is cut at a word)
            act.setToolTip(preset.description)
            act.triggered.connect(lambda _=False, name=preset.name: self.open_preset(name))

    def _rebuild_recent_if_stale(self) -> None:
        if self._recent_stale:
            self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self._recent_stale = False
        if self.recent_menu is None:
            return
        self.recent_menu.clear()
        recent = self._window.settings_store.recent()
        for p in recent:
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _=False, path=p: self.open_path(path))
        self.recent_menu.setEnabled(bool(recent))

    def _remember(self, path: str) -> None:
        store = self._window.settings_store
        if store.enabled:
            store.add_recent(path)
            self._rebuild_recent()
        store.store("last_folder", str(Path(path).resolve().parent))

    # ---- title ------------------------------------------------------------------------------------
    def update_title(self, *_: object) -> None:
        w, s = self._window, self._window.session
        name = Path(s.path).name if s.path else (s.scene.title or "untitled")
        w.setWindowTitle(f"{name}[*] — {APP_NAME}")
        w.setWindowModified(s.modified)

    # ---- commands ---------------------------------------------------------------------------------
    def confirm_discard(self) -> bool:
        """Ask before unsaved changes are lost; True when it is fine to go on."""
        if not self._window.session.modified:
            return True
        button = QMessageBox.StandardButton
        box = QMessageBox(QMessageBox.Icon.Warning, APP_NAME, "The scene has unsaved changes.",
                          button.Save | button.Discard | button.Cancel, self._window)
        box.setInformativeText("Save them first?")
        choice = box.exec()
        if choice == QMessageBox.StandardButton.Save:
            return self.save()
        return choice == QMessageBox.StandardButton.Discard

    def new_scene(self) -> None:
        self.open_preset("lesson")

    def open_preset(self, name: str) -> None:
        if self.confirm_discard():
            self._window.lecture.leave()
            doc = preset_document(name)
            self._window.session.load(doc.scene, "", doc.view)
            self._window.presenter.scene_opened(f"preset:{name}", doc.notes, doc.ink)

    def open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self._window, "Open session", self.last_folder(), FILE_FILTER)
        if path:
            self.open_path(path, ask=False)

    def open_path(self, path: str, *, ask: bool = True) -> bool:
        """Open a session file; a bad file is refused with its message and the current work stays."""
        if ask and not self.confirm_discard():
            return False
        try:
            doc = read_session(path)
        except SessionFileError as exc:
            QMessageBox.warning(self._window, APP_NAME, f"Could not open the file.\n\n{exc}")
            return False
        self._window.lecture.leave()
        self._window.session.load(doc.scene, os.path.abspath(path), doc.view)
        self._window.presenter.scene_opened(os.path.abspath(path), doc.notes, doc.ink)
        self._remember(os.path.abspath(path))
        return True

    def save(self) -> bool:
        path = self._window.session.path
        return self.write(path) if path else self.save_as()

    def save_as(self) -> bool:
        session = self._window.session
        start = session.path or os.path.join(self.last_folder(), suggested_file_name(session.scene))
        path, _ = QFileDialog.getSaveFileName(self._window, "Save session", start, FILE_FILTER)
        if not path:
            return False
        if not path.endswith(".json"):
            path += ".qkv.json"
        return self.write(path)

    def write(self, path: str) -> bool:
        """Save the scene to ``path``; a failure is reported and the work stays open."""
        w = self._window
        try:
            write_session(path, w.session.scene, w.session.view, notes=w.presenter.book.notes(),
                          ink=w.presenter.book.ink())
        except SessionFileError as exc:
            QMessageBox.warning(w, APP_NAME, f"Could not save.\n\n{exc}\n\nYour work is still open.")
            return False
        w.presenter.book.mark_saved()  # (the ink is in the file now: the autosave need not keep it)
        w.session.mark_saved(os.path.abspath(path))
        self._remember(os.path.abspath(path))
        w.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def last_folder(self) -> str:
        return self._window.settings_store.last_folder()

    def pick_deck(self) -> str:
        """File → Open deck…: the deck the user picks ("" if none)."""
        path, _ = QFileDialog.getOpenFileName(self._window, "Open lecture deck", self.last_folder(), DECK_FILTER)
        return path
