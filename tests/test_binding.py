"""The installed Qt binding keeps Python's reference counts: PySide6 6.12.0 drops one on None with every
call of a method that returns nothing (QPainter.setPen, QWidget.setVisible, QTimer.stop, …), and on
Python < 3.12 any Qt program then aborts ("Fatal Python error: none_dealloc"; see the pin in
pyproject.toml).

No upstream report was found (searched 2026-12-01: the Qt for Python tracker's mirrors, GitHub issues
and Q&A pages for "none_dealloc", "deallocating None", "Py_None refcount shiboken 6.12").  Checked in a
fresh Python 3.11.7 virtualenv with only PySide6-Essentials 6.12.0 (shiboken6 6.12.0) installed: this test
fails ("None lost 799 references in 800 calls") and the reproducer below aborts; with 6.11.3 and 6.10.3
(same interpreter) the test passes and None keeps its count.  6.12.0 is the newest release on PyPI today.

Upstream report (to file at bugreports.qt.io)
---------------------------------------------
Title: PySide6 6.12.0: every call of a void method drops a reference to None — "Fatal Python error:
none_dealloc" on Python 3.10/3.11

Versions: PySide6-Essentials 6.12.0 / shiboken6 6.12.0 (wheels from PyPI), CPython 3.11.7, Linux x86_64,
offscreen and xcb platforms.  Not affected: PySide6 6.10.3, 6.11.3.  On Python ≥ 3.12 None is immortal,
so the same bug is invisible there.

Reproducer (QtCore only)::

    import sys
    from PySide6.QtCore import QTimer
    timer = QTimer()
    before = sys.getrefcount(None)
    for _ in range(1000):
        timer.stop()
    print(before - sys.getrefcount(None))   # 6.12.0: 1000; 6.11.3: 0
    for _ in range(10**6):
        timer.stop()                         # 6.12.0 on Python 3.11: aborts

Expected: a method returning void returns a new reference to None (``Py_RETURN_NONE``); None's
reference count is unchanged after any number of calls.

Actual: each call of a method returning void — with arguments (QPainter.setPen, QWidget.setEnabled,
QObject.setObjectName) or without (QTimer.stop, QWidget.update) — lowers None's count by one; methods
returning a value (QWidget.isEnabled, QObject.blockSignals) do not.  After about as many calls as None
had references the interpreter aborts: "Fatal Python error: none_dealloc: deallocating None: bug likely
caused by a refcount error in a C extension", at whichever call makes the last drop (in our test suite
first inside pyqtgraph's AxisItem.drawPicture), or while garbage-collecting at exit.
"""

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
