"""QuietPlotItem: a pyqtgraph PlotItem whose options form is built only when something asks for it."""

import pyqtgraph as pg

from qkv_studio.ui.widgets.quiet_plot import QuietPlotItem
from tests.views import LESSON_VIEW

FORM = {"ctrl", "ctrlMenu", "stateGroup"}


def test_it_has_what_a_plot_item_has_but_the_form(qtbot):
    plain, quiet = pg.PlotItem(), QuietPlotItem()
    ours = {"_ctrl", "_ctrl_menu", "_state_group", "_grid", "_title_label"}
    # (an upgrade of pyqtgraph that gives PlotItem a new attribute fails here, not in a plot)
    assert set(vars(plain)) - FORM - {"titleLabel"} == set(vars(quiet)) - ours
    assert not quiet.options_built() and quiet._title_label is None


def test_its_title_is_made_when_set_and_no_title_takes_no_room(qtbot):
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    plain, quiet = pg.PlotItem(), QuietPlotItem()
    widget.addItem(plain, row=0, col=0)
    widget.addItem(quiet, row=0, col=1)
    widget.resize(600, 300)
    widget.show()
    qtbot.waitExposed(widget)
    assert quiet.vb.geometry().height() == plain.vb.geometry().height()  # no title row in either
    quiet.setTitle("weights", size="12pt")
    plain.setTitle("weights", size="12pt")
    qtbot.wait(20)
    assert quiet.titleLabel.isVisible() and quiet.titleLabel.text == "weights"
    assert quiet.vb.geometry().height() == plain.vb.geometry().height() < 290
    quiet.setTitle(None)
    assert not quiet.titleLabel.isVisible()


def test_grid_set_before_the_form_is_what_the_form_then_shows(qtbot):
    plot = QuietPlotItem()
    plot.showGrid(x=True, y=True, alpha=0.25)
    assert not plot.options_built()
    assert plot.getAxis("bottom").grid == int(0.25 * 255) and plot.getAxis("left").grid == int(0.25 * 255)
    plot.showGrid(y=False)
    assert plot.getAxis("left").grid is False and plot.getAxis("top").grid == int(0.25 * 255)
    form = plot.ctrl  # built on first use, holding the grid as set
    assert plot.options_built()
    assert form.xGridCheck.isChecked() and not form.yGridCheck.isChecked()
    assert form.gridAlphaSlider.value() == int(0.25 * 255)
    form.yGridCheck.setChecked(True)  # and the form works as PlotItem's does
    assert plot.getAxis("right").grid == int(0.25 * 255)
    assert plot.ctrlMenu is not None and plot.stateGroup is not None


def test_curves_come_and_go_without_the_form_and_data_items_build_it(qtbot):
    plot = QuietPlotItem()
    curve = pg.PlotCurveItem([0, 1], [1, 0])
    plot.addItem(curve)
    assert curve in plot.items and curve in plot.curves
    assert curve.parentItem() is plot.vb.childGroup
    plot.removeItem(curve)
    assert curve not in plot.items and curve not in plot.curves and curve not in plot.vb.addedItems
    assert not plot.options_built()
    data = pg.PlotDataItem([0, 1, 2], [2, 1, 0])
    plot.addItem(data)  # PlotItem sets a data item up from the form: it is built for it
    assert plot.options_built() and data in plot.dataItems


def test_the_windows_plots_build_no_form_to_open(show_window, lesson_scene):
    window = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
    window.session.set_stage("output")
    window.apply_theme("projector")  # (the blend view then replaces its curves)
    plots = [window.heatmap.plot, window.heatmap.color_bar, window.plane.plot,
             window.blend.bars_plot.getPlotItem(), window.blend.values_plot.getPlotItem()]
    assert all(isinstance(p, QuietPlotItem) for p in plots)
    assert not any(p.options_built() for p in plots)
