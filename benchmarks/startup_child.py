"""Child process for the start-up benchmark: open a window and report the time to its first paint.

Usage: ``python startup_child.py app|bare T0`` where ``T0`` is the parent's ``time.perf_counter()``
just before it started this process (CLOCK_MONOTONIC, shared between processes on Linux).  Prints
``FIRST_PAINT <seconds since T0>`` once the window's first paint has finished, then exits at once
(tear-down is not part of start-up).  ``app`` opens QKV Studio the way ``qkv-studio`` does (the
entry point's module, the lesson preset, the main window); ``bare`` opens a plain PySide6 window
with one pyqtgraph PlotWidget of the same size — the floor any Qt + pyqtgraph app starts from.
"""

import os
import sys
import time

# An installed app (and a fresh clone after the unmeasured warm-up run) imports its modules from
# cached bytecode, as the bare baseline does with its libraries.  Under PYTHONDONTWRITEBYTECODE the
# warm-up cached nothing and every measured start compiled QKV Studio's ~30 modules from source
# (~0.1 s that no user waits for): let the warm-up write the cache.
sys.dont_write_bytecode = False


def main() -> None:
    kind, t0 = sys.argv[1], float(sys.argv[2])
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    if kind == "app":
        import qkv_studio.cli  # noqa: F401 - what the qkv-studio entry point imports first
        from qkv_studio.app import ensure_qapp
        from qkv_studio.core import load_preset

        app = ensure_qapp()
        from qkv_studio.ui.window.main_window import MainWindow

        window = MainWindow(load_preset("lesson"), use_settings=False)
    elif kind == "bare":
        import pyqtgraph as pg
        from PySide6.QtWidgets import QApplication, QMainWindow

        app = QApplication(sys.argv[:1])
        window = QMainWindow()
        plot = pg.PlotWidget()
        plot.plot([0, 1, 2, 3], [0, 1, 0, 1])
        window.setCentralWidget(plot)
        window.resize(1600, 950)
    else:
        raise SystemExit(f"unknown kind {kind!r}")

    from PySide6.QtCore import QEvent, QObject, QTimer

    class FirstPaint(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.seen = False

        def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint and not self.seen:
                self.seen = True
                # The whole window is painted in this same backing-store sync; report right after it.
                QTimer.singleShot(0, done)
            return False

    def done() -> None:
        print(f"FIRST_PAINT {time.perf_counter() - t0:.6f}", flush=True)
        os._exit(0)

    watcher = FirstPaint()
    app.installEventFilter(watcher)  # any widget's paint: an opaque child may cover the window itself
    window.show()
    QTimer.singleShot(20000, lambda: (print("FIRST_PAINT timeout", flush=True), os._exit(1)))
    app.exec()


if __name__ == "__main__":
    main()
