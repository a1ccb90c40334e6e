"""Axes that keep their pictures: a range seen again is replayed, anything else drawn anew."""

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QFont

from qkv_studio.ui.widgets.plot_cache import LegendBar, RememberingAxis
from tests.views import LESSON_VIEW


def _paint(widget, axis, qtbot) -> None:
    axis.update()
    widget.grab()  # (paints the scene)


@pytest.mark.perf
def test_an_axis_replays_the_picture_of_a_range_it_showed_before(qtbot):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    bar = LegendBar(values=(0, 1), interactive=False, colorMapMenu=False)
    widget.addItem(bar)
    widget.resize(200, 400)
    widget.show()
    qtbot.waitExposed(widget)
    axis = bar.axis
    assert isinstance(axis, RememberingAxis)
    generated = []
    original = axis.generateDrawSpecs
    axis.generateDrawSpecs = lambda p: generated.append(tuple(axis.range)) or original(p)

    _paint(widget, axis, qtbot)
    generated.clear()
    bar.setLevels((-3, 3))
    _paint(widget, axis, qtbot)
    assert generated == [(-3, 3)]
    scores_look = widget.grab().toImage()
    bar.setLevels((0, 1))
    _paint(widget, axis, qtbot)
    assert widget.grab().toImage() != scores_look
    bar.setLevels((-3, 3))
    _paint(widget, axis, qtbot)
    assert generated == [(-3, 3)]  # both replayed
    assert widget.grab().toImage() == scores_look  # and what is replayed is what was drawn

    font = QFont()
    font.setPixelSize(30)
    axis.setStyle(tickFont=font)  # another look: drawn again
    _paint(widget, axis, qtbot)
    assert generated == [(-3, 3), (-3, 3)]


