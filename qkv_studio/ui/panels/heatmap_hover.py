"""The heatmap's hover read-out: the cell under the pointer, worked out, in a small panel beside it.

The text comes from :func:`qkv_studio.core.cell_readout.cell_readout` (the maths lives in core); this
module only finds the cell under the pointer, shows the text at the panel's text size in the theme's
colours — in the heatmap itself, not a tooltip window, so it shows in a full-screen presentation and on a
projector at the slide's size — and tells the view which cell is hovered, so it can outline it and
always name its row and column.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPoint, QPointF, Qt, Signal
from PySide6.QtWidgets import QLabel

from qkv_studio.core.cell_readout import cell_readout
from qkv_studio.state.session import Session

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult


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
        self._at = QPointF()
        self.readout = QLabel(graphics)
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        self.readout.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.readout.hide()
        self._colours = ("#ffffff", "#111111", "#888888")
        graphics.scene().sigMouseMoved.connect(self.move_to)

    def set_colours(self, panel: str, text: str, border: str) -> None:
        """The read-out's background, text and border colours (the theme's)."""
        self._colours = (panel, text, border)
        if self.hovered is not None:
            self.show_tip()

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
        q: np.ndarray | None
        k: np.ndarray | None
        try:
            q, k, _ = scene.qkv()
        except ValueError:  # (shapes mid-edit: the value alone)
            q = k = None
        # the Session's LiveResult reads as an AttentionResult (state/session.py); core's
        # functions are typed for the dataclass
        result = cast("AttentionResult", session.result)
        return cell_readout(tokens, q, k, result, self._stage(), row, col)

    def move_to(self, scene_pos: QPointF) -> None:
        """The pointer is at ``scene_pos``: show the read-out of the cell there (if it is a new one)."""
        cell = self.cell_at(scene_pos)
        self._at = QPointF(scene_pos)
        if cell == self.hovered:
            return
        self.hovered = cell
        if cell is None:
            self.readout.hide()
            self.cell_changed.emit(-1, -1)
            return
        self.show_tip()
        self.cell_changed.emit(*cell)

    def readout_text(self) -> str:
        """What the read-out shows now (plain text), or "" when it is hidden."""
        return self.text(*self.hovered) if self.hovered is not None and self.readout.isVisible() else ""

    def show_tip(self) -> None:
        """(Re)show the hovered cell's read-out beside the pointer (after a new result or stage, too)."""
        if self.hovered is None:
            return
        import html

        panel, text, border = self._colours
        px = self._text_px()
        body = "<br>".join(html.escape(line) for line in self.text(*self.hovered).split("\n"))
        label = self.readout
        label.setStyleSheet(f"QLabel {{ background: {panel}; color: {text}; border: 1px solid {border}; "
                            f"padding: {max(2, px // 3)}px; font-size: {px}px; }}")
        label.setText(body)
        label.adjustSize()
        room = self._graphics.rect()
        at = self._graphics.viewport().mapTo(self._graphics, self._graphics.mapFromScene(self._at))
        gap = px
        x = at.x() + gap if at.x() + gap + label.width() <= room.right() else at.x() - gap - label.width()
        y = at.y() + gap if at.y() + gap + label.height() <= room.bottom() else at.y() - gap - label.height()
        label.move(QPoint(max(0, x), max(0, y)))
        label.show()
        label.raise_()

    def leave(self) -> None:
        """The pointer left the panel."""
        if self.hovered is not None:
            self.hovered = None
            self.readout.hide()
            self.cell_changed.emit(-1, -1)
