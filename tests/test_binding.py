"""The installed Qt binding keeps Python's reference counts: PySide6 6.12.0 drops one on None with every
call of a method that returns nothing and takes arguments (QPainter.setPen, QWidget.setVisible, …),
and on Python < 3.12 any Qt program then aborts ("Fatal Python error: none_dealloc"; see the pin in
pyproject.toml)."""

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QWidget


def test_qt_calls_keep_the_reference_count_of_none(qapp):
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    pen = QPen(QColor("black"))
    widget = QWidget()
    try:
        before = sys.getrefcount(None)
        for _ in range(200):
            painter.setPen(pen)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            painter.drawLine(0, 0, 7, 7)
            widget.setEnabled(True)
        after = sys.getrefcount(None)
    finally:
        painter.end()
    assert after >= before - 20, f"None lost {before - after} references in 800 calls"
