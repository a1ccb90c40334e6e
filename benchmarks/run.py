#!/usr/bin/env python
"""QKV Studio's performance benchmark: ``make bench`` (or ``python benchmarks/run.py``).

Measures what a lecturer feels — an edit, a drag step, a stage step, a query change until the
window has repainted; start-up; exports; memory — and, in the same run, the usual alternative: a
notebook re-drawing a matplotlib heatmap with the values in the cells.  Prints a table (metric,
value, target, pass/fail) and writes a flat JSON object of the medians (``benchmarks/results.json``
unless ``--out`` says otherwise).

Every time is the median over ``--reps`` repetitions after ``--warmup`` unmeasured ones; the window
is shown on Qt's offscreen platform at 1600×950 with d_k = d_v = 64 (``present_*``: full screen in
presentation mode on a 1920×1080 screen and on a 3840×2160 one at 200 %, see ``present_child.py``; the
stage step there also apart: into or out of the plane's and the blend's slides, and between the score stages).
"Repainted" means: the
Session's coalesced ``result_changed`` is delivered (``flush()``), pending events are processed (which
paints every widget that asked for it), and each widget the change must show up in has received a
paint event since the change — if one has not, ``repaint()`` forces it, synchronously, inside the timing.

``--quick`` runs everything once at tiny sizes (the test suite uses it so the benchmark cannot rot).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
sys.path.insert(0, str(HERE))

FRAME_MS = 1000.0 / 60.0
EDIT_SIZES = (4, 16, 64, 256, 1024)
MPL_SIZES = (16, 64)

# metric -> (kind, bound): "max" value ≤ bound; "ratio" value ≤ bound × other metric;
# "faster" value ≥ bound × the app's metric at the same n.
TARGETS: dict[str, tuple[str, object]] = {
    "edit_repaint_ms_n4": ("max", FRAME_MS),
    "edit_repaint_ms_n16": ("max", FRAME_MS),
    "edit_repaint_ms_n64": ("max", 8.0),
    "edit_repaint_ms_n256": ("max", FRAME_MS),
    "edit_repaint_ms_n1024": ("max", 16.0),
    "drag_step_ms_n64": ("max", 8.0),
    "step_ms_n64": ("max", 8.0),
    "query_change_ms_n64": ("max", FRAME_MS),
    "startup_s": ("ratio", (1.3, "startup_bare_qt_s")),
    "export_png_4k_ms_n64": ("max", 300.0),
    "peak_rss_mb_n1024": ("max", 300.0),
    "present_edit_ms_n64_1080p": ("max", FRAME_MS),
    "present_step_ms_n64_1080p": ("max", FRAME_MS),
    "present_edit_ms_n64_4k2x": ("max", FRAME_MS),
    "present_step_ms_n64_4k2x": ("max", FRAME_MS),
    # (the steps into and out of the plane's and the blend's slides, and, as their baseline measured in
    # the same process, the steps between the score stages, where the heatmap's slide stays)
    "present_step_slide_ms_n64_1080p": ("max", FRAME_MS),
    "present_step_heatmap_ms_n64_1080p": ("max", FRAME_MS),
    "present_step_slide_ms_n64_4k2x": ("max", FRAME_MS),
    "present_step_heatmap_ms_n64_4k2x": ("max", FRAME_MS),
    "matplotlib_redraw_ms_n16": ("faster", (20.0, "edit_repaint_ms_n16")),
    "matplotlib_redraw_ms_n64": ("faster", (20.0, "edit_repaint_ms_n64")),
}


# ---- helpers ------------------------------------------------------------------------------------
def median_ms(fn, reps: int, warmup: int, between=None) -> float:
    """Median wall time of ``fn()`` in milliseconds (``between()`` runs untimed before each call)."""
    times = []
    for i in range(warmup + reps):
        if between is not None:
            between(i)
        t = time.perf_counter()
        fn(i)
        dt = time.perf_counter() - t
        if i >= warmup:
            times.append(dt * 1000.0)
    return statistics.median(times)


class PaintWatch:
    """Counts paint events of some widgets, and repaints (synchronously) those that have not painted."""

    def __init__(self, widgets) -> None:
        from PySide6.QtCore import QEvent, QObject

        watch = self

        class Filter(QObject):
            def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
                if event.type() == QEvent.Type.Paint:
                    watch.painted.add(id(obj))
                return False

        self.widgets = list(widgets)
        self.painted: set[int] = set()
        self._filter = Filter()
        for w in self.widgets:
            w.installEventFilter(self._filter)

    def reset(self) -> None:
        self.painted.clear()

    def settle(self, app) -> None:
        """Process pending events, then make sure every watched widget has painted since reset()."""
        app.processEvents()
        for w in self.widgets:
            if id(w) not in self.painted:
                w.repaint()

    def close(self) -> None:
        for w in self.widgets:
            w.removeEventFilter(self._filter)


class FollowUp:
    """The next frame's work an action leaves behind, timed apart from the action (as ``between``).

    The panels that follow an edit rather than show it (blend view, vector plane, captions) redraw one
    frame later (qkv_studio/ui/widgets/frame_throttle.py); a lecturer's edits come at most once a frame, so each
    repetition starts with that frame done: its work is run here — every waiting update, then the paints
    — and timed as the action's *follow-up frame*, which must fit in a frame too.
    """

    def __init__(self, app, warmup: int) -> None:
        self.app = app
        self.warmup = warmup
        self.times: list[float] = []

    def __call__(self, i: int) -> None:
        from qkv_studio.ui.widgets.frame_throttle import flush_pending

        t = time.perf_counter()
        flush_pending()
        for _ in range(3):  # (a caption that re-lays out its panel posts that to the next turn)
            self.app.processEvents()
        if i > self.warmup:  # (the frame left by repetition i - 1)
            self.times.append((time.perf_counter() - t) * 1000.0)

    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")


def open_window(n: int, stage: str = "weights"):
    from scenes import random_scene

    from qkv_studio.app import ensure_qapp

    app = ensure_qapp()
    from qkv_studio.core import View
    from qkv_studio.ui.window.main_window import MainWindow

    window = MainWindow(random_scene(n), use_settings=False, view=View(0, stage))
    window.resize(1600, 950)
    window.show()
    for _ in range(3):
        app.processEvents()
    window.session.flush()
    app.processEvents()
    return app, window


def close_window(app, window) -> None:
    window.session.undo_stack.setClean()
    window.close()
    window.deleteLater()
    # processEvents() alone leaves deferred deletes queued (they wait for the event loop's next turn):
    # every window of the earlier sizes then stayed alive, hidden, with its panels, timers and Python
    # objects, and slowed each later measurement (a real session has one window).
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    gc.collect()


# ---- measurements in this process ---------------------------------------------------------------
def bench_edit(n: int, reps: int, warmup: int) -> tuple[float, float]:
    """One Q cell of the selected query edited through the Session, until the heatmap, the calculation
    table and the Q editor have repainted; and the follow-up frame (see FollowUp)."""
    app, window = open_window(n)
    s = window.session
    watch = PaintWatch([window.heatmap.graphics.viewport(), window.panels.calc.viewport(),
                        window.editors["Q"].table.viewport()])

    def edit(i: int) -> None:
        watch.reset()
        s.set_value("Q", s.query, 0, 1.25 if i % 2 else -0.75)  # alternate: every edit is a real change
        s.flush()
        watch.settle(app)

    follow = FollowUp(app, warmup)
    ms = median_ms(edit, reps, warmup, between=follow)
    watch.close()
    close_window(app, window)
    return ms, follow.median()


def bench_drag(n: int, reps: int, warmup: int) -> tuple[float, float]:
    """One mouse-move step of a drag of the query's arrow head on the vector plane, until the plane and
    the heatmap have repainted; and the follow-up frame, in which the calculation table and the
    editors show the step's numbers (they follow a drag one frame late; see FollowUp)."""
    import pyqtgraph as pg
    from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app, window = open_window(n)
    window.docks.plane.show()
    window.docks.plane.raise_()
    app.processEvents()
    plane = window.panels.plane
    vp = plane.plot_widget.viewport()
    watch = PaintWatch([vp, window.heatmap.graphics.viewport()])
    start = plane.head_viewport_pos("Q", window.session.query)
    points = [QPoint(start.x() + 25, start.y() - 10), QPoint(start.x() + 5, start.y() + 15)]

    def move(pos: QPoint) -> None:
        ev = QMouseEvent(QEvent.Type.MouseMove, QPointF(pos), QPointF(vp.mapToGlobal(pos)),
                         Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(vp, ev)

    rate = pg.getConfigOption("mouseRateLimit")
    gap = 1.5 / rate if rate > 0 else 0.0  # pyqtgraph drops moves closer together than 1/rate s

    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    time.sleep(gap)
    move(QPoint(start.x() + 12, start.y()))  # starts the drag (pyqtgraph needs a few pixels first)
    window.session.flush()
    app.processEvents()
    before = window.session.undo_stack.count()

    def step(i: int) -> None:
        watch.reset()
        move(points[i % 2])
        window.session.flush()
        watch.settle(app)

    follow = FollowUp(app, warmup)

    def between(i: int) -> None:
        follow(i)
        time.sleep(gap)

    ms = median_ms(step, reps, warmup, between=between)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, points[0])
    app.processEvents()
    if window.panels.plane._drag is not None or window.session.undo_stack.count() != before:
        raise RuntimeError("the drag benchmark did not drive one continuous drag of the query's head")
    watch.close()
    close_window(app, window)
    return ms, follow.median()


