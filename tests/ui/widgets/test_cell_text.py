"""CellText: one line of text in a table cell, laid out once it is seen again."""

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter

from qkv_studio.ui.widgets.cell_text import CellText


def _paint(cells: CellText, text: str, **kw) -> QImage:
    image = QImage(200, 30, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setFont(cells.font)
    painter.setPen(QColor("black"))
    cells.draw(painter, QRect(0, 0, 200, 30), text, **kw)
    painter.end()
    return image


def _ink_columns(image: QImage) -> list[int]:
    return [x for x in range(image.width()) if any(image.pixelColor(x, y).lightness() < 128
                                                 for y in range(image.height()))]


def test_a_text_seen_again_is_drawn_from_a_layout_and_looks_the_same(qapp):
    cells = CellText(QFont())
    first = _paint(cells, "−0.707")
    assert not cells._layouts  # a number seen once: drawn as a plain string
    second = _paint(cells, "−0.707")
    assert ("−0.707", False) in cells._layouts
    assert _ink_columns(first) == _ink_columns(second)  # the same pixels either way
    ink = _ink_columns(second)
    assert ink and ink[-1] <= 200 - CellText.PAD and ink[-1] >= 200 - CellText.PAD - 3  # right-aligned


def test_left_alignment_widths_and_restyle(qapp):
    font = QFont()
    cells = CellText(font)
    ink = _ink_columns(_paint(cells, "token", left=True))
    assert ink and CellText.PAD - 1 <= ink[0] <= CellText.PAD + 3
    assert cells.width("0.54") == QFontMetricsF(font).horizontalAdvance("0.54")
    assert cells.width("0.54", bold=True) >= cells.width("0.54")
    _paint(cells, "x")
    _paint(cells, "x")
    bigger = QFont(font)
    bigger.setPointSizeF(font.pointSizeF() * 2)
    cells.restyle(bigger)
    assert not cells._layouts and cells.width("0.54") > QFontMetricsF(font).horizontalAdvance("0.54")
