"""What :func:`attach` puts on a window: its Session autosaved, the autosave removed after a clean close, the
open file watched, a failed autosave shown in the status bar until a later one succeeds.

It lives apart from the package's ``__init__`` so that :mod:`.recovery`, which hands a restored window to
it, imports it without importing the package that imports :mod:`.recovery` (no import cycle).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

from qkv_studio.reliability.autosave import Autosave, _forget, claimed
from qkv_studio.reliability.diskwatch import DiskWatch

_ATTR = "_qkv_reliability_autosave"


class _CloseWatcher(QObject):
    """Notices that the window really closed (its close event was accepted, so it hid)."""

    def __init__(self, window, autosave: Autosave) -> None:
        super().__init__(autosave)
        self._window = window
        self._autosave = autosave
        self._closing = False
        window.installEventFilter(self)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self._on_quit)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        t = event.type()
        if t == QEvent.Type.Close:
            # The window's closeEvent (and its unsaved-changes prompt) runs after this filter; if it
            # accepts, the window hides at once, before this zero timer fires.
            self._closing = True
            QTimer.singleShot(0, self._end_close)
        elif t == QEvent.Type.Hide and self._closing:
            self._closing = False
            self._autosave.discard()
        return False

    def _end_close(self) -> None:
        self._closing = False

    def _on_quit(self) -> None:
        try:
            visible = self._window.isVisible()
        except RuntimeError:  # the window is already gone
            visible = False
        if not visible:
            self._autosave.discard()


def _failure_label(window, autosave: Autosave):
    """A permanent status-bar label showing a failed autosave until a later one succeeds (a status
    message would be gone in seconds, or covered by the next one)."""
    from PySide6.QtWidgets import QLabel

    label = QLabel(window)
    label.setObjectName("autosave_failure")
    label.setStyleSheet("QLabel { color: #b00020; font-weight: bold; }")
    label.hide()

    def show(text: str) -> None:
        label.setText(text)
        label.setToolTip(text)
        label.setVisible(bool(text))

    autosave.failure_changed.connect(show)
    window.statusBar().addPermanentWidget(label)
    return label


def attach(window, *, folder=None) -> Autosave:
    """Autosave ``window.session``; calling it again for the same window returns the same Autosave.

    Recovered work this process claimed (:func:`offer_recovery`) is adopted when the window holds it.
    """
    autosave = getattr(window, _ATTR, None)
    if autosave is None:
        book = getattr(getattr(window, "presenter", None), "book", None)  # (the lecture's ink and notes)
        autosave = Autosave(window.session, folder=folder, annotations=book)
        autosave.close_watcher = _CloseWatcher(window, autosave)
        autosave.disk_watch = DiskWatch(window.session, autosave)
        autosave.failure_label = _failure_label(window, autosave)
        setattr(window, _ATTR, autosave)
    for rec in claimed():
        if rec.scene.same_as(window.session.scene):
            if not window.session.modified:
                window.session.undo_stack.resetClean()
            _forget(rec)
            autosave.adopt(rec.entry)
    return autosave
