"""The tokens panel: the sequence, editable — add, remove, rename (double-click), reorder.

Selecting a token selects it as the query ("attend from").  A virtualised list: 1024 tokens cost
nothing extra.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListView, QToolButton, QVBoxLayout, QWidget

from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.table_style import mark_query_selection

# Roles compared as plain ints and the flags made once: the list asks data() ~45 times and flags() ~16
# times for each repaint (a new query scrolls it), and PySide's enum comparisons and ORs cost ~20 µs a
# call there (1.5 ms of every query change).
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_EDIT = int(Qt.ItemDataRole.EditRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable


class TokensModel(QAbstractListModel):
    """The scene's tokens as a list model; renames go through the Session (``rejected`` on refusal)."""

    rejected = Signal(str)

    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(parent)
        self._session = session
        self._n = session.scene.n
        session.tokens_changed.connect(self._refresh)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._n

    def data(self, index, role=_DISPLAY):
        if role != _DISPLAY and role != _EDIT and role != _TOOLTIP:
            return None
        row = index.row()
        scene = self._session.scene
        if not index.isValid() or row >= scene.n:
            return None
        if role == _DISPLAY:
            return f"{row + 1}. {scene.token_label(row)}"
        return scene.tokens[row]

    def flags(self, index):
        return _FLAGS

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        name = str(value)
        reasons: list[str] = []

        def keep(text: str) -> None:
            reasons.append(text)

        self._session.message.connect(keep)
        try:
            ok = self._session.rename_token(index.row(), name)
        finally:
            self._session.message.disconnect(keep)
        if not ok:  # say why, not only that it was refused
            why = reasons[-1] if reasons else f"token {index.row() + 1} cannot be renamed"
            self.rejected.emit(f"{why} — the name stays “{self._session.scene.tokens[index.row()]}”")
        return ok

    def _refresh(self) -> None:
        n = self._session.scene.n
        if n != self._n:
            self.beginResetModel()
            self._n = n
            self.endResetModel()
        elif n:
            self.dataChanged.emit(self.index(0), self.index(n - 1))


class TokensPanel(QWidget):
    """The token list with its buttons and an inline message line."""

    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(parent)
        self._session = session
        self.model = TokensModel(session, self)
        self.view = QListView()
        self.view.setModel(self.model)
        self.view.setUniformItemSizes(True)
        mark_query_selection(self.view)  # (the query is pink everywhere else: the heatmap, the editors)
        self.view.setEditTriggers(QListView.EditTrigger.DoubleClicked | QListView.EditTrigger.EditKeyPressed)
        self.add_button = QToolButton()
        self.add_button.setText("+ token")
        self.remove_button = QToolButton()
        self.remove_button.setText("− token")
        self.up_button = QToolButton()
        self.up_button.setText("▲")
        self.down_button = QToolButton()
        self.down_button.setText("▼")
        self.add_button.setToolTip("Add a token after the selected one (its Q, K, V rows start at 0)")
        self.remove_button.setToolTip("Remove the selected token")
        self.up_button.setToolTip("Move the selected token earlier")
        self.down_button.setToolTip("Move the selected token later")
        self.message = QLabel()
        self.message.setStyleSheet("color: #b00020;")
        self.message.setWordWrap(True)
        self.message.hide()
        buttons = QHBoxLayout()
        for b in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("<b>Tokens</b> (select = query)"))
        lay.addWidget(self.view, 1)
        lay.addLayout(buttons)
        lay.addWidget(self.message)
        self.add_button.clicked.connect(self.add_token)
        self.remove_button.clicked.connect(lambda: session.remove_token(session.query))
        self.up_button.clicked.connect(lambda: self._move(-1))
        self.down_button.clicked.connect(lambda: self._move(+1))
        self.model.rejected.connect(self._show)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(self._fit_height)
        self._fit_height()
        session.message.connect(self._show_if_mine)
        self.view.selectionModel().currentChanged.connect(self._on_current)
        session.query_changed.connect(self._select_query)
        session.tokens_changed.connect(lambda: self._select_query(session.query))
        session.scene_changed.connect(self.message.hide)
        self._select_query(session.query)

    def _fit_height(self, *_: object) -> None:
        """Room for every token of a short scene (up to 6 rows): none half-hidden behind a scroll bar."""
        rows = min(max(self.model.rowCount(), 1), 6)
        row_h = self.view.sizeHintForRow(0) if self.model.rowCount() else -1
        if row_h <= 0:
            row_h = self.view.fontMetrics().height() + 4
        self.view.setMinimumHeight(rows * row_h + 2 * self.view.frameWidth() + 2)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() in (event.Type.FontChange, event.Type.StyleChange):
            self._fit_height()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._fit_height()  # (a style sheet's font arrives when the window is polished, before showing)

    def add_token(self) -> None:
        s = self._session.scene
        existing = set(s.tokens)
        i = s.n + 1
        while f"token{i}" in existing:
            i += 1
        if self._session.insert_token(self._session.query + 1, f"token{i}"):
            self._session.set_query(min(self._session.query + 1, self._session.scene.n - 1))

    def _move(self, delta: int) -> None:
        s = self._session.scene
        src = self._session.query
        dst = src + delta
        if 0 <= dst < s.n and self._session.move_token(src, dst):
            self._session.set_query(dst)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self._session.set_query(current.row())

    def _select_query(self, row: int) -> None:
        index = self.model.index(row)
        if index.isValid() and self.view.currentIndex() != index:
            self.view.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            self.view.scrollTo(index)

    def _show(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()

    def _show_if_mine(self, text: str) -> None:
        if "token" in text:
            self._show(text)
