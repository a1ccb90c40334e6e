"""Telling the user when the open file is changed or deleted by someone else.

The window keeps the scene in memory, so nothing is lost either way; what matters is that the user
knows before *Save* overwrites another program's change, or that the file they think is on disk is
gone.  :class:`DiskWatch` watches the Session's file and sends one status-bar message
(``session.message``) per event.  A change that leaves the file equal to the scene in the window —
our own save, for instance — says nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer

from qkv_studio.core import SessionFileError, read_session


def _signature(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class DiskWatch(QObject):
    """Watches ``session.path``; ``check()`` runs the comparison at once (tests, or after a save)."""

    SETTLE_MS = 150  # editors and sync tools write in several steps: look once they are done
    POLL_MS = 2000

    def __init__(self, session, parent: QObject | None = None) -> None:
        super().__init__(parent if parent is not None else session)
        self._session = session
        self._watcher = QFileSystemWatcher(self)
        self._path = ""
        self._known: tuple | None = None
        self._missing_told = False
        self._changed_told: tuple | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.SETTLE_MS)
        self._timer.timeout.connect(self.check)
        self._watcher.fileChanged.connect(lambda _p: self._timer.start())
        self._watcher.directoryChanged.connect(lambda _p: self._timer.start())
        # File-system notifications can be missing (network drives, a full inotify table): a cheap
        # stat every few seconds catches what they miss.
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_MS)
        self._poll.timeout.connect(self.check)
        self._poll.start()
        session.path_changed.connect(self._follow)
        session.modified_changed.connect(self._on_modified)
        self._follow(session.path)

    def _follow(self, path: str) -> None:
        if self._path:
            self._watcher.removePaths(self._watcher.files() + self._watcher.directories())
        self._path = path
        self._known = _signature(path) if path else None
        self._missing_told = False
        self._changed_told = None
        if path:
            self._watcher.addPath(path) if os.path.exists(path) else None
            folder = str(Path(path).parent)
            if os.path.isdir(folder):
                self._watcher.addPath(folder)  # a file replaced by rename (atomic saves) shows up here

    def _on_modified(self, modified: bool) -> None:
        if not modified:  # just saved or opened: what is on disk now is ours
            self._known = _signature(self._path) if self._path else None
            self._missing_told = False
            self._changed_told = None
            self._rewatch()

    def _rewatch(self) -> None:
        if self._path and os.path.exists(self._path) and self._path not in self._watcher.files():
            self._watcher.addPath(self._path)

    def check(self) -> str | None:
        """Compare the file with what the window last read or wrote; returns the message sent, if any."""
        path = self._path
        if not path:
            return None
        sig = _signature(path)
        name = Path(path).name
        if sig is None:
            if self._missing_told:
                return None
            self._missing_told = True
            return self._say(f"{name} was deleted or moved by another program. Your work is still open: "
                             "Save writes it again.")
        self._missing_told = False
        self._rewatch()
        if sig == self._known or sig == self._changed_told:
            return None
        try:
            on_disk = read_session(path).scene
        except SessionFileError:
            on_disk = None
        if on_disk is not None and on_disk.same_as(self._session.scene):
            self._known = sig  # our own save, or a copy of what is open: nothing to say
            return None
        self._changed_told = sig
        return self._say(f"{name} was changed on disk by another program. Your version is still open: Save "
                         "overwrites the file with it, File ▸ Open reloads the file.")

    def _say(self, text: str) -> str:
        self._session.message.emit(text)
        return text
