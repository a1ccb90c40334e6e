"""The deferred core docks (the vector plane, the blend view): a dock the window's first layout puts behind
another's tab is not built before the first paint (nothing of it shows there) but right after it, while
nothing waits; one in front is built before the layout, as the other panels are — and the window looks
the same either way."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QWidget

from qkv_studio.core import load_preset
from qkv_studio.core.stages import stage_spec
from qkv_studio.ui import registry
from qkv_studio.ui.panels.blend_view import BlendView
from qkv_studio.ui.panels.plane import VectorPlane
from qkv_studio.ui.registry import PanelSpec
from qkv_studio.ui.update_policy import settle as settle_now
from qkv_studio.ui.window.main_window import MainWindow
from tests.views import LESSON_VIEW

DEFERRED = ("plane", "blend")


def _window(qtbot, size) -> MainWindow:
    w = MainWindow(load_preset("lesson"), use_settings=False, view=LESSON_VIEW)
    qtbot.addWidget(w)
    w.resize(*size)
    return w


def _shown(w: MainWindow) -> set[str]:
    """The deferred docks the window shows now: not hidden, and not a tab behind another (off its area)."""
    return {name for name in DEFERRED if not w.dock(name).visibleRegion().isEmpty()}


def test_the_plane_and_the_blend_are_the_deferred_core_docks():
    assert [s.name for s in registry.panels() if s.deferred] == list(DEFERRED)
    assert all(not s.lazy and s.kind == "dock" for s in registry.panels() if s.deferred)
    with pytest.raises(ValueError, match="only a core dock is deferred"):
        PanelSpec("probe", "Probe", "x:y", deferred=True)  # (lazy: built when shown anyway)


def _settled(qtbot, w: MainWindow):
    settle_now(w)  # (the follow-up frames: the caption, the table's numbers; the deferred docks)
    return w.grab().toImage()


def test_docks_behind_a_tab_are_built_right_after_the_first_paint(qtbot):
    early = _window(qtbot, (792, 760))  # (the start-up benchmark's window: the blend and the plane tabs
    _ = early.panels.plane, early.panels.blend        # behind the editors) with every panel built first, as before
    early.show()
    w = _window(qtbot, (792, 760))
    w.show()
    QApplication.sendPostedEvents()  # (laid out, not yet painted)
    assert _shown(w) == set()
    assert all(w.built_panel(name) is None and type(w.dock(name).widget()) is QWidget for name in DEFERRED)
    QApplication.sendPostedEvents()
    assert w.grab().toImage() == early.grab().toImage()  # (the first paint: as with every panel built)
    qtbot.waitUntil(lambda: all(w.built_panel(name) is not None for name in DEFERRED), timeout=5000)
    assert isinstance(w.docks.plane.widget(), VectorPlane) and w.docks.plane.widget() is w.panels.plane
    assert isinstance(w.docks.blend.widget(), BlendView) and w.docks.blend.widget() is w.panels.blend
    assert _settled(qtbot, w) == _settled(qtbot, early)  # (and once built: nothing moved or changed)
    column = w.docks.editors.widget().widget()  # (the editors' column: sized to its content's minimum,
    assert column.height() >= column.minimumSizeHint().height()  # every title whole — it scrolls)
    w.docks.blend.raise_()  # (its tab, brought forward, shows it as it is with every panel built)
    early.docks.blend.raise_()
    assert _settled(qtbot, w) == _settled(qtbot, early)
    # (the plane's view is fitted to the size it first shows at — behind its tab, that size differs with
    # the order things were built in — and kept when it comes forward: the same arrows and labels)
    w.docks.plane.raise_()
    early.docks.plane.raise_()
    qtbot.wait(300)
    assert w.panels.plane.isVisible() and w.panels.plane.label_texts() == early.panels.plane.label_texts()
    assert w.panels.plane.best_key() == early.panels.plane.best_key()


@pytest.mark.parametrize("size", [(792, 760), (1024, 768), (1280, 720), (1366, 768), (1600, 950), (1920, 1080)])
def test_the_docks_the_first_layout_shows_are_built_before_it(qtbot, size):
    w = _window(qtbot, size)
    w.show()
    QApplication.sendPostedEvents()
    built = {name for name in DEFERRED if w.built_panel(name) is not None}
    assert _shown(w) <= built  # (each shown dock's panel was there for the layout and the first paint)
    if size == (1920, 1080):  # (tall enough for the plane under the editors: both shown)
        assert built == set(DEFERRED)


def test_a_deferred_panel_is_built_when_asked_for_or_brought_forward(qtbot):
    w = _window(qtbot, (792, 760))
    w.show()
    QApplication.sendPostedEvents()
    assert w.built_panel("plane") is None and w.built_panel("blend") is None
    w.docks.plane.raise_()  # (its tab clicked before the idle moment came)
    assert isinstance(w.built_panel("plane"), VectorPlane)
    assert isinstance(w.panels.blend, BlendView) and w.built_panel("blend") is w.panels.blend  # (asked for)


def test_presenting_shows_the_slides_own_views_and_leaves_the_windows_docks_alone(qtbot):
    w = _window(qtbot, (792, 760))
    w.show()
    QApplication.sendPostedEvents()
    built = {name: w.built_panel(name) for name in DEFERRED}
    w.set_presentation(True, fullscreen=False)
    slide = w.presentation.slide
    for stage in ("vectors", "output"):  # (the plane's and the blend's slides: their own instances)
        w.session.set_stage(stage)
        view = slide.views.built(stage_spec(stage).slide_view)
        assert view is not None and view.isVisible() and view is not w.built_panel(stage_spec(stage).slide_view)
    assert {name: w.built_panel(name) for name in DEFERRED} == built  # (nothing of the window built for it)
    w.set_presentation(False)
