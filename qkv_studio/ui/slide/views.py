"""The slide's own view instances, made the first time a slide shows them.

Each is a new instance of the window's view bound to the same Session and to the slide's Appearance
(:class:`~.look.SlideLook`); the views keep no state of their own, so the slide shows what the window
shows.  A view on the slide is a child of the slide's body and is placed by the slide's layout rule.

**Adding a view**: one entry in :data:`VIEW_FACTORIES` (``factory(session, appearance) -> QWidget``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget

from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session


def _heatmap(session: Session, appearance: Appearance) -> QWidget:
    from qkv_studio.ui.panels.heatmap_view import HeatmapView

    return HeatmapView(session, appearance=appearance)


def _calc(session: Session, appearance: Appearance) -> QWidget:
    from qkv_studio.ui.panels.calc_table import CalcTable

    return CalcTable(session, appearance=appearance)


def _plane(session: Session, appearance: Appearance) -> QWidget:
    from qkv_studio.ui.panels.plane import VectorPlane

    return VectorPlane(session, appearance=appearance)


def _blend(session: Session, appearance: Appearance) -> QWidget:
    from qkv_studio.ui.panels.blend_view import BlendView

    blend = BlendView(session, appearance=appearance)
    blend.set_on_slide(True)  # (the slide's caption says what its header would)
    return blend


VIEW_FACTORIES: dict[str, Callable[[Session, Appearance], QWidget]] = {
    "heatmap": _heatmap, "calc": _calc, "plane": _plane, "blend": _blend,
}
"""The views a slide can show, by name (a stage's ``slide_view`` or a side view)."""


class SlideViews:
    """The slide's views, made when first asked for, children of ``parent``."""

    def __init__(self, session: Session, appearance: Appearance, parent: QWidget) -> None:
        self._session = session
        self._appearance = appearance
        self._parent = parent
        self._built: dict[str, QWidget] = {}

    def get(self, name: str) -> QWidget:
        """The view ``name`` (built now if it was not)."""
        view = self._built.get(name)
        if view is None:
            view = VIEW_FACTORIES[name](self._session, self._appearance)
            view.hide()
            view.setParent(self._parent)
            view.setFont(self._parent.font())
            self._built[name] = view
        return view

    def built(self, name: str) -> QWidget | None:
        """The view ``name`` if it has been built, else None."""
        return self._built.get(name)

    def all(self) -> dict[str, QWidget]:
        return dict(self._built)
