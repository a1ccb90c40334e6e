"""Starting the GUI: the QApplication, the main window, and offscreen screenshots."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .core import Scene

ORG = "QKV Studio"
APP = "QKV Studio"


_HARMLESS = ("This plugin does not support propagateSizeHints",)


def _quiet_harmless_qt_messages() -> None:
    """The offscreen platform warns that it cannot resize windows to their hints: harmless, not news."""
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


def run_gui(scene: Scene, path: str = "", *, presentation: bool = False, deck: str | None = None) -> int:
    """Open the main window on ``scene`` and run the event loop; returns the exit code."""
    app = ensure_qapp()
    from . import reliability
    from .ui.main_window import MainWindow

    reliability.install_excepthook()  # never a traceback: a dialog with details, logged, app goes on
    recovered = reliability.offer_recovery(None)  # after a crash: restore the autosaved scene?
    window = MainWindow(scene, path)
    reliability.attach(window)
    if recovered is not None:
        reliability.restore(window, recovered)
    window.show()
    if deck:
        window.open_deck(deck, ask=False)
    if presentation:
        window.set_presentation(True)
    return app.exec()


def screenshot(scene: Scene, out: str | os.PathLike, *, size: tuple[int, int] = (1600, 900),
               presentation: bool = False, theme: str | None = None) -> None:
    """Render the window offscreen at ``size`` and save it as PNG (atomically).

    Raises OSError with a one-line message when the file cannot be written.
    """
    app = ensure_qapp(offscreen_if_headless=True)
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        _quiet_harmless_qt_messages()
    from PySide6.QtCore import Qt
    from .ui.main_window import MainWindow

    out = Path(out)
    window = MainWindow(scene, "", use_settings=False)
    window.setAttribute(Qt.WA_DontShowOnScreen, True)
    if theme:
        window.apply_theme(theme)
    window.resize(*size)
    window.show()
    if presentation:
        window.set_presentation(True, fullscreen=False)
    window.resize(*size)
    app.processEvents()
    window.layout_docks()
    for _ in range(5):
        app.processEvents()
    window.session.flush()
    app.processEvents()
    image = window.grab().toImage()
    window.session.undo_stack.setClean()
    window.close()
    if not out.parent.exists():
        raise OSError(f"cannot write {out}: the folder {out.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".png", dir=out.parent)
    os.close(fd)
    try:
        if not image.save(tmp, "PNG"):
            raise OSError(f"cannot write {out}")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a screenshot is an ordinary file
        os.replace(tmp, out)
    except OSError:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
