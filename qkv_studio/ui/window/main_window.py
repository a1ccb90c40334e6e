"""The main window: the lesson's Q/K/V attention calculator, made real.

Layout: the stage stepper (caption + formula) across the top, the live heatmap in the centre, the
tokens and Q/K/V editors docked left with the vector plane below them, the calculation table and the
blend view docked right.  Every dock can be moved, resized or closed; the layout is remembered.

The window composes; its parts do the work: the docks and panels of the panel registry
(:mod:`.docks`, :mod:`qkv_studio.ui.registry`), the actions and menus (:mod:`.actions`, :mod:`.menus`),
the lecture keys (:mod:`.keys`), presentation mode and the default layout (:mod:`.presentation`),
files (:mod:`.files`), what it remembers (:mod:`.settings`) and decks (:mod:`.lecture`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QMainWindow,
    QMenu,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from qkv_studio import _resume_gc
from qkv_studio.core import Scene, View
from qkv_studio.render.theme import THEMES, Theme
from qkv_studio.state.appearance import MAX_SCALE, Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.heatmap_view import HeatmapView
from qkv_studio.ui.panels.stage_stepper import StageStepper

# The export dialog, the quiz and the panels of the View menu (√dₖ explorer, heads, real model) are
# imported and built when first used: start-up does not wait for them (nor for superqt).
from qkv_studio.ui.widgets.overlays import BlankOverlay, ShortcutsOverlay
from qkv_studio.ui.widgets.qapp import running_app
from qkv_studio.ui.window import actions as menu_table
from qkv_studio.ui.window import settings as window_settings
from qkv_studio.ui.window.docks import PanelHost
from qkv_studio.ui.window.files import APP_NAME, Files
from qkv_studio.ui.window.keys import KeyRouter, handle_lecture_key, shortcut_rows
from qkv_studio.ui.window.lecture import Lecture
from qkv_studio.ui.window.parts import Docks, Panels, WindowActions
from qkv_studio.ui.window.presentation import Presentation
from qkv_studio.ui.window.presenter import Presenter
from qkv_studio.ui.window.screens import PREFERRED_SIZE, ScreenFit
from qkv_studio.ui.window.settings import Remembered, WindowSettings
from qkv_studio.ui.window.style import WindowStyle

if TYPE_CHECKING:
    from qkv_studio.ui.panels.editor_set import EditorSet
    from qkv_studio.ui.panels.tokens_panel import TokensPanel
    from qkv_studio.ui.window.edit_clipboard import EditClipboard

__all__ = ["APP_NAME", "MainWindow"]


class MainWindow(QMainWindow):
    """QKV Studio's window, bound to one :class:`Session`.

    ``presentation_changed(bool)`` fires when presentation mode is entered or left.
    """

    presentation_changed = Signal(bool)
    # Its parts, made in __init__ (declared here: the parts' modules are checked before it).
    session: Session
    appearance: Appearance
    settings_store: WindowSettings
    presentation: Presentation
    files: Files
    lecture: Lecture
    panel_host: PanelHost
    docks: Docks
    panels: Panels
    acts: WindowActions
    submenus: dict[str, QMenu]
    screen_fit: ScreenFit
    window_style: WindowStyle
    presenter: Presenter
    blank_overlay: BlankOverlay
    stepper: StageStepper
    heatmap: HeatmapView
    centre_stack: QStackedWidget
    _zoom: float
    # Made as the window is built by its parts: the menus (.actions, .menus), the editors' factory
    # (.panel_factories) and the clipboard actions' target (.edit_clipboard).
    menu_by_title: dict[str, QMenu]
    stage_group: QActionGroup
    stage_actions: dict[str, QAction]
    theme_group: QActionGroup
    theme_actions: dict[str, QAction]
    cmap_group: QActionGroup
    cmap_actions: dict[str, QAction]
    tokens_panel: TokensPanel
    editors: EditorSet
    editor_tabs: QTabWidget
    editor_projection_page: QSplitter
    edit_clipboard: EditClipboard
    projection_seed = 0  # (Attention → Randomise W: the seed of the last draw)
    _key_router: KeyRouter | None = None  # (changeEvent runs while the window is being built)
    _key_router_installed = False
    _shortcuts_overlay: ShortcutsOverlay | None = None
    _painted = False

    def __init__(self, scene: Scene, path: str = "", *, use_settings: bool = True, view: View | None = None) -> None:
        _resume_gc(freeze=True)  # the start-up imports are done (see qkv_studio/__init__.py)
        super().__init__()
        self.session = Session(scene, path, self, view=view)
        self.settings_store = WindowSettings(use_settings)
        self.appearance = Appearance(parent=self)  # theme, colour map, scale: every panel binds to it
        self._zoom = 1.0
        self._restored_state = False
        self.presentation = Presentation(self)
        self.files = Files(self)
        self.lecture = Lecture(self)
        self.panel_host = PanelHost(self)
        self.docks = Docks(self.panel_host)
        self.panels = Panels(self.panel_host)
        self.acts = WindowActions()
        self.submenus = {}
        self.setDockNestingEnabled(True)
        self.screen_fit = ScreenFit(self)  # (inside the screen it opens on; the screen scale follows it)
        self.resize(PREFERRED_SIZE)  # (fitted into the screen at the first show, unless resized before)
        # Theme and zoom are known before anything is built: the palette goes on before the panels,
        # which are built bound to the Appearance, the stage buttons' sheets once they are docked
        # (before they are first shown or polished).
        settings = self._read_settings() if use_settings else None
        self.window_style = WindowStyle(self, self.appearance)
        self._build_widgets()
        self.window_style.style_stage_buttons()
        self.presenter = Presenter(self)  # (the console, ink and laser; its layer is under the covers)
        self.blank_overlay = BlankOverlay(self)
        menu_table.build(self)
        self.files.bind_menus(self.menu_by_title["&File"], self.submenus["preset_menu"],
                              self.submenus["recent_menu"])
        self.stepper.set_navigator(self.next_step, self.back_step, self.can_step)
        self.session.path_changed.connect(self.files.update_title)
        self.session.modified_changed.connect(self.files.update_title)
        self.session.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        # The router acts only while this window is active, so it is installed when the window first
        # becomes active: the ~3000 events of building, showing and first painting the window do not
        # each pass through Python on their way (~25 ms).
        self._key_router = KeyRouter(self)
        self.files.update_title()
        self.resize(PREFERRED_SIZE)
        self.setAttribute(Qt.WidgetAttribute.WA_Resized, False)  # (no size asked for yet: see ScreenFit)
        if settings is not None:
            self._restored_state = window_settings.restore(self, settings)
            self.screen_fit.keep_inside()  # (a geometry remembered from a larger screen)
        self._style_new_panels()
        self.acts.animate.setChecked(self.heatmap.animate)

    # ---- construction -----------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self.stepper = StageStepper(self.session, appearance=self.appearance)
        self.heatmap = HeatmapView(self.session, appearance=self.appearance)
        centre = QWidget()
        lay = QVBoxLayout(centre)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stepper)
        # The heatmap, or a centre panel of the registry in its place (e.g. Attention → Without projections)
        self.centre_stack = QStackedWidget()
        self.centre_stack.addWidget(self.heatmap)
        lay.addWidget(self.centre_stack, 1)
        self.setCentralWidget(centre)
        self.panel_host.build_docks()  # (the core docks and the View menu's, see qkv_studio.ui.registry)

    def _read_settings(self) -> Remembered:
        """What the window remembers, read in one go before it is built; theme and zoom take effect
        at once (the panels are then built and styled once, in them)."""
        values = self.settings_store.read()
        self.appearance.set_theme(THEMES[values.theme])
        self._zoom = values.zoom
        self.appearance.set_font_scale(self._font_scale())
        return values

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - Qt's name
        if visible:
            self.screen_fit.first_show(self._restored_state)
            self.presentation.first_show(self._restored_state)
        super().setVisible(visible)
        if visible:
            self.screen_fit.after_show()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        if not self._painted:  # (the first paint: what it did not show is built now, see PanelSpec.deferred)
            self._painted = True
            self.panel_host.build_deferred_soon()

    def settle_pending(self) -> bool:
        """(:func:`qkv_studio.ui.update_policy.settle`) The deferred docks that the idle turns after the
        first paint would build, built now; True if any was."""
        return self._painted and self.panel_host.build_rest_now()

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if (self._key_router is not None and not self._key_router_installed
                and event.type() == QEvent.Type.ActivationChange and self.isActiveWindow()):
            self._key_router_installed = True
            running_app().installEventFilter(self._key_router)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if not self.confirm_discard():
            event.ignore()
            return
        if self.settings_store.enabled:
            if self._presentation:
                self.set_presentation(False)
            self.settings_store.store_layout(self.saveGeometry(), self.saveState(), self.isMaximized())
        if self._key_router is not None:
            running_app().removeEventFilter(self._key_router)
        self.presenter.close_console()  # (a window of its own: it would stay on the laptop's screen)
        event.accept()

    # ---- panels (qkv_studio.ui.registry) ------------------------------------------------------------
    def panel(self, name: str) -> QWidget:
        """The registered panel ``name`` (a View-menu panel is built the first time it is asked for)."""
        return self.panel_host.panel(name)

    def built_panel(self, name: str) -> QWidget | None:
        """The View-menu panel ``name`` if it has been built, else None."""
        return self.panel_host.built(name)

    def dock(self, name: str) -> QDockWidget:
        """The dock of the registered panel ``name``."""
        return self.panel_host.docks[name]

    @property
    def _quiz(self):
        """The quiz dialog once it has been opened (None before)."""
        return self.built_panel("quiz")

    def _built_panels(self) -> tuple:
        return self.panel_host.built_docked()

    def show_panel(self, dock: QDockWidget | str) -> None:
        """Bring a panel of the View menu (its dock or its name) to the front."""
        self.panel_host.show(dock)

    def open_panel(self, name: str) -> None:
        """A panel's menu entry: bring it forward, the keyboard in it."""
        self.panel_host.open(name)

    def show_quiz(self) -> None:
        self.panel_host.show("quiz")

    # ---- keys, help -------------------------------------------------------------------------------
    def handle_lecture_key(self, key: int, text: str) -> bool:
        """A lecture key pressed anywhere but in a text field; returns True if it was used."""
        return handle_lecture_key(self, key, text)

    @property
    def shortcuts_overlay(self) -> ShortcutsOverlay:
        """The shortcut list (F1 or ?), built the first time it is asked for (over everything else)."""
        if self._shortcuts_overlay is None:
            self._shortcuts_overlay = ShortcutsOverlay(self, appearance=self.appearance)
        return self._shortcuts_overlay

    def covers(self) -> tuple[QWidget, ...]:
        """What can cover the window, bottom first: the black screen, the shortcut list once it is built,
        and presenting, the slide's black screen."""
        built = self._shortcuts_overlay
        own = (self.blank_overlay,) if built is None else (self.blank_overlay, built)
        return own + self.presentation.covers()

    def show_shortcuts(self) -> None:
        """The shortcut list (F1 or ?), made from the actions and lecture keys the window has now (on the
        slide while presenting)."""
        overlay = self.presentation.slide.shortcuts_overlay() if self.presentation.on else self.shortcuts_overlay
        overlay.set_rows(shortcut_rows(self))
        if not overlay.isVisible():
            overlay.toggle()
        overlay.setFocus()

    # ---- theme, colormap, zoom, presentation -----------------------------------------------------
    def apply_theme(self, name: str) -> None:
        """Theme ``name`` (View → Theme): the Appearance's, so every panel restyles itself."""
        self.appearance.set_theme(name)

    def apply_colormap(self, name: str) -> None:
        """The weights' colour map ``name`` (View → Colormap), as the Appearance's."""
        self.appearance.set_colormap(name)

    def _on_theme_changed(self, theme: Theme) -> None:
        self.theme_actions[theme.name].setChecked(True)
        self._store("theme", theme.name)

    def _on_colormap_changed(self, name: str) -> None:
        self.cmap_actions[name].setChecked(True)
        self._store("colormap", name)

    def set_animate(self, on: bool) -> None:
        self.heatmap.animate = bool(on)
        self.acts.animate.setChecked(bool(on))
        self._store("animate", bool(on))

    def set_zoom(self, zoom: float) -> None:
        """Scale every font and line (Ctrl++ / Ctrl+− / Ctrl+0)."""
        self._zoom = max(0.5, min(4.0, zoom))
        self._apply_font_scale()
        self.presentation.zoom_changed()
        self._store("zoom", self._zoom)

    def _font_scale(self) -> float:
        return min(MAX_SCALE, self._zoom)  # (the slide has a scale of its own: qkv_studio.ui.slide.look)

    def zoom(self) -> float:
        """The window's zoom (View → Zoom in / out; the slide's text follows it too)."""
        return self._zoom

    def _style_new_panels(self) -> None:
        """End of construction: the menus show the Appearance and follow it; the window's fonts go on.

        The panels were built bound to the Appearance (in its look: each restyled only what differs
        from the default look it is built in)."""
        a = self.appearance
        self.theme_actions[a.theme.name].setChecked(True)
        self.cmap_actions[a.colormap].setChecked(True)
        a.theme_changed.connect(self._on_theme_changed)
        a.colormap_changed.connect(self._on_colormap_changed)
        self.window_style.style_fonts()

    def _apply_font_scale(self) -> None:
        """The text scale for the current zoom and presentation mode, as the Appearance's (the panels
        and the window's fonts follow it)."""
        f = self._font_scale()
        if f == self.appearance.font_scale:
            self.window_style.style_fonts()  # (presentation's captions have a size of their own)
        else:
            self.appearance.set_font_scale(f)


    # ---- presentation (presentation.py) -----------------------------------------------------------
    @property
    def _presentation(self) -> bool:
        return self.presentation.on

    def is_presentation(self) -> bool:
        return self.presentation.on

    def toggle_presentation(self) -> None:
        self.set_presentation(not self.presentation.on)

    def set_presentation(self, on: bool, *, fullscreen: bool = True) -> None:
        """Presentation mode: editing panels fold away, text grows for the back row, full screen (with
        two screens on the projector, the presenter console on the laptop)."""
        self.presenter.present(on, fullscreen=fullscreen)

    def layout_docks(self) -> None:
        """Share the width and height between the panels in proportion to the window (default layout)."""
        self.panel_host.build_deferred()  # (laid out as they are: every panel built)
        self.presentation.layout_docks()

    def toggle_plane(self) -> None:
        """Show or hide the vector plane (in presentation mode it comes back beside the heatmap)."""
        self.presentation.toggle_plane()

    # ---- files and settings (files.py, settings.py) -------------------------------------------------
    def confirm_discard(self) -> bool:
        """Ask before unsaved changes are lost; True when it is fine to go on."""
        return self.files.confirm_discard()

    def new_scene(self) -> None:
        self.files.new_scene()

    def open_preset(self, name: str) -> None:
        self.files.open_preset(name)

    def open_dialog(self) -> None:
        self.files.open_dialog()

    def open_path(self, path: str, *, ask: bool = True) -> bool:
        """Open a session file; a bad file is refused with its message and the current work stays."""
        return self.files.open_path(path, ask=ask)

    def save(self) -> bool:
        return self.files.save()

    def save_as(self) -> bool:
        return self.files.save_as()

    def _write(self, path: str) -> bool:
        return self.files.write(path)

    def settings(self):
        """The application's QSettings."""
        return self.settings_store.qsettings()

    def _store(self, key: str, value) -> None:
        self.settings_store.store(key, value)

    # ---- stepping, across the scenes of a deck (lecture.py) -------------------------------------------
    @property
    def deck(self):
        """The lecture deck open in the window, or None."""
        return self.lecture.deck

    @property
    def deck_index(self) -> int:
        return self.lecture.index

    def next_step(self) -> None:
        """Next stage; after the last stage of a deck's scene, the next scene's first stage."""
        self.lecture.next_step()

    def back_step(self) -> None:
        self.lecture.back_step()

    def can_step(self, delta: int) -> bool:
        return self.lecture.can_step(delta)

    def open_deck(self, path: str, *, ask: bool = True) -> bool:
        """Open a lecture deck and show its first scene; a bad deck is refused with its message."""
        return self.lecture.open_deck(path, ask=ask)

    def open_deck_dialog(self) -> None:
        self.lecture.open_deck_dialog()
