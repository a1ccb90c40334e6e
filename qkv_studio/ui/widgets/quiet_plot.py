"""A pyqtgraph PlotItem that builds its "Plot Options" form only if something asks for it.

Every ``pg.PlotItem`` builds, as it is made, the options form of its context menu: about thirty
widgets (check boxes, spin boxes, a list, six group boxes), six sub-menus and a WidgetGroup that walks
them — ~8 ms a plot, ~40 ms of start-up for the window's five plots (the heatmap, its colour legend,
the vector plane, the blend view's two), and Qt polishes those hidden widgets again before the first
paint.  None of the window's plots shows that menu (their menus are off), so :class:`QuietPlotItem`
makes the form the first time anything reads ``ctrl``, ``ctrlMenu`` or ``stateGroup`` — pyqtgraph's
own code included — (and its title label the first time ``titleLabel`` is read) and answers the two calls the window's plots make that would otherwise read it
(``showGrid``, and adding or removing an item that is not a PlotDataItem) without it.

Its constructor is PlotItem's (pyqtgraph 0.14.0, pinned in pyproject.toml) without the form;
``tests/ui/test_quiet_plot.py`` checks that both make the same attributes, so an upgrade that adds
one fails a test instead of a plot.
"""

from __future__ import annotations

import weakref

import numpy as np
import pyqtgraph as pg
from pyqtgraph import functions as fn
from pyqtgraph import icons
from pyqtgraph.graphicsItems.ButtonItem import ButtonItem
from pyqtgraph.graphicsItems.PlotItem import plotConfigTemplate_generic as ui_template
from pyqtgraph.WidgetGroup import WidgetGroup
from PySide6.QtWidgets import QGraphicsGridLayout, QMenu, QSizePolicy, QWidget, QWidgetAction

_GRID_ALPHA = 128  # the options form's default grid opacity (0–255)