def bench_step(n: int, reps: int, warmup: int) -> tuple[float, float]:
    """One stage step (→ or ←, back and forth over all five stages) until the heatmap (matrix, legend,
    title) and the stepper have repainted; and the follow-up frame, in which the calculation table
    shows or hides its stage's column (see FollowUp)."""
    from qkv_studio.core import STAGES

    app, window = open_window(n)
    s = window.session
    watch = PaintWatch([window.heatmap.graphics.viewport(), window.stepper])
    order = list(range(len(STAGES))) + list(range(len(STAGES) - 2, 0, -1))  # 0 1 2 3 4 3 2 1

    def step(i: int) -> None:
        watch.reset()
        s.set_stage(STAGES[order[i % len(order)]])
        s.flush()
        watch.settle(app)

    s.set_stage(STAGES[0])
    app.processEvents()
    follow = FollowUp(app, warmup)
    ms = median_ms(lambda i: step(i + 1), reps, warmup, between=follow)
    watch.close()
    close_window(app, window)
    return ms, follow.median()


def bench_query(n: int, reps: int, warmup: int) -> tuple[float, float]:
    """A different query token selected, until the heatmap, table and editors have repainted."""
    app, window = open_window(n)
    s = window.session
    watch = PaintWatch([window.heatmap.graphics.viewport(), window.panels.calc.viewport(),
                        window.editors["Q"].table.viewport()])

    def change(i: int) -> None:
        watch.reset()
        s.set_query((i * 7 + 1) % n)
        s.flush()
        watch.settle(app)

    follow = FollowUp(app, warmup)
    ms = median_ms(change, reps, warmup, between=follow)
    watch.close()
    close_window(app, window)
    return ms, follow.median()


