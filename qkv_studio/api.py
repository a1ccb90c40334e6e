"""QKV Studio from Python: open the window on your own arrays, or write figures and files from a script.

::

    import qkv_studio
    win = qkv_studio.show(q, k, v, ["the", "cat", "sat"], mask="causal")   # the window, on your arrays
    win = qkv_studio.show("captured.npz")                                   # q, k, v saved from a model
    win = qkv_studio.show(weights=w, tokens=["the", "cat", "sat"])         # only the weights are known
    scene = qkv_studio.Scene.from_arrays(q, k, v, tokens)                   # no window
    qkv_studio.save(scene, "mine.qkv.json")                                 # a session file
    qkv_studio.export(scene, "fig.svg", stage="weights", query="sat")       # as `qkv-studio export`

Does :func:`show` block?
    The window needs Qt's event loop to be running.  ``show(..., block=None)`` (the default) decides:

    * in IPython or Jupyter whose Qt event loop is on (``%gui qt``) it returns at once and the window
      stays live while you keep typing; in IPython without it, it turns it on (as ``%gui qt`` does, as
      napari does) and returns at once;
    * in the plain interactive interpreter (``python -i``) it returns at once: PySide6 runs Qt's events
      while the prompt waits for input;
    * when a Qt event loop is already running (``show`` called from a slot, a timer or a test's
      ``qtbot.wait``) it returns at once;
    * otherwise (a script) it runs the event loop until the window is closed, then returns the window.

    ``block=True``/``False`` overrides this.  :func:`run` (as ``napari.run()``) runs the event loop until
    the last window closes, for scripts that opened several windows with ``block=False``; it returns at
    once where :func:`show` would not block.

Nothing here imports torch: a tensor is read through ``numpy.asarray`` (``t.detach().cpu()``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from qkv_studio.core.scene import Scene, SceneError
from qkv_studio.core.view import View
from qkv_studio.export.script import export  # noqa: F401 - part of the API

_windows: list = []  # the windows show() opened: kept alive while open (a notebook keeps no reference)


def _ipython():
    """The running IPython shell, or None (IPython is never imported here: only one already loaded)."""
    module = sys.modules.get("IPython")
    get = getattr(module, "get_ipython", None)
    try:
        return get() if get is not None else None
    except Exception:  # noqa: BLE001 - a half-initialised IPython: treat as absent
        return None


def _ipython_runs_qt() -> bool:
    """True in IPython/Jupyter whose Qt event loop is on; turns it on (``%gui qt``) when it is off."""
    shell = _ipython()
    if shell is None:
        return False
    loop = getattr(shell, "active_eventloop", None)
    if loop and str(loop).startswith("qt"):
        return True
    if loop:  # another toolkit's loop (tk, osx): leave it alone
        return False
    try:
        shell.enable_gui("qt")
    except Exception:  # noqa: BLE001 - no Qt integration in this IPython: the caller blocks instead
        return False
    # (IPython --simple-prompt cannot run the hook: it prints why and leaves the loop off)
    return str(getattr(shell, "active_eventloop", None) or "").startswith("qt")


def _loop_running() -> bool:
    """True when Qt already processes events for us: a running event loop, or PySide6's prompt hook."""
    from PySide6.QtCore import QThread

    if QThread.currentThread().loopLevel() > 0:
        return True
    # The interactive interpreter (python -i, or after a script with -i): PySide6 processes Qt's events
    # while the prompt waits (its input hook), so the window stays live between commands.
    return bool(sys.flags.interactive or hasattr(sys, "ps1")) and _ipython() is None


def will_block(block: bool | None = None) -> bool:
    """Whether :func:`show` with this ``block`` runs the event loop itself (see the module notes)."""
    if block is not None:
        return bool(block)
    return not (_ipython_runs_qt() or _loop_running())


def _scene_from(scene: Scene | None, args: dict) -> Scene:
    """The scene ``show`` opens: ``scene`` (with ``mask`` and ``scale`` given applied) or the arrays'."""
    if scene is None:
        return Scene.from_arrays(**args)
    if any(args[name] is not None for name in ("q", "k", "v", "tokens", "x", "wq", "wk", "wv")):
        raise SceneError("scene", "give a scene (or a file) or arrays, not both")
    if args["mask"] is not None:
        scene = scene.with_mask(args["mask"])
    if not args["scale"]:
        scene = scene.with_scale(False)
    return scene


