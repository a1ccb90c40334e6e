"""A layout barrier: a changing word-wrapped label that does not re-lay out the whole window.

``QLabel.setText`` asks its parent layout to recompute, and every ``QLayout.activate`` then asks its own
parent, up to the main window, whose layout re-measures every dock: ~6 ms for one caption whose numbers
changed, paid again for each label an edit touches.  :class:`LayoutBarrier` holds one widget outside any
layout and sizes it itself, so the request stops there; the window's layouts hear of it only when the
height the widget needs at its current width really changes (a caption that gains or loses a line).
"""

from __future__ import annotations

import weakref

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget
from shiboken6 import isValid


def _dragging() -> bool:
    """Whether a mouse button is held: a drag (or a held spin button) is editing continuously."""
    return QGuiApplication.mouseButtons() != Qt.MouseButton.NoButton


class _ReleaseWatch(QObject):
    """Installed on the application only while a grow-only barrier keeps room its text no longer needs:
    the mouse button's release (the drag's end) makes each of them give it back."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting: weakref.WeakSet[LayoutBarrier] = weakref.WeakSet()
        self.installed = False

    def wait(self, barrier: LayoutBarrier) -> None:
        self.waiting.add(barrier)
        app = QApplication.instance()
        if not self.installed and app is not None:
            app.installEventFilter(self)
            self.installed = True

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.MouseButtonRelease and self.waiting:
            barriers, self.waiting = list(self.waiting), weakref.WeakSet()
            app = QApplication.instance()
            if app is not None:
                app.removeEventFilter(self)
            self.installed = False
            for barrier in barriers:
                if isValid(barrier):  # (a barrier deleted since it waited is left alone)
                    barrier.give_back()
        return False


_watch: _ReleaseWatch | None = None


def _release_watch() -> _ReleaseWatch:
    global _watch
    if _watch is None:
        _watch = _ReleaseWatch()
    return _watch


class LayoutBarrier(QWidget):
    """Shows ``child`` at its own full size; re-lays out the parents only when its needed height changes.

    The child stays a normal widget (its text, font and visibility are set as usual); the barrier takes
    its size policy, size hints and height-for-width from it and follows its visibility.  With
    ``grow_only`` it keeps the tallest height its text has needed at a width while a mouse button is
    held (a drag edits continuously), so a caption that alternates between two and three lines does
    not make the panel below it jump, and re-lay out, on every step of the drag; the button's release
    gives back what the text no longer needs (one re-layout).  Without a button held — a typed edit, a
    key, a stage step — it is exactly as tall as its text at once: nothing waits on a timer
    (:mod:`qkv_studio.ui.update_policy`).
    """

    def __init__(self, child: QWidget, parent: QWidget | None = None, *, grow_only: bool = False) -> None:
        super().__init__(parent)
        self._child = child
        self._grow_only = grow_only
        self._tallest: dict[int, int] = {}  # width -> the tallest height needed there (grow_only)
        child.setParent(self)
        self.setSizePolicy(child.sizePolicy())
        # (measured once the barrier has its width: at the default one a caption was laid out as a
        # column of words, ~3 ms each while the window is built)
        self._hint: tuple | None = None
        self._keeps = False  # (grow_only: taller than its text, until the drag's release)
        if child.isHidden():  # (showing it explicitly would size it now, from its child's text: ~2 ms)
            self.hide()
        child.installEventFilter(self)

    def child_widget(self) -> QWidget:
        return self._child

    # ---- sizes: the child's ----------------------------------------------------------------------
    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._child.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._child.minimumSizeHint()

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return self._child.hasHeightForWidth()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        h = self._child.heightForWidth(width)
        if self._grow_only:
            if not _dragging():  # (exactly its text's height; a drag starting now keeps this one)
                self._tallest = {width: h}
                return h
            h = max(h, self._tallest.get(width, -1))
            if len(self._tallest) > 64:
                self._tallest.clear()
            self._tallest[width] = h
        return h

    def _wanted(self) -> tuple:
        """What the parents' layouts depend on: the height at the current width (or the size hint of a
        widget without height-for-width) and the minimum size.  The preferred width of wrapped text
        changes with every new text and is deliberately left out: the width is the layout's to give."""
        child = self._child
        if child.hasHeightForWidth():  # (its minimum width, the longest word, is left out too: costly)
            return (self.heightForWidth(self.width()),)
        hint, minimum = child.sizeHint(), child.minimumSizeHint()
        return (hint.width(), hint.height(), minimum.width(), minimum.height())

    # ---- events ------------------------------------------------------------------------------------
    def _place(self) -> None:
        """The child at the top, as tall as it needs (the barrier may be taller: grow_only)."""
        rect = self.rect()
        if self._grow_only and self._child.hasHeightForWidth():  # (taller while a drag lasts)
            rect.setHeight(min(rect.height(), max(0, self._child.heightForWidth(rect.width()))))
        self._child.setGeometry(rect)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._place()
        self._hint = self._wanted()

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # posted by the child: its size needs changed
            wanted = self._wanted()
            if wanted != self._hint:
                self._hint = wanted
                self.updateGeometry()  # the rare case: the parents must make room
            self._place()
            if self._grow_only and self._child.hasHeightForWidth():
                self._keeps = _dragging() and self._child.heightForWidth(self.width()) < self.height()
                if self._keeps:
                    _release_watch().wait(self)  # (the drag's release gives the room back)
        return super().event(event)

    def give_back(self) -> None:
        """The drag is over: forget the taller heights kept, and re-lay out the parents if that makes
        the barrier shorter."""
        self._keeps = False
        self._tallest.clear()
        wanted = self._wanted()
        if wanted != self._hint:
            self._hint = wanted
            self.updateGeometry()
        self._place()

    def shrink_pending(self) -> bool:
        """Whether the barrier is taller than its text needs and will shrink at the drag's release."""
        return self._keeps

    def settle_pending(self) -> bool:
        """(:func:`qkv_studio.ui.update_policy.settle`) Give back now what a drag kept; True if it did."""
        if not self._keeps:
            return False
        self.give_back()
        return True

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is getattr(self, "_child", None):  # (none yet while the barrier is being made)
            kind = event.type()
            if kind in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
                self._tallest.clear()  # a new size of text starts afresh
            if kind == QEvent.Type.ShowToParent and self.isHidden():
                self.show()
            elif kind == QEvent.Type.HideToParent and not self.isHidden():
                self.hide()
        return False
