"""The main window: the lesson's Q/K/V attention calculator, made real.

Layout: the stage stepper (caption + formula) across the top, the live heatmap in the centre, the
tokens and Q/K/V editors docked left with the vector plane below them, the calculation table and the
blend view docked right.  Every dock can be moved, resized or closed; the layout is remembered.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QColor, QFont, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QApplication, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QPushButton, QSplitter, QTabWidget, QVBoxLayout,
    QWidget, QAbstractItemView, QAbstractSlider, QAbstractSpinBox, QLineEdit, QTextEdit,
)

from qkv_studio import _resume_gc
from qkv_studio.core import STAGES, Scene, SessionFileError, list_presets, load_preset, read_session, write_session
from qkv_studio.core.deck import Deck, read_deck
from qkv_studio.core.scene import SceneError, projection_of, with_random_projections
from qkv_studio.core.text import elide_words
from qkv_studio.render.colormaps import SEQUENTIAL
from qkv_studio.render.theme import DEFAULT_THEME, THEMES, Theme, get_theme
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.blend_view import BlendView
from qkv_studio.ui.panels.calc_table import CalcTable
from qkv_studio.ui.panels.heatmap_view import HeatmapView
from qkv_studio.ui.panels.editor_set import EditorSet
from qkv_studio.ui.panels.matrix_editor import MatrixEditor
# The export dialog, the quiz and the panels of the View menu (√dₖ explorer, heads, real model) are
# imported and built when first used: start-up does not wait for them (nor for superqt).
from qkv_studio.ui.widgets.overlays import BlankOverlay, ShortcutsOverlay
from qkv_studio.ui.panels.stage_stepper import StageStepper
from qkv_studio.ui.widgets.table_style import set_grid_color
from qkv_studio.ui.panels.tokens_panel import TokensPanel
from qkv_studio.ui.panels.vector_plane import VectorPlane

APP_NAME = "QKV Studio"
FILE_FILTER = "QKV Studio sessions (*.qkv.json);;JSON files (*.json);;All files (*)"
MAX_RECENT = 8
BASE_POINT_SIZE = 11.0
PRESENTATION_SCALE = 2.2


_KEY_PRESS = int(QEvent.Type.KeyPress.value)


class KeyRouter(QObject):
    """Routes lecture keys (→ ← Space PageUp/Down ↑ ↓ Home End 1–9) to the window unless typing.

    Installed on the application so the keys work whichever panel has focus, except in a text field
    or a table, where arrows keep their usual meaning (PageUp/PageDown from a clicker always step).
    """

    def __init__(self, window: "MainWindow") -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        # Every event of the application passes here (hundreds per edit): compare plain ints first.
        if int(event.type().value) != _KEY_PRESS or not self._window.isActiveWindow():
            return False
        if event.modifiers() & (Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier):
            return False
        focus = QApplication.focusWidget()
        typing = isinstance(focus, (QLineEdit, QAbstractSpinBox, QTextEdit, QAbstractSlider)) or (
            isinstance(focus, QAbstractItemView) and not isinstance(focus, CalcTable))
        key = event.key()
        if typing and key not in (Qt.Key_PageDown, Qt.Key_PageUp):
            return False
        if typing and isinstance(focus, QLineEdit):
            return False
        return self._window.handle_lecture_key(key, event.text())


class MainWindow(QMainWindow):
    """QKV Studio's window, bound to one :class:`Session`.

    ``presentation_changed(bool)`` fires when presentation mode is entered or left.
    """

    presentation_changed = Signal(bool)
    _key_router: KeyRouter | None = None  # (changeEvent runs while the window is being built)
    _key_router_installed = False

    def __init__(self, scene: Scene, path: str = "", *, use_settings: bool = True) -> None:
        _resume_gc(freeze=True)  # the start-up imports are done (see qkv_studio/__init__.py)
        super().__init__()
        self.session = Session(scene, path, self)
        self._use_settings = use_settings
        self._theme: Theme = THEMES["light"]
        self._colormap = "viridis"
        self._zoom = 1.0
        self._presentation = False
        self._saved_state: QByteArray | None = None
        self._restored_state = False
        self.deck: Deck | None = None
        self.deck_index = 0
        self.setDockNestingEnabled(True)
        self.resize(1600, 950)
        # Theme and zoom are known before anything is built, so the style sheet goes on once.  It goes
        # on once the panels are built and docked, before they are first shown or polished: set
        # earlier, every panel's widgets were restyled as they were moved into their docks.
        settings = self._read_settings() if use_settings else {}
        self._build_widgets()
        self._apply_style()
        self.blank_overlay = BlankOverlay(self)
        self.shortcuts_overlay = ShortcutsOverlay(self)
        self._build_actions()
        self._build_menus()
        self.session.path_changed.connect(self._update_title)
        self.session.modified_changed.connect(self._update_title)
        self.session.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.session.stage_changed.connect(self._sync_stage_actions)
        # The router acts only while this window is active, so it is installed when the window first
        # becomes active: the ~3000 events of building, showing and first painting the window do not
        # each pass through Python on their way (~25 ms).
        self._key_router = KeyRouter(self)
        self._update_title()
        self.resize(1600, 950)
        if use_settings:
            self._restore_settings(settings)
        self._style_new_panels()
        self.act_animate.setChecked(self.heatmap.animate)

    # ---- construction -----------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        s = self.session
        self.stepper = StageStepper(s)
        self.heatmap = HeatmapView(s)
        centre = QWidget()
        lay = QVBoxLayout(centre)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stepper)
        lay.addWidget(self.heatmap, 1)
        self.setCentralWidget(centre)

        self.tokens_panel = TokensPanel(s)
        qkv_page = QSplitter(Qt.Vertical)
        proj_page = QSplitter(Qt.Vertical)
        self.editors = EditorSet(s, qkv_page, proj_page, on_built=self._style_new_editors)
        self.editor_tabs = QTabWidget()
        self.editor_tabs.addTab(qkv_page, "Q, K, V")
        self.editor_tabs.addTab(proj_page, "X and W (learned)")
        self.editor_tabs.setTabVisible(1, False)
        self.editor_tabs.tabBar().setVisible(False)  # one tab (direct mode): no tab bar
        editors = QSplitter(Qt.Vertical)
        editors.addWidget(self.tokens_panel)
        editors.addWidget(self.editor_tabs)
        editors.setStretchFactor(0, 1)
        editors.setStretchFactor(1, 4)
        self.editor_splitter = editors
        self.dock_editors = self._dock("Tokens and vectors", "dock_editors", editors, Qt.LeftDockWidgetArea)

        self.plane = VectorPlane(s)
        self.dock_plane = self._dock("Vector plane", "dock_plane", self.plane, Qt.LeftDockWidgetArea)
        self.calc = CalcTable(s)
        self.dock_calc = self._dock("Calculation", "dock_calc", self.calc, Qt.RightDockWidgetArea)
        self.blend = BlendView(s)
        self.dock_blend = self._dock("Blend", "dock_blend", self.blend, Qt.RightDockWidgetArea)
        # Split first, tabify after: splitting the blend away from its tab group would leave the View-menu
        # panels in a strip of their own under it instead of tabbed with it.
        self.splitDockWidget(self.dock_editors, self.dock_plane, Qt.Vertical)
        self.splitDockWidget(self.dock_calc, self.dock_blend, Qt.Vertical)
        # The lesson in depth: panels that open from the View menu, tabbed with the right-hand column.
        # Each is built the first time its dock shows (or it is asked for): see _panel().
        self._panels: dict[str, QWidget] = {}
        self.dock_explorer = self._dock("√dₖ explorer", "dock_explorer", QWidget(), Qt.RightDockWidgetArea)
        self.dock_heads = self._dock("Heads", "dock_heads", QWidget(), Qt.RightDockWidgetArea)
        self.dock_model = self._dock("Real model", "dock_model", QWidget(), Qt.RightDockWidgetArea)
        for name, dock in (("explorer", self.dock_explorer), ("heads", self.dock_heads),
                           ("model_panel", self.dock_model)):
            self.tabifyDockWidget(self.dock_blend, dock)
            dock.hide()
            dock.visibilityChanged.connect(lambda on, name=name: on and self._panel(name))
        self.dock_blend.raise_()
        s.scene_changed.connect(self._sync_heads)
        s.query_changed.connect(lambda index: "heads" in self._panels and self.heads.set_query(index))
        self._laid_out = False
        s.scene_changed.connect(self._sync_mode)
        self._sync_mode()

    @property
    def explorer(self):
        """The √dₖ explorer panel (built on first use)."""
        return self._panel("explorer")

    @property
    def heads(self):
        """The multi-head panel (built on first use)."""
        return self._panel("heads")

    @property
    def model_panel(self):
        """The real-model panel (built on first use)."""
        return self._panel("model_panel")

    def _built_panels(self) -> tuple:
        return tuple(self._panels.values())

    def _panel(self, name: str) -> QWidget:
        """A View-menu panel, built (with the window's theme, colormap and zoom) the first time it is needed."""
        panel = self._panels.get(name)
        if panel is not None:
            return panel
        if name == "explorer":
            from qkv_studio.ui.lesson.sqrt_dk_explorer import SqrtDkExplorer

            panel, dock = SqrtDkExplorer(), self.dock_explorer
        elif name == "heads":
            from qkv_studio.ui.lesson.heads_view import HeadsView

            panel, dock = HeadsView(None, session=self.session), self.dock_heads
            panel.set_query(self.session.query)
        else:
            from qkv_studio.ui.lesson.model import ModelPanel

            panel, dock = ModelPanel(self.session, confirm=self.confirm_discard), self.dock_model
            panel.edit_requested.connect(lambda: (self.dock_editors.show(), self.dock_editors.raise_()))
            # A real head (dₖ = 32) is seen through the plane's PCA; its editable copy by its numbers.
            panel.run_changed.connect(lambda: self.plane.set_pca(True))
            panel.head_changed.connect(lambda *_: self.plane.set_pca(True))
            panel.edit_requested.connect(lambda: self.plane.set_pca(False))
        self._panels[name] = panel
        panel.set_theme(self._theme)
        panel.set_colormap(self._colormap)
        panel.set_font_scale(self._font_scale())
        panel.setFont(dock.widget().font())
        dock.setWidget(panel)
        if name == "heads":
            self._sync_heads()
        return panel

    def layout_docks(self) -> None:
        """Share the width and height between the panels in proportion to the window (default layout)."""
        w, h = max(self.width(), 800), max(self.height(), 500)
        if self._presentation:
            self.resizeDocks([self.dock_calc], [int(w * 0.40)], Qt.Horizontal)
            self._share_right_column(h, 0.40)
            return
        if h < 900:
            # Too short for editors and plane one above the other: make them tabs of one column.
            self.tabifyDockWidget(self.dock_editors, self.dock_plane)
            self.dock_editors.raise_()
        # The calculation column is as wide as its table when that fits in 36 % (in a narrow window the
        # weights, its last column, would otherwise sit behind a scroll bar).
        self.dock_calc.layout().activate()  # (before the first show: nothing inside a dock is placed yet)
        chrome = max(0, self.dock_calc.width() - self.calc.width())
        calc = max(int(w * 0.28), min(int(w * 0.36), self.calc.content_width() + chrome + 4))
        self.resizeDocks([self.dock_editors, self.dock_calc], [int(w * 0.22), calc], Qt.Horizontal)
        if h >= 900:
            # (the editors need all of a short scene's rows — three tables and the token list; the plane keeps room)
            self.resizeDocks([self.dock_editors, self.dock_plane], [int(h * 0.65), int(h * 0.35)], Qt.Vertical)
        self._share_right_column(h, 0.36)

    def _share_right_column(self, h: int, calc_share: float) -> None:
        """The calculation table gets up to ``calc_share`` of the height — no more than its rows need,
        so a short scene's table does not leave an empty box while the blend view is squeezed."""

        chrome = max(0, self.dock_calc.height() - self.calc.height())
        wanted = self.calc.content_height() + chrome + 10  # (a few px of slack: no scroll bar for them)
        calc = max(int(h * 0.18), min(int(h * calc_share), wanted))
        self.resizeDocks([self.dock_calc, self.dock_blend], [calc, h - calc], Qt.Vertical)

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - Qt's name
        # The default layout is made just before the window first shows, while every panel is still
        # hidden: geometry given to a hidden widget is only stored.  Made in showEvent (after Qt's
        # own first layout had shown and resized every panel), it resized the four plots and the
        # tables a second time before the first paint (~25 ms of start-up).
        if visible and not self._laid_out:
            self._laid_out = True
            if not self._restored_state:
                self.ensurePolished()  # (fonts and styles, as the panels will show: the tables measure their text)
                self.calc.fit_columns(even_hidden=True)  # (the calculation dock is sized to it)
                self.layout().activate()  # (resizeDocks shares out the sizes the docks have now)
                self.layout_docks()
        super().setVisible(visible)

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if (self._key_router is not None and not self._key_router_installed
                and event.type() == QEvent.Type.ActivationChange and self.isActiveWindow()):
            self._key_router_installed = True
            QApplication.instance().installEventFilter(self._key_router)

    def _sync_heads(self) -> None:
        scene = self.session.scene
        split = scene.mode == "projection" or scene.heads > 1  # a direct scene with "heads" splits Q, K, V
        if split and self.dock_heads.isVisible() and "heads" in self._panels:
            try:
                self.heads.set_scene(scene)
            except ValueError as exc:
                self.session.message.emit(str(exc))

    def show_quiz(self) -> None:
        if getattr(self, "_quiz", None) is None:
            from qkv_studio.ui.lesson.quiz import QuizDialog

            self._quiz = QuizDialog(self)  # non-modal and kept, so answers survive closing it
        self._quiz.set_theme(self._theme)
        self._quiz.set_font_scale(self._font_scale())
        self._quiz.show()
        self._quiz.raise_()

    def show_panel(self, dock: QDockWidget) -> None:
        """Bring a panel of the View menu to the front."""
        dock.show()
        dock.raise_()
        if dock is self.dock_heads:
            if self.session.scene.mode != "projection" and self.session.scene.heads == 1:
                self.session.message.emit("Heads split the learned projections: open the multihead preset or "
                                          "switch to projection mode (Ctrl+Shift+P)")
            self._sync_heads()

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                         | QDockWidget.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, text: str, slot, shortcut=None, *, checkable: bool = False, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcuts(shortcut if isinstance(shortcut, list) else [QKeySequence(shortcut)])
        act.setCheckable(checkable)
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(tip)
        act.triggered.connect(slot)
        self.addAction(act)
        return act

    def _build_actions(self) -> None:
        s = self.session
        self.act_new = self._action("&New", self.new_scene, QKeySequence.New, tip="Start again from the lesson's example")
        self.act_open = self._action("&Open…", self.open_dialog, QKeySequence.Open)
        self.act_save = self._action("&Save", self.save, QKeySequence.Save)
        self.act_save_as = self._action("Save &As…", self.save_as, QKeySequence.SaveAs)
        self.act_quit = self._action("&Quit", self.close, QKeySequence.Quit)
        self.act_export = self._action("&Export heatmap…", lambda: _export_dialog().export_heatmap(self), "Ctrl+E",
                                       tip="The heatmap as PNG, SVG or PDF for slides and papers")
        self.act_copy_heatmap = self._action("&Copy heatmap", lambda: _export_dialog().copy_heatmap(self), "Ctrl+Shift+C",
                                             tip="The current stage's figure as an image on the clipboard")
        self.act_export_numbers = self._action("Export &numbers…", lambda: _export_dialog().export_numbers(self), "Ctrl+Shift+E",
                                               tip="This stage as CSV, or every stage as JSON")
        self.act_undo = s.undo_stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcuts([QKeySequence.Undo])
        self.act_redo = s.undo_stack.createRedoAction(self, "&Redo")
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence.Redo])
        self.act_next = self._action("&Next stage", self.next_step, tip="→, PageDown or Space")
        self.act_back = self._action("&Previous stage", self.back_step, tip="←, PageUp")
        self.stepper.set_navigator(self.next_step, self.back_step, self.can_step)
        self.stage_group = QActionGroup(self)
        self.stage_actions: dict[str, QAction] = {}
        from qkv_studio.core.stages import stage_spec

        for stage in STAGES:
            act = QAction(stage_spec(stage).button, self, checkable=True)
            act.triggered.connect(lambda _=False, st=stage: s.set_stage(st))
            self.stage_group.addAction(act)
            self.stage_actions[stage] = act
        self._sync_stage_actions()
        self.act_causal = self._action("&Causal mask", lambda on: s.set_mask("causal" if on else "none"),
                                       "Ctrl+M", checkable=True, tip="Each token may only attend to itself and earlier tokens")
        self.act_projection = self._action("&Projection mode (Q, K, V from X)", self.set_projection_mode, "Ctrl+Shift+P",
                                           checkable=True, tip="Edit the embeddings X and the three learned projection matrices; "
                                                               "Q, K, V are derived from them")
        self.act_randomise = self._action("&Randomise the projection matrices", self.randomise_projections, "Ctrl+R",
                                          tip="Seeded random learned projection matrices (switches to projection mode)")
        self.act_scale = self._action("Divide by √dₖ", lambda on: s.set_scale(on), checkable=True,
                                      tip="Scale the scores by 1/√dₖ before the softmax")
        self.act_add_token = self._action("Add token", self.tokens_panel.add_token, "Ctrl+T")
        self.act_remove_token = self._action("Remove selected token", lambda: s.remove_token(s.query))
        self.act_add_dk = self._action("Add dimension to dₖ", lambda: s.add_dim("qk"))
        self.act_remove_dk = self._action("Remove dimension from dₖ", lambda: s.remove_dim("qk"))
        self.act_add_dv = self._action("Add dimension to dᵥ", lambda: s.add_dim("v"))
        self.act_remove_dv = self._action("Remove dimension from dᵥ", lambda: s.remove_dim("v"))
        self.act_zoom_in = self._action("Zoom &in", lambda: self.set_zoom(self._zoom * 1.15),
                                        [QKeySequence.ZoomIn, QKeySequence("Ctrl+=")])
        self.act_zoom_out = self._action("Zoom &out", lambda: self.set_zoom(self._zoom / 1.15), QKeySequence.ZoomOut)
        self.act_zoom_reset = self._action("&Actual size", lambda: self.set_zoom(1.0), "Ctrl+0")
        self.act_presentation = self._action("&Presentation mode", self.toggle_presentation, "F5", checkable=True,
                                             tip="Full screen, large text; Esc leaves")
        self.act_leave = self._action("Leave presentation", lambda: self.set_presentation(False), "Esc")
        self.act_leave.setEnabled(False)  # Esc keeps its usual meaning (cancel an edit) outside presentations
        self.act_shortcuts = self._action("&Keyboard shortcuts", self.show_shortcuts, "F1")
        self.act_open_deck = self._action("Open &deck…", self.open_deck_dialog, tip="An ordered list of scenes for a lecture")
        self.act_animate = self._action("&Animate stage changes", self.set_animate, checkable=True,
                                        tip="Colours and numbers morph from one stage to the next (250 ms)")
        self.act_animate.setChecked(True)
        self.act_blank = self._action("&Blank screen", self.blank_overlay.toggle, tip="B or . (a clicker's blank button)")
        self.act_plane = self._action("Show vector &plane", self.toggle_plane, tip="P (brings the plane back in presentation mode)")
        self.act_about = self._action("&About QKV Studio", self.show_about)
        self.act_quiz = self._action("&Check yourself…", self.show_quiz,
                                     tip="The lesson's three questions with feedback, and the pipeline card")
        self.act_explorer = self._action("√dₖ &explorer", lambda: self.show_panel(self.dock_explorer), "Ctrl+Shift+D",
                                         tip="Why divide by √dₖ: watch the softmax saturate as dₖ grows")
        self.act_heads = self._action("&Heads (multi-head)", lambda: self.show_panel(self.dock_heads), "Ctrl+Shift+H")
        self.act_model = self._action("&Real model (MiniLM)…", lambda: (self.show_panel(self.dock_model),
                                                                       self.model_panel.sentence.setFocus()),
                                      "Ctrl+Shift+M", tip="A real transformer's heads on any sentence, offline")
        s.scene_changed.connect(self._sync_toggles)
        self._sync_toggles()

    def _build_menus(self) -> None:
        mb = self.menuBar()
        m = mb.addMenu("&File")
        m.addAction(self.act_new)
        m.addAction(self.act_open)
        # The presets (read from disk) and the recent files (from the settings) are listed when the
        # menu opens, not while the window starts.
        self.preset_menu = m.addMenu("Open &preset")
        self.preset_menu.setToolTipsVisible(True)  # (each entry's whole description)
        self.preset_menu.aboutToShow.connect(self._fill_preset_menu)
        m.addAction(self.act_open_deck)
        self.recent_menu = m.addMenu("Open &recent")
        self._recent_stale = True
        m.aboutToShow.connect(self._rebuild_recent_if_stale)
        m.addSeparator()
        m.addAction(self.act_save)
        m.addAction(self.act_save_as)
        m.addSeparator()
        self.export_menu = m
        m.addAction(self.act_export)
        m.addAction(self.act_copy_heatmap)
        m.addAction(self.act_export_numbers)
        m.addSeparator()
        m.addAction(self.act_quit)

        m = mb.addMenu("&Edit")
        m.addAction(self.act_undo)
        m.addAction(self.act_redo)
        m.addSeparator()
        for a in (self.act_add_token, self.act_remove_token, self.act_add_dk, self.act_remove_dk,
                  self.act_add_dv, self.act_remove_dv):
            m.addAction(a)

        m = mb.addMenu("&Attention")
        m.addAction(self.act_back)
        m.addAction(self.act_next)
        m.addSeparator()
        for stage in STAGES:
            m.addAction(self.stage_actions[stage])
        m.addSeparator()
        m.addAction(self.act_causal)
        m.addAction(self.act_scale)
        m.addSeparator()
        m.addAction(self.act_projection)
        m.addAction(self.act_randomise)

        m = mb.addMenu("&View")
        for dock in (self.dock_editors, self.dock_plane, self.dock_calc, self.dock_blend):
            m.addAction(dock.toggleViewAction())
        m.addSeparator()
        for a in (self.act_explorer, self.act_heads, self.act_model):
            m.addAction(a)
        m.addSeparator()
        theme_menu = m.addMenu("&Theme")
        self.theme_group = QActionGroup(self)
        self.theme_actions = {}
        for name in THEMES:
            act = theme_menu.addAction(name.capitalize())
            act.setCheckable(True)
            act.triggered.connect(lambda _=False, n=name: self.apply_theme(n))
            self.theme_group.addAction(act)
            self.theme_actions[name] = act
        cmap_menu = m.addMenu("&Colormap (weights)")
        self.cmap_group = QActionGroup(self)
        self.cmap_actions = {}
        for name in SEQUENTIAL:
            act = cmap_menu.addAction(name)
            act.setCheckable(True)
            act.triggered.connect(lambda _=False, n=name: self.apply_colormap(n))
            self.cmap_group.addAction(act)
            self.cmap_actions[name] = act
        m.addSeparator()
        for a in (self.act_zoom_in, self.act_zoom_out, self.act_zoom_reset):
            m.addAction(a)
        m.addAction(self.act_animate)
        m.addSeparator()
        m.addAction(self.act_presentation)
        m.addAction(self.act_plane)
        m.addAction(self.act_blank)

        m = mb.addMenu("&Help")
        m.addAction(self.act_quiz)
        m.addAction(self.act_shortcuts)
        m.addAction(self.act_about)

    # ---- sync helpers -----------------------------------------------------------------------------
    def _sync_stage_actions(self, *_: object) -> None:
        self.stage_actions[self.session.stage].setChecked(True)

    def _sync_toggles(self) -> None:
        s = self.session.scene
        self.act_causal.setChecked(isinstance(s.mask, str) and s.mask == "causal")
        self.act_scale.setChecked(s.scale)
        self.act_projection.setChecked(s.mode == "projection")

    def _sync_mode(self) -> None:
        projection = self.session.scene.mode == "projection"
        was = self.editor_tabs.isTabVisible(1)
        if projection == was:  # setTabVisible re-lays out and repaints the whole column, even unchanged
            return
        if projection:
            self.editors.build_projection()
        self.editor_tabs.setTabVisible(1, projection)
        self.editor_tabs.tabBar().setVisible(projection)
        if projection and not was:
            self.editor_tabs.setCurrentIndex(1)
        elif not projection:
            self.editor_tabs.setCurrentIndex(0)

    def _update_title(self, *_: object) -> None:
        path = self.session.path
        name = Path(path).name if path else (self.session.scene.title or "untitled")
        self.setWindowTitle(f"{name}[*] — {APP_NAME}")
        self.setWindowModified(self.session.modified)

    def set_projection_mode(self, on: bool) -> None:
        """Switch direct ⇄ projection; the numbers are kept both ways (one undo step)."""
        s = self.session
        try:
            scene = projection_of(s.scene) if on else s.scene.to_direct()
        except SceneError as exc:
            s.message.emit(str(exc))
            self._sync_toggles()
            return
        s.replace_scene(scene, "Projection mode" if on else "Direct Q, K, V")

    def randomise_projections(self) -> None:
        self._seed = getattr(self, "_seed", 0) + 1
        try:
            scene = with_random_projections(self.session.scene, self._seed)
        except SceneError as exc:
            self.session.message.emit(str(exc))
            return
        self.session.replace_scene(scene, f"Randomise W (seed {self._seed})")

    # ---- keys -------------------------------------------------------------------------------------
    def handle_lecture_key(self, key: int, text: str) -> bool:
        """A lecture key pressed anywhere but in a text field; returns True if it was used."""
        s = self.session
        if self.shortcuts_overlay.isVisible():
            self.shortcuts_overlay.hide()
            return True
        if key in (Qt.Key_B, Qt.Key_Period):
            self.blank_overlay.toggle()
            return True
        if self.blank_overlay.isVisible():
            return True  # a black screen ignores everything but B / . (and Esc through its action)
        if key in (Qt.Key_Right, Qt.Key_PageDown, Qt.Key_Space):
            self.next_step()
        elif key in (Qt.Key_Left, Qt.Key_PageUp):
            self.back_step()
        elif key == Qt.Key_P:
            self.toggle_plane()
        elif text == "?":
            self.show_shortcuts()
        elif key == Qt.Key_Home:
            s.set_stage(STAGES[0])
        elif key == Qt.Key_End:
            s.set_stage(STAGES[-1])
        elif key == Qt.Key_Up:
            s.move_query(-1)
        elif key == Qt.Key_Down:
            s.move_query(+1)
        elif text and text in "123456789" and len(text) == 1:
            index = int(text) - 1
            if index < s.scene.n:
                s.set_query(index)
        else:
            return False
        return True

    # ---- theme, colormap, zoom, presentation -----------------------------------------------------
    def apply_theme(self, name: str) -> None:
        self._theme = get_theme(name)
        self.theme_actions[name].setChecked(True)
        for w in (self.heatmap, self.plane, self.blend) + self._built_panels():
            w.set_theme(self._theme)
        self.stepper.set_accent(self._theme.accent if name != "light" else self._theme.highlight)
        self._apply_style()
        self._store("theme", name)

    def _apply_style(self) -> None:
        """The theme's colours as the window's palette.

        No style sheet on the window: one there, even if it only sets a font size, makes every widget
        paint through Qt's style-sheet style, which matches its rules again for each table cell (an
        editor row took 2.2 ms instead of 0.9, every edit).  Fonts follow the zoom through setFont
        (:meth:`_apply_font_scale`); what a palette cannot say — the checked stage button in the
        accent colour — is a sheet on those buttons alone.  The palette is the application's too, so
        menus, dialogs and message boxes (windows of their own) follow the theme.
        """
        t = self._theme
        palette = QApplication.style().standardPalette()
        if t.name != "light":
            roles = {
                QPalette.ColorRole.Window: t.panel, QPalette.ColorRole.WindowText: t.text,
                QPalette.ColorRole.Base: t.background, QPalette.ColorRole.AlternateBase: t.panel,
                QPalette.ColorRole.Text: t.text, QPalette.ColorRole.Button: t.panel,
                QPalette.ColorRole.ButtonText: t.text, QPalette.ColorRole.BrightText: t.text,
                QPalette.ColorRole.Highlight: t.accent, QPalette.ColorRole.HighlightedText: t.background,
                QPalette.ColorRole.ToolTipBase: t.panel, QPalette.ColorRole.ToolTipText: t.text,
                QPalette.ColorRole.PlaceholderText: t.muted, QPalette.ColorRole.Mid: t.grid,
                QPalette.ColorRole.Midlight: t.grid, QPalette.ColorRole.Dark: t.grid,
                QPalette.ColorRole.Light: t.grid, QPalette.ColorRole.Shadow: t.background,
            }
            for role, color in roles.items():
                palette.setColor(QPalette.ColorGroup.All, role, QColor(color))
            for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
                palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(t.muted))
        QApplication.setPalette(palette)  # (a window does not take its parent's palette)
        self.setPalette(palette)
        tables = [self.calc] + [e.table for e in self.editors.built()]
        set_grid_color(tables, None if t.name == "light" else t.grid)
        # The current stage's button in the colour the formula marks the stage's piece with: Fusion's
        # checked button is a shade of grey that the back of a hall cannot tell from the others.
        # (a button with a sheet takes the application's font, not the window's: the size goes in it)
        size = f"font-size: {self.font().pointSizeF():.1f}pt;"
        buttons = (
            f"QPushButton {{ {size} }}"
            f"QPushButton:checked {{ background: {t.highlight}; color: #ffffff; "
            f"border: 1px solid {t.highlight}; border-radius: 3px; padding: 3px 2px; }}"
        ) if t.name == "light" else (
            f"QPushButton {{ {size} border: {max(1, int(t.line_scale))}px solid {t.text}; padding: 4px 3px; "
            f"background: {t.panel}; color: {t.text}; }}"
            f"QPushButton:checked {{ background: {t.accent}; color: {t.background}; }}"
            f"QPushButton:disabled {{ color: {t.muted}; border-color: {t.muted}; }}")
        # (each button its own sheet: on the stepper it would cut its labels off the window's palette)
        for button in self.stepper.findChildren(QPushButton):
            if buttons != button.styleSheet():  # setting even the same sheet restyles the widget
                button.setStyleSheet(buttons)

    def apply_colormap(self, name: str) -> None:
        self._colormap = name
        self.cmap_actions[name].setChecked(True)
        for w in (self.heatmap,) + self._built_panels():
            w.set_colormap(name)
        self._store("colormap", name)

    def set_animate(self, on: bool) -> None:
        self.heatmap.animate = bool(on)
        self.act_animate.setChecked(bool(on))
        self._store("animate", bool(on))

    def set_zoom(self, zoom: float) -> None:
        """Scale every font and line (Ctrl++ / Ctrl+− / Ctrl+0)."""
        self._zoom = max(0.5, min(4.0, zoom))
        self._apply_font_scale()
        self._store("zoom", self._zoom)

    def _font_scale(self) -> float:
        return self._zoom * (PRESENTATION_SCALE if self._presentation else 1.0)

    def _style_new_panels(self) -> None:
        """The window's theme and font scale on the panels just built (end of construction).

        The heatmap, the vector plane and the blend view draw themselves in the default theme at scale
        1 as they are built: they are told again only when the window's theme or zoom differs (10–20
        ms each).
        """
        t = self._theme
        self.theme_actions[t.name].setChecked(True)
        as_built = (self.heatmap, self.plane, self.blend)
        for w in (self.heatmap, self.plane, self.blend):
            if t.name != DEFAULT_THEME or w not in as_built:
                w.set_theme(t)
        self.stepper.set_accent(t.accent if t.name != "light" else t.highlight)
        self._apply_font_scale(as_built=as_built if self._font_scale() == 1.0 else ())

    def _apply_font_scale(self, *, as_built: tuple = ()) -> None:
        """Fonts, row heights and the style sheet for the current zoom; panels in ``as_built`` are
        already drawn at this scale and are not told again."""
        f = self._font_scale()
        font = QFont(QApplication.font())
        font.setPointSizeF(BASE_POINT_SIZE * f)
        self.setFont(font)
        for dock in (self.dock_editors, self.dock_plane, self.dock_calc, self.dock_blend, self.dock_model):
            dock.widget().setFont(font)
        big = QFont(font)
        big.setPointSizeF(BASE_POINT_SIZE * f * (1.15 if self._presentation else 1.45))
        self.stepper.caption.setFont(big)
        self.stepper.formula.setFont(big)
        self.stepper.stage_formula.setFont(big)
        for w in (self.heatmap, self.plane, self.blend) + self._built_panels():
            if w not in as_built:
                w.set_font_scale(f)
        for view in (self.calc,) + tuple(e.table for e in self.editors.built()):
            view.verticalHeader().setDefaultSectionSize(self._row_height())
        self._apply_style()

    def _style_new_editors(self, editors: tuple[MatrixEditor, ...]) -> None:
        """The window's grid colour and row height on editors built after the window."""
        t = self._theme
        set_grid_color([e.table for e in editors], None if t.name == "light" else t.grid)
        for e in editors:
            e.table.verticalHeader().setDefaultSectionSize(self._row_height())

    def _row_height(self) -> int:
        """The height of a table row at the current zoom."""
        return int(BASE_POINT_SIZE * self._font_scale() * 2.4)

    def is_presentation(self) -> bool:
        return self._presentation

    def toggle_presentation(self) -> None:
        self.set_presentation(not self._presentation)

    def set_presentation(self, on: bool, *, fullscreen: bool = True) -> None:
        """Presentation mode: editing panels fold away, text grows for the back row, full screen."""
        if on == self._presentation:
            return
        self._presentation = on
        self.act_presentation.setChecked(on)
        self.act_leave.setEnabled(on)
        if on:
            self._saved_state = self.saveState()
            self.dock_editors.hide()
            self.dock_plane.hide()
            self.dock_calc.show()
            self.dock_blend.show()
            self.menuBar().hide()
            self.statusBar().hide()
            self.layout_docks()
            if fullscreen:
                self.showFullScreen()
        else:
            if self.isFullScreen():
                self.showNormal()
            self.menuBar().show()
            self.statusBar().show()
            if self._saved_state is not None:
                self.restoreState(self._saved_state)
        self._apply_font_scale()
        self.presentation_changed.emit(on)

    # ---- files ------------------------------------------------------------------------------------
    def confirm_discard(self) -> bool:
        """Ask before unsaved changes are lost; True when it is fine to go on."""
        if not self.session.modified:
            return True
        box = QMessageBox(QMessageBox.Warning, APP_NAME, "The scene has unsaved changes.",
                          QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, self)
        box.setInformativeText("Save them first?")
        choice = box.exec()
        if choice == QMessageBox.Save:
            return self.save()
        return choice == QMessageBox.Discard

    def new_scene(self) -> None:
        if self.confirm_discard():
            self._leave_deck()
            self.session.load(load_preset("lesson"), "")

    def open_preset(self, name: str) -> None:
        if self.confirm_discard():
            self._leave_deck()
            self.session.load(load_preset(name), "")

    def _leave_deck(self) -> None:
        self.deck = None
        self.deck_index = 0
        self.stepper.set_deck_position(0, 0)

    def open_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open session", self._last_folder(), FILE_FILTER)
        if path:
            self.open_path(path, ask=False)

    def open_path(self, path: str, *, ask: bool = True) -> bool:
        """Open a session file; a bad file is refused with its message and the current work stays."""
        if ask and not self.confirm_discard():
            return False
        try:
            scene = read_session(path)
        except SessionFileError as exc:
            QMessageBox.warning(self, APP_NAME, f"Could not open the file.\n\n{exc}")
            return False
        self._leave_deck()
        self.session.load(scene, os.path.abspath(path))
        self._add_recent(os.path.abspath(path))
        self._store("last_folder", str(Path(path).resolve().parent))
        return True

    def save(self) -> bool:
        if not self.session.path:
            return self.save_as()
        return self._write(self.session.path)

    def save_as(self) -> bool:
        start = self.session.path or os.path.join(self._last_folder(), "attention.qkv.json")
        path, _ = QFileDialog.getSaveFileName(self, "Save session", start, FILE_FILTER)
        if not path:
            return False
        if not path.endswith(".json"):
            path += ".qkv.json"
        return self._write(path)

    def _write(self, path: str) -> bool:
        try:
            write_session(self.session.scene, path)
        except SessionFileError as exc:
            QMessageBox.warning(self, APP_NAME, f"Could not save.\n\n{exc}\n\nYour work is still open.")
            return False
        self.session.mark_saved(os.path.abspath(path))
        self._add_recent(os.path.abspath(path))
        self._store("last_folder", str(Path(path).resolve().parent))
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    # ---- settings ---------------------------------------------------------------------------------
    def settings(self) -> QSettings:
        return QSettings()

    def _store(self, key: str, value) -> None:
        if self._use_settings:
            self.settings().setValue(key, value)

    def _last_folder(self) -> str:
        if self._use_settings:
            return str(self.settings().value("last_folder", os.path.expanduser("~")))
        return os.path.expanduser("~")

    def _recent(self) -> list[str]:
        if not self._use_settings:
            return []
        value = self.settings().value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _add_recent(self, path: str) -> None:
        if not self._use_settings:
            return
        recent = [p for p in self._recent() if p != path]
        recent.insert(0, path)
        self.settings().setValue("recent_files", recent[:MAX_RECENT])
        self._rebuild_recent()

    def _fill_preset_menu(self) -> None:
        if self.preset_menu.actions():
            return
        for preset in list_presets():
            act = self.preset_menu.addAction(f"{preset.name} — {elide_words(preset.description, 60)}")
            act.setStatusTip(preset.description)  # (the whole of it: the menu's line is cut at a word)
            act.setToolTip(preset.description)
            act.triggered.connect(lambda _=False, name=preset.name: self.open_preset(name))

    def _rebuild_recent_if_stale(self) -> None:
        if self._recent_stale:
            self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self._recent_stale = False
        self.recent_menu.clear()
        recent = self._recent()
        for p in recent:
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _=False, path=p: self.open_path(path))
        self.recent_menu.setEnabled(bool(recent))

    _REMEMBERED = ("geometry", "window_state", "theme", "colormap", "zoom", "animate")

    def _read_settings(self) -> dict:
        """What the window remembers, read in one go before it is built; theme and zoom take effect
        at once (the panels are then built and styled once, in them)."""
        st = self.settings()
        values = {key: st.value(key) for key in self._REMEMBERED}
        self._theme = THEMES.get(str(values["theme"] or "light"), THEMES["light"])
        try:
            self._zoom = max(0.5, min(4.0, float(1.0 if values["zoom"] is None else values["zoom"])))
        except (TypeError, ValueError):
            self._zoom = 1.0
        return values

    def _restore_settings(self, values: dict) -> None:
        """Geometry, dock layout, colormap and animation from :meth:`_read_settings` (widgets built)."""
        if values["geometry"] is not None:
            self.restoreGeometry(values["geometry"])
        if values["window_state"] is not None:
            self._restored_state = bool(self.restoreState(values["window_state"]))
        cmap = "viridis" if values["colormap"] is None else str(values["colormap"])
        if cmap in SEQUENTIAL:
            QTimer.singleShot(0, lambda: self.apply_colormap(cmap))
        animate = True if values["animate"] is None else values["animate"]
        self.heatmap.animate = animate not in (False, "false", "0", 0)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if not self.confirm_discard():
            event.ignore()
            return
        if self._use_settings:
            if self._presentation:
                self.set_presentation(False)
            st = self.settings()
            st.setValue("geometry", self.saveGeometry())
            st.setValue("window_state", self.saveState())
        QApplication.instance().removeEventFilter(self._key_router)
        event.accept()

    # ---- help -------------------------------------------------------------------------------------
    def show_shortcuts(self) -> None:
        self.shortcuts_overlay.set_font_scale(self._font_scale())
        if not self.shortcuts_overlay.isVisible():
            self.shortcuts_overlay.toggle()
        self.shortcuts_overlay.setFocus()

    def toggle_plane(self) -> None:
        """Show or hide the vector plane (in presentation mode it comes back beside the heatmap)."""
        self.dock_plane.setVisible(not self.dock_plane.isVisible())
        if self.dock_plane.isVisible() and self._presentation:
            self.dock_plane.setFloating(False)
            self.resizeDocks([self.dock_plane], [int(self.width() * 0.3)], Qt.Horizontal)

    # ---- stepping, across the scenes of a deck -----------------------------------------------------
    def next_step(self) -> None:
        """Next stage; after the last stage of a deck's scene, the next scene's first stage."""
        if self.session.step_stage(+1):
            return
        if self.deck is not None and self.deck_index + 1 < len(self.deck):
            self._show_deck_scene(self.deck_index + 1, STAGES[0])

    def back_step(self) -> None:
        if self.session.step_stage(-1):
            return
        if self.deck is not None and self.deck_index > 0:
            self._show_deck_scene(self.deck_index - 1, STAGES[-1])

    def can_step(self, delta: int) -> bool:
        i = STAGES.index(self.session.stage) + delta
        if 0 <= i < len(STAGES):
            return True
        if self.deck is None:
            return False
        return 0 <= self.deck_index + delta < len(self.deck)

    def open_deck(self, path: str, *, ask: bool = True) -> bool:
        """Open a lecture deck and show its first scene; a bad deck is refused with its message."""
        if ask and not self.confirm_discard():
            return False
        try:
            deck = read_deck(path)
        except SessionFileError as exc:
            QMessageBox.warning(self, APP_NAME, f"Could not open the deck.\n\n{exc}")
            return False
        self.deck = deck
        self._show_deck_scene(0, STAGES[0])
        return True

    def open_deck_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open lecture deck", self._last_folder(),
                                              "QKV Studio decks (*.qkvdeck.json *.json);;All files (*)")
        if path:
            self.open_deck(path, ask=False)

    def _show_deck_scene(self, index: int, stage: str) -> None:
        if self.session.modified and not self.confirm_discard():
            return
        self.deck_index = index
        scene = self.deck.scenes[index]
        self.session.load(scene._evolve(stage=stage), self.deck.path_of(index))
        self.statusBar().showMessage(f"Deck: scene {index + 1} of {len(self.deck)}", 4000)
        self.stepper.set_deck_position(index, len(self.deck))

    def show_about(self) -> None:
        from qkv_studio import __version__

        QMessageBox.about(self, APP_NAME, f"<b>QKV Studio {__version__}</b><p>Self-attention you can see, "
                                          "touch and show: queries, keys, values, scaled dot-product, softmax "
                                          "and the weighted blend.</p>")


def _export_dialog():
    """The export dialog's module, imported when first used (it is not needed to start)."""
    from qkv_studio.ui.dialogs import export_dialog

    return export_dialog
