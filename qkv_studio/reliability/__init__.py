"""No lost work, no crash, no traceback: autosave and recovery, the exception hook.

Wiring (see ``app.run_gui``)::

    reliability.install_excepthook()
    recovered = reliability.offer_recovery(None)
    window = MainWindow(scene, path)
    reliability.attach(window)
    if recovered is not None:
        reliability.restore(window, recovered)

``attach(window)`` autosaves ``window.session`` and removes the autosave when the window is closed
cleanly (after its unsaved-changes prompt) or the application quits with the window closed; it also
watches the open file and says so in the status bar when another program changes or deletes it.
"""

from __future__ import annotations

from qkv_studio.reliability.autosave import Autosave, Recovered, claimed, pending_recovery
from qkv_studio.reliability.diskwatch import DiskWatch
from qkv_studio.reliability.excepthook import ExceptionHook, install_excepthook, setup_logging
from qkv_studio.reliability.paths import autosave_dir, data_dir, log_path
from qkv_studio.reliability.recovery import offer_recovery, restore
from qkv_studio.reliability.window import attach

__all__ = [
    "Autosave", "DiskWatch", "ExceptionHook", "Recovered", "attach", "autosave_dir", "claimed", "data_dir",
    "install_excepthook", "log_path", "offer_recovery", "pending_recovery", "restore", "setup_logging",
]