def bench_exports(n: int, reps: int, warmup: int) -> dict[str, float]:
    from scenes import random_scene

    from qkv_studio.export.figures import ensure_app
    from qkv_studio.export.files import export_file

    ensure_app()
    scene = random_scene(n)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for key, name, width in (("export_png_4k_ms", "fig.png", 3840), ("export_svg_ms", "fig.svg", None),
                                 ("export_pdf_ms", "fig.pdf", None)):
            path = os.path.join(tmp, name)
            out[f"{key}_n{n}"] = median_ms(lambda i: export_file(scene, path, width=width), reps, warmup)
    return out


def bench_matplotlib(n: int, reps: int, warmup: int) -> float:
    """The notebook baseline: an Agg figure with imshow and one text per cell, re-drawn after each edit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from scenes import random_scene

    from qkv_studio.core import compute

    scene = random_scene(n)
    q, k, v = (np.array(a) for a in scene.qkv())
    w = compute(q, k, v).weights
    fig, ax = plt.subplots(figsize=(8, 8), dpi=100)
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
    fig.colorbar(im, ax=ax, label="weight")
    labels = list(scene.tokens)
    ax.set_xticks(range(n), labels, rotation=90, fontsize=max(3, min(10, 400 / n)))
    ax.set_yticks(range(n), labels, fontsize=max(3, min(10, 400 / n)))
    size = max(2.0, min(12.0, 320.0 / n))
    texts = [[ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=size,
                      color="black" if w[i, j] > 0.5 else "white") for j in range(n)] for i in range(n)]
    fig.canvas.draw()

    def redraw(i: int) -> None:
        q[0, 0] = 1.25 if i % 2 else -0.75  # the same edit the app benchmark makes
        w = compute(q, k, v).weights
        im.set_data(w)
        for r in range(n):
            for c in range(n):
                t = texts[r][c]
                t.set_text(f"{w[r, c]:.2f}")
                t.set_color("black" if w[r, c] > 0.5 else "white")
        fig.canvas.draw()

    ms = median_ms(redraw, reps, warmup)
    plt.close(fig)
    return ms


# ---- measurements in child processes ------------------------------------------------------------
def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["PYQTGRAPH_QT_LIB"] = "PySide6"
    return env


def _child(args: list[str], tag: str, timeout: float = 300) -> float:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=_child_env(),
                          timeout=timeout)
    for line in proc.stdout.splitlines():
        if line.startswith(tag + " "):
            value = line.split()[1]
            if value != "timeout":
                return float(value)
    raise RuntimeError(f"{' '.join(args)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-2000:]}")


def bench_startup(runs: int) -> dict[str, float]:
    """Process start to first paint, the app and a bare Qt + pyqtgraph window alternately."""
    script = str(HERE / "startup_child.py")
    times: dict[str, list[float]] = {"app": [], "bare": []}
    for kind in ("app", "bare") if runs > 1 else ():  # warm the OS file cache for both, unmeasured
        _child([script, kind, repr(time.perf_counter())], "FIRST_PAINT", 120)
    for _ in range(runs):
        for kind in ("bare", "app"):
            times[kind].append(_child([script, kind, repr(time.perf_counter())], "FIRST_PAINT", 120))
    return {"startup_s": statistics.median(times["app"]), "startup_bare_qt_s": statistics.median(times["bare"])}


#: The slides of the presentation benchmark: name → physical size and device-pixel ratio (a 4K screen at
#: 200 % is a 1920×1080 slide of four times the pixels: paint cost grows with pixels).
SLIDES = {"1080p": (1920, 1080, 1.0), "4k2x": (3840, 2160, 2.0)}


def bench_present(n: int, reps: int, warmup: int, slides=SLIDES) -> dict[str, tuple[float, float | None]]:
    """An edit and a stage step on a full-screen presentation slide, each screen in a child process of
    its own (the screen is fixed when Qt starts): ``present_child.py``.  Besides the step's median over
    all five stages, the steps into and out of the plane's and the blend's slides (another slide
    composed) and, as their baseline from the same process, the steps between the score stages (the
    heatmap's slide stays); those two have no follow-up frame of their own (None)."""
    out: dict[str, tuple[float, float | None]] = {}
    for name, (width, height, dpr) in slides.items():
        args = [str(HERE / "present_child.py"), str(width), str(height), str(dpr), str(n), str(reps), str(warmup)]
        values = _child_values(args, ("PRESENT_EDIT_MS", "PRESENT_EDIT_FOLLOW_MS", "PRESENT_STEP_MS",
                                      "PRESENT_STEP_FOLLOW_MS", "PRESENT_STEP_SLIDE_MS", "PRESENT_STEP_SAME_MS"),
                               600)
        out[f"present_edit_ms_n{n}_{name}"] = (values["PRESENT_EDIT_MS"], values["PRESENT_EDIT_FOLLOW_MS"])
        out[f"present_step_ms_n{n}_{name}"] = (values["PRESENT_STEP_MS"], values["PRESENT_STEP_FOLLOW_MS"])
        out[f"present_step_slide_ms_n{n}_{name}"] = (values["PRESENT_STEP_SLIDE_MS"], None)
        out[f"present_step_heatmap_ms_n{n}_{name}"] = (values["PRESENT_STEP_SAME_MS"], None)
    return out


def _child_values(args: list[str], tags: tuple[str, ...], timeout: float = 300) -> dict[str, float]:
    """The numbers a child process prints as ``TAG value`` lines, one for each of ``tags``."""
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=_child_env(),
                          timeout=timeout)
    found = {}
    for line in proc.stdout.splitlines():
        tag, _, value = line.partition(" ")
        if tag in tags:
            found[tag] = float(value)
    if set(found) != set(tags):
        raise RuntimeError(f"{' '.join(args)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-2000:]}")
    return found


