"""Never a traceback: an unexpected exception becomes a dialog, a log entry, and the app goes on.

PySide6 reports an exception raised in a slot, a timer callback or an overridden Qt method through
``sys.excepthook`` and then carries on with the event loop.  :func:`install_excepthook` replaces the
hook with one that

* writes the full traceback to ``<data>/qkv-studio.log`` (``logging`` + ``RotatingFileHandler``),
* shows a dialog with one short sentence and the traceback under "Show Details…"
  (``QMessageBox.setDetailedText``), never more than one at a time (an exception raised while the
  dialog is up — a failing paint, say — is only logged), and
* afterwards re-sends every window's Session signals so all panels redraw from the Session, the one
  source of truth: whatever half-finished update the exception interrupted is repaired.

Exceptions on other threads are logged.  ``KeyboardInterrupt`` goes to the previous hook.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from logging.handlers import RotatingFileHandler
from pathlib import Path

from qkv_studio.reliability.paths import log_path

APP_NAME = "QKV Studio"
LOGGER_NAME = "qkv_studio"
MAX_LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
REPEAT_QUIET_S = 3.0  # the same error again within this time is only logged

log = logging.getLogger(LOGGER_NAME)


def setup_logging(path: str | Path | None = None) -> Path | None:
    """Send the app's log (warnings and errors) to a rotating file; returns its path (None if the
    folder cannot be written).  Calling it again with the same path does nothing."""
    target = Path(path) if path is not None else log_path()
    for h in log.handlers:
        if isinstance(h, RotatingFileHandler) and Path(h.baseFilename) == target.absolute():
            return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(target, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8",
                                      delay=True)
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    log.addHandler(handler)
    if log.level == logging.NOTSET or log.level > logging.INFO:
        log.setLevel(logging.INFO)
    return target


def short_message(exc: BaseException) -> str:
    """One sentence for the dialog: what failed, not where."""
    text = " ".join(str(exc).split())
    if len(text) > 160:
        text = text[:157] + "…"
    return f"Something went wrong: {type(exc).__name__}" + (f": {text}" if text else "") + "."


class ExceptionHook:
    """The installed ``sys.excepthook`` (see the module docstring).  ``uninstall()`` puts the old one back.

    Test hooks: ``count`` (exceptions seen), ``last_message``, ``last_details``, ``log_file``.
    """

    def __init__(self, log_file: Path | None) -> None:
        self.log_file = log_file
        self.count = 0
        self.last_message = ""
        self.last_details = ""
        self._previous = sys.excepthook
        self._previous_thread = threading.excepthook
        self._showing = False
        self._resyncing = False
        self._last_key: tuple | None = None
        self._last_time = 0.0

    def install(self) -> ExceptionHook:
        sys.excepthook = self
        threading.excepthook = self._thread_hook
        return self

    def uninstall(self) -> None:
        if sys.excepthook is self:
            sys.excepthook = self._previous
        if threading.excepthook == self._thread_hook:
            threading.excepthook = self._previous_thread

    # ---- the hook ---------------------------------------------------------------------------------
    def __call__(self, etype, value, tb) -> None:
        if etype is None or issubclass(etype, (KeyboardInterrupt, SystemExit)):
            self._previous(etype, value, tb)
            return
        if value is None:
            value = etype()
        self.count += 1
        details = "".join(traceback.format_exception(etype, value, tb))
        message = short_message(value)
        self.last_message, self.last_details = message, details
        try:
            import platform  # (only ever needed here: not imported at start-up)

            log.error("unhandled exception (QKV Studio %s, Python %s, %s)\n%s", _version(),
                      platform.python_version(), platform.platform(), details.rstrip())
        except Exception:  # noqa: BLE001 - logging must not raise here
            pass
        self._tell_terminal(message)
        if threading.current_thread() is not threading.main_thread():
            return
        app = _qapplication()
        if app is None:
            return
        key = (etype, str(value))
        now = time.monotonic()
        repeated = key == self._last_key and now - self._last_time < REPEAT_QUIET_S
        self._last_key, self._last_time = key, now
        if self._showing or self._resyncing or repeated:
            return
        self._showing = True
        try:
            self._show(app, message, details)
        except Exception:  # noqa: BLE001
            log.exception("the error dialog itself failed")
        finally:
            self._showing = False
            self._last_time = time.monotonic()
        from PySide6.QtCore import QTimer

        QTimer.singleShot(0, lambda: self._resync(app))

    def _resync(self, app) -> None:
        """Re-send each window's Session state so every view redraws from it (after an interrupted
        update).  An exception raised while doing so is logged only, so an error cannot loop."""
        from qkv_studio.state.changes import ResultChange

        self._resyncing = True
        try:
            for w in app.topLevelWidgets():
                session = getattr(w, "session", None)
                if session is None or not hasattr(session, "scene_changed"):
                    continue
                session.scene_changed.emit()
                session.tokens_changed.emit()
                session.query_changed.emit(session.query)
                session.stage_changed.emit(session.stage)
                session.result_changed.emit(ResultChange.ALL)
        except Exception:  # noqa: BLE001
            log.exception("views could not be refreshed after an error")
        finally:
            self._resyncing = False

    def _thread_hook(self, args) -> None:
        if args.exc_type is SystemExit:
            return
        details = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
        self.count += 1
        log.error("unhandled exception in thread %s\n%s", getattr(args.thread, "name", "?"), details.rstrip())

    def _tell_terminal(self, message: str) -> None:
        stream = sys.__stderr__
        if stream is None:
            return
        where = f" (details in {self.log_file})" if self.log_file else ""
        try:
            stream.write(f"qkv-studio: {message}{where}\n")
            stream.flush()
        except (OSError, ValueError):
            pass

    def _show(self, app, message: str, details: str) -> None:
        from PySide6.QtWidgets import QMessageBox

        parent = app.activeWindow()
        box = QMessageBox(QMessageBox.Icon.Critical, APP_NAME, message, QMessageBox.StandardButton.Ok, parent)
        where = (f"The details were written to {self.log_file}." if self.log_file
                 else "The details could not be written to a log file.")
        box.setInformativeText("The action did not finish, but your work is still open: check it, undo "
                               "(Ctrl+Z) if something looks wrong, and save. " + where)
        box.setDetailedText(details)
        box.exec()


_installed: ExceptionHook | None = None


def install_excepthook(log_file: str | Path | None = None) -> ExceptionHook:
    """Install the hook (once; a second call returns the installed one) and start the log file."""
    global _installed
    if _installed is not None and sys.excepthook is _installed:
        return _installed
    path = setup_logging(log_file)
    _installed = ExceptionHook(path).install()
    return _installed


def _qapplication():
    try:
        from PySide6.QtWidgets import QApplication
    except ImportError:  # pragma: no cover
        return None
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else None


def _version() -> str:
    try:
        from qkv_studio import __version__

        return __version__
    except Exception:  # noqa: BLE001
        return "?"
