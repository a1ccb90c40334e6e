"""Plots keep their cached pictures while hidden, paint opaquely, and the pixmap cache fits the screen."""

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPixmapCache
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsView, QVBoxLayout, QWidget

from qkv_studio.ui.widgets.plot_cache import cache_axes, plot_item
from qkv_studio.ui.widgets.view_caches import (
    SCREENS_OF_PIXMAPS,
    fit_pixmap_cache,
    keep_caches_while_hidden,
    paint_opaquely,
)


def _plot(qtbot, keep: bool):
    """A shown, active window with a gridded plot whose axes are drawn from device caches: (window,
    plot, a list with an entry for each time the left axis was drawn into its cache)."""
    window = QWidget()
    qtbot.addWidget(window)
    plot = pg.PlotWidget(plotItem=plot_item())
    plot.setBackground("#ffffff")
    plot.showGrid(x=True, y=True, alpha=0.2)
    cache_axes(plot.getPlotItem())
    if keep:
        keep_caches_while_hidden(plot)
    QVBoxLayout(window).addWidget(plot)
    window.resize(500, 400)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    drawn = []
    axis = plot.getAxis("left")
    paint = axis.paint
    axis.paint = lambda p, *args: (drawn.append(1), paint(p, *args))
    plot.viewport().repaint()
    return window, plot, drawn


def _hide_and_show(plot) -> None:
    plot.hide()
    QApplication.processEvents()
    plot.show()
    QApplication.processEvents()
    plot.viewport().repaint()


def test_a_plot_hidden_and_shown_again_is_drawn_from_its_caches(qtbot):
    window, plot, drawn = _plot(qtbot, keep=True)
    assert drawn  # (drawn once into its cache)
    drawn.clear()
    plot.viewport().repaint()
    assert not drawn  # (a repaint replays the cache)
    _hide_and_show(plot)
    assert not drawn
    assert plot.scene().isActive()  # (as if the view had stayed)


def test_without_it_the_hidden_view_tells_its_scene_and_the_axis_is_drawn_again(qtbot):
    # (the control: what keep_caches_while_hidden keeps from the scene is what made it draw again)
    window, plot, drawn = _plot(qtbot, keep=False)
    drawn.clear()
    _hide_and_show(plot)
    assert drawn
    assert plot.scene().isActive()


def test_the_windows_own_activation_still_reaches_the_scene(qtbot):
    window, plot, drawn = _plot(qtbot, keep=True)
    _hide_and_show(plot)
    scene = plot.scene()
    assert scene.isActive()
    QApplication.sendEvent(plot.viewport(), QEvent(QEvent.Type.WindowDeactivate))
    assert not scene.isActive()
    QApplication.sendEvent(plot.viewport(), QEvent(QEvent.Type.WindowActivate))
    assert scene.isActive()
    _hide_and_show(plot)  # (and a hide after them is kept from it again)
    assert scene.isActive()


def test_an_opaque_plot_looks_the_same(qtbot):
    window, plot, _ = _plot(qtbot, keep=True)
    before = plot.grab().toImage()
    paint_opaquely(plot)
    assert plot.viewport().testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    assert plot.cacheMode() == QGraphicsView.CacheModeFlag.CacheNone
    plot.viewport().repaint()
    assert plot.grab().toImage() == before


@pytest.fixture
def cache_limit():
    limit = QPixmapCache.cacheLimit()
    yield
    QPixmapCache.setCacheLimit(limit)


def test_the_pixmap_cache_holds_screenfuls_of_the_screen_and_never_shrinks(qapp, cache_limit):
    screen = qapp.primaryScreen()
    size, ratio = screen.size(), screen.devicePixelRatio()
    need = int(SCREENS_OF_PIXMAPS * size.width() * size.height() * ratio * ratio * 4 / 1024)
    QPixmapCache.setCacheLimit(1024)
    assert fit_pixmap_cache(screen) == need == QPixmapCache.cacheLimit()
    QPixmapCache.setCacheLimit(need * 3)
    assert fit_pixmap_cache(screen) == need * 3 == QPixmapCache.cacheLimit()
    assert fit_pixmap_cache(None) == need * 3


def test_a_cached_item_is_still_an_item_of_the_scene(qtbot):
    # (keeping a scene's activation does not keep anything from drawing: an item changed while its
    # view is hidden is drawn anew when shown)
    window, plot, _ = _plot(qtbot, keep=True)
    curve = pg.PlotCurveItem([0, 1], [0, 1])
    curve.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    plot.addItem(curve)
    plot.viewport().repaint()
    drawn = []
    paint = curve.paint
    curve.paint = lambda p, *args: (drawn.append(1), paint(p, *args))
    plot.hide()
    curve.setData([0, 1], [1, 0])
    plot.show()
    QApplication.processEvents()
    plot.viewport().repaint()
    assert drawn
