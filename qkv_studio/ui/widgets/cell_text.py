"""Cell text for the calculation table, painted without the standard delegate's per-cell cost.

QStyledItemDelegate asks the model for seven roles per cell (each a call into Python) and lays the text
out again on every paint.  :class:`CellText` draws one line of plain text into a cell: a text painted
again comes from a cached ``QStaticText`` (~7 µs; preparing one costs ~40), a number seen once is drawn
as a plain string (~15 µs) — an edit or a new query brings dozens of new numbers that may never come back.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainter, QStaticText

_LIMIT = 8192  # texts remembered (numbers of past edits): start afresh now and then


class CellText:
    """Draws and measures cell texts in a view's font (and its bold), remembering layouts and widths."""

    PAD = 5  # px between the text and the cell's side, like the style's item margin
    COMPACT_PAD = 3  # (a narrow table's: its numbers still apart, with the grid line between them)

    def __init__(self, font: QFont | None = None) -> None:
        self.pad = self.PAD
        self.restyle(font or QFont())

    def restyle(self, font: QFont) -> None:
        """Forget every layout and width: the view's font changed."""
        self.font = QFont(font)
        self.bold = QFont(font)
        self.bold.setBold(True)
        self._metrics = (QFontMetricsF(self.font), QFontMetricsF(self.bold))
        self._layouts: dict[tuple[str, bool], QStaticText] = {}
        self._seen_once: set[tuple[str, bool]] = set()
        self._widths: dict[tuple[str, bool], float] = {}

    def line_height(self) -> float:
        """The height of a line of cell text."""
        return self._metrics[0].height()

    def width(self, text: str, bold: bool = False) -> float:
        key = (text, bold)
        width = self._widths.get(key)
        if width is None:
            if len(self._widths) > _LIMIT:
                self._widths.clear()
            width = self._widths[key] = self._metrics[bold].horizontalAdvance(text)
        return width

    def draw(self, painter: QPainter, rect: QRect, text: str, *, bold: bool = False,
             left: bool = False) -> None:
        """Draw ``text`` in ``rect``, vertically centred, against its left or right side, with the
        painter's pen; the painter has the view's font, and has it again afterwards."""
        key = (text, bold)
        static = self._layouts.get(key)
        if static is None and key in self._seen_once:
            if len(self._layouts) > _LIMIT:
                self._layouts.clear()
            static = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(painter.transform(), self.bold if bold else self.font)
            self._layouts[key] = static
        elif static is None:
            if len(self._seen_once) > _LIMIT:
                self._seen_once.clear()
            self._seen_once.add(key)
        metrics = self._metrics[bold]
        if static is not None:
            size = static.size()
            width, height = size.width(), size.height()
        else:
            width, height = metrics.horizontalAdvance(text), metrics.height()
        x = rect.left() + self.pad if left else rect.right() + 1 - self.pad - width
        y = rect.top() + (rect.height() - height) / 2
        clip = bold or width > rect.width() - 2 * self.pad  # (a column not yet refitted)
        if clip:
            painter.save()
            painter.setClipRect(rect)
            if bold:
                painter.setFont(self.bold)
        if static is not None:
            painter.drawStaticText(QPointF(x, y), static)
        else:
            painter.drawText(QPointF(x, y + metrics.ascent()), text)
        if clip:
            painter.restore()
