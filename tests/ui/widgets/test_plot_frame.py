"""PlotFrame: a plot from pyqtgraph's public pieces, laid out and behaving as a PlotItem, without its form."""

import gc

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from qkv_studio.ui.widgets.plot_cache import LegendBar, RememberingAxis, plot_item, remembering_axes, show_only
from qkv_studio.ui.widgets.plot_frame import SIDES, PlotFrame


def _widgets() -> int:
    """How many widgets exist (after earlier tests' leftovers are gone, so that none goes meanwhile)."""
    gc.collect()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return len(QApplication.allWidgets())


def test_a_plot_builds_no_widgets_while_a_plot_item_builds_its_options_form(qtbot):
    before = _widgets()
    enabled = gc.isenabled()
    gc.disable()  # (no leftover of an earlier test may go while the plots are built)
    try:
        frame, legend = plot_item(), LegendBar(values=(0, 1), width=22, label="")
        made = len(QApplication.allWidgets()) - before
        item = pg.PlotItem(enableMenu=False)  # (the form this saves: a QMenu, a QWidget of ~40 controls)
        made_by_item = len(QApplication.allWidgets()) - before - made
    finally:
        if enabled:
            gc.enable()
    assert made == 0 and isinstance(frame, PlotFrame) and isinstance(legend, PlotFrame)
    assert made_by_item > 10
    del item


def test_the_axes_follow_the_view_and_only_the_asked_ones_show(qtbot):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plot = plot_item()
    widget.addItem(plot)
    widget.resize(400, 300)
    widget.show()
    qtbot.waitExposed(widget)
    assert {s for s in SIDES if plot.getAxis(s).isVisible()} == {"left", "right", "top", "bottom"}  # (given)
    for side in ("right", "top"):
        plot.hideAxis(side)
    assert {s for s, a in plot.axes.items() if a["item"].isVisible()} == {"left", "bottom"}
    assert all(isinstance(plot.getAxis(s), RememberingAxis) for s in SIDES)
    plot.setXRange(2, 5, padding=0)
    plot.setYRange(-1, 1, padding=0)
    assert plot.getAxis("bottom").range == pytest.approx([2, 5])
    assert plot.getAxis("left").range == pytest.approx([-1, 1])
    assert plot.viewRange() == [pytest.approx([2, 5]), pytest.approx([-1, 1])]
    # the view sits inside the axes: left of it the left axis, under it the bottom one
    plot.layout.activate()
    view = plot.getViewBox().geometry()
    assert view.width() > 200 and view.height() > 150
    assert plot.getAxis("left").geometry().right() == pytest.approx(view.left())
    assert plot.getAxis("bottom").geometry().top() == pytest.approx(view.bottom())
    with pytest.raises(KeyError):
        plot.getAxis("middle")



def _laid_out(qtbot, item, size=(400, 300)) -> pg.GraphicsLayoutWidget:
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.addItem(item)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    item.layout.activate()
    return widget


@pytest.mark.parametrize("shown", [("left", "top"), ("left", "bottom"), ("right",), ()])
def test_hidden_axes_give_their_room_to_the_view_as_in_a_plot_item(qtbot, shown):
    # (a hidden axis that kept its 35 px or 20 px squeezed the heatmap below what its labels were laid out for)
    frame, item = plot_item(), pg.PlotItem(axisItems=remembering_axes(), enableMenu=False)
    widgets = []  # (kept: a widget let go deletes its plot)
    for plot in (frame, item):
        widgets.append(_laid_out(qtbot, plot))
        show_only(plot, *shown)
        if "left" in shown:
            plot.setLabel("left", "query")
        plot.layout.activate()
    for side in SIDES:
        assert frame.getAxis(side).isVisible() == (side in shown)
        assert frame.getAxis(side).geometry() == item.getAxis(side).geometry(), side
        if side not in shown:
            axis = frame.getAxis(side)
            assert (axis.width() if side in ("left", "right") else axis.height()) == 0
    assert frame.getViewBox().geometry() == item.getViewBox().geometry()
    # the view and the shown axes fill the plot (inside its 1 px margins): a hidden axis takes nothing
    view, axes = frame.getViewBox().geometry(), {s: frame.getAxis(s).geometry() for s in shown}
    across = sum(axes[s].width() for s in ("left", "right") if s in axes)
    down = sum(axes[s].height() for s in ("top", "bottom") if s in axes)
    assert view.width() + across == pytest.approx(frame.geometry().width() - 2)
    assert view.height() + down == pytest.approx(frame.geometry().height() - 2)


def test_a_legend_is_laid_out_as_a_colour_bar(qtbot):
    legend, bar = LegendBar(values=(0, 1), width=22, label="weight"), pg.ColorBarItem(
        values=(0, 1), width=22, label="weight", interactive=False, colorMapMenu=False)
    widgets = [_laid_out(qtbot, plot, size=(120, 300)) for plot in (legend, bar)]  # noqa: F841 - kept alive
    for side in SIDES:
        assert legend.getAxis(side).geometry() == bar.getAxis(side).geometry(), side
    assert legend.getViewBox().geometry() == bar.getViewBox().geometry()

def test_title_grid_items_and_menus_behave_as_in_a_plot_item(qtbot):
    plot = PlotFrame()
    assert not plot.titleLabel.isVisible() and not plot.menuEnabled() and not plot.getViewBox().menuEnabled()
    plot.setTitle("weights")
    assert plot.titleLabel.text == "weights" and plot.titleLabel.isVisible()
    plot.setTitle(None)
    assert not plot.titleLabel.isVisible()
    plot.showGrid(x=True, y=True, alpha=1.0)
    assert [plot.getAxis(s).grid for s in SIDES] == [255, 255, 255, 255]
    plot.showGrid(y=False)
    assert [plot.getAxis(s).grid for s in ("left", "right", "top", "bottom")] == [False, False, 255, 255]
    with pytest.raises(ValueError):
        plot.showGrid()
    curve = pg.PlotCurveItem([0, 1], [0, 1])
    plot.addItem(curve)
    plot.addItem(curve)  # (once only)
    assert plot.items == [curve] and curve.getViewBox() is plot.getViewBox() and plot.listDataItems() == [curve]
    plot.removeItem(curve)
    assert plot.items == [] and curve.getViewBox() is None
    plot.setLabel("bottom", "key")
    assert plot.getAxis("bottom").labelText == "key"


def test_a_plot_widget_takes_a_frame_as_its_plot(qtbot):
    box = pg.ViewBox(enableMenu=False)
    widget = pg.PlotWidget(plotItem=plot_item(viewBox=box))
    qtbot.addWidget(widget)
    assert widget.getPlotItem().getViewBox() is box
    ranges = []
    widget.sigRangeChanged.connect(lambda _w, r: ranges.append(r))
    widget.setXRange(0, 10, padding=0)
    assert ranges and ranges[-1][0] == pytest.approx([0, 10])


def test_a_legend_shows_its_levels_on_its_scale(qtbot):
    bar = LegendBar(values=(0, 1), width=22, label="weight")
    assert bar.axis is bar.getAxis("right") and bar.axis.range == pytest.approx([0, 1])
    assert bar.getAxis("left").labelText == "weight"
    bar.setLevels((-3, 3))
    assert bar.levels() == (-3, 3) and bar.axis.range == pytest.approx([-3, 3])
    bar.setLevels(high=5)
    assert bar.levels() == (-3, 5)
    bar.setLevels((4, 2))  # reversed: collapses to its middle, as ColorBarItem does
    assert bar.levels() == (3, 3)
    with pytest.raises(ValueError, match="no handles"):
        LegendBar(interactive=True)
