"""Editors for Q, K, V (or X, W^Q, W^K, W^V): one virtualised table per matrix.

Rows are tokens (their names as row headers), columns are dimensions.  Typing a non-number or a
non-finite value is refused with an inline message and the old value stays; Alt+↑/↓ (Shift for ×10)
and Ctrl+wheel nudge the current cell; Ctrl+V pastes a block copied from a spreadsheet.  The
selected query's row is highlighted.  Values reach the table through ``dataChanged`` only, so a
model→widget update can never come back as an edit.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QPalette,
    QTextDocument,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStyle,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from qkv_studio.core.scene import shape_equation
from qkv_studio.core.view import head_block
from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.formatting import fmt, parse_number
from qkv_studio.ui.widgets.frame_throttle import FrameThrottle
from qkv_studio.ui.widgets.table_style import QUERY_ROW_BACKGROUND, QUERY_ROW_TEXT, style_table

_MATRIX_TITLES = {
    "Q": ("Query Q", "what each token is looking for"),
    "K": ("Key K", "the label each token advertises"),
    "V": ("Value V", "what each token hands back"),
    "X": ("Embeddings X", "one row per token (d_model)"),
    "Wq": ("W<sup>Q</sup>", "learned: d_model × dₖ"),
    "Wk": ("W<sup>K</sup>", "learned: d_model × dₖ"),
    "Wv": ("W<sup>V</sup>", "learned: d_model × dᵥ"),
}
QWIDGET_MAX = (1 << 24) - 1
_HEADER_PAD = 8  # room to spare beside a row name and the header's margins
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_EDIT = int(Qt.ItemDataRole.EditRole.value)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_ALIGN_RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
_HORIZONTAL, _VERTICAL = Qt.Orientation.Horizontal, Qt.Orientation.Vertical
_READ_ONLY_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_EDITABLE_FLAGS = _READ_ONLY_FLAGS | Qt.ItemFlag.ItemIsEditable
_DIM_GROUP = {"Q": "qk", "K": "qk", "V": "v", "X": "model", "Wq": "qk", "Wk": "qk", "Wv": "v"}


#: Matrices of up to this many rows show every row (see MatrixEditor._fit_height).
WHOLE_ROWS = 8


class MatrixModel(QAbstractTableModel):
    """A table model over one matrix of the Session's scene (no copy: reads the scene on demand).

    ``rejected(str)`` is emitted with a message when typed text is refused.
    """

    rejected = Signal(str)

    def __init__(self, session: Session, name: str, parent=None) -> None:
        super().__init__(parent)
        self._session = session
        self.name = name
        self._shape = self._current_shape()
        self._highlight = QColor(QUERY_ROW_BACKGROUND)
        self._highlight_brush = QBrush(self._highlight)
        self._dark_brush = QBrush(QColor(QUERY_ROW_TEXT))
        self._bold = QFont()
        self._bold.setBold(True)
        self._shown = self._current_matrix()  # what the view was last told about (to signal only changes)
        self._tokens = session.scene.tokens
        self._query_row = session.query
        # A drag's steps reach the editors one frame later (the plane and the heatmap show the drag;
        # see frame_throttle); a drag moves numbers, never the matrix's shape.
        self._next_frame = FrameThrottle(self._follow_scene, self)
        session.scene_changed.connect(self._on_scene_changed)
        session.query_changed.connect(self._on_query_changed)
        self._cell_row = -1
        session.cell_changed.connect(self._on_cell_changed)
        session.drag_changed.connect(self._on_drag)
        session.head_changed.connect(self._on_head_changed)

    # ---- reading ----------------------------------------------------------------------------------
    def matrix(self) -> np.ndarray:
        return self._session.scene.matrix(self.name)

    def _current_matrix(self) -> np.ndarray | None:
        try:
            return self._session.scene.matrix(self.name)
        except KeyError:
            return None

    def _current_shape(self) -> tuple[int, int]:
        try:
            return tuple(self._session.scene.matrix(self.name).shape)  # type: ignore[return-value]
        except KeyError:  # X/W of a direct-mode scene: nothing to show
            return (0, 0)

    def editable(self) -> bool:
        return self.name in self._session.scene.matrix_names()

    def _per_token(self) -> bool:
        return self.name in ("Q", "K", "V", "X")

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._shape[0]

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._shape[1]

    def data(self, index, role=_DISPLAY):
        # Called per visible cell and role on every repaint: roles are compared as plain ints
        # (PySide's enum lookups cost microseconds each).
        if not index.isValid():
            return None
        if role == _DISPLAY:
            return fmt(float(self.matrix()[index.row(), index.column()]))
        if role == _EDIT:
            return repr(float(self.matrix()[index.row(), index.column()]))
        if role == _ALIGNMENT:
            return _ALIGN_RIGHT
        if role == _BACKGROUND and self._per_token() and self._lit(index.row()):
            return self._highlight_brush
        if role == _FOREGROUND and self._per_token() and self._lit(index.row()):
            return self._dark_brush
        if role == _TOOLTIP:
            return repr(float(self.matrix()[index.row(), index.column()]))
        return None

    def headerData(self, section, orientation, role=_DISPLAY):  # noqa: N802
        if role == _DISPLAY:
            if orientation == _HORIZONTAL:
                return str(section + 1)
            if self._per_token():
                return self._session.scene.token_label(section) if section < self._session.scene.n else ""
            return f"{section + 1}"
        if role == _FONT and orientation == _VERTICAL and self._per_token() and section == self._session.query:
            return self._bold
        if role == _FONT and orientation == _HORIZONTAL and section in self._head_columns():
            return self._bold  # the columns of the head the views show
        return None

    def _head_columns(self) -> range:
        """The columns the selected head of a split scene takes in this matrix (none when not split)."""
        s = self._session
        return head_block(s.scene, self.name, s.head) or range(0)

    def _on_head_changed(self, _head: int) -> None:
        if self._shape[1]:
            self.headerDataChanged.emit(_HORIZONTAL, 0, self._shape[1] - 1)

    def flags(self, index):
        return _EDITABLE_FLAGS if self.editable() else _READ_ONLY_FLAGS

    # ---- writing (through the Session, never directly) ---------------------------------------------
    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or not self.editable():
            return False
        try:
            number = parse_number(str(value))
        except ValueError as exc:
            self.rejected.emit(f"{self.name} {self._where(index)}: {exc} — the value stays "
                               f"{fmt(float(self.matrix()[index.row(), index.column()]))}")
            return False
        return self._session.set_value(self.name, index.row(), index.column(), number)

    def nudge(self, index, delta: float) -> bool:
        """Add ``delta`` to a cell; consecutive nudges of one cell are one undo step."""
        if not index.isValid() or not self.editable():
            return False
        value = float(self.matrix()[index.row(), index.column()]) + delta
        return self._session.set_value(self.name, index.row(), index.column(), round(value, 10), merge=True)

    def paste(self, index, text: str) -> bool:
        """Paste tab/space/comma-separated rows (from a spreadsheet) with its top-left at ``index``."""
        rows = [r for r in text.strip().splitlines() if r.strip()]
        if not rows:
            self.rejected.emit(f"paste into {self.name}: the clipboard holds no numbers")
            return False
        try:
            cells = [[parse_number(c) for c in (r.split("\t") if "\t" in r else r.replace(",", " ").split())]
                     for r in rows]
        except ValueError as exc:
            self.rejected.emit(f"paste into {self.name}: {exc}")
            return False
        widths = {len(r) for r in cells}
        if not cells or len(widths) != 1:
            self.rejected.emit(f"paste into {self.name}: the rows of the pasted block have different lengths")
            return False
        block = np.array(cells, dtype=np.float64)
        r0, c0 = (index.row(), index.column()) if index.isValid() else (0, 0)
        rows_n, cols_n = self._shape
        if r0 + block.shape[0] > rows_n or c0 + block.shape[1] > cols_n:
            self.rejected.emit(f"paste into {self.name}: a {block.shape[0]}×{block.shape[1]} block does not fit at "
                               f"row {r0 + 1}, column {c0 + 1} of a {rows_n}×{cols_n} matrix")
            return False
        # The scene itself may refuse the block (X·W beyond a double): the Session says why on its message
        # signal (the status bar); the editor shows it beside the table too, as for any refused paste.
        said: list[str] = []
        hear = said.append
        self._session.message.connect(hear)
        try:
            ok = self._session.set_block(self.name, r0, c0, block)
        finally:
            self._session.message.disconnect(hear)
        if not ok and said:
            self.rejected.emit(f"paste into {self.name}: {said[-1]}")
        return ok

    def clear(self, row: int, col: int, rows: int, cols: int) -> bool:
        """Set a ``rows`` × ``cols`` block at (row, col) to 0 (Edit → Cut): one undo step."""
        if not self.editable():
            return False
        block = np.zeros((rows, cols), dtype=np.float64)
        return self._session.edit(lambda s: s.with_block(self.name, row, col, block), f"Cut from {self.name}")

    def _where(self, index) -> str:
        row = self._session.scene.token_label(index.row()) if self._per_token() else f"row {index.row() + 1}"
        return f"[{row}, {index.column() + 1}]"

    # ---- following the Session ---------------------------------------------------------------------
    def _on_drag(self, dragging: bool) -> None:
        if not dragging:
            self._next_frame.flush()  # (the drag is over: its last step now)

    def _on_scene_changed(self) -> None:
        if self._session.dragging and self._current_shape() == self._shape:
            self._next_frame.request()
        else:
            self._follow_scene()

    def _follow_scene(self) -> None:
        self._next_frame.cancel()
        shape = self._current_shape()
        old, new = self._shown, self._current_matrix()
        self._shown = new
        tokens_changed = self._session.scene.tokens != self._tokens
        self._tokens = self._session.scene.tokens
        if shape != self._shape:
            self.beginResetModel()
            self._shape = shape
            self.endResetModel()
        elif shape[0] and shape[1]:
            # Tell the view only what changed: one edited cell repaints one cell, not the matrix.
            if old is None or new is None or old.shape != new.shape:
                self.dataChanged.emit(self.index(0, 0), self.index(shape[0] - 1, shape[1] - 1))
            elif old is not new:
                changed = old != new
                rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
                if rows.size:
                    self.dataChanged.emit(self.index(int(rows[0]), int(cols[0])),
                                          self.index(int(rows[-1]), int(cols[-1])))
            if tokens_changed:
                self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, shape[0] - 1)

    def _lit(self, row: int) -> bool:
        """The query's row; in K also the selected cell's key (Q·Kᵀ cell by cell: row · column)."""
        return row == self._session.query or (self.name == "K" and row == self._session.cell_key)

    def _on_query_changed(self, row: int) -> None:
        previous, self._query_row = self._query_row, row
        self._repaint_rows({previous, row})

    def _on_cell_changed(self, key: int) -> None:
        if self.name == "K":
            previous, self._cell_row = self._cell_row, key
            self._repaint_rows({previous, key})

    def _repaint_rows(self, rows) -> None:
        if self._per_token() and self._shape[0] and self._shape[1]:
            last = self._shape[1] - 1
            for r in rows:  # only the rows that gain or lose the highlight
                if 0 <= r < self._shape[0]:
                    self.dataChanged.emit(self.index(r, 0), self.index(r, last),
                                          [Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole])
        # The row names (the query's in bold) are the editor's to repaint: see MatrixEditor._on_query.


class MatrixTable(QTableView):
    """The table view: nudging keys and wheel, block paste."""

    def __init__(self, model: MatrixModel, parent=None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.horizontalHeader().setMinimumSectionSize(48)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setWordWrap(False)

    def model(self) -> MatrixModel:  # type: ignore[override]
        return super().model()  # type: ignore[return-value]

    def content_height(self) -> int:
        """The height that shows every row and nothing below the last (frame, column header and a
        horizontal scroll bar when one shows included)."""
        h = 2 * self.frameWidth() + self.verticalHeader().length()
        header = self.horizontalHeader()
        if not header.isHidden():
            h += max(header.height(), header.sizeHint().height()) if header.isVisible() else header.sizeHint().height()
        bar = self.horizontalScrollBar()
        if bar.isVisible():
            h += bar.height()
        return h

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        editing = self.state() == QAbstractItemView.State.EditingState
        if editing and event.key() in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            # (a clicker's page key while a cell is typed in: it neither commits the cell nor moves on
            # a page — which a table tall enough to page did, whatever its height)
            event.accept()
            return
        if event.modifiers() & Qt.KeyboardModifier.AltModifier and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            step = 1.0 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 0.1
            self.model().nudge(self.currentIndex(), step if event.key() == Qt.Key.Key_Up else -step)
            event.accept()
            return
        if event.matches(QKeySequence.StandardKey.Paste):
            self.paste_clipboard()
            event.accept()
            return
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            event.accept()
            return
        if event.matches(QKeySequence.StandardKey.Cut):
            self.cut_selection()
            event.accept()
            return
        super().keyPressEvent(event)

    # ---- the clipboard (these keys, and Edit → Cut / Copy / Paste) -----------------------------------
    def has_selection(self) -> bool:
        return self.selectionModel() is not None and self.selectionModel().hasSelection()

    def _selected_block(self) -> tuple[list[int], list[int]]:
        sel = self.selectionModel().selectedIndexes()
        return sorted({i.row() for i in sel}), sorted({i.column() for i in sel})

    def copy_selection(self) -> bool:
        """The selected cells onto the clipboard, tab-separated rows (as a spreadsheet copies)."""
        if not self.has_selection():
            return False
        rows, cols = self._selected_block()
        m = self.model().matrix()
        text = "\n".join("\t".join(repr(float(m[r, c])) for c in cols) for r in rows)
        QGuiApplication.clipboard().setText(text)
        return True

    def cut_selection(self) -> bool:
        """Copy the selected cells, then set them to 0 (one undo step)."""
        if not self.has_selection() or not self.model().editable() or not self.copy_selection():
            return False
        rows, cols = self._selected_block()
        return self.model().clear(rows[0], cols[0], rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1)

    def paste_clipboard(self) -> bool:
        """The clipboard's block of numbers, its top-left at the current cell (refused with a message
        beside the table when it is not one)."""
        return self.model().paste(self.currentIndex(), QGuiApplication.clipboard().text())

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            index = self.indexAt(event.position().toPoint())
            if index.isValid():
                step = 0.1 if event.angleDelta().y() > 0 else -0.1
                self.model().nudge(index, step)
                event.accept()
                return
        super().wheelEvent(event)


class MatrixEditor(FollowsAppearance, QWidget):
    """A titled matrix table with +/− buttons for its dimension group and an inline message line; the
    table's grid and rows follow the Appearance it is bound to (``appearance=`` or ``bind_appearance``)."""

    # (None while the editor is still being built: a font may be set before its layout exists)
    _lay: QVBoxLayout | None = None  # the editor's layout: the head row, the table, the message
    _head_row: QHBoxLayout | None = None  # the title, the shape and the +/− buttons

    def __init__(self, session: Session, name: str, parent=None, *, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.name = name
        self.model = MatrixModel(session, name, self)
        self.table = MatrixTable(self.model, self)
        self.title = QLabel()
        self._short_title = False  # a narrow editor: the matrix's name only, its hint in the tooltip
        self._compact = False  # a short column (see EditorSet): one title line, so every row shows
        self._long_title_h = 0  # the long title's height as last fitted (0: not fitted yet)
        self._set_title()
        self.title.setWordWrap(True)
        self.title.setMinimumWidth(60)
        self.shape_label = QLabel()
        self.shape_label.setTextFormat(Qt.TextFormat.RichText)  # (X·W<sup>Q</sup>)
        self.shape_label.setWordWrap(True)  # (a split scene's "head 1: columns 5–8" folds: the column stays narrow)
        self.add_button = QToolButton()
        self.add_button.setText("+")
        self.remove_button = QToolButton()
        self.remove_button.setText("−")
        group = _DIM_GROUP[name]
        self.add_button.setToolTip(f"Add a dimension ({'dₖ: Q and K together' if group == 'qk' else group})")
        self.remove_button.setToolTip("Remove the last dimension")
        self.add_button.clicked.connect(lambda: session.add_dim(group))
        self.remove_button.clicked.connect(lambda: session.remove_dim(group))
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b00020;")
        self.message.hide()
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.shape_label)
        head.addWidget(self.remove_button)
        head.addWidget(self.add_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)  # (the splitter's handle parts two editors already)
        lay.setSpacing(2)
        lay.addLayout(head)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.message)
        self._lay, self._head_row = lay, head
        self.model.rejected.connect(self.show_message)
        # No taller than its rows: a taller table showed an empty band under the last row (the grey
        # row-name column running on), three of them down the dock; the splitter keeps the rest.
        self._fit = QTimer(self)
        self._fit.setSingleShot(True)
        self._fit.setInterval(0)
        self._fit.timeout.connect(self._fit_height)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved,
                       self.model.layoutChanged, self.table.verticalHeader().sectionResized,
                       self.table.verticalHeader().sectionCountChanged,
                       self.table.horizontalHeader().geometriesChanged):
            signal.connect(self._fit.start)
        self.table.installEventFilter(self)
        session.scene_changed.connect(self._sync)
        session.head_changed.connect(self._sync)
        session.query_changed.connect(self._on_query)
        self._header_row = session.query
        self._names_fitted: tuple | None = None
        self._fit_row_names()
        self._sync()
        style_table(self.table, scale=self._drawn_scale)  # (the rows as built: the default look's)
        self.bind_appearance(appearance)

    # ---- look (see FollowsAppearance; text and cells follow the palette and font) ------------------
    def _restyle_theme(self, theme: Theme) -> None:
        style_table(self.table, theme=theme)

    def _restyle_scale(self, f: float) -> None:
        style_table(self.table, scale=f)

    def _on_query(self, row: int) -> None:
        """Embolden the new query's row name by repainting two row names.  Telling the header its
        data changed would make Qt re-measure every row name (~600 model calls an editor); instead the
        header is kept wide enough for any name in bold (see _fit_row_names)."""
        previous, self._header_row = self._header_row, row
        if self.model._per_token():
            header = self.table.verticalHeader()
            for r in {previous, row}:
                if 0 <= r < self.model.rowCount():
                    header.updateSection(r)

    def _fit_row_names(self) -> None:
        """Room in the row-name column for the widest name in bold (the query's is)."""
        scene = self._session.scene
        header = self.table.verticalHeader()
        key = (scene.tokens, header.font().key())
        if key == self._names_fitted or not self.model._per_token():
            return
        self._names_fitted = key
        bold = QFont(header.font())
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        widest = max((metrics.horizontalAdvance(scene.token_label(i)) for i in range(scene.n)), default=0)
        margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
        header.setMinimumWidth(widest + 2 * margin + _HEADER_PAD)

    def _long_title(self) -> str:
        # The hint in a quieter colour: grey on the light theme, the theme's muted text on the dark ones
        # (a fixed #666 was all but invisible on the projector's black).
        title, hint = _MATRIX_TITLES[self.name]
        palette = self.palette()
        dark = palette.color(QPalette.ColorRole.Window).lightness() < 128
        muted = palette.color(QPalette.ColorRole.PlaceholderText).name() if dark else "#666666"
        return f"<b>{title}</b>  <span style='color:{muted}'>{hint}</span>"

    def _set_title(self) -> None:
        """The title: the matrix's name and its hint; in the short form (a narrow editor) the name only,
        the hint in its tooltip."""
        title, hint = _MATRIX_TITLES[self.name]
        text = f"<b>{title}</b>" if self._short_title else self._long_title()
        if self.title.text() != text:
            self.title.setText(text)
        tip = f"{title}: {hint}" if self._short_title else ""
        if self.title.toolTip() != tip:
            self.title.setToolTip(tip)

    def _fit_title(self) -> None:
        """The long title where it fits beside the shape and the buttons in two lines with no word cut
        ("learned: d_model × dₖ" showed as "learned: d_mode" in a 230-px column), else the short one."""
        width = self.width()
        head = self._head_row
        if width <= 0 or head is None:  # (a font set while the editor is still being built)
            return
        if not self.isVisible():  # (its width is not yet the one it shows at: fitted as it shows)
            return
        beside = sum(w.sizeHint().width() + head.spacing() for w in (self.remove_button, self.add_button)
                     if not w.isHidden())
        shape = QTextDocument()
        shape.setDefaultFont(self.shape_label.font())
        shape.setDocumentMargin(0)
        shape.setHtml(self.shape_label.text())
        room = width - beside - int(shape.idealWidth()) - head.spacing() - 2
        doc = QTextDocument()
        doc.setDefaultFont(self.title.font())
        doc.setDocumentMargin(0)
        doc.setHtml(self._long_title())
        doc.setTextWidth(max(1, room))
        line = QFontMetrics(self.title.font()).lineSpacing()
        lines = doc.size().height() / max(1, line)
        self._long_title_h = max(1, int(doc.size().height() + 0.5))
        short = room <= 0 or doc.idealWidth() > room + 0.5 or lines > 2.5 or (self._compact and lines > 1.5)
        if short != self._short_title:
            self._short_title = short
            self._set_title()
            # (the name alone on one line, no wider; the shape beside it the rest, in fewer lines)
            head.setStretchFactor(self.title, 0 if short else 1)
            head.setStretchFactor(self.shape_label, 1 if short else 0)
        if short:
            name = QTextDocument()
            name.setDefaultFont(self.title.font())
            name.setDocumentMargin(0)
            name.setHtml(self.title.text())
            self.title.setFixedWidth(int(name.idealWidth()) + 2)
        else:
            self.title.setMinimumWidth(60)
            self.title.setMaximumWidth(QWIDGET_MAX)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_row_names()
            self._fit_title()
        elif event.type() == QEvent.Type.PaletteChange:
            self._set_title()

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()
        self._fit.start()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.table and event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange,
                                                  QEvent.Type.Resize, QEvent.Type.Show):
            self._fit.start()  # (a new font or width may bring a header or a scroll bar of another size)
        return False

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit_title()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._fit_title()

    def set_compact(self, compact: bool) -> None:
        """In a column too short for every editor's rows under a two-line title (a 1280×720 window with
        its title bar and status bar), the title takes one line — the name, the hint in its tooltip —
        and the row it frees shows the last row of the matrix instead of a scroll bar."""
        if compact != self._compact:
            self._compact = compact
            self._fit_title()

    def height_needed(self, *, long_title: bool | None = None) -> int:
        """The height that shows the title row and every row of the table, nothing more: as the title is
        now, or (``long_title``) with the long title or the one-line one.  0 until the title was fitted."""
        lay, head = self._lay, self._head_row  # (the head: the title row; its title wraps in a narrow dock)
        if lay is None or head is None:
            return 0
        margins = lay.contentsMargins()
        width = self.contentsRect().width() - margins.left() - margins.right()
        if long_title is None:
            head_h = head.sizeHint().height()
            if head.hasHeightForWidth() and width > 0:
                head_h = max(head_h, head.heightForWidth(width))
        elif not self._long_title_h:
            return 0
        else:
            title_h = self._long_title_h if long_title else QFontMetrics(self.title.font()).lineSpacing()
            head_h = max(title_h, *(w.sizeHint().height() for w in (self.shape_label, self.add_button)))
        parts = [head_h, self.table.content_height()]
        if not self.message.isHidden():
            message_h = self.message.heightForWidth(width) if width > 0 else -1
            parts.append(max(message_h, self.message.sizeHint().height()))
        return margins.top() + margins.bottom() + sum(parts) + lay.spacing() * (len(parts) - 1)

    def _fit_height(self) -> None:
        table = self.table.content_height()
        if self.table.maximumHeight() != table:
            self.table.setMaximumHeight(table)
        total = self.height_needed()
        if self.maximumHeight() != total:
            self.setMaximumHeight(total)
        # A short matrix (the lesson's four rows) is never cut: where the column has no room for it, the
        # column scrolls (ScrollColumn) rather than each table hiding its last rows; a long one scrolls.
        least = total if self.model.rowCount() <= WHOLE_ROWS else 0
        if self.minimumHeight() != least:
            self.setMinimumHeight(least)

    def _sync(self, *_: object) -> None:
        if self._session.dragging:
            return  # (a drag changes numbers only: names, shape and buttons stay)
        self._fit_row_names()
        editable = self.model.editable()
        self.add_button.setVisible(editable)
        self.remove_button.setVisible(editable)
        rows, cols = self.model.rowCount(), self.model.columnCount()
        scene = self._session.scene
        if not editable and scene.mode == "projection" and self.name in ("Q", "K", "V"):
            text = f"X·W<sup>{self.name}</sup>: {shape_equation(scene, self.name)}  (derived)"
        else:
            text = f"{rows}×{cols}"
        block = head_block(scene, self.name, self._session.head)
        if block is not None:  # a split scene: which columns the views show (bold in the header)
            text += f" · <b>head {self._session.head}</b>: columns {block.start + 1}–{block.stop}"
        if self.shape_label.text() != text:
            self.shape_label.setText(text)
            self._fit_title()
        if self.message.isVisible():
            self.message.hide()
            self._fit.start()
