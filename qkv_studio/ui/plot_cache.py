"""Axes drawn from a cached pixmap.

A pyqtgraph axis with a grid reaches across the whole plot, so every change inside the plot (an arrow
that moves, one recoloured row) repaints it: its ticks, labels and grid lines replayed from a QPicture,
~0.5 ms an axis and four to eight axes an edit.  With Qt's device-coordinate cache the axis is drawn
once into a pixmap and blitted until the axis itself changes (a new range, ticks, font or pen).

The axes also lose pyqtgraph's automatic SI prefix ("weight (×1e-3)"): nothing here has units to
prefix, and keeping it current re-parses the axis label's HTML on every range change (~0.1 ms each,
hundreds while the window is built).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem


def cache_axes(*items: pg.PlotItem | pg.ColorBarItem) -> None:
    """Give every axis of these plot (or colour bar) items a device-coordinate cache."""
    for item in items:
        for name in ("left", "right", "top", "bottom"):
            try:
                axis = item.getAxis(name)
            except KeyError:  # (a colour bar has only its own side)
                continue
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            if axis.autoSIPrefix:
                axis.enableAutoSIPrefix(False)
