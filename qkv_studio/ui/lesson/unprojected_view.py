"""Attention → Without projections: the scene with Q = K = V = X beside the learned projections.

The lesson's first "Ask your teacher" question — why three projections instead of dotting the
embeddings directly — answered with the scene's own numbers: two heatmaps of the current stage and
query on one colour scale (:mod:`qkv_studio.render.pair`, the same figure the command line's
``--without-projections`` exports) and a caption from :mod:`qkv_studio.core.unprojected` that says what
differs (symmetry, the diagonal) and is true for the numbers shown.

It follows the Session (scene, stage, query) while it is visible.  A projection-mode scene gives X
itself; a real model's head gives its layer's input (``model_source()`` returns the model panel's run
and layer while the window shows a model head); any other scene gets a message saying what to do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from qkv_studio.core.scene import Scene, SceneError
from qkv_studio.core.unprojected import (
    NEEDS_PROJECTION,
    WITH_HEADING,
    WITHOUT_HEADING,
    caption,
    compare,
    without_projections,
)
from qkv_studio.render.figure import FigureOptions, paint_figure
from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance

if TYPE_CHECKING:
    from qkv_studio.core.models.run import ModelRun

ModelSource = Callable[[], "tuple[ModelRun, int] | None"]


class _PairCanvas(QWidget):
    """Paints the two figures (the pair's options) into its whole area."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scene: Scene | None = None
        self.options: FigureOptions | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(240, 120)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(720, 320)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        if self.scene is None or self.options is None:
            return
        painter = QPainter(self)
        try:
            paint_figure(painter, QRectF(self.rect()), self.scene, self.options)
        finally:
            painter.end()


class UnprojectedView(FollowsAppearance, QWidget):
    """The scene without projections beside the learned ones, and what that shows, in words.

    Test hooks: ``canvas`` (``canvas.scene`` is the Q = K = V = X scene drawn on the left,
    ``canvas.options.compare_with`` the scene on the right), ``caption`` (a QLabel), ``message``.
    """

    def __init__(self, session: Session, *, model_source: ModelSource | None = None,
                 appearance: Appearance | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._model_source = model_source
        self._options = FigureOptions(title=False, heading=WITHOUT_HEADING, compare_heading=WITH_HEADING)
        self.canvas = _PairCanvas(self)
        self.caption = QLabel(self)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.canvas, 1)
        lay.addWidget(self.caption)
        lay.addWidget(self.message)
        for signal in (session.scene_changed, session.result_changed, session.query_changed, session.stage_changed,
                       session.head_changed):
            signal.connect(self._refresh_if_shown)
        self.bind_appearance(appearance)
        self.refresh()

    # ---- what is shown ---------------------------------------------------------------------------
    def pair(self) -> tuple[Scene, Scene] | None:
        """(without projections, with them) for the Session's scene — with them: the head the views show
        of a split scene — or None with ``message`` saying why."""
        scene, shown = self._session.scene, self._session.shown
        source = self._model_source() if self._model_source is not None else None
        try:
            if source is not None:
                run, layer = source
                return run.unprojected_scene(layer), shown
            return without_projections(scene), shown
        except SceneError:
            self.message.setText(f"“Without projections” {NEEDS_PROJECTION}.")
        except ValueError as exc:  # a model that keeps no layer inputs
            self.message.setText(str(exc))
        return None

    def refresh(self) -> None:
        """Recompute both scenes and the caption from the Session, and repaint."""
        pair = self.pair()
        if pair is None:
            self.canvas.scene = self.canvas.options = None
            self.caption.clear()
            self.canvas.update()
            return
        bare, learned = pair
        s = self._session
        query = min(s.query, learned.n - 1)
        self.message.clear()
        self.canvas.scene = bare
        self.canvas.options = replace(self._options, stage=s.stage, query=query, compare_with=learned).validated()
        self.caption.setText(caption(compare(learned, bare, query), learned.token_label))
        self.canvas.update()

    def _refresh_if_shown(self, *_: object) -> None:
        if self.isVisible():
            self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.refresh()

    # ---- appearance ------------------------------------------------------------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        self._options = replace(self._options, theme=theme.name)
        self.caption.setStyleSheet(f"color: {theme.text}")
        self.message.setStyleSheet(f"color: {theme.muted}")
        self.refresh()

    def _restyle_colormap(self, name: str) -> None:
        self._options = replace(self._options, colormap=name)
        self.refresh()

    def _restyle_scale(self, f: float) -> None:
        self._options = replace(self._options, font_scale=max(0.25, min(4.0, f)))
        font = self.caption.font()
        font.setPointSizeF(10.0 * f)
        self.caption.setFont(font)
        self.message.setFont(font)
        self.refresh()
