"""Child process for the memory benchmark: open an n-token scene in the window, edit it, report peak RSS.

Usage: ``python rss_child.py N EDITS``.  Prints ``PEAK_RSS_MB <megabytes>``: the high-water mark of
this process's resident memory, interpreter and Qt included (see :func:`peak_rss_kb`).
"""

import os
import resource
import sys


def peak_rss_kb() -> float:
    """This process's peak resident memory in kB.

    Linux's ``ru_maxrss`` survives ``exec``: a child started by a big parent (this benchmark's, with
    its 1024-token windows) reports the parent's peak.  ``VmHWM`` belongs to this process's own
    memory map, so it is used where there is one.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # kB on Linux, bytes on macOS


def main() -> None:
    n, edits = int(sys.argv[1]), int(sys.argv[2])
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from scenes import random_scene

    from qkv_studio.app import ensure_qapp

    app = ensure_qapp()
    from qkv_studio.ui.window.main_window import MainWindow

    window = MainWindow(random_scene(n), use_settings=False)
    window.resize(1600, 950)
    window.show()
    app.processEvents()
    s = window.session
    for i in range(edits):
        s.set_value("Q", (7 * i) % n, i % s.scene.d_k, 1.25 if i % 2 else -0.75)
        s.flush()
        app.processEvents()
        if i % 10 == 9:
            s.step_stage(-1 if s.stage == "output" else +1)
            s.set_query((s.query + 13) % n)
            app.processEvents()
    print(f"PEAK_RSS_MB {peak_rss_kb() / 1024:.1f}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
