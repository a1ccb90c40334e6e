"""Size classes: the one table the normal window's and the dialogs' layouts are decided from.

A room (the window, or a screen's available geometry) is measured in the text it holds — how many of
its font's average characters fit across, how many of its lines fit down (:class:`Room`) — never in
pixels or by naming a screen: a laptop at 200 % and a screen half its size at 100 % are the same room,
and a larger font moves any screen into a smaller class.  :func:`size_class` looks the room up in
:data:`WIDTHS` and :data:`HEIGHTS` and returns the pair, which says what the layout does there:

* the width class: whether the side panels stand in columns of their own beside the heatmap or fold
  into tabs of one column, and the shares of the width the heatmap and the side columns keep;
* the height class: whether the vector plane stands under the editors or is a tab, how much of the
  height the calculation table may take, how many tokens the token list shows before it scrolls.

Dialogs are sized by :func:`dialog_size`: what their content asks for, never more than the available
geometry of their screen, chosen once as they first show (:func:`fit_dialog`) — so a dialog never
changes size while in use and its buttons stay under the pointer; what does not fit scrolls inside.

**Extending it.**  A new decision is a new field of :class:`WidthClass` or :class:`HeightClass` (with
the value every row had so far as its default) read by the layout that needs it; a new class is a new
row, ordered by its ``min_chars`` or ``min_lines``: a room takes the last row it reaches.  Add a test in
``tests/ui/widgets/test_size_classes.py`` that puts a room of that many characters or lines in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QFont, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import QDialog, QWidget


@dataclass(frozen=True)
class Room:
    """How much text of a font fits in a rectangle: ``chars`` average characters across, ``lines`` down."""

    chars: float
    lines: float

    @classmethod
    def of(cls, size: QSize, font: QFont) -> Room:
        fm = QFontMetrics(font)
        return cls(size.width() / max(1, fm.averageCharWidth()), size.height() / max(1, fm.lineSpacing()))


@dataclass(frozen=True)
class WidthClass:
    """A row of :data:`WIDTHS`: a window at least ``min_chars`` characters wide."""

    name: str
    min_chars: int
    #: the side panels (calculation, blend, the View menu's) each in a column, or folded into one column
    folded: bool
    #: the least share of the window's width the heatmap keeps beside the side columns
    heatmap_floor: float = 0.47
    #: ... with the editors under the calculation table: the table then shows its last stage's columns
    #: only where the heatmap keeps this much (else the current stage's)
    heatmap_floor_under: float = 0.53
    #: the editors' column: its share of the width, and the least it yields to the table
    editors_share: float = 0.22
    editors_least: float = 0.18
    #: the calculation column: the least and the most of the width it is given for its table's columns,
    #: and the share a table that scrolls anyway keeps in a folded column
    calc_least: float = 0.28
    calc_most: float = 0.36
    calc_scrolling: float = 0.26


@dataclass(frozen=True)
class HeightClass:
    """A row of :data:`HEIGHTS`: a window (or a screen) at least ``min_lines`` lines high."""

    name: str
    min_lines: int
    #: the vector plane stands under the editors (else: a tab, of the right column where it fits)
    plane_under_editors: bool
    #: the share of the height the calculation table may take above the blend (with the editors under
    #: it: ``calc_share_under``), and the least it keeps
    calc_share: float = 0.36
    calc_share_under: float = 0.45
    calc_least: float = 0.18
    #: the editors' share of their column's height when the plane stands under them
    editors_share: float = 0.68
    #: the token list shows every token up to this many, then scrolls (the editors under it keep rows)
    token_rows: int = 6


#: The width classes, narrowest first.  180 characters: the editors, the whole calculation table and a
#: heatmap at its floor side by side, each column with the blend under the table.
WIDTHS: tuple[WidthClass, ...] = (
    WidthClass("narrow", 0, folded=True),
    WidthClass("wide", 180, folded=False),
)

#: The height classes, shortest first.  57 lines: the token list and three editors with every row (~37
#: lines) and a vector plane that can be read (~18 lines) one above the other.  Under 36 lines (a
#: HiDPI laptop at 200 %: ~27 lines) the token list keeps 2 rows and the table above the editors 40 % of
#: the height, so the first editor shows whole rows without scrolling.
HEIGHTS: tuple[HeightClass, ...] = (
    HeightClass("cramped", 0, plane_under_editors=False, token_rows=2, calc_share_under=0.4),
    HeightClass("short", 36, plane_under_editors=False),
    HeightClass("tall", 57, plane_under_editors=True),
)


@dataclass(frozen=True)
class SizeClass:
    """The classes a room falls in (and the room itself)."""

    width: WidthClass
    height: HeightClass
    room: Room


def _row(rows, value: float, key: str):
    chosen = rows[0]
    for row in rows:
        if value >= getattr(row, key):
            chosen = row
    return chosen


def size_class(size: QSize, font: QFont) -> SizeClass:
    """The size class of a room ``size`` large whose text is in ``font``."""
    room = Room.of(size, font)
    return SizeClass(_row(WIDTHS, room.chars, "min_chars"), _row(HEIGHTS, room.lines, "min_lines"), room)


# ---- dialogs ------------------------------------------------------------------------------------------
#: Room kept for a window manager's frame and title bar around a dialog until its real frame is known.
DIALOG_FRAME = QSize(8, 40)


def available_geometry(widget: QWidget) -> QRect:
    """The available geometry of the screen ``widget`` is on (or will be: its parent's), in logical px."""
    parent = widget.parentWidget()
    screen = widget.screen() or (parent.screen() if parent is not None else None) \
        or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1024, 768)


def screen_class(widget: QWidget) -> SizeClass:
    """The size class of the available geometry of ``widget``'s screen, in ``widget``'s font."""
    return size_class(available_geometry(widget).size(), widget.font())


def dialog_size(wanted: QSize, available: QRect, frame: QSize = DIALOG_FRAME) -> QSize:
    """A dialog's size (without its frame): ``wanted``, no larger than the ``available`` geometry
    less the ``frame``."""
    return QSize(max(1, min(wanted.width(), available.width() - frame.width())),
                 max(1, min(wanted.height(), available.height() - frame.height())))


def text_size(font: QFont, chars: float, lines: float) -> QSize:
    """The size of ``chars`` average characters by ``lines`` lines of ``font``: a room asked for in text."""
    fm = QFontMetrics(font)
    return QSize(round(chars * fm.averageCharWidth()), round(lines * fm.lineSpacing()))


def fit_dialog(dialog: QDialog, wanted: QSize | None = None) -> QSize:
    """Size ``dialog`` once, before it shows: ``wanted`` (default: its layout's size hint) inside its
    screen's available geometry.  Its layout no longer resizes it as its content changes (what does not
    fit scrolls in the scroll area the dialog keeps its content in); the user may still resize it."""
    lay = dialog.layout()
    if lay is not None:
        lay.activate()
        lay.setSizeConstraint(lay.SizeConstraint.SetNoConstraint)
    size = dialog_size(wanted if wanted is not None else dialog.sizeHint(), available_geometry(dialog))
    dialog.setMinimumSize(dialog.minimumSizeHint().boundedTo(size))
    dialog.resize(size)
    return size
