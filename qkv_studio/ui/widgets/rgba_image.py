"""An RGBA image drawn straight from a NumPy array the caller owns, for a matrix shown cell by cell.

The heatmap recolours one query row per edit or drag step.  This item draws a ``QImage`` that wraps
the array's own memory (``QImage(buffer, w, h, stride, format)``, which PySide6 does not copy), so a
row changed in place in the array is on screen after :meth:`RgbaImage.update_rows` repaints that row:
no new image, and no repaint of the rest of the matrix and the numbers over it.  Should a binding copy
the buffer instead (checked once, on a one-pixel image), the image is wrapped again on each update.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

_FORMAT = QImage.Format.Format_RGBA8888


def _wrap(rgba: np.ndarray) -> QImage:
    h, w = rgba.shape[:2]
    # (``data``: the array's memory as a memoryview, the buffer type PySide6's stubs name)
    return QImage(rgba.data, int(w), int(h), int(rgba.strides[0]), _FORMAT)


def _wraps_memory() -> bool:
    """Whether a QImage made from an array shows later writes to that array."""
    probe = np.zeros((1, 1, 4), np.uint8)
    image = _wrap(probe)
    probe[0, 0] = (255, 0, 0, 255)
    return image.pixelColor(0, 0).red() == 255


class RgbaImage(pg.GraphicsObject):
    """An h×w RGBA uint8 array as an image whose cell (r, c) covers x ∈ [c−½, c+½], y ∈ [r−½, r+½].

    ``set_image(rgba)`` shows an array (kept, not copied: the caller may change its rows in place and
    then call ``update_rows``); ``image`` is the array shown.
    """

    _shares: bool | None = None  # (whether QImage wraps an array's memory: asked once)

    def __init__(self) -> None:
        super().__init__()
        self._array: np.ndarray | None = None
        self._qimage: QImage | None = None
        self._rect = QRectF()

    @property
    def image(self) -> np.ndarray | None:
        """The array shown (h×w×4 uint8), or None."""
        return self._array

    def set_image(self, rgba: np.ndarray) -> None:
        """Show ``rgba`` (h×w×4 uint8; a C-contiguous uint8 array is shown without a copy)."""
        rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
        h, w = rgba.shape[:2]
        rect = QRectF(-0.5, -0.5, w, h)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self._array = rgba
        self._qimage = _wrap(rgba)
        self.update()

    def shows(self, rgba: np.ndarray) -> bool:
        """Whether ``rgba`` is the very array shown (so that changing its rows changes the picture)."""
        return self._array is rgba

    def update_rows(self, first: int, last: int) -> None:
        """Repaint rows ``first``..``last`` of the array shown, after they were changed in place."""
        if self._array is None:
            return
        if RgbaImage._shares is None:
            RgbaImage._shares = _wraps_memory()
        if not RgbaImage._shares:
            self._qimage = _wrap(self._array)
        self.update(QRectF(self._rect.left(), first - 0.5, self._rect.width(), last - first + 1))

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return QRectF(self._rect)

    def paint(self, p: QPainter, *args) -> None:
        if self._qimage is not None:
            p.drawImage(self._rect, self._qimage)
