"""The calculation table's cell painter: a cell's shading and its model's cached text."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize
from PySide6.QtGui import QBrush, QFont, QPainter, QPalette, QPen
from PySide6.QtWidgets import QStyledItemDelegate, QTableView

from qkv_studio.ui.widgets.cell_text import CellText

if TYPE_CHECKING:  # (for annotations only: making PySide's QStyleOptionViewItem type costs start-up)
    from PySide6.QtWidgets import QStyleOptionViewItem


class CellSource(Protocol):
    """What the delegate reads of the table's model (:class:`~qkv_studio.ui.panels.calc_table.CalcModel`)."""

    total_brush: QBrush

    def text(self, row: int, column: int) -> str: ...
    def text_of(self, row: int, col: str) -> str: ...
    def is_bold(self, row: int) -> bool: ...
    def is_total(self, row: int) -> bool: ...
    def is_left_aligned(self, column: int) -> bool: ...


class CalcDelegate(QStyledItemDelegate):
    """Paints a cell: the total row's shading and the model's cached string, through :class:`CellText`
    (the standard delegate asked the model for seven roles and laid the text out on every paint)."""

    def __init__(self, model: CellSource, parent=None) -> None:
        super().__init__(parent)
        self._model = model
        self._text = CellText()
        self._pen = QPen()
        if isinstance(parent, QTableView):
            self.restyle(parent.font(), parent.palette())

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        self.paint_cell(painter, option.rect, index.row(), index.column())

    def paint_cell(self, painter: QPainter, rect: QRect, row: int, column: int) -> None:
        """Paint one cell's background and text into ``rect`` (the painter has the view's font)."""
        model = self._model
        if model.is_total(row):
            painter.fillRect(rect, model.total_brush)
        text = model.text(row, column)
        if text:
            painter.setPen(self._pen)
            self._text.draw(painter, rect, text, bold=model.is_bold(row), left=model.is_left_aligned(column))

    def sizeHint(self, option: QStyleOptionViewItem,  # noqa: N802 - Qt's name
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        # (the table fits its columns itself, from text_width; this answers Qt's own questions)
        width = self.text_width(index.row(), index.column())
        return QSize(math.ceil(width) + 2 * self.pad + 2, math.ceil(self._text.line_height()) + 6)

    @property
    def pad(self) -> int:
        """The px between a cell's text and its side."""
        return self._text.pad

    def set_compact(self, on: bool) -> None:
        """A narrow table's cells: less room beside their text (see CellText.COMPACT_PAD)."""
        self._text.pad = CellText.COMPACT_PAD if on else CellText.PAD

    def text_width(self, row: int, column: int) -> float:
        """The width of a cell's text in its font (bold for the best key and the total row)."""
        return self._text.width(self._model.text(row, column), self._model.is_bold(row))

    def text_width_of(self, row: int, name: str, bold: bool) -> float:
        """The width of a row's text in the named column."""
        return self._text.width(self._model.text_of(row, name), bold)

    def restyle(self, font: QFont, palette: QPalette) -> None:
        """Forget the laid-out texts: the view's font or colours changed."""
        self._text.restyle(font)
        self._pen = QPen(palette.color(QPalette.ColorRole.Text))
