"""QKV Studio: see, touch and show self-attention."""

from __future__ import annotations

import gc

__version__ = "0.1.0"

# Start-up imports (NumPy, Qt, pyqtgraph) create ~100 000 objects that live as long as the process.
# The cyclic garbage collector would walk them over and over while they are created (~90 ms on a
# 2-core machine, before the window can appear) and then again in every full collection of the
# running app (~65 ms each) without ever finding anything to free.  ``qkv_studio.cli`` pauses the
# collector before it imports anything heavy; the main window resumes it once, freezing what exists
# by then (gc.freeze: the objects stay alive, the collector no longer scans them).
_GC_SAFETY_S = 10.0
_gc_paused = False


def _pause_gc_for_startup() -> None:
    """Pause the cyclic collector for the start-up imports (it was enabled: it is paused once)."""
    global _gc_paused
    if _gc_paused or not gc.isenabled():
        return
    gc.disable()
    _gc_paused = True
    # Whoever imports the command line without opening a window or running a command (a test, a
    # notebook) gets the collector back after a few seconds all the same.
    import threading

    timer = threading.Timer(_GC_SAFETY_S, _resume_gc)
    timer.daemon = True
    timer.start()


def _resume_gc(*, freeze: bool = False) -> None:
    """Resume the collector if :func:`_pause_gc_for_startup` paused it; ``freeze`` first moves every
    object that exists now out of its reach (for the long-lived start-up objects of the window)."""
    global _gc_paused
    if not _gc_paused:
        return
    _gc_paused = False
    if freeze:
        gc.freeze()
    gc.enable()
