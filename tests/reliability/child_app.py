"""A real QKV Studio process for the crash tests: edits, autosaves, then waits to be killed or quits.

python -m tests.reliability.child_app FOLDER (crash|clean|ink)
Prints "ready <autosave file>" once the edit is autosaved.  ``ink`` edits nothing: it draws the strokes of
:data:`INK` on their stages of the slide (unsaved ink alone) and waits to be killed.
"""

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

from qkv_studio import reliability
from qkv_studio.app import ensure_qapp
from qkv_studio.core import preset_document
from qkv_studio.core.ink import stroke

#: (stage, points, colour) drawn by the ``ink`` mode
INK = (("weights", ((0.1, 0.5, 1.0), (0.5, 0.55, 0.8), (0.9, 0.5, 0.6)), 1),
       ("weights", ((0.3, 0.2, 1.0),), 3),
       ("scores", ((0.2, 0.8, 1.0), (0.7, 0.3, 1.0)), 4))


def main() -> int:
    folder, mode = sys.argv[1], sys.argv[2]
    app = ensure_qapp(offscreen_if_headless=True)
    from qkv_studio.ui.window.main_window import MainWindow

    QMessageBox.exec = lambda self: QMessageBox.Discard  # the close prompt: discard (no one to answer)
    scene, view = preset_document("lesson")
    window = MainWindow(scene, use_settings=False, view=view)
    auto = reliability.attach(window, folder=folder)
    window.show()
    if mode == "ink":
        for stage, points, colour in INK:
            window.session.set_stage(stage)
            window.presenter.book.add_stroke(stroke(points, colour))
    else:
        window.session.set_value("Q", 2, 0, 42.0)
        window.session.rename_token(0, "crash")

    def ready() -> None:
        if auto.file() is None or not auto.file().exists():
            QTimer.singleShot(50, ready)
            return
        auto.wait()
        print("ready", auto.file(), flush=True)
        if mode == "clean":
            QTimer.singleShot(0, window.close)

    QTimer.singleShot(0, ready)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
