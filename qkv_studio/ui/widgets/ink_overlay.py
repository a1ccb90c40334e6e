"""The slide's ink and laser pointer: a transparent layer over the whole slide (the audience view).

:class:`InkOverlay` draws the strokes of an :class:`~qkv_studio.state.ink.InkBook` (the current scene's
and stage's), the stroke being drawn, and in laser mode a bright dot with a short fading trail where
the pointer is.  Its mode (:data:`MODES`) decides what the mouse does on the slide: nothing (``off``:
clicks go through to the slide), move the dot (``laser``: the cursor is hidden), draw (``ink``, with a
tablet's pressure) or erase strokes (``erase``).  The presenter console's copy of the slide drives the
same layer through :meth:`laser_to`, :meth:`pen_down`, :meth:`pen_move`, :meth:`pen_up` with points as
fractions of the slide.  Shown only on the slide (:meth:`set_active`, presentation mode) and only
when there is something to draw or a mode is on: otherwise it is hidden and costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QWidget

from qkv_studio.core.ink import DEFAULT_WIDTH, stroke
from qkv_studio.render.ink import laser_colour, paint_laser, paint_strokes
from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.ink import InkBook
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance

MODES = ("off", "laser", "ink", "erase")
TRAIL = 8  # points in the laser's trail
TRAIL_LIFE = 0.25  # seconds a trail point lasts


class InkOverlay(FollowsAppearance, QWidget):
    """Ink and laser over ``parent`` (the slide), bound to an InkBook and the Appearance (laser colour).

    ``pointer_moved()``: the laser dot or the stroke being drawn moved (the console repaints its copy).
    """

    pointer_moved = Signal()

    def __init__(self, parent: QWidget, book: InkBook, *, appearance: Appearance | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self._slide = parent  # (the parent, typed: the layer is never moved to another)
        self.book = book
        self.mode = "off"
        self.colour = 1
        self.width_fraction = DEFAULT_WIDTH
        self.active = False  # (the slide is shown: ink is drawn on the slide's layout only)
        self.painting = True  # (False while the slide is grabbed for the console: it draws the ink itself)
        self._clock = clock
        self._trail: list[tuple[float, float, float]] = []  # (x, y, time)
        self._current: list[tuple[float, float, float]] = []  # the stroke being drawn
        self._theme: Theme = self._drawn_theme
        self._fade = QTimer(self)
        self._fade.setInterval(30)
        self._fade.timeout.connect(self._age_trail)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground, True)
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_TabletTracking, True)
        self.setGeometry(parent.rect())
        book.changed.connect(self._on_ink)
        self.hide()  # (until there is ink or a mode: shown with its parent, it would cost every paint)
        self._apply_mode()
        self.bind_appearance(appearance)

    # ---- the mode ------------------------------------------------------------------------------------
    def set_active(self, on: bool) -> None:
        """The slide is shown (presentation mode) or not: the layer shows its ink only on the slide."""
        if bool(on) != self.active:
            # (the slide's resizes followed while it is shown: outside presentations no event of the
            # window passes through here)
            if on:
                self._slide.installEventFilter(self)
            else:
                self._slide.removeEventFilter(self)
        self.active = bool(on)
        if not on:
            self.set_mode("off")
        self._show_if_needed()

    def toggle_mode(self, mode: str) -> None:
        """``mode`` on, or off when it is on already (its key pressed again)."""
        self.set_mode("off" if mode == self.mode else mode)

    def set_mode(self, mode: str) -> None:
        """``off``, ``laser``, ``ink`` or ``erase``."""
        if mode not in MODES:
            raise ValueError(f"unknown ink mode {mode!r}: use one of {', '.join(MODES)}")
        self.mode = mode
        if self.mode != "laser":
            self._trail.clear()
        self._current.clear()
        self._apply_mode()
        self.pointer_moved.emit()

    def set_colour(self, colour: int) -> None:
        """Ink colour 1–4 (drawing on: the keys 1–4 pick it)."""
        self.colour = int(colour)

    def _apply_mode(self) -> None:
        off = self.mode == "off"
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, off)
        cursor = {"off": Qt.CursorShape.ArrowCursor, "laser": Qt.CursorShape.BlankCursor,
                  "ink": Qt.CursorShape.CrossCursor, "erase": Qt.CursorShape.PointingHandCursor}[self.mode]
        self.setCursor(cursor)
        self._show_if_needed()

    def _show_if_needed(self) -> None:
        wanted = self.active and (self.mode != "off" or bool(self.book.strokes()))
        if wanted and self.isHidden():
            self.setGeometry(self._slide.rect())
            self.show()
        elif not wanted and not self.isHidden():
            self.hide()
        if wanted:
            self.raise_()
        self.update()

    def _on_ink(self) -> None:
        self._show_if_needed()

    # ---- points as fractions of the slide --------------------------------------------------------------
    def fraction(self, pos: QPointF) -> tuple[float, float]:
        w, h = max(1, self.width()), max(1, self.height())
        return min(1.0, max(0.0, pos.x() / w)), min(1.0, max(0.0, pos.y() / h))

    def laser_to(self, x: float, y: float) -> None:
        """The laser dot to (x, y), fractions of the slide (from this slide's mouse or the console's)."""
        if self.mode != "laser":
            return
        self._trail.append((x, y, self._clock()))
        del self._trail[:-TRAIL]
        if not self._fade.isActive():
            self._fade.start()
        self.update()
        self.pointer_moved.emit()

    def laser_trail(self) -> list[tuple[float, float]]:
        """The dot's trail, oldest first; its last point is the dot (empty: no dot)."""
        return [(x, y) for x, y, _ in self._trail]

    def _age_trail(self) -> None:
        now = self._clock()
        # (the dot itself stays where the pointer rests; only the tail behind it fades)
        keep = [p for p in self._trail[:-1] if now - p[2] < TRAIL_LIFE] + self._trail[-1:]
        if len(keep) != len(self._trail):
            self._trail = keep
            self.update()
            self.pointer_moved.emit()
        if len(self._trail) <= 1:
            self._fade.stop()

    def pen_down(self, x: float, y: float, pressure: float = 1.0) -> None:
        if self.mode == "erase":
            self.book.erase_at(x, y)
        elif self.mode == "ink":
            self._current = [(x, y, pressure)]
            self.update()
            self.pointer_moved.emit()

    def pen_move(self, x: float, y: float, pressure: float = 1.0) -> None:
        if self.mode == "erase":
            self.book.erase_at(x, y)
        elif self.mode == "ink" and self._current:
            self._current.append((x, y, pressure))
            self.update()
            self.pointer_moved.emit()

    def pen_up(self) -> None:
        if self._current:
            points, self._current = self._current, []
            self.book.add_stroke(stroke(points, self.colour, self.width_fraction))
            self.pointer_moved.emit()

    def current_stroke(self):
        """The stroke being drawn (None when none is)."""
        if not self._current:
            return None
        return stroke(self._current, self.colour, self.width_fraction)

    # ---- events ----------------------------------------------------------------------------------------
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        # (the parent asked of Qt each time: while the slide is torn down its events still come, after
        # Python has let go of this object's attributes)
        slide = self.parentWidget()
        if slide is not None and obj is slide and event.type() == QEvent.Type.Resize:
            self.setGeometry(slide.rect())
        return False

    def mousePressEvent(self, event) -> None:  # noqa: N802
        x, y = self.fraction(event.position())
        self.pen_down(x, y)
        self.laser_to(x, y)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        x, y = self.fraction(event.position())
        if self.mode == "laser":
            self.laser_to(x, y)
        elif event.buttons() & Qt.MouseButton.LeftButton:
            self.pen_move(x, y)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        self.pen_up()

    def tabletEvent(self, event) -> None:  # noqa: N802
        x, y = self.fraction(event.position())
        kind = event.type()
        pressure = float(event.pressure())
        if kind == QEvent.Type.TabletPress:
            self.pen_down(x, y, pressure)
        elif kind == QEvent.Type.TabletMove:
            if self.mode == "laser":
                self.laser_to(x, y)
            else:
                self.pen_move(x, y, pressure)
        elif kind == QEvent.Type.TabletRelease:
            self.pen_up()
        event.accept()

    def paintEvent(self, event) -> None:  # noqa: N802
        if not self.painting:
            return
        painter = QPainter(self)
        self.paint_onto(painter, QRectF(self.rect()))
        painter.end()

    def paint_onto(self, painter: QPainter, rect: QRectF) -> None:
        """The ink, the stroke being drawn and the laser dot drawn into ``rect`` (the slide's place)."""
        strokes = list(self.book.strokes())
        current = self.current_stroke()
        if current is not None:
            strokes.append(current)
        paint_strokes(painter, strokes, rect)
        if self.mode == "laser":
            paint_laser(painter, self.laser_trail(), rect, laser_colour(self._theme))

    def _restyle_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.update()
