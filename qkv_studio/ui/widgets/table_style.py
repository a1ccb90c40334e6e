"""Grid lines in the theme's colour for the tables, without a style sheet.

Qt's Fusion style derives a table's grid colour from the Base colour (a shade darker), which vanishes on
the black of the projector theme; a ``gridline-color`` style sheet would say it, but makes every cell
paint through the style-sheet style (more than twice as slow).  :class:`GridColorStyle` is Fusion with
that one answer changed, set on the tables of the dark themes.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QTableView, QWidget

from qkv_studio.render.theme import Theme

BASE_POINT_SIZE = 11.0  # the window's text at scale 1 (its fonts are this × the Appearance's scale)


# The selected query's row wherever a list or table names the tokens: the pale tint of the query's
# pink, with dark text, in every theme (the editors' rows, the token list's selection).
QUERY_ROW_BACKGROUND = "#ffd6e6"
QUERY_ROW_TEXT = "#111111"


def mark_query_selection(view: QWidget) -> None:
    """Show ``view``'s selection as the query row (instead of the style's blue): only these two roles
    are set, so the rest of its palette still follows the theme."""
    palette = view.palette()
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        palette.setColor(group, QPalette.ColorRole.Highlight, QColor(QUERY_ROW_BACKGROUND))
        palette.setColor(group, QPalette.ColorRole.HighlightedText, QColor(QUERY_ROW_TEXT))
    view.setPalette(palette)


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


def row_height(scale: float) -> int:
    """The height of a table row whose text is the window's at ``scale``."""
    return int(BASE_POINT_SIZE * scale * 2.4)


def style_table(table: QTableView, theme: Theme | None = None, scale: float | None = None) -> None:
    """A table in ``theme`` (its grid lines: the style's own in the light theme) and/or at ``scale``
    (its row height) — what a table panel does when its Appearance changes."""
    if theme is not None:
        set_grid_color([table], None if theme.name == "light" else theme.grid)
    if scale is not None:
        table.verticalHeader().setDefaultSectionSize(row_height(scale))


def set_grid_color(tables: list[QWidget], color: str | None) -> None:
    """Grid lines of ``tables`` in ``color``; None gives them the application's style back."""
    for table in tables:
        if color is None:
            if isinstance(table.style(), GridColorStyle):
                # (Qt takes a null style: the application's again; PySide6's stubs leave None out)
                table.setStyle(None)  # type: ignore[arg-type]
        else:
            style = GridColorStyle(color)
            style.setParent(table)  # (a widget does not own the style it is given)
            table.setStyle(style)
