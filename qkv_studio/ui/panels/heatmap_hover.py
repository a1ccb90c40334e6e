"""The heatmap's hover read-out: the cell under the pointer, worked out, as a tooltip.

The text comes from :func:`qkv_studio.core.cell_readout.cell_readout` (the maths lives in core); this
module only finds the cell under the pointer, shows the text at the panel's text size (a tooltip also
shows over a full-screen presentation) and tells the view which cell is hovered, so it can outline it
and always name its row and column.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable

from PySide6.QtCore import QObject, QPointF, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QToolTip

import pyqtgraph as pg

from qkv_studio.core.cell_readout import cell_readout
from qkv_studio.state.session import Session


class CellHover(QObject):
    """Follows the pointer over ``plot``'s cells; ``hovered`` is (row, col) or None."""

    #: The hovered cell changed: (row, col), or (-1, -1) when the pointer left the matrix.
    cell_changed = Signal(int, int)

    def __init__(self, session: Session, plot: pg.PlotItem, graphics: pg.GraphicsLayoutWidget,
                 n: Callable[[], int], text_px: Callable[[], int], shown_stage: Callable[[], str],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session, self._plot, self._graphics = session, plot, graphics
        self._n, self._text_px, self._stage = n, text_px, shown_stage
        self.hovered: tuple[int, int] | None = None
        graphics.scene().sigMouseMoved.connect(self.move_to)

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        """The (row, col) under a scene position, or None outside the matrix."""
        vb = self._plot.vb
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        pt = vb.mapSceneToView(scene_pos)
        row, col = int(math.floor(pt.y() + 0.5)), int(math.floor(pt.x() + 0.5))
        n = self._n()
        return (row, col) if 0 <= row < n and 0 <= col < n else None

    def text(self, row: int, col: int) -> str:
        """The read-out of a cell (plain text, one line per stage)."""
        session = self._session
        scene = session.scene
        tokens = [scene.token_label(i) for i in range(scene.n)]
        try:
            q, k, _ = scene.qkv()
        except ValueError:  # (shapes mid-edit: the value alone)
            q = k = None
        return cell_readout(tokens, q, k, session.result, self._stage(), row, col)

    def move_to(self, scene_pos: QPointF) -> None:
        """The pointer is at ``scene_pos``: show the read-out of the cell there (if it is a new one)."""
        cell = self.cell_at(scene_pos)
        if cell == self.hovered:
            return
        self.hovered = cell
        if cell is None:
            QToolTip.hideText()
            self.cell_changed.emit(-1, -1)
            return
        self.show_tip()
        self.cell_changed.emit(*cell)

    def show_tip(self) -> None:
        """(Re)show the hovered cell's read-out (after a new result or stage, too)."""
        if self.hovered is None:
            return
        lines = self.text(*self.hovered).split("\n")
        px = self._text_px()
        body = "<br>".join(html.escape(line) for line in lines)
        tip = f'<div style="font-size:{px}px; white-space:pre">{body}</div>'
        QToolTip.showText(QCursor.pos(), tip, self._graphics)

    def leave(self) -> None:
        """The pointer left the panel."""
        if self.hovered is not None:
            self.hovered = None
            QToolTip.hideText()
            self.cell_changed.emit(-1, -1)
