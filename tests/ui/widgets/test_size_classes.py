"""The size-class table: rooms measured in text, not pixels (issue 31 item 2)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QFont, QFontMetrics

from qkv_studio.ui.widgets.size_classes import HEIGHTS, WIDTHS, Room, dialog_size, size_class, text_size


def _room(font: QFont, chars: float, lines: float) -> QSize:
    return text_size(font, chars, lines)


def test_a_room_falls_in_the_last_class_it_reaches(qapp):
    font = QFont()
    font.setPointSizeF(11)
    for row in WIDTHS:
        assert size_class(_room(font, row.min_chars + 1, 40), font).width is row
    for row in HEIGHTS:
        assert size_class(_room(font, 200, row.min_lines + 1), font).height is row


def test_a_larger_font_moves_the_same_screen_into_a_smaller_class(qapp):
    small, large = QFont(), QFont()
    small.setPointSizeF(9)
    large.setPointSizeF(18)
    screen = QSize(1920, 1080)
    assert size_class(screen, small).width.name == "wide" and size_class(screen, large).width.name == "narrow"
    assert not size_class(screen, large).height.plane_under_editors


def test_a_room_counts_characters_and_lines(qapp):
    font = QFont()
    fm = QFontMetrics(font)
    room = Room.of(QSize(fm.averageCharWidth() * 80, fm.lineSpacing() * 25), font)
    assert (room.chars, room.lines) == (80, 25)


def test_a_dialog_is_never_larger_than_the_available_geometry():
    assert dialog_size(QSize(900, 1222), QRect(0, 0, 960, 540)) == QSize(900, 500)
    assert dialog_size(QSize(600, 400), QRect(0, 0, 1920, 1080)) == QSize(600, 400)
