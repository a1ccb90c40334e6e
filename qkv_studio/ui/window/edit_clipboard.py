"""Edit → Cut / Copy / Paste: the clipboard for the matrix editor the user is working in.

The three actions of the action table (:mod:`qkv_studio.ui.window.actions`, with the platform's
standard shortcuts) act on the matrix table that last had the keyboard focus in the window — a menu
taking the focus as it opens does not change it — and are enabled only when they apply: Copy with
cells selected, Cut with cells selected in an editable matrix, Paste in an editable matrix (and, as
the Edit menu opens, with text on the clipboard).  Their enabling follows the focus and the selection
(never an edit); the clipboard is read only when the menu opens (on X11 reading it asks the
application that owns it), and a paste of something that is not numbers says so beside the table.
A text field with the focus keeps its own Ctrl+X/C/V (Qt gives it the keys before the window's
shortcuts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

from qkv_studio.ui.panels.matrix_editor import MatrixTable
from qkv_studio.ui.widgets.qapp import running_app

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


class EditClipboard:
    """The matrix table the Edit menu's clipboard actions act on, and their enabling."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self._table: MatrixTable | None = None
        app = running_app()
        app.focusChanged.connect(self._on_focus)
        window.destroyed.connect(lambda *_: self._disconnect(app))
        edit = getattr(window, "menu_by_title", {}).get("&Edit")
        if edit is not None:
            edit.aboutToShow.connect(lambda: self.sync(clipboard=True))
        self.sync()

    def _disconnect(self, app) -> None:
        try:
            app.focusChanged.disconnect(self._on_focus)
        except (RuntimeError, TypeError):
            pass

    def table(self) -> MatrixTable | None:
        """The matrix table the actions act on (None: no matrix editor has been worked in)."""
        return self._table

    def _on_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new is None or isinstance(new, (QMenu, QMenuBar)):
            return  # (a menu opening: the table worked in stays the one its entries act on)
        w = self._window
        if new.window() is not w:
            return
        # (the table itself, or a cell's editor inside it)
        table: QWidget | None = new
        while table is not None and table is not w and not isinstance(table, MatrixTable):
            table = table.parentWidget()
        self._set_table(table if isinstance(table, MatrixTable) else None)

    def _set_table(self, table: MatrixTable | None) -> None:
        if table is self._table:
            return
        old = self._table
        if old is not None and old.selectionModel() is not None:
            try:
                old.selectionModel().selectionChanged.disconnect(self.sync)
            except (RuntimeError, TypeError):
                pass
        self._table = table
        if table is not None and table.selectionModel() is not None:
            table.selectionModel().selectionChanged.connect(self.sync)
        self.sync()

    def sync(self, *_: object, clipboard: bool = False) -> None:
        """Enable each action where it applies now (``clipboard``: Paste only with text to paste)."""
        w = self._window
        table = self._table
        selected = table is not None and table.has_selection()
        editable = table is not None and table.model().editable()
        w.acts.copy.setEnabled(selected)
        w.acts.cut.setEnabled(selected and editable)
        w.acts.paste.setEnabled(editable and (not clipboard or bool(QGuiApplication.clipboard().text().strip())))

    # ---- the actions ------------------------------------------------------------------------------
    def cut(self, _checked: bool = False) -> None:
        if self._table is not None:
            self._table.cut_selection()

    def copy(self, _checked: bool = False) -> None:
        if self._table is not None:
            self._table.copy_selection()
            self.sync()

    def paste(self, _checked: bool = False) -> None:
        if self._table is not None:
            self._table.paste_clipboard()


def attach(window: MainWindow) -> EditClipboard:
    """The window's clipboard actions' target (``window.edit_clipboard``), made once."""
    clip = getattr(window, "edit_clipboard", None)
    if clip is None:
        clip = window.edit_clipboard = EditClipboard(window)
    return clip
