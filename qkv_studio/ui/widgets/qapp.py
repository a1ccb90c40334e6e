"""The running QApplication, typed (``QApplication.instance()`` is typed as an optional QCoreApplication)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication


def running_app() -> QApplication:
    """The QApplication every widget of the app runs in; RuntimeError if there is none (or only a
    QCoreApplication, which cannot show widgets)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("no QApplication is running (call qkv_studio.app.ensure_qapp() first)")
    return app
