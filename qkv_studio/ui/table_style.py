"""Grid lines in the theme's colour for the tables, without a style sheet; scroll bars that repaint alone.

Qt's Fusion style derives a table's grid colour from the Base colour (a shade darker), which vanishes on
the black of the projector theme; a ``gridline-color`` style sheet would say it, but makes every cell
paint through the style-sheet style (more than twice as slow).  :class:`GridColorStyle` is Fusion with
that one answer changed, set on the tables of the dark themes.

:func:`opaque_scroll_bars` tells Qt that Fusion's scroll bars paint every pixel: a bar Qt takes for
see-through repaints the window, the dock and the view beneath it first (a bar's repaint ~1.8 ms
instead of ~1; a new query scrolls the token list, a stage step changes the table's range).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QProxyStyle, QStyle, QWidget


class GridColorStyle(QProxyStyle):
    """The application's style, answering ``SH_Table_GridLineColor`` with ``color``."""

    def __init__(self, color: str) -> None:
        super().__init__(QApplication.style().name())
        rgba = QColor(color).rgba()
        self._rgba = rgba - (1 << 32) if rgba >= 1 << 31 else rgba  # (Qt reads the int back as a QRgb)

    def styleHint(self, hint, option=None, widget=None, returnData=None) -> int:  # noqa: N802 - Qt's name
        if hint == QStyle.StyleHint.SH_Table_GridLineColor:
            return self._rgba
        return super().styleHint(hint, option, widget, returnData)


def set_grid_color(tables: list[QWidget], color: str | None) -> None:
    """Grid lines of ``tables`` in ``color``; None gives them the application's style back."""
    for table in tables:
        if color is None:
            if isinstance(table.style(), GridColorStyle):
                table.setStyle(None)
        else:
            style = GridColorStyle(color)
            style.setParent(table)  # (a widget does not own the style it is given)
            table.setStyle(style)


def opaque_scroll_bars(view: QAbstractScrollArea) -> None:
    """Mark ``view``'s scroll bars as painting every pixel — with Fusion only (other styles, such as
    macOS's overlay bars, may draw them see-through: those are left as they are)."""
    if QApplication.style().name().lower() != "fusion":
        return
    for bar in (view.horizontalScrollBar(), view.verticalScrollBar()):
        bar.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
