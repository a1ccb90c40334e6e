"""Presentation mode, and the window's first layout (the default one: :mod:`.dock_layout`).

Presentation mode (F5, Esc leaves) shows a slide of its own (:class:`~qkv_studio.ui.slide.SlideWidget`:
the stage bar, formula and caption over the stage's main view, laid out by one rule) full screen on the
window's screen — or, without full screen, a window of the main window's size over it.  The main window
and its docks never move, so leaving it restores nothing: the slide is hidden.  :meth:`Presentation.
layout_docks` (again by View → Reset layout) is the normal window's default layout
(:class:`~.dock_layout.DockLayout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QScreen
from PySide6.QtWidgets import QDockWidget, QWidget

from qkv_studio.core.stages import stage_spec
from qkv_studio.ui.slide import SlideLook, SlideWidget
from qkv_studio.ui.widgets.overlays import BlankOverlay
from qkv_studio.ui.widgets.view_caches import fit_pixmap_cache
from qkv_studio.ui.window.dock_layout import DockLayout

if TYPE_CHECKING:
    from qkv_studio.ui.lesson.model import ModelPanel
    from qkv_studio.ui.window.main_window import MainWindow


def _activate(widget: QWidget | None) -> None:
    """Lay ``widget`` out now (through its layout, when it has one)."""
    lay = widget.layout() if widget is not None else None
    if lay is not None:
        lay.activate()


class Presentation:
    """Whether the window is presenting, the slide it shows then, and the layout of the window's docks."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self.docks = DockLayout(window)  # (the normal window's default layout)
        self.on = False
        self._laid_out = False
        self._fullscreen = False
        self._slide: SlideWidget | None = None
        self._look: SlideLook | None = None
        self._follows_writer = False  # (the model panel's changes followed, once it is built)
        window.session.stage_changed.connect(self._on_stage)

    # ---- the slide -----------------------------------------------------------------------------------
    @property
    def slide(self) -> SlideWidget:
        """The slide widget (a window of its own, owned by the main window), built when first asked for."""
        if self._slide is None:
            w = self._window
            self._look = SlideLook(w.appearance, parent=w)
            slide = SlideWidget(w.session, self._look, book=w.presenter.book, parent=w, flags=Qt.WindowType.Window)
            slide.setWindowTitle(f"{w.windowTitle()} — presentation")
            slide.stepper.set_navigator(w.next_step, w.back_step, w.can_step)
            slide.key_handler = w.handle_lecture_key
            slide.writer_source = self._writer_choices
            for act in (w.acts.leave, w.acts.presentation, w.acts.zoom_in, w.acts.zoom_out, w.acts.zoom_reset,
                        w.acts.undo, w.acts.redo):
                slide.addAction(act)  # (their shortcuts work on the slide: it is a window of its own)
            if w.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen):  # (an offscreen picture's window)
                slide.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
            self._slide = slide
            w.presenter.slide_built(slide)
        return self._slide

    def built_slide(self) -> SlideWidget | None:
        """The slide if it has been built, else None."""
        return self._slide

    def owns(self, widget: QWidget | None) -> bool:
        """Whether ``widget`` is the slide or inside it (the lecture keys work there)."""
        slide = self._slide
        while widget is not None and slide is not None:
            if widget is slide:
                return True
            widget = widget.parentWidget()
        return False

    def slide_active(self) -> bool:
        """Whether the slide is the active window."""
        return self.on and self._slide is not None and self._slide.isActiveWindow()

    def covers(self) -> tuple[QWidget, ...]:
        """What covers the slide while it is shown (its black screen)."""
        return self._slide.covers() if self.on and self._slide is not None else ()

    def blank_overlay(self) -> BlankOverlay:
        """The black screen B toggles: the slide's while presenting, else the window's."""
        return self.slide.blank if self.on else self._window.blank_overlay

    # ---- entering and leaving --------------------------------------------------------------------------
    def set(self, on: bool, *, fullscreen: bool = True, screen: QScreen | None = None) -> None:
        """Show (``on``) or hide the slide; ``fullscreen`` False shows it in a window of the main
        window's size and place; ``screen`` is the screen it goes full screen on (default: the window's)."""
        w = self._window
        if on == self.on:
            return
        self.on = on
        w.acts.presentation.setChecked(on)
        w.acts.leave.setEnabled(on)
        slide = self.slide
        if on:
            self._fullscreen = fullscreen
            self._follow_writer()
            self.show_on(screen)
            # (the window under a full-screen slide or console is not seen: it does not paint each step
            # twice, nor run its heatmap's morph; its geometry and state are untouched, it paints once at Esc)
            w.setUpdatesEnabled(not fullscreen)
            w.heatmap.animate = w.acts.animate.isChecked() and not fullscreen
        else:
            w.setUpdatesEnabled(True)
            w.heatmap.animate = w.acts.animate.isChecked()  # (View → Animate, as the lecturer left it)
            slide.blank.hide()
            slide.hide()
            slide.reset_side()
            if w.isVisible():
                w.activateWindow()
            w.stepper.setFocus(Qt.FocusReason.OtherFocusReason)
        w.presentation_changed.emit(on)

    def show_on(self, screen: QScreen | None = None) -> None:
        """The slide on ``screen`` (default: the window's), full screen or over the window."""
        w, slide = self._window, self.slide
        screen = screen or w.screen()
        if self._fullscreen and screen is not None:
            handle = slide.windowHandle()
            if slide.isFullScreen():
                slide.showNormal()
            if handle is not None:
                handle.setScreen(screen)
            slide.setGeometry(screen.geometry())
            self.refit(screen.geometry().size(), screen)
            slide.showFullScreen()
        else:
            slide.setGeometry(w.geometry())
            self.refit(w.size(), screen)
            slide.show()
        slide.activateWindow()  # (a window shown last is on top: no raise, which some platforms refuse)
        slide.setFocus(Qt.FocusReason.OtherFocusReason)

    def refit(self, size: QSize | None = None, screen: QScreen | None = None) -> None:
        """The slide's text scale for its size (and the window's zoom); its plots' caches for its screen."""
        slide, look = self.slide, self._look
        assert look is not None  # (made with the slide)
        size = size or self.slide_size()
        screen = screen or slide.screen() or self._window.screen()
        dpr = float(screen.devicePixelRatio()) if screen is not None else 1.0
        fit_pixmap_cache(screen)
        look.fit(size.width(), size.height(), self._window.zoom(), dpr)

    def slide_size(self) -> QSize:
        """The slide's size: its screen's when full screen, else the window's."""
        w = self._window
        if self._slide is not None and self._slide.isVisible():
            return self._slide.size()
        screen = w.screen()
        if self._fullscreen and screen is not None:
            return screen.geometry().size()
        return w.size()

    def screen_changed(self) -> None:
        """The slide moved to another screen: fitted again for it."""
        if self.on:
            self.refit()

    def zoom_changed(self) -> None:
        """The window's zoom changed (Ctrl++ / Ctrl+−): the slide's text follows it."""
        if self.on:
            self.refit()

    def toggle_plane(self) -> None:
        """P: on the slide its side view (the calculation table where it was left out); in the window
        the vector plane shown or hidden."""
        if self.on:
            self.slide.toggle_side()
            return
        w = self._window
        w.docks.plane.setVisible(not w.docks.plane.isVisible())

    def _on_stage(self, *_: object) -> None:
        if not self.on:
            self.docks.bring_forward(stage_spec(self._window.session.stage).slide_view)

    # ---- a language model writing: its next tokens on the slide where PageDown writes one -----------------
    def _writer_choices(self) -> list[tuple[str, float]]:
        """The next tokens the slide shows beside the last stage's view: the Real model panel's, when it
        was opened on a model that writes one (a causal model) and the clicker's PageDown writes it here
        (the lecture's last step); else none."""
        w = self._window
        panel = cast("ModelPanel | None", w.built_panel("model"))
        dock = w.panel_host.docks.get("model")
        if panel is None or dock is None or dock.isHidden() or w.can_step(+1) or not panel.state.can_generate:
            return []
        return panel.state.next_tokens(3) if panel.available else []

    def _follow_writer(self) -> None:
        """The slide follows the model panel once it is built: a token written, another model chosen."""
        panel = cast("ModelPanel | None", self._window.built_panel("model"))
        if panel is not None and not self._follows_writer:
            self._follows_writer = True
            panel.state.add_listener(self._writer_changed)

    def _writer_changed(self, *_: object) -> None:
        if self.on:
            self.slide.refresh_writer()

    # ---- the normal window's layout ----------------------------------------------------------------------
    def first_show(self, restored_state: bool) -> None:
        """Called just before the window first shows: make the default layout, unless one was restored.

        The default layout is made while every panel is still hidden: geometry given to a hidden widget
        is only stored.  Made in showEvent (after Qt's own first layout had shown and resized every
        panel), it resized the four plots and the tables a second time before the first paint (~25 ms
        of start-up).
        """
        if self._laid_out:
            return
        self._laid_out = True
        w = self._window
        if not restored_state:
            w.ensurePolished()  # (fonts and styles, as the panels will show: the tables measure their text)
            w.panels.calc.fit_columns(even_hidden=True)  # (the calculation dock is sized to it)
            # The deferred panels the layout will show are built before it lays anything out (the sizes
            # it makes follow the panels' own: built after it, they were laid out otherwise).
            w.panel_host.build_deferred(behind=self.docks.behind())
            _activate(w)  # (resizeDocks shares out the sizes the docks have now)
            self.docks.arrange()
            _activate(w)
            if w.screen_fit.placed and w.screen_fit.keep_inside():
                # (the first activation, before the docks were shared out, grew the window to the
                # minimum of a layout not yet made — the multihead scene's four editors: taller than
                # a 1280×720 screen — and nothing shrank it back)
                _activate(w)
                self.docks.arrange()
        # (a restored layout's deferred docks in front too; the others are built after the first paint)
        w.panel_host.build_shown()
        # The stage bar's form (one row or two, whole or short labels) for the width it will have, before
        # the first show: chosen after it, it changed the stepper's height and resized the plots again.
        _activate(w)
        _activate(w.centralWidget())
        w.stepper.fit_bar()

    def reset_layout(self) -> None:
        """View → Reset layout: the docks as the window lays them out by default for the size it has now
        — floating ones docked, closed ones shown, the View menu's panels folded away again."""
        w = self._window
        w.panel_host.build_deferred()  # (every panel laid out as it is)
        w.panel_host.arrange(show=True)
        _activate(w)
        w.screen_fit.keep_inside()  # (a layout of the user's own may have made the window taller than the screen)
        w.panels.calc.fit_columns(even_hidden=True)
        _activate(w)
        self.docks.arrange()

    def layout_docks(self) -> None:
        """The default layout for the window's size (:class:`DockLayout`); presenting, the slide is
        placed again too."""
        self.docks.arrange()
        if self.on:
            self.slide.place_views()

    def make_room_for(self, dock: QDockWidget) -> None:
        """A View-menu panel was just opened in the window: :meth:`DockLayout.make_room_for`."""
        self.docks.make_room_for(dock)
