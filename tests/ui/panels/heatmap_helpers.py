"""Shared set-up of the heatmap's part tests (axes, hover, zoom, legend)."""

from qkv_studio.core import preset_document
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.heatmap_view import HeatmapView
from qkv_studio.ui.update_policy import settle as settle_now


def preset_session(name: str) -> Session:
    doc = preset_document(name)
    return Session(doc.scene, view=doc.view)


def shown(qtbot, session: Session, size=(1000, 800), font_scale: float = 1.0) -> HeatmapView:
    look = Appearance()
    look.set_font_scale(font_scale)
    view = HeatmapView(session, appearance=look)
    view.animate = False
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    session.flush()
    settle(qtbot, view)
    return view


def settle(qtbot, view: HeatmapView) -> None:
    """Let the layouts settle (a ViewBox places its items when it next paints)."""
    for _ in range(3):
        settle_now(view)
        view.graphics.viewport().repaint()
