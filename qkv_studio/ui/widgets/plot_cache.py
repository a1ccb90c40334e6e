"""Axes drawn from a cached pixmap, and axes that remember the pictures they drew.

A pyqtgraph axis with a grid reaches across the whole plot, so every change inside the plot (an arrow
that moves, one recoloured row) repaints it: its ticks, labels and grid lines replayed from a QPicture,
~0.5 ms an axis and four to eight axes an edit.  With Qt's device-coordinate cache the axis is drawn
once into a pixmap and blitted until the axis itself changes (a new range, ticks, font or pen).

The axes also lose pyqtgraph's automatic SI prefix ("weight (×1e-3)"): nothing here has units to
prefix, and keeping it current re-parses the axis label's HTML on every range change (~0.1 ms each,
hundreds while the window is built).

Everything here is pyqtgraph's and Qt's public API: no private method is overridden and nothing is
stored on pyqtgraph's objects (the axes and the legend are subclasses that keep their own state).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter, QPicture, QPixmap
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPixmapItem

from qkv_studio.ui.widgets.plot_frame import SIDES, PlotFrame, plot_frame


def cache_axes(*items: PlotFrame | pg.PlotItem) -> None:
    """Give every axis of these plot (or colour bar) items a device-coordinate cache."""
    for item in items:
        for name in ("left", "right", "top", "bottom"):
            try:
                axis = item.getAxis(name)
            except KeyError:  # (a colour bar has only its own side)
                continue
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            # its title too (a child item, drawn as rich text on every repaint of the plot: ~0.3 ms
            # each time a stage step or an animation frame repaints the heatmap whole)
            axis.label.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            if axis.autoSIPrefix:
                axis.enableAutoSIPrefix(False)


class RememberingAxis(pg.AxisItem):
    """An axis that keeps the pictures of the last few looks it drew and replays one when it comes back.

    pyqtgraph throws an axis's picture away on every change and regenerates it when next painted
    (~2 ms for a colour legend: tick spacing, texts and their bounding boxes, all in Python).  A stage
    step swaps the heatmap's legend between the score, scaled and weight scales, and stepping back and
    forth did that work every time.  A picture is remembered under everything it was drawn from —
    range, size, font, style, pens, ticks, and the linked view's rectangle when the axis draws a grid
    across it — so any other change simply misses.  Only public API: ``paint`` draws through
    ``generateDrawSpecs``/``drawPicture`` into a QPicture of its own, and the setters it overrides
    record what they were given (a device-coordinate cache, :func:`cache_axes`, keeps the axis from
    being painted at all until it changes).
    """

    KEEP = 8

    def __init__(self, *args, **kwargs) -> None:
        self._pictures: dict[tuple, QPicture] = {}  # look -> picture, the most recently used last
        self._settings: tuple | None = None  # style, ticks and spacing as a key, until one changes
        self._ticks: list | None = None
        self._ticks_given: str = repr(None)
        self._spacing_given: str = repr(None)
        self._density = 1.0
        self._bounds: tuple | None = None  # (geometry, bounding rectangle) of an axis without a grid
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)  # (see the module's docstring: from the start, not after set-up)

    # Everything the look is drawn from that pyqtgraph changes only through these setters is kept as
    # one key until one of them is called (the ticks of 64 token names took ~0.1 ms to repr per paint).
    def setStyle(self, **kwargs) -> None:  # noqa: N802 - pyqtgraph's name
        self._settings = None
        self._bounds = None
        super().setStyle(**kwargs)

    def boundingRect(self):  # noqa: N802 - Qt's name
        # Qt asks ~5 times per axis and repaint (~10 µs each in Python: style lookups, two mappings).
        # Without a grid the answer follows the axis's geometry and style only.
        if self.grid is not False:
            return super().boundingRect()
        geometry = self.geometry()
        kept = self._bounds
        if kept is None or kept[0] != geometry:
            kept = self._bounds = (geometry, super().boundingRect())
        return QRectF(kept[1])

    def setTickFont(self, font) -> None:  # noqa: N802 - pyqtgraph's name
        self._settings = None
        super().setTickFont(font)

    def setTicks(self, ticks) -> None:  # noqa: N802 - pyqtgraph's name
        self._settings = None
        self._ticks = ticks
        self._ticks_given = repr(ticks)
        super().setTicks(ticks)

    def given_ticks(self) -> list | None:
        """The ticks last given to ``setTicks`` (levels of (value, text) pairs), or None."""
        return self._ticks

    def setTickSpacing(self, major=None, minor=None, levels=None) -> None:  # noqa: N802 - pyqtgraph's name
        self._settings = None
        self._spacing_given = repr((major, minor, levels))
        super().setTickSpacing(major, minor, levels)

    def setTickDensity(self, density=1.0) -> None:  # noqa: N802 - pyqtgraph's name
        self._density = density
        super().setTickDensity(density)

    def _look(self) -> tuple:
        if self._settings is None:
            style = self.style
            font = style.get("tickFont")
            rest = repr(sorted((k, v) for k, v in style.items() if k != "tickFont"))
            self._settings = (font.key() if font is not None else None, rest, self._ticks_given,
                              self._spacing_given)
        pens = tuple((pen.color().rgba(), pen.widthF(), int(pen.style().value), pen.isCosmetic())
                     for pen in (self.pen(), self.textPen(), self.tickPen()))
        # A grid reaches across the linked view: its lines follow the view's size and place too.
        view = self.linkedView() if self.grid is not False else None
        reach = None if view is None else view.mapRectToItem(self, view.boundingRect()).getRect()
        return (tuple(self.range), self.size().toTuple(), self._settings, pens, self._density, self.scale,
                self.autoSIPrefixScale, tuple(self.logMode) if isinstance(self.logMode, (list, tuple))
                else self.logMode, self.grid, reach)

    def remembered(self) -> int:
        """How many looks' pictures the axis keeps now."""
        return len(self._pictures)

    def paint(self, p, opt, widget) -> None:  # noqa: D102 - pyqtgraph's
        look = self._look()
        picture = self._pictures.pop(look, None)
        if picture is None:  # (what AxisItem.paint draws, into a picture of our own)
            picture = QPicture()
            painter = QPainter(picture)
            try:
                if self.style["tickFont"]:
                    painter.setFont(self.style["tickFont"])
                specs = self.generateDrawSpecs(painter)
                if specs is not None:
                    self.drawPicture(painter, *specs)
            finally:
                painter.end()
            while len(self._pictures) >= self.KEEP:
                self._pictures.pop(next(iter(self._pictures)))
        self._pictures[look] = picture
        picture.play(p)


