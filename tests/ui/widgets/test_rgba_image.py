"""RgbaImage: an array's colours on screen, cell by cell, and rows changed in place repainted alone."""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF

from qkv_studio.ui.widgets.rgba_image import RgbaImage


def _shown(qtbot, rgba):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plot = widget.addPlot()
    for side in ("left", "bottom"):
        plot.hideAxis(side)
    plot.invertY(True)
    item = RgbaImage()
    item.set_image(rgba)
    plot.addItem(item)
    h, w = rgba.shape[:2]
    plot.setRange(xRange=(-0.5, w - 0.5), yRange=(-0.5, h - 0.5), padding=0)
    widget.resize(300, 300)
    widget.show()
    qtbot.waitExposed(widget)
    return widget, plot, item


def _colour_at(widget, plot, row, col):
    image = widget.grab().toImage()
    point = widget.mapFromScene(plot.vb.mapViewToScene(QPointF(col, row)))
    c = image.pixelColor(point.x(), point.y())
    return (c.red(), c.green(), c.blue())


def test_each_cell_shows_its_colour_and_a_row_changed_in_place_shows_after_its_update(qtbot):
    rgba = np.zeros((3, 4, 4), np.uint8)
    rgba[..., 3] = 255
    rgba[:, :, 0] = np.arange(4) * 60  # red grows to the right
    rgba[:, :, 1] = np.arange(3)[:, None] * 100  # green grows downwards
    widget, plot, item = _shown(qtbot, rgba)
    assert item.image is rgba and item.shows(rgba)  # (kept, not copied)
    for r in range(3):
        for c in range(4):
            assert _colour_at(widget, plot, r, c) == (c * 60, r * 100, 0)
    rgba[1] = (0, 0, 255, 255)
    item.update_rows(1, 1)
    qtbot.wait(10)
    assert _colour_at(widget, plot, 1, 2) == (0, 0, 255)
    assert _colour_at(widget, plot, 0, 2) == (120, 0, 0) and _colour_at(widget, plot, 2, 2) == (120, 200, 0)


def test_a_new_image_of_another_size_covers_its_own_cells(qtbot):
    rgba = np.full((2, 2, 4), 255, np.uint8)
    widget, plot, item = _shown(qtbot, rgba)
    bigger = np.zeros((5, 3, 4), np.uint8)
    item.set_image(bigger)
    assert item.boundingRect().getRect() == (-0.5, -0.5, 3, 5)
    strided = np.zeros((4, 4, 4), np.uint8)[:, ::2]  # not contiguous: shown from a copy
    item.set_image(strided)
    assert not item.shows(strided) and item.image.shape == (4, 2, 4)
