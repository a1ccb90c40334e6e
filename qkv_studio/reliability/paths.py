"""Where the app keeps its own files: the per-user data folder (``QStandardPaths.AppDataLocation``).

Autosaves live in ``<data>/autosave/``, the error log is ``<data>/qkv-studio.log``.  When Qt cannot
name a writable data folder (no HOME, a locked-down machine) a folder in the system's temp directory
is used instead, so autosave and logging degrade rather than crash.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtCore import QStandardPaths

FALLBACK_NAME = "qkv-studio"


def data_dir() -> Path:
    """The app's writable data folder (not created here)."""
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    if location:
        return Path(location)
    return Path(tempfile.gettempdir()) / FALLBACK_NAME


def autosave_dir() -> Path:
    """The folder holding autosaved scenes (not created here)."""
    return data_dir() / "autosave"


def log_path() -> Path:
    """The error log file."""
    return data_dir() / "qkv-studio.log"