def remembering_axes(sides: tuple[str, ...] = SIDES) -> dict[str, RememberingAxis]:
    """``axisItems`` for a plot (:func:`plot_item`, or a PlotItem): a :class:`RememberingAxis` on every
    side (or on ``sides``, when the plot brings axes of its own for the others).  The hidden sides too: pyqtgraph's
    own axes re-set their titles' HTML on every range change even while hidden.  PlotItem
    shows every axis it is given: hide the others afterwards (:func:`show_only`)."""
    return {side: RememberingAxis(side) for side in sides}


def show_only(plot: PlotFrame | pg.PlotItem, *sides: str) -> None:
    """Show these axes of ``plot`` and hide the others."""
    for side in SIDES:
        plot.showAxis(side, side in sides)


def plot_item(**kwargs) -> PlotFrame:
    """The app's plot: a :class:`~qkv_studio.ui.widgets.plot_frame.PlotFrame` (PlotItem's layout and
    interface without its options form) with a :class:`RememberingAxis` on every side and no menu."""
    kwargs.setdefault("enableMenu", False)
    if "axisItems" not in kwargs:  # (not setdefault: its default, four axes, would be built and thrown away)
        kwargs["axisItems"] = remembering_axes()
    return plot_frame(**kwargs)


class LegendBar(PlotFrame):
    """A colour legend: a strip of the colour table beside a :class:`RememberingAxis` scale, framed by the
    other three sides (their titles carry the legend's), drawn as ``pg.ColorBarItem`` draws a
    non-interactive bar — but in a :class:`PlotFrame`, so without the options form and menus a
    ColorBarItem (a PlotItem) builds and then disables (~8 ms of start-up).  It shows levels and a
    strip; it is not attached to images and has no handles (``interactive`` and ``colorMapMenu`` are
    accepted only as False, ColorBarItem's arguments kept so it reads as one)."""

    def __init__(self, values: tuple[float, float] = (0, 1), width: float = 25, label: str | None = None,
                 interactive: bool = False, orientation: str = "vertical", *, colorMapMenu: bool = False) -> None:  # noqa: N803
        if interactive or colorMapMenu:
            raise ValueError("a LegendBar shows levels: it has no handles and no colour-map menu")
        self._strips: dict[str, QPixmap] = {}
        self.strip_name: str | None = None
        super().__init__(axisItems=remembering_axes(), enableMenu=False)
        self.values = (values[0], values[1])
        self.horizontal = orientation in ("h", "horizontal")
        self.disableAutoRange()
        self.setMouseEnabled(x=False, y=False)
        if self.horizontal:
            self.setRange(xRange=(0, 256), yRange=(0, 1), padding=0)
            self.layout.setRowFixedHeight(2, width)
        else:
            self.setRange(xRange=(0, 1), yRange=(0, 256), padding=0)
            self.layout.setColumnFixedWidth(1, width)
        main = "bottom" if self.horizontal else "right"
        for side in SIDES:
            self.showAxis(side)
            axis = self.getAxis(side)
            if side == main:
                self.axis = axis
            else:  # (a frame)
                axis.setTicks([])
                axis.setStyle(showValues=False)
        if not self.horizontal:
            self.axis.setWidth(45)
        self.axis.setStyle(showValues=True)
        self.axis.unlinkFromView()
        self.axis.setRange(self.values[0], self.values[1])
        if label is not None:
            self.getAxis("bottom" if self.horizontal else "left").setLabel(label)
        self.bar = QGraphicsPixmapItem()
        self.bar.setShapeMode(QGraphicsPixmapItem.ShapeMode.BoundingRectShape)
        self.addItem(self.bar)

    def setLevels(self, values=None, low=None, high=None) -> None:  # noqa: N802 - ColorBarItem's name
        """The range the scale shows, ``(low, high)`` (either may be None: kept); a reversed range
        collapses to its middle, as in ColorBarItem."""
        if values is not None:
            low, high = values
        low = self.values[0] if low is None else low
        high = self.values[1] if high is None else high
        if low > high:
            low = high = (low + high) / 2
        self.values = (low, high)
        self.axis.setRange(low, high)

    def levels(self) -> tuple[float, float]:
        """The range the scale shows, ``(low, high)``."""
        return self.values

    def show_table(self, name: str, table: np.ndarray) -> None:
        """Paint the strip from ``table`` (n×4 RGBA uint8, low values first): the very table the cells
        are coloured from, so legend and cells agree to the bit. The strip's pixmap is kept per
        ``name``: a stage step to or from the softmax swaps the diverging and the sequential map, and
        pyqtgraph's ``setColorMap`` built a 256-colour table and a pixmap for each swap (~0.3 ms), from
        a ColorMap read from its CSV file at start-up (~10 ms)."""
        strip = self._strips.get(name)
        if strip is None:  # (as pyqtgraph builds it from its own table: one column, or one row)
            column = np.ascontiguousarray(np.expand_dims(table, axis=0 if self.horizontal else 1), dtype=np.uint8)
            h, w = column.shape[:2]
            data = column.tobytes()  # (alive until the pixmap has copied it)
            strip = self._strips[name] = QPixmap.fromImage(QImage(data, w, h, 4 * w, QImage.Format.Format_RGBA8888))
        self.strip_name = name
        self.axis.setRange(self.values[0], self.values[1])
        self.bar.setPixmap(strip)
