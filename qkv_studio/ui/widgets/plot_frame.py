"""A plot built from pyqtgraph's public pieces: a ViewBox framed by four axes and a title.

``pg.PlotItem`` builds its "Plot Options" form (a QWidget with ~40 controls, a QMenu and a widget group)
in its constructor, whatever ``enableMenu`` says: ~7 ms a plot, five plots at start-up, for a menu the
app never opens.  :class:`PlotFrame` lays out what the app uses of a plot — the ViewBox, an
``AxisItem`` on each side linked to it with ``AxisItem.linkToView``, a ``LabelItem`` title — in a
``QGraphicsGridLayout`` at PlotItem's places, and answers the part of PlotItem's interface the panels
call (``getAxis``, ``showAxis``, ``showGrid``, ``addItem``, ``setTitle``, the ViewBox's range methods…),
so it goes wherever a PlotItem went: a ``GraphicsLayoutWidget`` cell or ``pg.PlotWidget(plotItem=…)``.

Build every plot of the app with :func:`plot_frame` (``plot_cache.plot_item`` is the same call with the
app's remembering axes); a PlotItem method the frame lacks is added here, delegating to the ViewBox or
the axes, never by falling back to PlotItem.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGraphicsGridLayout, QGraphicsItem, QSizePolicy

SIDES = ("left", "right", "top", "bottom")
# (row, column) of each part in the grid, as PlotItem places them: title, top axis, view, bottom axis.
_PLACES = {"top": (1, 1), "bottom": (3, 1), "left": (2, 0), "right": (2, 2)}
_VIEW_PLACE = (2, 1)
_TITLE_ROW = 0
_TITLE_HEIGHT = 30
_GRID_ALPHA = 128  # (PlotItem's default grid opacity, of 255)

# The ViewBox's own methods a PlotItem passes through unchanged (pyqtgraph's list, PlotItem.py).
_VIEW_METHODS = (
    "setXRange", "setYRange", "setXLink", "setYLink", "setAutoPan", "setAutoVisible", "setDefaultPadding",
    "setRange", "autoRange", "viewRect", "viewRange", "setMouseEnabled", "setLimits", "enableAutoRange",
    "disableAutoRange", "setAspectLocked", "invertY", "invertX", "register", "unregister",
)


class PlotFrame(pg.GraphicsWidget):
    """A ViewBox with four axes and a title, laid out as ``pg.PlotItem`` lays them out, without its form.

    Signals (re-emitted from the ViewBox, as PlotItem does): ``sigRangeChanged(view, range)``,
    ``sigXRangeChanged(view, range)``, ``sigYRangeChanged(view, range)``, ``sigRangeChangedManually(mask)``.
    ``axisItems`` gives the axes to use (any sides left out get a plain ``pg.AxisItem``); as in a
    PlotItem, the left and bottom axes and the given ones are shown.
    """

    sigRangeChanged = Signal(object, object)
    sigXRangeChanged = Signal(object, object)
    sigYRangeChanged = Signal(object, object)
    sigRangeChangedManually = Signal(object)

    def __init__(self, parent=None, *, viewBox: pg.ViewBox | None = None,  # noqa: N803 - PlotItem's names
                 axisItems: dict[str, pg.AxisItem] | None = None, enableMenu: bool = False) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        # (named ``layout`` as in PlotItem: callers set its margins and fixed widths)
        self.layout = grid = QGraphicsGridLayout()
        grid.setContentsMargins(1, 1, 1, 1)
        grid.setHorizontalSpacing(0)
        grid.setVerticalSpacing(0)
        self.setLayout(grid)
        self.vb = pg.ViewBox(parent=self, enableMenu=enableMenu) if viewBox is None else viewBox
        self._menu_enabled = enableMenu
        self.vb.setMenuEnabled(enableMenu)
        for name in ("sigRangeChanged", "sigXRangeChanged", "sigYRangeChanged", "sigRangeChangedManually"):
            getattr(self.vb, name).connect(getattr(self, name))
        grid.addItem(self.vb, *_VIEW_PLACE)
        self.items: list = []
        self.axes: dict[str, dict] = {}
        self.setAxisItems(axisItems)
        self.titleLabel = pg.LabelItem("", size="11pt", parent=self)
        grid.addItem(self.titleLabel, _TITLE_ROW, 1)
        self.setTitle(None)
        for i in range(4):
            grid.setRowPreferredHeight(i, 0)
            grid.setRowMinimumHeight(i, 0)
            grid.setRowSpacing(i, 0)
            grid.setRowStretchFactor(i, 1)
        for i in range(3):
            grid.setColumnPreferredWidth(i, 0)
            grid.setColumnMinimumWidth(i, 0)
            grid.setColumnSpacing(i, 0)
            grid.setColumnStretchFactor(i, 1)
        grid.setRowStretchFactor(_VIEW_PLACE[0], 100)
        grid.setColumnStretchFactor(_VIEW_PLACE[1], 100)
        self._grid_alpha = _GRID_ALPHA
        self._grid = {"x": False, "y": False}

    # ---- parts ------------------------------------------------------------------------------------
    def getViewBox(self) -> pg.ViewBox:  # noqa: N802 - PlotItem's name
        return self.vb

    def getAxis(self, name: str) -> pg.AxisItem:  # noqa: N802
        """The axis on side ``name``; KeyError for a side that is not one of :data:`SIDES`."""
        return self.axes[name]["item"]

    def setAxisItems(self, axisItems: dict[str, pg.AxisItem] | None = None) -> None:  # noqa: N802,N803
        """Place these axes (replacing those on their sides; each shown) and make missing sides plain axes."""
        axisItems = axisItems or {}
        shown = {"left", "bottom", *axisItems}
        for side in SIDES:
            if side in self.axes:
                if side not in axisItems:
                    continue
                old = self.axes[side]["item"]
                self.layout.removeItem(old)
                if old.scene() is not None:
                    old.scene().removeItem(old)
                old.unlinkFromView()
            axis = axisItems.get(side) or pg.AxisItem(orientation=side, parent=self)
            axis.linkToView(self.vb)
            self.axes[side] = {"item": axis, "pos": _PLACES[side]}
            self.layout.addItem(axis, *_PLACES[side])
            # above images (z 0), below what is meant to draw over the axes (z ≥ 1)
            axis.setZValue(0.5)
            axis.setFlag(QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent)
            self.showAxis(side, side in shown)

    def showAxis(self, axis: str, show: bool = True) -> None:  # noqa: N802
        """Show or hide the axis on side ``axis``.  Through ``AxisItem.show``/``hide``, as PlotItem does,
        never ``setVisible``: those also resize the axis (a hidden one to 0), and a grid layout keeps
        the room of a hidden item that did not shrink (35 px of a hidden right axis, 20 of a bottom one)."""
        item = self.getAxis(axis)
        if show:
            item.show()
        else:
            item.hide()

    def hideAxis(self, axis: str) -> None:  # noqa: N802
        self.showAxis(axis, False)

    def setLabel(self, axis: str, *args, **kwargs) -> None:  # noqa: N802
        """The title of one axis (``AxisItem.setLabel``'s arguments); shows that axis."""
        self.getAxis(axis).setLabel(*args, **kwargs)
        self.showAxis(axis)

    def setTitle(self, title: str | None = None, **args) -> None:  # noqa: N802
        """The plot's title (``LabelItem.setText``'s arguments), or None to hide it and its row."""
        if title is None:
            self.titleLabel.setVisible(False)
            self.layout.setRowFixedHeight(_TITLE_ROW, 0)
            self.titleLabel.setMaximumHeight(0)
        else:
            self.titleLabel.setMaximumHeight(_TITLE_HEIGHT)
            self.layout.setRowFixedHeight(_TITLE_ROW, _TITLE_HEIGHT)
            self.titleLabel.setVisible(True)
            self.titleLabel.setText(title, **args)

    def showGrid(self, x: bool | None = None, y: bool | None = None, alpha: float | None = None) -> None:  # noqa: N802
        """Grid lines across the view from the bottom/top (``x``) and left/right (``y``) axes, as PlotItem."""
        if x is None and y is None and alpha is None:
            raise ValueError("Must specify at least one of x, y, or alpha.")
        if x is not None:
            self._grid["x"] = bool(x)
        if y is not None:
            self._grid["y"] = bool(y)
        if alpha is not None:
            self._grid_alpha = int(min(max(alpha, 0.0), 1.0) * 255)
        gx = self._grid_alpha if self._grid["x"] else False
        gy = self._grid_alpha if self._grid["y"] else False
        for side, value in (("top", gx), ("bottom", gx), ("left", gy), ("right", gy)):
            self.getAxis(side).setGrid(value)

    # ---- items ------------------------------------------------------------------------------------
    def addItem(self, item, *args, **kwargs) -> None:  # noqa: N802
        """Add a graphics item to the view box (``ignoreBounds=`` as in ``ViewBox.addItem``)."""
        if item in self.items:
            return
        self.items.append(item)
        vb_args = {"ignoreBounds": kwargs["ignoreBounds"]} if "ignoreBounds" in kwargs else {}
        self.vb.addItem(item, *args, **vb_args)

    def removeItem(self, item) -> None:  # noqa: N802
        if item not in self.items:
            return
        self.items.remove(item)
        self.vb.removeItem(item)

    def listDataItems(self) -> list:  # noqa: N802
        return [item for item in self.items if hasattr(item, "implements") and item.implements("plotData")]

    def clear(self) -> None:
        for item in self.items[:]:
            self.removeItem(item)

    # ---- menus and buttons (the frame has neither: these keep PlotItem's calls working) ----------
    def setMenuEnabled(self, enableMenu: bool = True, enableViewBoxMenu="same") -> None:  # noqa: N802,N803
        self._menu_enabled = enableMenu
        if enableViewBoxMenu is None:
            return
        self.vb.setMenuEnabled(enableMenu if enableViewBoxMenu == "same" else enableViewBoxMenu)

    def menuEnabled(self) -> bool:  # noqa: N802
        """Always answered, never shown: the frame adds no options of its own to the view box's menu."""
        return self._menu_enabled

    def hideButtons(self) -> None:  # noqa: N802
        """(PlotItem's "A" auto-range button: the frame has none.)"""

    def showButtons(self) -> None:  # noqa: N802
        """(PlotItem's "A" auto-range button: the frame has none.)"""


def _view_method(name: str):
    def method(self, *args, **kwargs):
        return getattr(self.vb, name)(*args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``ViewBox.{name}`` of this frame's view box."
    return method


for _name in _VIEW_METHODS:
    setattr(PlotFrame, _name, _view_method(_name))
del _name


def plot_frame(**kwargs) -> PlotFrame:
    """A :class:`PlotFrame` (keyword arguments as its constructor's)."""
    return PlotFrame(**kwargs)