class QuietPlotItem(pg.PlotItem):
    """``pg.PlotItem`` whose options form (``ctrl``, ``ctrlMenu``, ``stateGroup``) is built on first use."""

    def __init__(self, parent=None, name=None, labels=None, title=None, viewBox=None, axisItems=None,  # noqa: N803
                 enableMenu=True, **kwargs) -> None:  # noqa: N803 - pyqtgraph's names
        self._ctrl = None
        self._ctrl_menu = None
        self._state_group = None
        self._grid = [False, False, _GRID_ALPHA]  # x, y, alpha: what the form's grid group would hold
        pg.GraphicsWidget.__init__(self, parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.autoBtn = ButtonItem(icons.getGraphPixmap("auto"), 14, self)
        self.autoBtn.mode = "auto"
        self.autoBtn.clicked.connect(self.autoBtnClicked)
        self.buttonsHidden = False
        self.mouseHovering = False
        self.layout = QGraphicsGridLayout()
        self.layout.setContentsMargins(1, 1, 1, 1)
        self.setLayout(self.layout)
        self.layout.setHorizontalSpacing(0)
        self.layout.setVerticalSpacing(0)
        if viewBox is None:
            viewBox = pg.ViewBox(parent=self, enableMenu=enableMenu)
        self.vb = viewBox
        self.vb.sigStateChanged.connect(self.viewStateChanged)
        self.setMenuEnabled(enableMenu, None)
        if name is not None:
            self.vb.register(name)
        self.vb.sigRangeChanged.connect(self.sigRangeChanged)
        self.vb.sigXRangeChanged.connect(self.sigXRangeChanged)
        self.vb.sigYRangeChanged.connect(self.sigYRangeChanged)
        self.vb.sigRangeChangedManually.connect(self.sigRangeChangedManually)
        self.layout.addItem(self.vb, 2, 1)
        self.alpha = 1.0
        self.autoAlpha = True
        self.spectrumMode = False
        self.legend = None
        self.axes = {}
        self.setAxisItems(axisItems)
        self._title_label = None  # (made when a title is first set: see titleLabel)
        self.layout.setRowFixedHeight(0, 0)  # (what setTitle(None) does to the title's row)
        for i in range(4):
            self.layout.setRowPreferredHeight(i, 0)
            self.layout.setRowMinimumHeight(i, 0)
            self.layout.setRowSpacing(i, 0)
            self.layout.setRowStretchFactor(i, 1)
        for i in range(3):
            self.layout.setColumnPreferredWidth(i, 0)
            self.layout.setColumnMinimumWidth(i, 0)
            self.layout.setColumnSpacing(i, 0)
            self.layout.setColumnStretchFactor(i, 1)
        self.layout.setRowStretchFactor(2, 100)
        self.layout.setColumnStretchFactor(1, 100)
        self.items = []
        self.curves = []
        self.itemMeta = weakref.WeakKeyDictionary()
        self.dataItems = []
        self.paramList = {}
        self.avgCurves = {}
        self.avgPen = fn.mkPen((0, 200, 0))
        self.avgShadowPen = fn.mkPen((0, 0, 0), width=4)
        self.fileDialog = None
        labels = {} if labels is None else labels
        for label in list(self.axes.keys()):
            if label in kwargs:
                labels[label] = kwargs.pop(label)
        for k in labels:
            if isinstance(labels[k], str):
                labels[k] = (labels[k],)
            self.setLabel(k, *labels[k])
        if title is not None:
            self.setTitle(title)
        if kwargs:
            self.plot(**kwargs)

    # ---- the title label, on first use ---------------------------------------------------------------
    @property
    def titleLabel(self) -> pg.LabelItem:  # noqa: N802 - pyqtgraph's name
        """pyqtgraph's title label, made the first time it is asked for (none of the window's plots has
        a title, and each made one: a rich-text item laid out for an empty span)."""
        if self._title_label is None:
            self._title_label = label = pg.LabelItem("", size="11pt", parent=self)
            self.layout.addItem(label, 0, 1)
            label.setVisible(False)
            label.setMaximumHeight(0)
        return self._title_label

    @titleLabel.setter
    def titleLabel(self, item: pg.LabelItem) -> None:  # noqa: N802 - pyqtgraph's name
        self._title_label = item

    # ---- the options form, on first use ------------------------------------------------------------
    def _build_options(self) -> None:
        """What PlotItem's constructor does for its options form and menu, with the grid as set so far."""
        w = QWidget()
        self._ctrl = c = ui_template.Ui_Form()
        c.setupUi(w)
        groups = [("Transforms", c.transformGroup), ("Downsample", c.decimateGroup),
                  ("Average", c.averageGroup), ("Alpha", c.alphaGroup), ("Grid", c.gridGroup),
                  ("Points", c.pointsGroup)]
        self._ctrl_menu = QMenu("Plot Options")
        for name, group in groups:
            sub = self._ctrl_menu.addMenu(name)
            action = QWidgetAction(self)
            action.setDefaultWidget(group)
            sub.addAction(action)
        self._state_group = WidgetGroup()
        for _, group in groups:
            self._state_group.autoAdd(group)
        x, y, alpha = self._grid
        c.xGridCheck.setChecked(bool(x))
        c.yGridCheck.setChecked(bool(y))
        c.gridAlphaSlider.setValue(int(alpha))
        for signal, slot in (
                (c.alphaGroup.toggled, self.updateAlpha), (c.alphaSlider.valueChanged, self.updateAlpha),
                (c.autoAlphaCheck.toggled, self.updateAlpha), (c.xGridCheck.toggled, self.updateGrid),
                (c.yGridCheck.toggled, self.updateGrid), (c.gridAlphaSlider.valueChanged, self.updateGrid),
                (c.fftCheck.toggled, self.updateSpectrumMode),
                (c.subtractMeanCheck.toggled, self.updateSubtractMeanMode),
                (c.logXCheck.toggled, self.updateLogMode), (c.logYCheck.toggled, self.updateLogMode),
                (c.derivativeCheck.toggled, self.updateDerivativeMode),
                (c.phasemapCheck.toggled, self.updatePhasemapMode),
                (c.downsampleSpin.valueChanged, self.updateDownsampling),
                (c.downsampleCheck.toggled, self.updateDownsampling),
                (c.autoDownsampleCheck.toggled, self.updateDownsampling),
                (c.subsampleRadio.toggled, self.updateDownsampling),
                (c.meanRadio.toggled, self.updateDownsampling),
                (c.clipToViewCheck.toggled, self.updateDownsampling),
                (c.avgParamList.itemClicked, self.avgParamListClicked),
                (c.averageGroup.toggled, self.avgToggled),
                (c.maxTracesCheck.toggled, self._handle_max_traces_toggle),
                (c.forgetTracesCheck.toggled, self.updateDecimation),
                (c.maxTracesSpin.valueChanged, self.updateDecimation)):
            signal.connect(slot)

    def _built(self) -> "QuietPlotItem":
        if self._ctrl is None:
            self._build_options()
        return self

    @property
    def ctrl(self):
        """The options form (built now if it was not)."""
        return self._built()._ctrl

    @property
    def ctrlMenu(self):  # noqa: N802 - pyqtgraph's name
        return self._built()._ctrl_menu

    @ctrlMenu.setter
    def ctrlMenu(self, menu) -> None:  # noqa: N802 - (PlotItem.close sets it to None)
        self._ctrl_menu = menu

    @property
    def stateGroup(self):  # noqa: N802 - pyqtgraph's name
        return self._built()._state_group

    def options_built(self) -> bool:
        """True once the options form exists."""
        return self._ctrl is not None

    # ---- calls the window's plots make, answered without the form --------------------------------
    def showGrid(self, x=None, y=None, alpha=None) -> None:  # noqa: N802 - pyqtgraph's name
        if self._ctrl is not None:
            return super().showGrid(x, y, alpha)
        if x is None and y is None and alpha is None:
            raise ValueError("Must specify at least one of x, y, or alpha.")
        if x is not None:
            self._grid[0] = bool(x)
        if y is not None:
            self._grid[1] = bool(y)
        if alpha is not None:
            self._grid[2] = int(float(np.clip(alpha, 0, 1)) * 255)
        gx = self._grid[2] if self._grid[0] else False
        gy = self._grid[2] if self._grid[1] else False
        for side, grid in (("top", gx), ("bottom", gx), ("left", gy), ("right", gy)):
            self.getAxis(side).setGrid(grid)

    def addItem(self, item, *args, **kwargs) -> None:  # noqa: N802 - pyqtgraph's name
        # PlotItem reads the form for an item's log mode (off until the form is used) and to set up a
        # PlotDataItem (alpha, FFT, downsampling, averaging): only those need it.
        if self._ctrl is not None or isinstance(item, pg.PlotDataItem) or item in self.items:
            return super().addItem(item, *args, **kwargs)
        self.items.append(item)
        vbargs = {"ignoreBounds": kwargs["ignoreBounds"]} if "ignoreBounds" in kwargs else {}
        self.vb.addItem(item, *args, **vbargs)
        name = None
        if hasattr(item, "implements") and item.implements("plotData"):
            name = item.name()
            self.dataItems.append(item)
            self.itemMeta[item] = kwargs.get("params", {})
            self.curves.append(item)
        if hasattr(item, "setLogMode"):
            item.setLogMode(False, False)
        if name is not None and self.legend is not None:
            self.legend.addItem(item, name=name)

    def removeItem(self, item) -> None:  # noqa: N802 - pyqtgraph's name
        # (PlotItem then re-reads the form's decimation and averaging: PlotDataItems only)
        if self._ctrl is not None or isinstance(item, pg.PlotDataItem) or item not in self.items:
            return super().removeItem(item)
        self.items.remove(item)
        if item in self.dataItems:
            self.dataItems.remove(item)
        self.vb.removeItem(item)
        if item in self.curves:
            self.curves.remove(item)
        if self.legend is not None:
            self.legend.removeItem(item)
