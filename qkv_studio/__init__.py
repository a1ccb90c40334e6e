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


# The Python API (``qkv_studio.show``, ``Scene``, ``save``, ``export`` …), imported on first use: ``import
# qkv_studio`` stays light (the command line imports it before anything else).
_LAZY = {
    "Scene": "qkv_studio.core.scene",
    "SceneError": "qkv_studio.core.scene",
    "save": "qkv_studio.core.sessionfile",
    "show": "qkv_studio.api",
    "run": "qkv_studio.api",
    "widget": "qkv_studio.notebook",
}
# ``qkv_studio.export`` is the export package, made callable (see qkv_studio/export/__init__.py): the
# attribute the import system sets for the package and the function are then one and the same.
_CALLABLE_PACKAGES = ("export",)
__all__ = ["__version__", *_LAZY, *_CALLABLE_PACKAGES]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _CALLABLE_PACKAGES:
        import importlib

        return importlib.import_module(f"qkv_studio.{name}")
    raise AttributeError(f"module 'qkv_studio' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_CALLABLE_PACKAGES))