def bench_rss(n: int, edits: int) -> float:
    return _child([str(HERE / "rss_child.py"), str(n), str(edits)], "PEAK_RSS_MB", 600)


# ---- report -------------------------------------------------------------------------------------
def target_text(key: str, results: dict[str, float]) -> tuple[str, str]:
    if key not in TARGETS:
        return "—", ""
    kind, bound = TARGETS[key]
    value = results[key]
    if kind == "max":
        return f"≤ {bound:.3g}", "pass" if value <= bound else "FAIL"
    factor, other = bound
    if other not in results:
        return f"{'≤' if kind == 'ratio' else '≥'} {factor:g} × {other}", "—"
    limit = factor * results[other]
    if kind == "ratio":
        return f"≤ {factor:g} × bare = {limit:.3g}", "pass" if value <= limit else "FAIL"
    return f"≥ {factor:g} × app = {limit:.3g}", "pass" if value >= limit else "FAIL"


def table(results: dict[str, float]) -> str:
    rows = [("metric", "value", "target", "")]
    for key, value in results.items():
        unit = "s" if key.endswith("_s") else ("MB" if "_mb_" in key else "ms")
        shown = f"{value:.3f} s" if unit == "s" else f"{value:.2f} {unit}" if unit == "ms" else f"{value:.0f} MB"
        rows.append((key, shown, *target_text(key, results)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[j]) if j != 1 else c.rjust(widths[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def follow_up_table(follow_ups: dict[str, float]) -> str:
    width = max(len(k) for k in follow_ups)
    lines = [f"{'action'.ljust(width)}  follow-up  target", f"{'-' * width}  ---------  ------"]
    for key, value in follow_ups.items():
        verdict = "pass" if value <= FRAME_MS else "FAIL"
        lines.append(f"{key.ljust(width)}  {value:6.2f} ms  ≤ {FRAME_MS:.3g}  {verdict}")
    return "\n".join(lines)


def machine() -> dict[str, str]:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numpy
    import pyqtgraph
    import PySide6

    return {"cpus": str(os.cpu_count()), "cpu": cpu, "python": platform.python_version(),
            "pyside6": PySide6.__version__, "qt": PySide6.QtCore.qVersion(), "pyqtgraph": pyqtgraph.__version__,
            "numpy": numpy.__version__, "platform": os.environ.get("QT_QPA_PLATFORM", "")}


def metric_keys(sizes=EDIT_SIZES, n: int = 64, mpl_sizes=MPL_SIZES, rss_n: int = 1024) -> list[str]:
    """The keys of results.json, in order, for the given sizes (the defaults give the full set)."""
    return ([f"edit_repaint_ms_n{size}" for size in sizes]
            + [f"drag_step_ms_n{n}", f"step_ms_n{n}", f"query_change_ms_n{n}", "startup_s", "startup_bare_qt_s",
               f"export_png_4k_ms_n{n}", f"export_svg_ms_n{n}", f"export_pdf_ms_n{n}", f"peak_rss_mb_n{rss_n}"]
            + [f"present_{action}_ms_n{n}_{slide}" for slide in SLIDES
               for action in ("edit", "step", "step_slide", "step_heatmap")]
            + [f"matplotlib_redraw_ms_n{size}" for size in mpl_sizes])


def parse_sizes(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="one repetition, no warm-up, tiny sizes (the test suite's smoke run)")
    ap.add_argument("--sizes", type=parse_sizes, default=None,
                    help=f"token counts for the edit benchmark (default {','.join(map(str, EDIT_SIZES))})")
    ap.add_argument("--n", type=int, default=None,
                    help="token count of the drag/step/query/export benchmarks (default 64)")
    ap.add_argument("--mpl-sizes", type=parse_sizes, default=None,
                    help=f"token counts of the matplotlib baseline (default {','.join(map(str, MPL_SIZES))})")
    ap.add_argument("--rss-n", type=int, default=None, help="token count of the memory benchmark (default 1024)")
    ap.add_argument("--reps", type=int, default=None, help="measured repetitions per metric (default 40)")
    ap.add_argument("--warmup", type=int, default=None, help="unmeasured repetitions first (default 5)")
    ap.add_argument("--startup-runs", type=int, default=None,
                    help="start-ups of each kind (default 11: the bare window alone varies by ±15 %% between runs)")
    ap.add_argument("--only", default="",
                    help="comma-separated groups: edit,drag,step,query,startup,export,rss,present,mpl")
    ap.add_argument("--out", type=Path, default=HERE / "results.json", help="where to write the JSON results")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)

    quick = args.quick
    sizes = args.sizes or ((4, 16) if quick else EDIT_SIZES)
    mpl_sizes = args.mpl_sizes or ((4,) if quick else MPL_SIZES)
    rss_n = args.rss_n or (16 if quick else 1024)
    reps = args.reps or (1 if quick else 40)
    warmup = args.warmup if args.warmup is not None else (0 if quick else 5)
    startup_runs = args.startup_runs or (1 if quick else 11)
    groups = set(filter(None, args.only.split(","))) or {"edit", "drag", "step", "query", "startup", "export",
                                                        "rss", "present", "mpl"}
    n = args.n or (16 if quick else 64)

    results: dict[str, float] = {}
    follow_ups: dict[str, float] = {}  # printed, not in results.json (its keys are fixed)

    def record(key: str, value: float) -> None:
        results[key] = round(float(value), 4)
        print(f"  {key} = {value:.4g}", flush=True)

    def record_pair(key: str, pair: tuple[float, float]) -> None:
        record(key, pair[0])
        follow_ups[key] = round(float(pair[1]), 4)
        print(f"    its follow-up frame = {pair[1]:.4g}", flush=True)

    print("QKV Studio benchmark:", ", ".join(f"{k} {v}" for k, v in machine().items()), flush=True)
    if "edit" in groups:
        for size in sizes:
            record_pair(f"edit_repaint_ms_n{size}", bench_edit(size, reps, warmup))
    if "drag" in groups:
        record_pair(f"drag_step_ms_n{n}", bench_drag(n, reps, warmup))
    if "step" in groups:
        record_pair(f"step_ms_n{n}", bench_step(n, reps, warmup))
    if "query" in groups:
        record_pair(f"query_change_ms_n{n}", bench_query(n, reps, warmup))
    if "startup" in groups:
        for key, value in bench_startup(startup_runs).items():
            record(key, value)
    if "export" in groups:
        for key, value in bench_exports(n, reps if not quick else 1, warmup).items():
            record(key, value)
    if "rss" in groups:
        record(f"peak_rss_mb_n{rss_n}", bench_rss(rss_n, 10 if quick else 60))
    if "present" in groups:
        # (quick: the 4K slide at half its pixels, still at 200 %: the script cannot rot, and quickly)
        slides = {name: ((w // 2, h // 2, d) if quick and d != 1 else (w, h, d)) for name, (w, h, d) in SLIDES.items()}
        for key, pair in bench_present(n, reps, warmup, slides).items():
            if pair[1] is None:
                record(key, pair[0])
            else:
                record_pair(key, pair)
    if "mpl" in groups:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise SystemExit("the matplotlib baseline needs matplotlib: pip install -e '.[bench]' "
                             "(or leave it out with --only)") from None
        for size in mpl_sizes:
            record(f"matplotlib_redraw_ms_n{size}", bench_matplotlib(size, reps, warmup))

    print()
    print(table(results))
    if follow_ups:
        print("\nThe frame after each action (what follows one frame later: blend view, vector plane, captions;"
              " after a stage step the calculation table's column, after a drag step the table's and the"
              " editors' numbers):")
        print(follow_up_table(follow_ups))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"\nwrote {args.out}")
    failed = [k for k in results if target_text(k, results)[1] == "FAIL"]
    if failed:
        print("missed targets: " + ", ".join(failed))
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
