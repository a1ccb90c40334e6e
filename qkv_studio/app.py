"""Starting the GUI: the QApplication, the main window, and offscreen screenshots."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from qkv_studio.core import Scene, View

ORG = "QKV Studio"
APP = "QKV Studio"
#: a real model's head for the model panel: (name, text, layer, head[, tokens to generate first])
ModelHead = tuple[str, str, int, int] | tuple[str, str, int, int, int]


_HARMLESS = ("This plugin does not support propagateSizeHints", "This plugin does not support raise()",
             # PySide6 ≥ 6.11's PDF engine, drawing the style's shaded buttons of a slide: it draws them flat
             "QPdfEngine: unable to create a gradient between colors of different spec")


def _quiet_harmless_qt_messages() -> None:
    """The offscreen platform warns that it cannot resize windows to their hints, and a slide's PDF that it
    draws the stage buttons' shading flat: harmless, not news."""
    from PySide6.QtCore import qInstallMessageHandler

    def handler(mode, context, message: str) -> None:
        if not message.startswith(_HARMLESS):
            sys.stderr.write(message + "\n")

    qInstallMessageHandler(handler)


def ensure_qapp(*, offscreen_if_headless: bool = False):
    """The QApplication (created once, with the names QSettings and QStandardPaths use)."""
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    if offscreen_if_headless and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
    app.setOrganizationName(ORG)
    app.setApplicationName(APP)
    return app


def run_gui(scene: Scene, path: str = "", *, presentation: bool = False, deck: str | None = None,
            model: ModelHead | None = None, view: View | None = None) -> int:
    """Open the main window on ``scene`` (looked at with ``view``) and run the event loop; returns the exit code.

    ``model`` = (name, text, layer, head) opens the Real model panel on that registered model's head (as
    :func:`prepare_window`), e.g. a Q/K/V file's."""
    app = ensure_qapp()
    from qkv_studio import reliability
    from qkv_studio.ui.window.main_window import MainWindow

    reliability.install_excepthook()  # never a traceback: a dialog with details, logged, app goes on
    recovered = reliability.offer_recovery(None)  # after a crash: restore the autosaved scene?
    window = MainWindow(scene, path, view=view)
    reliability.attach(window)
    if model is not None:
        window.show_panel(window.docks.model)
        _show_model_head(window, scene, view or View(), *model)
    if recovered is not None:
        reliability.restore(window, recovered)
    window.show()
    if deck:
        window.open_deck(deck, ask=False)
    if presentation:
        window.set_presentation(True)
    return app.exec()