def test_the_legend_strip_shows_each_colour_map_again_without_building_it_again(qtbot):
    """Stepping to and from the softmax swaps the diverging and the sequential map: the strip is built
    once per map, from the cells' own table, and a map shown again shows its own colours and range."""
    from qkv_studio.render.colormaps import lut

    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    bar = LegendBar(values=(0, 1), interactive=False, colorMapMenu=False)
    widget.addItem(bar)

    def strip() -> tuple:
        image = bar.bar.pixmap().toImage()
        return tuple(image.pixelColor(0, y).name() for y in (0, image.height() // 2, image.height() - 1))

    bar.show_table("viridis", lut("viridis"))
    first, key = strip(), bar.bar.pixmap().cacheKey()
    assert first[0] == "#440154"  # (viridis's first colour: low values at row 0, as pyqtgraph builds it)
    bar.setLevels((-2, 2))
    bar.show_table("CET-CBD1", lut("CET-CBD1"))
    assert strip() != first and tuple(bar.axis.range) == (-2, 2)
    bar.setLevels((0, 1))
    bar.show_table("viridis", lut("viridis"))
    assert strip() == first and bar.bar.pixmap().cacheKey() == key  # the same pixmap, kept
    assert tuple(bar.axis.range) == (0, 1) and bar.strip_name == "viridis"


@pytest.mark.perf
def test_new_ticks_or_spacing_are_a_new_look_and_a_title_comes_back_as_it_was(qtbot):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plot = widget.addPlot(axisItems={"left": RememberingAxis("left")})
    widget.resize(300, 300)
    widget.show()
    qtbot.waitExposed(widget)
    axis = plot.getAxis("left")
    axis.setTicks([[(0, "the"), (1, "cat")]])
    _paint(widget, axis, qtbot)
    cat = widget.grab().toImage()
    assert axis.remembered() == 1
    axis.setTicks([[(0, "the"), (1, "mat")]])  # (the look's key is kept between these setters)
    _paint(widget, axis, qtbot)
    assert axis.remembered() == 2 and widget.grab().toImage() != cat
    axis.setTickSpacing(0.5, 0.1)
    _paint(widget, axis, qtbot)
    assert axis.remembered() == 3

    axis.setLabel("score q·k")
    tall = axis.label.boundingRect().height()
    axis.setLabel("softmax weight (0–1)")
    assert axis.label.toPlainText().strip() == "softmax weight (0–1)"
    axis.setLabel("score q·k")
    assert axis.label.toPlainText().strip() == "score q·k" and axis.label.boundingRect().height() == tall


@pytest.mark.perf
def test_an_axis_keeps_only_a_few_pictures(qtbot):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    bar = LegendBar(values=(0, 1), interactive=False, colorMapMenu=False)
    widget.addItem(bar)
    widget.show()
    qtbot.waitExposed(widget)
    for i in range(3 * RememberingAxis.KEEP):
        bar.setLevels((0, i + 1))
        _paint(widget, bar.axis, qtbot)
    assert bar.axis.remembered() == RememberingAxis.KEEP


def test_the_window_plots_show_only_their_own_axes_and_they_remember(qtbot, lesson_scene, show_window):
    window = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)

    def shown(plot) -> set[str]:
        return {side for side, axis in plot.axes.items() if axis["item"].isVisible()}

    assert shown(window.heatmap.plot) == {"left", "top"}
    for plot in (window.panels.plane.plot, window.panels.blend.bars_plot.getPlotItem(),
                 window.panels.blend.values_plot.getPlotItem()):
        assert shown(plot) == {"left", "bottom"}
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            assert isinstance(axis, RememberingAxis) and not axis.autoSIPrefix
    for plot in (window.heatmap.plot, window.heatmap.color_bar, window.panels.plane.plot,
                 window.panels.blend.bars_plot.getPlotItem(), window.panels.blend.values_plot.getPlotItem()):
        assert not plot.menuEnabled() and not plot.getViewBox().menuEnabled()  # no menu to open


def test_a_grid_follows_its_plot_when_only_the_plot_widens(qtbot):
    """An axis with a grid draws lines across its view: a wider view (same range, same axis size) is a
    new look, not the narrower picture replayed (the blend view's grid stopped short after a resize)."""
    import numpy as np

    from qkv_studio.ui.widgets.plot_cache import cache_axes, remembering_axes, show_only

    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.setBackground("k")
    plot = widget.addPlot(axisItems=remembering_axes())
    show_only(plot, "left", "bottom")
    cache_axes(plot)
    plot.showGrid(x=True, y=True, alpha=1.0)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 1, padding=0)
    widget.resize(400, 300)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(20)
    widget.resize(700, 300)
    qtbot.wait(20)

    def grid_rows(x: int) -> list[int]:
        image = widget.grab().toImage()
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4)
        return np.flatnonzero(pixels[:, x, :3].astype(int).sum(axis=1) > 150).tolist()

    near, far = grid_rows(150), grid_rows(600)
    assert len(near) >= 5 and far == near


def test_an_axis_bounding_rect_follows_its_geometry_and_style(qtbot):
    """The kept bounding rectangle of an axis without a grid is pyqtgraph's own, after a resize and
    after a style change (tick length, overhanging labels)."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plot = widget.addPlot(axisItems={"left": RememberingAxis("left"), "bottom": RememberingAxis("bottom")})
    widget.resize(300, 200)
    widget.show()
    qtbot.waitExposed(widget)
    for axis in (plot.getAxis("left"), plot.getAxis("bottom")):
        assert axis.boundingRect() == pg.AxisItem.boundingRect(axis)
        before = axis.boundingRect()
        axis.setStyle(tickLength=-12, hideOverlappingLabels=False)
        assert axis.boundingRect() == pg.AxisItem.boundingRect(axis) != before
    widget.resize(500, 350)
    qtbot.wait(20)
    for axis in (plot.getAxis("left"), plot.getAxis("bottom")):
        assert axis.boundingRect() == pg.AxisItem.boundingRect(axis)
    plot.showGrid(x=True, y=True)  # (a grid reaches across the view: asked of pyqtgraph each time)
    left = plot.getAxis("left")
    assert left.boundingRect() == pg.AxisItem.boundingRect(left) != left._bounds[1]
