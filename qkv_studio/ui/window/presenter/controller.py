"""The presenter view: the slide on the projector, the console on the laptop, ink and laser on the slide.

:class:`Presenter` is the window's part for it (``window.presenter``):

- **F5** (:meth:`present`): with two screens, the slide (:class:`~qkv_studio.ui.slide.SlideWidget`,
  a window of its own) goes full screen on the audience screen and the
  :class:`~.console.PresenterConsole` full screen on the other (:func:`~.placement.place`); with one
  screen the slide takes it, or with View → Rehearse the slide and the console share the screen as two
  windows.  The main window never moves.  **X** swaps the screens.
- **Screens change** (``QGuiApplication.screenRemoved`` / ``screenAdded``): a screen of the lecture
  unplugged brings the slide back full screen on the one left (the place, the ink and the timer go
  on); a screen plugged in while presenting on one is offered (X presents on it).
- **Keys** (:data:`PRESENTER_KEYS`, in presentation mode only, from the slide or the console): L laser,
  I or D ink (1–4 its colour), E eraser, C clear, U / Shift+U undo / redo ink, T pause the timer,
  R reset it, X swap screens.  Every lecture key works from the console too.
- **Ink and notes** live in :attr:`book` (:class:`~qkv_studio.state.ink.InkBook`): the files and the
  deck tell it which scene is open (:meth:`scene_opened`), saving writes them with the scene.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QEvent, QObject, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QImage, QPainter, QScreen
from PySide6.QtWidgets import QLabel

from qkv_studio.core.ink import EMPTY_INK, NO_NOTES, Ink, Notes
from qkv_studio.core.stages import STAGES, stage_spec
from qkv_studio.core.stopwatch import Stopwatch
from qkv_studio.state.ink import InkBook
from qkv_studio.ui.widgets.ink_overlay import InkOverlay

if TYPE_CHECKING:
    from qkv_studio.ui.slide import SlideWidget
    from qkv_studio.ui.window.main_window import MainWindow
    from qkv_studio.ui.window.presenter.console import PresenterConsole
    from qkv_studio.ui.window.presenter.placement import Placement

#: The presenter's keys as the shortcut list writes them (keys, what they do); presentation mode only.
PRESENTER_KEYS: tuple[tuple[str, str], ...] = (
    ("L", "laser pointer on / off (presentation)"),
    ("I  or  D", "draw ink on the slide; 1–4 its colour (presentation)"),
    ("E  /  C", "erase strokes / clear the stage's ink (presentation)"),
    ("U  /  Shift+U", "undo / redo ink (presentation)"),
    ("T  /  R", "pause / reset the lecture timer (presentation)"),
    ("X", "swap the slide's and the console's screens (presentation)"),
)

GRAB_DELAY = 80  # ms: one grab for a burst of changes
MORPH_GRAB = 320  # ms: once more after a stage change's 250-ms morph


class Presenter(QObject):
    """The presenter view of ``window`` (see the module's docstring); ``clock`` runs the timer."""

    def __init__(self, window: MainWindow, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(window)
        self._window = window
        s = window.session
        self.book = InkBook(s, self)
        self.stopwatch = Stopwatch(clock)
        self.console: PresenterConsole | None = None  # (built when first needed)
        self.placement: Placement | None = None
        self.chosen_screen = ""  # View → Presentation screen ("" automatic)
        self.swapped = False
        self.rehearse = False
        self._banner: QLabel | None = None
        self._grab_timer = QTimer(self)
        self._grab_timer.setSingleShot(True)
        self._grab_timer.timeout.connect(self.grab_slide)
        self._morph_timer = QTimer(self)
        self._morph_timer.setSingleShot(True)
        self._morph_timer.timeout.connect(self.grab_slide)
        self._following = False
        self.book.changed.connect(self._ink_changed)
        app = cast(QGuiApplication, QGuiApplication.instance())
        app.screenAdded.connect(self.on_screen_added)
        app.screenRemoved.connect(self.on_screen_removed)
        if s.path:  # (a file opened from the command line: its notes and ink)
            self._read_annotations(s.path)

    # ---- the scene's ink and notes ---------------------------------------------------------------------
    def scene_opened(self, key: str, notes: Notes = NO_NOTES, ink: Ink = EMPTY_INK, *, keep: bool = False) -> None:
        """A scene was opened (a file, a preset, a deck's scene): its notes and ink (see InkBook.open_scene)."""
        self.book.open_scene(key, notes, ink, keep=keep)
        self.refresh_console()

    def _read_annotations(self, path: str) -> None:
        from qkv_studio.core.sessionfile import SessionFileError, read_session

        try:
            doc = read_session(path)
        except SessionFileError:
            return  # (the window opened it: a file changed since is the file watcher's business)
        self.book.open_scene(path, doc.notes, doc.ink)

    # ---- presenting ------------------------------------------------------------------------------------
    @property
    def window(self) -> MainWindow:
        return self._window

    @property
    def overlay(self) -> InkOverlay:
        """The slide's ink and laser layer (the slide is built when first asked for)."""
        ink = self._window.presentation.slide.ink
        assert ink is not None  # (the slide is built with the presenter's ink book)
        return ink

    def slide_built(self, slide: SlideWidget) -> None:
        """The presentation's slide was just built: its ink layer and its layout followed."""
        if slide.ink is not None:
            slide.ink.pointer_moved.connect(self._pointer_moved)
        slide.placed.connect(self._slide_changed)

    def is_presenting(self) -> bool:
        return self._window.presentation.on

    def screens(self) -> list[QScreen]:
        return list(QGuiApplication.screens())

    def present(self, on: bool, *, fullscreen: bool = True) -> None:
        """Enter or leave presentation mode: the slide on the audience screen, the console on the other
        (two screens), beside each other (rehearse, one screen), or the slide alone (as before)."""
        w = self._window
        if on == w.presentation.on:
            return
        if not on:
            w.presentation.set(False)
            self._hide_console()
            self.overlay.set_active(False)
            self.stopwatch.pause()
            self.placement = None
            self._hide_banner()
            return
        from qkv_studio.ui.window.presenter.placement import place  # (first F5: start-up does not wait for it)

        placement = place(self.screens(), QGuiApplication.primaryScreen(), self.chosen_screen, self.swapped)
        two = fullscreen and placement is not None and placement.console is not None
        if two and placement is not None:
            self.placement = placement
            w.presentation.set(True, fullscreen=True, screen=cast(QScreen, placement.audience))
            self._show_console(cast(QScreen, placement.console))
        elif self.rehearse and fullscreen:
            self.placement = None
            self._rehearse_layout()
        else:
            self.placement = None
            w.presentation.set(True, fullscreen=fullscreen)
        self.stopwatch.start()
        self.overlay.set_active(True)
        self._raise_overlay()
        self.refresh_console()

    def _rehearse_layout(self) -> None:
        """One screen, rehearsing: the slide in a window on the left 62 %, the console on the right (the
        main window stays where it is, behind them)."""
        w = self._window
        screen = w.screen() or QGuiApplication.primaryScreen()
        avail = screen.availableGeometry()
        split = int(avail.width() * 0.62)
        w.presentation.set(True, fullscreen=False)
        slide = w.presentation.slide
        slide.setGeometry(avail.x(), avail.y() + 30, split - 8, int(avail.height() * 0.9) - 30)
        w.presentation.refit(slide.size())
        console = self.build_console()
        console.showNormal()
        console.setGeometry(avail.x() + split, avail.y() + 30, avail.width() - split, int(avail.height() * 0.9) - 30)
        console.show()
        self._follow(True)
        self.grab_slide()

    @staticmethod
    def _move_to(widget, screen: QScreen) -> None:
        """``widget`` onto ``screen`` (a full-screen window comes out of full screen to move)."""
        if widget.isFullScreen():
            widget.showNormal()
        handle = widget.windowHandle()
        if handle is not None:
            handle.setScreen(screen)
        # (the whole screen: where no window manager makes it full screen, it still covers it)
        widget.setGeometry(screen.geometry())

    def build_console(self):
        """The console window (built the first time; not shown)."""
        if self.console is None:
            from qkv_studio.ui.window.presenter.console import PresenterConsole

            self.console = PresenterConsole(self)
            w = self._window
            for act in (w.acts.leave, w.acts.presentation):  # (Esc and F5 work in the console too)
                self.console.addAction(act)
        return self.console

    def _follow(self, on: bool) -> None:
        """The console's copy follows the slide (connected only while the console is shown: an edit
        outside presentations passes through nothing of the presenter's)."""
        if on == self._following:
            return
        self._following = on
        w, s, a = self._window, self._window.session, self._window.appearance
        pairs = [(sig, self._slide_changed) for sig in (s.result_changed, s.query_changed, s.scene_changed,
                                                         s.head_changed, a.theme_changed, a.colormap_changed,
                                                         a.scale_changed)] + [(s.stage_changed, self._stage_changed)]
        for signal, slot in pairs:
            signal.connect(slot) if on else signal.disconnect(slot)
        slide = w.presentation.slide
        slide.installEventFilter(self) if on else slide.removeEventFilter(self)

    def _show_console(self, screen: QScreen) -> None:
        console = self.build_console()
        self._move_to(console, screen)
        console.showFullScreen()
        self._follow(True)
        self.grab_slide()
        self._grab_timer.start(GRAB_DELAY)  # (again once the slide has its full-screen size)

    def _hide_console(self) -> None:
        if self.console is not None and self.console.isVisible():
            self.console.hide()
        self._follow(False)

    def close_console(self) -> None:
        """The window closes: so does the console (the timer stops)."""
        self._hide_console()
        self.stopwatch.pause()

    def console_shown(self) -> bool:
        return self.console is not None and self.console.isVisible()

    def swap(self) -> bool:
        """X: the slide and the console exchange screens (two screens); True if they did."""
        if self.placement is None or self.placement.console is None:
            return False
        self.swapped = not self.swapped
        self._place_again()
        return True

    def present_on(self, name: str) -> None:
        """View → Presentation screen: present on the screen ``name`` ("" automatic) from now on."""
        self.chosen_screen = name
        self.swapped = False
        if self.is_presenting():
            self._place_again()

    def add_screen_menu(self, menu) -> None:
        """View → Presentation screen: "Automatic" or one of the attached screens (listed when opened)."""
        sub = menu.addMenu("Presentation &screen")
        sub.aboutToShow.connect(lambda: self._fill_screen_menu(sub))
        self.screen_menu = sub

    def _fill_screen_menu(self, sub) -> None:
        sub.clear()
        primary = QGuiApplication.primaryScreen()
        for name, text in [("", "&Automatic (not the laptop's screen)")] + [
                (s.name(), f"{s.name()} ({s.geometry().width()}×{s.geometry().height()}"
                           f"{', this screen' if s is primary else ''})") for s in self.screens()]:
            act = sub.addAction(text)
            act.setCheckable(True)
            act.setChecked(name == self.chosen_screen)
            act.triggered.connect(lambda _=False, n=name: self.present_on(n))

    def set_rehearse(self, on: bool) -> None:
        """View → Rehearse: with one screen, F5 shows the console in a window beside the slide."""
        self.rehearse = bool(on)

    def _place_again(self, screens: list[QScreen] | None = None) -> None:
        """Presenting: the slide and the console placed again on ``screens`` (default: all attached)."""
        from qkv_studio.ui.window.presenter.placement import place

        w = self._window
        screens = self.screens() if screens is None else screens
        primary = QGuiApplication.primaryScreen()
        placement = place(screens, primary if primary in screens else None, self.chosen_screen, self.swapped)
        self._hide_banner()
        if placement is None:
            return
        self.placement = placement
        if w.presentation.slide.isFullScreen() or placement.console is not None:
            w.presentation.show_on(cast(QScreen, placement.audience))
        if placement.console is not None:
            self._show_console(cast(QScreen, placement.console))
        else:
            self._hide_console()
        self._raise_overlay()

    # ---- screens plugged and unplugged -------------------------------------------------------------------
    def on_screen_removed(self, screen: QScreen) -> None:
        """A screen went: presenting on it, the slide comes back full screen on what is left (the
        stage, the ink and the timer go on), the console goes when only one screen is left."""
        if not self.is_presenting():
            return
        left = [s for s in self.screens() if s is not screen]
        if self.placement is not None and screen not in (self.placement.audience, self.placement.console):
            return
        self.swapped = False
        self._place_again(left)

    def on_screen_added(self, screen: QScreen) -> None:
        """A screen came: presenting on one, offer it (X presents on it); otherwise say F5 will."""
        w = self._window
        name = screen.name() or "a new screen"
        if not self.is_presenting():
            w.statusBar().showMessage(f"Screen {name} connected: F5 presents on it, the console stays here", 10000)
            return
        if self.placement is None or self.placement.console is None:
            self._show_banner(f"Screen {name} connected — press X to present on it with the console here")

    def _show_banner(self, text: str) -> None:
        if self._banner is None:
            self._banner = QLabel(self._window.presentation.slide)
            self._banner.setStyleSheet("background: rgba(20, 20, 24, 225); color: white; padding: 10px 16px;"
                                       "border-radius: 6px; font-size: 15pt;")
        self._banner.setText(text)
        self._banner.adjustSize()
        self._banner.move(20, max(0, self._window.presentation.slide.height() - self._banner.height() - 20))
        self._banner.show()
        self._banner.raise_()
        QTimer.singleShot(12000, self._hide_banner)

    def _hide_banner(self) -> None:
        if self._banner is not None:
            self._banner.hide()

    def banner_text(self) -> str:
        return self._banner.text() if self._banner is not None and self._banner.isVisible() else ""

    # ---- keys ----------------------------------------------------------------------------------------------
    def handle_key(self, key: int, text: str = "") -> bool:
        """A presenter key (:data:`PRESENTER_KEYS`); False outside presentation mode or for any other key."""
        if not self.is_presenting():
            return False
        o = self.overlay
        if o.mode == "ink" and int(Qt.Key.Key_1) <= key <= int(Qt.Key.Key_4):
            o.set_colour(key - int(Qt.Key.Key_1) + 1)
        else:
            run = self._key_actions().get(int(key))
            if run is None:
                return False
            run(text)
        if self.overlay.mode != "off":
            self._raise_overlay()
        self.refresh_console()
        return True

    def _key_actions(self) -> dict[int, Callable[[str], object]]:
        """What each presenter key does (given the key's text), by key code (:data:`PRESENTER_KEYS`)."""
        o, book, watch = self.overlay, self.book, self.stopwatch
        return {
            int(Qt.Key.Key_L): lambda _: o.toggle_mode("laser"),
            int(Qt.Key.Key_I): lambda _: o.toggle_mode("ink"),
            int(Qt.Key.Key_D): lambda _: o.toggle_mode("ink"),
            int(Qt.Key.Key_E): lambda _: o.toggle_mode("erase"),
            int(Qt.Key.Key_C): lambda _: book.clear(),
            int(Qt.Key.Key_U): self._undo_ink,
            int(Qt.Key.Key_T): lambda _: watch.toggle(),
            int(Qt.Key.Key_R): lambda _: watch.reset(),
            int(Qt.Key.Key_X): lambda _: self._swap_key(),
        }

    def _undo_ink(self, text: str) -> None:
        """U undoes the stage's last stroke, Shift+U redoes it."""
        shifted = text == "U" or bool(QGuiApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier)
        self.book.redo() if shifted else self.book.undo()

    def _swap_key(self) -> None:
        """X: the slide and the console swap screens, or the offered new screen is presented on."""
        if not self.swap() and len(self.screens()) > 1:
            self._hide_banner()
            self._place_again()

    def console_key(self, event) -> bool:
        """A key pressed in the console: the lecture's, as if pressed on the slide."""
        mods = Qt.KeyboardModifier
        if event.modifiers() & (mods.ControlModifier | mods.AltModifier | mods.MetaModifier):
            return False
        return self._window.handle_lecture_key(int(event.key()), event.text())

    def _raise_overlay(self) -> None:
        if self.overlay.isVisible():
            self.overlay.raise_()
        for cover in self._window.presentation.covers():
            if cover.isVisible():
                cover.raise_()

    # ---- the console follows the slide -------------------------------------------------------------------
    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self._window.presentation.built_slide() and event.type() == QEvent.Type.Resize:
            self._slide_changed()
        return False

    def _slide_changed(self, *_: object) -> None:
        if self.console_shown():
            self._grab_timer.start(GRAB_DELAY)

    def _stage_changed(self, *_: object) -> None:
        if self.console_shown():
            self._grab_timer.start(GRAB_DELAY)
            self._morph_timer.start(MORPH_GRAB)
            self.refresh_console()

    def _ink_changed(self) -> None:
        if self.console is not None and self.console_shown():
            self.console.mirror.update()
            self.console.refresh_status()

    def _pointer_moved(self) -> None:
        if self.console is not None and self.console_shown():
            self.console.mirror.update()

    def settle_pending(self) -> bool:
        """(:func:`qkv_studio.ui.update_policy.settle`) A grab of the slide waiting for a burst of
        changes to end, taken now; True if one was waiting."""
        if not (self._grab_timer.isActive() or self._morph_timer.isActive()):
            return False
        self._grab_timer.stop()
        self._morph_timer.stop()
        self.grab_slide()
        return True

    def audience_size(self) -> QSize:
        """The slide's size (the console draws its copy in these proportions)."""
        return self._window.presentation.slide_size()

    def grab_slide(self) -> QImage:
        """The audience's slide as a picture (without the ink and the dot, which the console draws),
        given to the console's copy of it."""
        o = self.overlay
        o.painting = False
        try:
            image = self._window.presentation.slide.grab().toImage()
        finally:
            o.painting = True
        if self.console is not None:
            self.console.mirror.set_picture(image)
        return image

    def refresh_console(self) -> None:
        """The console's titles, notes, next stage and times for what the slide shows now."""
        c = self.console
        if c is None or not (c.isVisible() or c.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)):
            return
        s = self._window.session
        spec = stage_spec(s.stage)
        c.set_now(f"Now: {spec.title}")
        note = self.book.notes().for_stage(s.stage)
        if note:
            c.set_notes(note)
        else:
            c.set_notes(self._window.stepper.caption_text(), rich=True)
        title, image = self.next_preview()
        c.set_next(title, image)
        c.refresh_times()

    def position_text(self) -> str:
        """Where the lecture is: "Stage 3 of 5 · Scaled", and the deck's scene."""
        s = self._window.session
        text = f"Stage {STAGES.index(s.stage) + 1} of {len(STAGES)} · {stage_spec(s.stage).title}"
        lecture = self._window.lecture
        if lecture.deck is not None:
            text += f" · scene {lecture.index + 1} of {len(lecture.deck)}"
        return text

    def next_step(self):
        """What → shows next: (scene, stage, query, title), or None at the lecture's end."""
        w = self._window
        s = w.session
        i = STAGES.index(s.stage)
        if i + 1 < len(STAGES):
            stage = STAGES[i + 1]
            return s.scene, stage, s.query, f"Next: {stage_spec(stage).title}"
        deck, index = w.lecture.deck, w.lecture.index
        if deck is not None and index + 1 < len(deck):
            from qkv_studio.core.sessionfile import SessionFileError

            try:  # (a deck reads its scenes when they are first needed)
                doc = deck.document(index + 1)
            except SessionFileError:
                return s.scene, s.stage, s.query, f"Next: scene {index + 2} of {len(deck)} cannot be read (skipped)"
            view = doc.view.fitted(doc.scene)
            title = doc.scene.title or f"scene {index + 2}"
            return doc.scene, STAGES[0], view.query, f"Next: {title} (scene {index + 2} of {len(deck)})"
        return None

    def next_preview(self, width: int = 560) -> tuple[str, QImage]:
        """The next stage's figure (the exported figure's drawing) and its title."""
        step = self.next_step()
        if step is None:
            return "Next: the end of the lecture", QImage()
        scene, stage, query, title = step
        from qkv_studio.render.figure import FigureOptions, figure_size, paint_figure

        a = self._window.appearance
        options = FigureOptions(stage=stage, query=min(query, scene.n - 1), theme=a.theme.name,
                                colormap=a.colormap)
        try:
            size = figure_size(scene, options)
        except ValueError:
            return title, QImage()
        height = max(1, round(width * size.height() / max(1.0, size.width())))
        image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        paint_figure(painter, QRectF(0, 0, width, height), scene, replace(options, background="theme"))
        painter.end()
        return title, image