def prepare_window(scene: Scene, *, size: tuple[int, int] = (1600, 900), presentation: bool = False,
                   theme: str | None = None, panels: Sequence[str] = (),
                   model: ModelHead | None = None, view: View | None = None,
                   cell: int | None = None):
    """The main window on ``scene`` (looked at with ``view``: the query and stage; default the first query's
    weights), laid out offscreen at ``size`` and ready to grab (not shown on screen).

    ``panels`` opens panels of the panel registry by their ``--panel`` names (``explorer``, ``heads``,
    ``model``, the ``quiz`` dialog: :func:`qkv_studio.ui.registry.cli_names`), as their menu entries do;
    several docked panels are put side by side so that each is seen.  ``model`` =
    (name, text, layer, head) picks that model of the model registry in the model panel, runs it on the
    text and shows that head (layer and head counted from 0); ``scene`` is then that head's scene with the
    options asked for.  A fifth item N (a model that generates) presses Next token N times first.  Raises ValueError
    with one line when the model cannot run.
    """
    app = ensure_qapp(offscreen_if_headless=True)
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        _quiet_harmless_qt_messages()
    from PySide6.QtCore import Qt

    from qkv_studio.ui import registry
    from qkv_studio.ui.update_policy import settle
    from qkv_studio.ui.window.main_window import MainWindow

    panels = list(dict.fromkeys(panels))  # each once, in the order asked
    if model is not None and "model" not in panels:
        panels.append("model")
    specs = [registry.by_cli_name(p) for p in panels]  # (ValueError, one line, for an unknown name)
    window = MainWindow(scene, "", use_settings=False, view=view)
    window.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    if theme:
        window.apply_theme(theme)
    window.resize(*size)
    window.show()
    if model is not None:  # (open before the slides, as the app opens it: they keep it where it writes)
        window.show_panel(window.docks.model)
    if presentation:
        window.set_presentation(True, fullscreen=False)
    if cell is not None:  # the query's cell of that key, worked out term by term (Q·Kᵀ cell by cell)
        window.session.select_cell(cell)
    window.resize(*size)
    app.processEvents()
    window.layout_docks()
    docks = [window.dock(spec.name) for spec in specs if spec.docked and not (model and spec.name == "model")]
    for dock in docks:
        window.show_panel(dock)
    _side_by_side(window, docks)
    if model is not None:
        _show_model_head(window, scene, view or View(), *model)
    for spec in specs:
        if spec.kind == "centre":
            window.panel_host.show_centre(spec.name)
        elif not spec.docked:
            _open_dialog(window, spec.name)
    window.session.flush()
    # (every deferral finished: the next frame's panels, the morph, the table's refit — a picture taken
    # sooner showed a real model's scores cut at their left edge, widths of the query it opened at)
    settle(window)
    return window


def _side_by_side(window, docks: list) -> None:
    """Docked panels are tabs of the blend view's place, as the View menu opens them.  When several are
    asked for, each further one goes on top of another place (the calculation table's, then the editors'),
    so that all of them are seen at once, and the right-hand column widens to hold them."""
    from PySide6.QtCore import Qt

    if not docks:
        return
    places = (window.docks.calc, window.docks.editors)
    for dock, place in zip(docks[1:], places, strict=False):
        # (out of its tab group first: Qt 6.12 leaves a dock tabified twice in the first group, off-screen)
        window.removeDockWidget(dock)
        window.tabifyDockWidget(place, dock)
        dock.show()
        dock.raise_()
    docks[0].raise_()
    if len(docks) > 1:  # one panel keeps the column the window gives it, as on screen
        window.resizeDocks([docks[0]], [int(max(window.width(), 800) * 0.45)], Qt.Orientation.Horizontal)


def _show_model_head(window, scene: Scene, view: View, name: str, text: str, layer: int, head: int,
                     generate: int = 0) -> None:
    panel = window.panels.model
    if not panel.set_model(name) or not panel.run_text(text):
        raise ValueError(f"the model panel could not show layer {layer} head {head}: {panel.status.text()}")
    for step in range(generate):  # Next token, as the panel's button appends it (greedy, the KV cache)
        if not panel.next_token():
            raise ValueError(f"the model panel could not generate token {step + 1} of {generate}: "
                             f"{panel.status.text()}")
    if not panel.select(layer, head):
        raise ValueError(f"the model panel could not show layer {layer} head {head}: {panel.status.text()}")
    session = window.session
    if not session.scene.same_as(scene):  # --mask, --unscaled on the model's head
        session.load(scene, "", view)
    session.set_query(view.query)  # --query, --stage
    session.set_stage(view.stage)


def _open_dialog(window, name: str) -> None:
    """A dialog panel (Help → Check yourself…), kept off the screen like the window (it is painted onto
    the grab)."""
    from PySide6.QtCore import Qt

    dialog = window.panel(name)  # (built, not yet shown)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    window.show_panel(name)
    dialog.resize(min(max(dialog.width(), int(window.width() * 0.5)), int(window.width() * 0.9)),
                  int(window.height() * 0.9))