def show(q=None, k=None, v=None, tokens: Iterable[str] | None = None, *, x=None, wq=None, wk=None, wv=None,
         weights=None, mask=None, scale: bool = True, title: str | None = None, query: int | str = 0,
         scene: Scene | None = None, block: bool | None = None, presentation: bool = False):
    """Open the main window on your arrays (as :meth:`Scene.from_arrays` takes them) or on ``scene``, and
    return it (a ``MainWindow``; ``window.session.scene`` is what it shows).

    ``show(scene)`` takes a Scene as the first argument too; ``show("captured.npz")`` (or ``.safetensors``,
    or a ``*.qkv.json`` session file) opens a file: a Q/K/V file from a model opens on its first head with
    the Real model panel paging through its layers and heads.

    ``show(weights=w, tokens=…)`` when only the attention weights (n × n, rows summing to 1) are known:
    the window shows them exactly, with log w as the scores (see :mod:`qkv_studio.core.from_weights`), and
    says that the stages before softmax are not the model's (the scene's description and the status bar).
    ``v`` may come with them (else the blend of a row is that row of weights).

    ``block`` says whether to run Qt's event loop until the window is closed; None decides (see the
    module notes: at once in IPython/Jupyter and ``python -i``, the loop in a script).  Raises
    :class:`SceneError` with one line for bad arrays, before any window opens.
    """
    source, doc = None, ""
    file_view = View()
    if weights is not None:
        from qkv_studio.core.from_weights import scene_from_weights

        if any(a is not None for a in (q, k, x, wq, wk, wv, scene)) or mask is not None or not scale:
            raise SceneError("weights", "give weights (with tokens and v if you like) or q, k, v, not both; "
                                        "the mask follows from the zero weights")
        scene, v, tokens, title = scene_from_weights(weights, tokens, v=v, title=title), None, None, None
    if isinstance(q, Scene) and scene is None:
        q, scene = None, q
    elif isinstance(q, (str, os.PathLike)) and scene is None:
        scene, file_view, source = _open_file(q)
        doc = "" if source is not None else os.fspath(q)  # (Save writes back to a session file, never to .npz)
        q = None
    scene = _scene_from(scene, dict(q=q, k=k, v=v, tokens=tokens, x=x, wq=wq, wk=wk, wv=wv, mask=mask,
                                    scale=scale, title=title))
    view = file_view if query == 0 else View(query=scene.find_token(query))
    from qkv_studio.app import ensure_qapp

    app = ensure_qapp()
    blocking = will_block(block)
    from qkv_studio.ui.window.main_window import MainWindow

    window = MainWindow(scene, doc, view=view)
    _windows.append(window)
    window.installEventFilter(_closing_watcher(window))  # (a child of the window: it lives as long)
    window.show()
    if app.platformName() != "offscreen":  # (which cannot raise a window, and says so)
        window.raise_()
    if source is not None:  # the file's model in the Real model panel, on its first head
        from qkv_studio.app import _show_model_head

        window.show_panel(window.docks.model)
        _show_model_head(window, scene, view, source.name, source.text, 0, 0)
    if weights is not None:
        from qkv_studio.core.from_weights import NOTE

        window.statusBar().showMessage(NOTE)
    if presentation:
        window.set_presentation(True)
    if blocking:
        _run_until_closed(app, window)
    return window


def _open_file(path: str | os.PathLike):
    """(scene, its view, its Q/K/V file model or None) for a file ``show`` was given; raises SessionFileError."""
    from qkv_studio.core.models.qkv_file import is_qkv_file, read_qkv_file, register

    if is_qkv_file(path):
        source = register(read_qkv_file(path))
        return source.run().head_scene(0, 0), View(), source
    from qkv_studio.core.sessionfile import read_session

    doc = read_session(path)
    return doc.scene, doc.view, None


def _forget(window) -> None:
    try:
        _windows.remove(window)
    except ValueError:
        pass


_watcher_class = None


def _closing_watcher(window):
    """A child of ``window`` that lets go of it once it has closed (a close the user cancelled — unsaved
    edits — keeps it) and then calls its ``hooks`` (a blocking show's loop.quit); your own reference keeps
    the window alive.

    One class for every window, holding no Python reference to it: a Qt object in a reference cycle is
    freed by the cyclic collector at an arbitrary moment, which PySide6 does not survive everywhere."""
    global _watcher_class
    if _watcher_class is None:
        from PySide6.QtCore import QEvent, QObject, QTimer
        from PySide6.QtWidgets import QWidget

        class _ClosingWatcher(QObject):
            def __init__(self, parent) -> None:
                super().__init__(parent)
                self.hooks: list = []

            def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
                if event.type() == QEvent.Type.Close:
                    QTimer.singleShot(0, self, self._after_close)  # (after the close was accepted or not)
                return False

            def _after_close(self) -> None:
                window = self.parent()
                if not isinstance(window, QWidget) or window.isVisible():
                    return
                hooks, self.hooks = self.hooks, []
                for hook in hooks:
                    hook()
                # the module's reference is dropped once this window's events are done with it
                QTimer.singleShot(0, lambda: _forget(window))

        _watcher_class = _ClosingWatcher
    return _watcher_class(window)


def _run_until_closed(app, window) -> None:
    """Run an event loop until ``window`` is closed (a cancelled close keeps it running)."""
    from PySide6.QtCore import QEventLoop

    if not window.isVisible():
        return
    loop = QEventLoop()
    window.findChild(_watcher_class).hooks.append(loop.quit)
    loop.exec()


def run(*, force: bool = False) -> None:
    """Run Qt's event loop until the last window is closed (as ``napari.run()``).

    Returns at once where :func:`show` would not block (IPython/Jupyter, ``python -i``, a running loop),
    unless ``force``; also at once when no window is open.
    """
    if not force and not will_block(None):
        return
    if not any(w.isVisible() for w in _windows):
        return
    from qkv_studio.app import ensure_qapp

    ensure_qapp().exec()
