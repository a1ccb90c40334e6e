"""Showing a vector plane and driving its mouse, for the plane's tests."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from qkv_studio.state.session import Session
from qkv_studio.ui.panels.plane import VectorPlane

NO_MODIFIER = Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def show(qtbot, session: Session, size=(900, 700)) -> VectorPlane:
    plane = VectorPlane(session)
    qtbot.addWidget(plane)
    plane.resize(*size)
    plane.show()
    qtbot.waitExposed(plane)
    session.flush()
    qtbot.wait(10)
    return plane


def move(viewport, pos: QPoint, buttons=Qt.MouseButton.LeftButton, modifiers=NO_MODIFIER) -> None:
    """A mouse move with the button held (QTest's mouseMove carries no buttons)."""
    ev = QMouseEvent(QEvent.Type.MouseMove, QPointF(pos), QPointF(viewport.mapToGlobal(pos)),
                     Qt.MouseButton.NoButton, buttons, modifiers)
    QApplication.sendEvent(viewport, ev)


def drag(qtbot, plane: VectorPlane, start: QPoint, end: QPoint, steps=6, modifiers=NO_MODIFIER) -> None:
    """Press at ``start``, move in ``steps`` to ``end`` (``modifiers`` held throughout), release."""
    vp = plane.plot_widget.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, modifiers, start)
    for i in range(1, steps + 1):
        t = i / steps
        p = QPoint(round(start.x() + t * (end.x() - start.x())), round(start.y() + t * (end.y() - start.y())))
        move(vp, p, modifiers=modifiers)
        qtbot.wait(15)  # pyqtgraph drops moves closer together than 10 ms
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, modifiers, end)


def viewport_pos(plane: VectorPlane, x, y) -> QPoint:
    return plane.plot_widget.mapFromScene(plane.view_box.mapViewToScene(QPointF(x, y)))


def outside_the_view(plane: VectorPlane) -> list:
    """Every drawn arrow tip and label not wholly inside the plane's view, as painted (scene pixels)."""
    QApplication.processEvents()
    plane.plot_widget.viewport().repaint()  # (labels take their final transform as they are painted)
    view = plane.view_box.sceneBoundingRect()
    out = []
    for matrix, rows in (("Q", [plane.session.query]), ("K", range(len(plane.vectors.keys))),
                         ("V", range(len(plane.vectors.values)) if plane.values_visible() else [])):
        for row in rows:
            tip = plane.view_box.mapViewToScene(plane.head_view_pos(matrix, row))
            if not view.contains(tip):
                out.append((matrix, row, tip))
    if plane.output_shown():
        tip = plane.view_box.mapViewToScene(QPointF(*plane.vectors.output[0]))
        if not view.contains(tip):
            out.append(("output", tip))
    for item in plane.label_items():
        rect: QRectF = item.sceneBoundingRect()
        if not view.contains(rect):
            out.append((item.toPlainText() if hasattr(item, "toPlainText") else "label", rect))
    return out