def grab_window(window):
    """The window as a QImage, with its open dialogs (the quiz) painted where they would stand, centred,
    each in a plain frame with its title (no window manager draws one offscreen)."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen
    from PySide6.QtWidgets import QDialog

    image = window.grab().toImage()
    dialogs = [d for d in window.findChildren(QDialog) if d.isVisible()]
    if not dialogs:
        return image
    ratio = image.devicePixelRatio() or 1.0
    painter = QPainter(image)
    for dialog in dialogs:
        shot = dialog.grab().toImage()
        pal = dialog.palette()
        bar = int(QFontMetrics(dialog.font()).height() * 1.5)
        w, h = dialog.width(), dialog.height()
        x = int((image.width() / ratio - w) / 2)
        y = int((image.height() / ratio - h + bar) / 2)
        frame = QRect(x - 2, y - bar - 2, w + 4, h + bar + 4)
        painter.fillRect(frame.translated(8, 8), QColor(0, 0, 0, 70))  # a shadow: it stands above the window
        painter.fillRect(frame, pal.window().color().darker(115))
        painter.setPen(pal.windowText().color())
        painter.setFont(dialog.font())
        painter.drawText(QRect(x + bar // 3, y - bar, w - bar // 3, bar),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), dialog.windowTitle())
        painter.drawImage(x, y, shot)
        painter.setPen(QPen(pal.windowText().color(), 2))
        painter.drawRect(frame)
    painter.end()
    return image


def presenter_image(window, size: tuple[int, int]):
    """The presenter console of ``window`` (presenting) at ``size``, offscreen, as a QImage."""
    from PySide6.QtCore import Qt

    from qkv_studio.ui.update_policy import settle

    app = ensure_qapp()
    console = window.presenter.build_console()
    console.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    console.resize(*size)
    console.show()
    settle(window)
    window.presenter.grab_slide()
    window.presenter.refresh_console()
    app.processEvents()
    return console.grab().toImage()


def screenshot(scene: Scene, out: str | os.PathLike, *, size: tuple[int, int] = (1600, 900),
               presentation: bool = False, theme: str | None = None, panels: Sequence[str] = (),
               model: ModelHead | None = None, view: View | None = None,
               presenter: tuple[int, int] | None = None, notes=None, ink=None, cell: int | None = None) -> None:
    """Render the window offscreen at ``size`` and save it as PNG (atomically); ``panels``, ``model`` and
    ``view`` (and ``cell``: a key, the selected cell in the query's row) as for :func:`prepare_window`.  ``presenter``
    (the slide's size) renders the presenter
    console at ``size`` instead, beside a slide of that size; ``notes`` and ``ink``
    (:mod:`qkv_studio.core.ink`) are the scene's, the ink drawn on the slide.

    Raises OSError with a one-line message when the file cannot be written.
    """
    out = Path(out)
    window = prepare_window(scene, size=presenter or size, presentation=presentation or presenter is not None,
                            theme=theme, panels=panels, model=model, view=view, cell=cell)
    if notes is not None or ink is not None:
        from qkv_studio.core.ink import EMPTY_INK, NO_NOTES

        window.presenter.scene_opened("screenshot", notes or NO_NOTES, ink or EMPTY_INK)
        ensure_qapp().processEvents()
    if presenter is not None:
        image = presenter_image(window, size)
    else:  # (presenting: the slide, a window of its own over the window)
        image = grab_window(window.presentation.slide if presentation else window)
    window.session.undo_stack.setClean()
    window.close()
    if not out.parent.exists():
        raise OSError(f"cannot write {out}: the folder {out.parent} does not exist")
    # Encoded in memory, then written and checked by our own atomic writer: libpng writing to a full
    # disk itself printed "libpng error: Write Error" on stderr before our message.
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    ok = image.save(buffer, "PNG")
    buffer.close()
    if not ok:
        raise OSError(f"cannot write {out}: the PNG encoder failed")
    from qkv_studio.core.sessionfile import atomic_write

    try:
        atomic_write(out, bytes(data.data()))
    except OSError as exc:
        raise OSError(f"cannot write {out}: {exc.strerror or exc}") from None
