"""The presenter console: what the lecturer sees on the laptop while the projector shows the slide.

Left, large: a copy of the audience's slide (:class:`SlideMirror`) with its ink and laser dot drawn
live — moving the mouse on it moves the dot on the projector, dragging draws.  Right: the next stage
(or the deck's next scene) as a figure, the notes (else the stage's caption), the elapsed time and the
clock, and the keys.  Every key pressed here goes to the lecture as if pressed on the slide.

The copy of the slide is a picture of the audience's slide widget itself (the same
:class:`~qkv_studio.ui.slide.SlideWidget`, ``QWidget.grab``) taken when what it shows changes — a stage,
a query, an edit, the theme, its layout — throttled to one grab per ~80 ms and once more after a stage
change's 250 ms morph (both listed in :mod:`qkv_studio.ui.update_policy`); the ink and the dot are drawn
over it by the console itself (from the same InkBook), so drawing and pointing never cost a grab.  A
third set of views would repaint every panel once more on each edit; a grab costs one extra paint per
change, only while presenting, and shows exactly what the audience sees.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from qkv_studio.core.ink import INK_COLOURS
from qkv_studio.core.stopwatch import clock_text

if TYPE_CHECKING:
    from qkv_studio.ui.window.presenter.controller import Presenter

#: The keys the console lists (the lecture keys work too: the shortcut list, ?, has them all).
CONSOLE_KEYS = (
    ("→ / ←", "next / previous"), ("L", "laser"), ("I or D", "ink · 1–4 colour"), ("E", "erase"),
    ("C", "clear ink"), ("U / Shift+U", "undo / redo ink"), ("T / R", "pause / reset timer"),
    ("X", "swap screens"), ("B", "black screen"), ("Esc", "end"),
)


class SlideMirror(QWidget):
    """The audience's slide, scaled to fit, with the ink and the laser dot drawn over it; the mouse on
    it drives the laser and the pen of the slide's :class:`~qkv_studio.ui.widgets.ink_overlay.InkOverlay`."""

    def __init__(self, presenter: Presenter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._presenter = presenter
        self._source = QImage()
        self._scaled = QPixmap()
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(160, 90)

    def set_picture(self, image: QImage) -> None:
        self._source = image
        self._rescale()

    def picture(self) -> QImage:
        return self._source

    def _rescale(self) -> None:
        if self._source.isNull():
            self._scaled = QPixmap()
        else:
            r = self.slide_rect()
            ratio = self.devicePixelRatioF()
            size = QSize(max(1, round(r.width() * ratio)), max(1, round(r.height() * ratio)))
            self._scaled = QPixmap.fromImage(self._source.scaled(size, Qt.AspectRatioMode.IgnoreAspectRatio,
                                                                 Qt.TransformationMode.SmoothTransformation))
            self._scaled.setDevicePixelRatio(ratio)
        self.update()

    def slide_rect(self) -> QRectF:
        """Where the slide is drawn: as large as fits, the audience's proportions, at the top (under
        its title), centred across."""
        ref = self._presenter.audience_size()
        aw, ah = max(1, ref.width()), max(1, ref.height())
        f = min(self.width() / aw, self.height() / ah)
        w, h = aw * f, ah * f
        return QRectF((self.width() - w) / 2, 0, w, h)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._rescale()

    def paintEvent(self, event) -> None:  # noqa: N802
        p = QPainter(self)
        r = self.slide_rect()
        p.fillRect(self.rect(), QColor("#101114"))
        if not self._scaled.isNull():
            p.drawPixmap(r.topLeft(), self._scaled)
        overlay = self._presenter.overlay
        if overlay is not None:
            p.setClipRect(r)
            overlay.paint_onto(p, r)
        p.end()

    # ---- the mouse drives the slide's laser and pen ------------------------------------------------
    def fraction(self, pos) -> tuple[float, float]:
        r = self.slide_rect()
        return (min(1.0, max(0.0, (pos.x() - r.x()) / max(1.0, r.width()))),
                min(1.0, max(0.0, (pos.y() - r.y()) / max(1.0, r.height()))))

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        overlay = self._presenter.overlay
        x, y = self.fraction(event.position())
        if overlay.mode == "laser":
            overlay.laser_to(x, y)
        elif event.buttons() & Qt.MouseButton.LeftButton:
            overlay.pen_move(x, y)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        x, y = self.fraction(event.position())
        self._presenter.overlay.pen_down(x, y)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        self._presenter.overlay.pen_up()


class _Picture(QWidget):
    """An image scaled to fit, centred (the next stage's figure)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.image = QImage()
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(120, 70)

    def set_image(self, image: QImage) -> None:
        self.image = image
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802
        if self.image.isNull():
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        ratio = self.image.devicePixelRatio() or 1.0
        iw, ih = self.image.width() / ratio, self.image.height() / ratio
        f = min(self.width() / max(1.0, iw), self.height() / max(1.0, ih))
        w, h = iw * f, ih * f
        p.drawImage(QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h), self.image)
        p.end()


class PresenterConsole(QWidget):
    """The console window (see the module's docstring); built and driven by the :class:`Presenter`."""

    def __init__(self, presenter: Presenter, clock: Callable[[], float] = time.time) -> None:
        # (a window of its own, owned by the main window: it closes with it and never keeps the app open)
        super().__init__(presenter.window, Qt.WindowType.Window)
        self._presenter = presenter
        self._wall = clock
        self.setWindowTitle("QKV Studio — presenter console")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(self.backgroundRole(), QColor("#1b1c20"))
        pal.setColor(self.foregroundRole(), QColor("#f0f0f0"))
        self.setPalette(pal)
        self.mirror = SlideMirror(presenter, self)
        self.now_title = self._label("", 15, bold=True)
        self.next_title = self._label("Next", 13, bold=True)
        self.next_view = _Picture(self)
        self.notes_title = self._label("Notes", 13, bold=True)
        self.notes = self._label("", 15)
        self.notes.setWordWrap(True)
        self.notes.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.notes.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.elapsed = self._label("0:00", 30, bold=True)
        self.clock = self._label("", 20)
        self.status = self._label("", 12)
        self.keys = self._label(self._keys_text(), 10)
        self.keys.setWordWrap(True)
        side = QVBoxLayout()
        side.addWidget(self.next_title)
        side.addWidget(self.next_view, 3)
        side.addWidget(self.notes_title)
        side.addWidget(self.notes, 4)
        times = QGridLayout()
        times.addWidget(self.elapsed, 0, 0)
        times.addWidget(self.clock, 0, 1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        times.addWidget(self.status, 1, 0, 1, 2)
        side.addLayout(times)
        side.addWidget(self.keys)
        grid = QGridLayout(self)
        grid.setContentsMargins(12, 10, 12, 10)
        grid.setHorizontalSpacing(14)
        grid.addWidget(self.now_title, 0, 0)
        grid.addWidget(self.mirror, 1, 0)
        grid.addLayout(side, 0, 1, 2, 1)
        grid.setColumnStretch(0, 64)
        grid.setColumnStretch(1, 36)
        grid.setRowStretch(1, 1)
        self._tick = QTimer(self)
        self._tick.setInterval(250)
        self._tick.timeout.connect(self.refresh_times)

    def _label(self, text: str, points: float, *, bold: bool = False) -> QLabel:
        label = QLabel(text, self)
        font = QFont(self.font())
        font.setPointSizeF(points)
        font.setBold(bold)
        label.setFont(font)
        label.setProperty("points", points)
        label.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        label.setTextFormat(Qt.TextFormat.PlainText)
        return label

    @staticmethod
    def _keys_text() -> str:
        # (no-break spaces inside an entry: a line breaks between entries, never inside one)
        return "    ".join(f"{k} {what}".replace(" ", "\u00a0") for k, what in CONSOLE_KEYS)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        # (the type grows with the console: a 1920×1080 laptop reads as a 1280×720 one, larger)
        f = max(0.8, min(2.0, min(self.width() / 1280, self.height() / 720)))
        for label in self.findChildren(QLabel):
            points = label.property("points")
            if points:
                font = label.font()
                font.setPointSizeF(float(points) * f)
                label.setFont(font)

    # ---- what it shows ---------------------------------------------------------------------------
    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self._tick.start()
        self.refresh_times()

    def hideEvent(self, event) -> None:  # noqa: N802
        super().hideEvent(event)
        self._tick.stop()

    def set_now(self, title: str) -> None:
        self.now_title.setText(title)

    def set_next(self, title: str, image: QImage) -> None:
        self.next_title.setText(title)
        self.next_view.set_image(image)

    def set_notes(self, text: str, rich: bool = False) -> None:
        """The notes (plain text), or a stage caption (``rich``: the stepper's rich text)."""
        self.notes_title.setText("Caption (no notes for this stage)" if rich else "Notes")
        self.notes.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.notes.setText(text)

    def refresh_times(self) -> None:
        p = self._presenter
        paused = "" if p.stopwatch.running else "  (paused: T)"
        self.elapsed.setText(clock_text(p.stopwatch.elapsed()) + paused)
        self.clock.setText(time.strftime("%H:%M", time.localtime(self._wall())))
        self.refresh_status()

    def refresh_status(self) -> None:
        o = self._presenter.overlay
        mode = {"off": "", "laser": "laser on", "erase": "eraser"}.get(o.mode, "")
        if o.mode == "ink":
            mode = f"ink {o.colour} ({INK_COLOURS[(o.colour - 1) % len(INK_COLOURS)]})"
        self.status.setText("   ".join(part for part in (self._presenter.position_text(), mode) if part))

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if not self._presenter.console_key(event):
            super().keyPressEvent(event)

