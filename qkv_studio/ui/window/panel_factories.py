"""The factories of the registered panels (see :mod:`qkv_studio.ui.registry`): each makes one panel for
the main window and wires it to the rest of the window.

Each is called as ``factory(window)`` and returns the widget the dock (or the dialog) shows.  The
lesson's panels are imported inside their factory: start-up does not wait for them (nor for superqt).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QTabWidget, QWidget

if TYPE_CHECKING:
    from qkv_studio.core.models.registry import AttentionModel
    from qkv_studio.core.models.run import ModelRun
    from qkv_studio.ui.lesson.model import ModelPanel
    from qkv_studio.ui.window.main_window import MainWindow


def _built_model_panel(window: MainWindow) -> ModelPanel | None:
    """The Real model panel if it has been built (nothing is built to ask)."""
    return cast("ModelPanel | None", window.panels.built("model"))


# ---- the core docks (built with the window) ------------------------------------------------------
def editors(window: MainWindow) -> QWidget:
    """The tokens list above the Q, K, V editors (a second tab, X and W, in projection mode); the column
    scrolls when the window is shorter than its editors (a HiDPI laptop's 540-px screen)."""
    from qkv_studio.ui.panels.editor_set import EditorSet
    from qkv_studio.ui.panels.tokens_panel import TokensPanel
    from qkv_studio.ui.widgets.scroll_column import ScrollColumn

    s = window.session
    window.tokens_panel = TokensPanel(s)
    qkv_page = QSplitter(Qt.Orientation.Vertical)
    proj_page = QSplitter(Qt.Orientation.Vertical)
    window.editors = EditorSet(s, qkv_page, proj_page, appearance=window.appearance)
    window.editor_tabs = tabs = QTabWidget()
    tabs.setDocumentMode(True)  # (no frame round the page: its 4 px showed a 4th row at 1280×720)
    # One tab (direct mode): no tab bar, and no room kept for one (a bar only hidden still counted in
    # the column's minimum height: a scroll bar for 34 px at 1280×720).  Projection mode adds the tab.
    tabs.setTabBarAutoHide(True)
    tabs.addTab(qkv_page, "Q, K, V")
    tabs.setTabToolTip(0, "The queries, keys and values (in projection mode derived: X·W)")
    window.editor_projection_page = proj_page
    column = QSplitter(Qt.Orientation.Vertical)
    column.addWidget(window.tokens_panel)
    column.addWidget(tabs)
    column.setStretchFactor(0, 1)
    column.setStretchFactor(1, 4)
    s.scene_changed.connect(lambda: sync_mode(window))
    sync_mode(window)
    return ScrollColumn(column)


def sync_mode(window: MainWindow) -> None:
    """The X and W tab shows in projection mode only."""
    projection = window.session.scene.mode == "projection"
    tabs = window.editor_tabs
    was = tabs.count() > 1
    if projection == was:  # a tab added or removed re-lays out and repaints the whole column
        return
    if projection:
        window.editors.build_projection()
        # (short: both tabs whole in the 230-px column of a 1024-px window)
        tabs.addTab(window.editor_projection_page, "X and W")
        tabs.setTabToolTip(1, "The embeddings X and the learned projections Wᵠ, Wᴷ, Wⱽ")
    else:
        tabs.removeTab(1)
    tabs.setCurrentIndex(1 if projection else 0)


def plane(window: MainWindow) -> QWidget:
    from qkv_studio.ui.panels.plane import VectorPlane

    plane = VectorPlane(window.session, appearance=window.appearance)

    def model_run() -> tuple[AttentionModel, ModelRun] | None:
        """The Real model panel's model and last run (the plane's RoPE view draws a RoPE model's head)."""
        panel = _built_model_panel(window)
        return None if panel is None or panel.run is None else (panel.model, panel.run)

    plane.rope.set_source(model_run)
    act = window.acts.get("rope_pair")  # (View → RoPE pair, once the menus are built)
    if act is not None:
        plane.rope.bind_action(act)
    return plane


def calc(window: MainWindow) -> QWidget:
    from qkv_studio.ui.panels.calc_table import CalcTable

    return CalcTable(window.session, appearance=window.appearance)


def blend(window: MainWindow) -> QWidget:
    from qkv_studio.ui.panels.blend_view import BlendView

    return BlendView(window.session, appearance=window.appearance)


# ---- the View menu's panels (built when first shown) ---------------------------------------------
def explorer(window: MainWindow) -> QWidget:
    from qkv_studio.ui.lesson.sqrt_dk_explorer import SqrtDkExplorer

    s = window.session
    panel = SqrtDkExplorer(appearance=window.appearance)

    def follow() -> None:  # the d_k of what the other views show: the scene's, or the selected head's
        whose = f"head {s.head} of {s.scene.heads}" if s.scene.heads > 1 else "this scene"
        panel.set_scene_d_k(s.shown.d_k, whose)

    s.scene_changed.connect(follow)
    s.head_changed.connect(follow)
    follow()
    return panel


def heads(window: MainWindow) -> QWidget:
    from qkv_studio.ui.lesson.heads_view import HeadsView

    s = window.session
    panel = HeadsView(None, session=s, appearance=window.appearance)
    panel.set_query(s.query)
    s.scene_changed.connect(lambda: sync_heads(window, panel))
    s.query_changed.connect(panel.set_query)
    sync_heads(window, panel)
    panel.select_head(s.head)
    panel.head_selected.connect(s.set_head)  # the selected head is the Session's view, like the query
    s.head_changed.connect(panel.select_head)
    return panel


def sync_heads(window: MainWindow, panel) -> None:
    """The heads panel follows every scene (a scene of one head shows as one head, never as the last
    split scene); while it is hidden it only takes note, and computes when shown."""
    try:
        panel.set_scene(window.session.scene)
    except ValueError as exc:
        window.session.message.emit(str(exc))


def heads_shown(window: MainWindow) -> None:
    """View → Heads: say why a scene without heads shows none, and show the current scene's."""
    scene = window.session.scene
    if scene.mode != "projection" and scene.heads == 1:
        window.session.message.emit("Heads split the learned projections: open the multihead preset or "
                                    "switch to projection mode (Ctrl+Shift+P)")
    panel = window.built_panel("heads")
    if panel is not None:
        sync_heads(window, panel)


def model(window: MainWindow) -> QWidget:
    from qkv_studio.ui.lesson.model import ModelPanel

    panel = ModelPanel(window.session, appearance=window.appearance)
    panel.state.confirm = panel.ask_replace  # says what replaces what; Undo brings the edits back
    def show_editors() -> None:
        window.docks.editors.show()
        window.docks.editors.raise_()

    panel.edit_requested.connect(show_editors)
    # A real head (dₖ = 32) is seen through the plane's PCA; its editable copy by its numbers.
    panel.run_changed.connect(lambda: window.panels.plane.set_pca(True))
    panel.head_changed.connect(lambda *_: window.panels.plane.set_pca(True))
    panel.edit_requested.connect(lambda: window.panels.plane.set_pca(False))
    return panel


def unprojected(window: MainWindow) -> QWidget:
    from qkv_studio.ui.lesson.unprojected_view import UnprojectedView

    def model_source() -> tuple[ModelRun, int] | None:
        """The model panel's run and layer while the window shows its head (its X is the layer's input)."""
        panel = _built_model_panel(window)
        if panel is not None and panel.run is not None and panel.showing_model_head():
            return panel.run, panel.layer
        return None

    return UnprojectedView(window.session, model_source=model_source, appearance=window.appearance)


def quiz(window: MainWindow) -> QWidget:
    from qkv_studio.ui.lesson.quiz import QuizDialog

    return QuizDialog(window, appearance=window.appearance)
