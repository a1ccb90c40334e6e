"""A column that scrolls up and down when the window is shorter than its content, never sideways.

Used for the editors' column (the tokens list above the Q, K, V or X, W editors): its content's
minimum height (~620 px for the multihead scene's four editors) made the window taller than a HiDPI
laptop's 540-px screen.  Its minimum width stays its content's (plus the scroll bar's), so the texts
of the column are as whole as they were without it.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSize, Qt
from PySide6.QtGui import QColor, QLinearGradient, QPainter, QPalette
from PySide6.QtWidgets import QFrame, QScrollArea, QStyle, QWidget


class MoreBelow(QWidget):
    """A fade over the bottom lines of a scroll area while more of its content lies below: the panel the
    viewport's edge cuts through (at 1280×720 the V editor's title, half a line of it) reads as going on
    under the edge, not as a cut text.  Clicks go through it; it follows the palette (a theme switch)."""

    def __init__(self, area: QScrollArea) -> None:
        super().__init__(area)
        self._area = area
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()
        bar = area.verticalScrollBar()
        bar.valueChanged.connect(self.follow)
        bar.rangeChanged.connect(self.follow)

    def follow(self, *_: object) -> None:
        """Over the viewport's last 1.6 lines while the column scrolls and is not at its end; else hidden."""
        area, bar = self._area, self._area.verticalScrollBar()
        more = bar.maximum() > 0 and bar.value() < bar.maximum()
        if more:
            view = area.viewport().geometry()
            h = min(view.height() // 3, round(1.6 * area.fontMetrics().lineSpacing()))
            self.setGeometry(view.x(), view.bottom() + 1 - h, view.width(), h)
            self.raise_()
        self.setVisible(more)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        solid = self.palette().color(QPalette.ColorRole.Window)
        clear = QColor(solid)
        clear.setAlpha(0)
        fade = QLinearGradient(0, 0, 0, self.height())
        fade.setColorAt(0.0, clear)
        fade.setColorAt(0.7, solid)
        fade.setColorAt(1.0, solid)
        QPainter(self).fillRect(self.rect(), fade)


class ScrollColumn(QScrollArea):
    """``content`` filling the column's width; a vertical scroll bar when the column is shorter than the
    content's minimum height."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setWidget(content)
        content.installEventFilter(self)
        self.more_below = MoreBelow(self)  # (the fade over the cut edge while more lies below)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        # (the content's minimum width changed — a font, a longer token, the projection editors: the
        # dock around the column is told, as it was told when the content was its widget)
        if obj is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
            # (and the content is sized to its new minimum now: the editors' titles, fitted as they
            # show, grew it after the column had sized it — squeezed, their titles hidden, it stayed
            # so until some other event happened to make the scroll area size it again)
            QCoreApplication.sendEvent(self, QEvent(QEvent.Type.LayoutRequest))
        return super().eventFilter(obj, event)

    def _bar_width(self) -> int:
        """The vertical scroll bar's width while the column is shorter than its content, else 0 (a column
        with room for its content keeps its width for it)."""
        content = self.widget()
        if content is None or self.viewport().height() >= content.minimumSizeHint().height():
            return 0
        return self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.more_below.follow()
        bar = self._bar_width()
        if bar != getattr(self, "_bar", 0):
            self._bar = bar
            self.updateGeometry()  # (the scroll bar comes or goes: the column's minimum width with it)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        # (as wide as the content needs with the scroll bar shown; as short as a few lines of it)
        inner = self.widget()
        content = inner.minimumSizeHint() if inner is not None else QSize(0, 0)
        frame = 2 * self.frameWidth()
        return QSize(content.width() + self._bar_width() + frame, min(content.height(), 120) + frame)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        inner = self.widget()
        content = inner.sizeHint() if inner is not None else QSize(0, 0)
        frame = 2 * self.frameWidth()
        return QSize(max(content.width(), self.minimumSizeHint().width()), content.height() + frame)
