"""A presentation slide's edit and stage step, full screen on a screen of its own (a child of run.py).

    python benchmarks/present_child.py WIDTH HEIGHT DPR N REPS WARMUP

The screen is Qt's offscreen platform configured ``WIDTH`` × ``HEIGHT`` physical pixels at ``DPR``
(``QT_SCALE_FACTOR``: offscreen windows paint at 1× on a dpr-2 screen otherwise), set before Qt is
imported.  The window opens an ``N``-token scene (d_k = d_v = 64, query 0, weights), enters presentation
mode (F5: the slide of its own full screen, composed for that screen), then times, as ``run.py`` times the window's:

* an edit of the query's Q cell until the heatmap and the calculation table have repainted
  (``PRESENT_EDIT_MS``), and
* a stage step, back and forth over the five stages — the slide's main view changes at Vectors
  (the plane) and blend — until the slide's main view and the stepper have repainted
  (``PRESENT_STEP_MS``), and of those steps apart: the ones into or out of the plane's and the blend's
  slides, which compose another slide (``PRESENT_STEP_SLIDE_MS``), and the ones between the score
  stages, where the heatmap's slide stays and only the heatmap changes (``PRESENT_STEP_SAME_MS``: the
  baseline, measured in the same process),

each the median of ``REPS`` after ``WARMUP`` (the steps: of at least one round of the stages, so each
kind is measured), the follow-up frame run between repetitions (and printed as
``PRESENT_EDIT_FOLLOW_MS`` / ``PRESENT_STEP_FOLLOW_MS``).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    width, height, dpr, n, reps, warmup = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                                           int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    folder = tempfile.mkdtemp(prefix="qkv-present-")
    cfg = Path(folder) / "screens.json"
    cfg.write_text(json.dumps({"screens": [{"name": "slide", "x": 0, "y": 0, "width": width, "height": height,
                                            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={cfg}"
    os.environ.pop("QT_SCALE_FACTOR", None)
    if dpr != 1:
        os.environ["QT_SCALE_FACTOR"] = f"{dpr:g}"
    os.environ["PYQTGRAPH_QT_LIB"] = "PySide6"
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    import run  # (this folder's run.py: the same measuring tools)
    from scenes import random_scene

    from qkv_studio.app import ensure_qapp
    from qkv_studio.core import STAGES, View
    from qkv_studio.core.stages import stage_spec

    app = ensure_qapp()
    from qkv_studio.ui.window.main_window import MainWindow

    window = MainWindow(random_scene(n), use_settings=False, view=View(0, "weights"))
    window.show()
    window.set_presentation(True)
    for _ in range(5):
        app.processEvents()
    window.session.flush()
    app.processEvents()
    slide = window.presentation.slide  # (the slide of its own: qkv_studio.ui.slide)
    if not slide.isFullScreen():
        raise SystemExit("the slide did not go full screen")
    s = window.session
    heatmap = slide.views.get("heatmap")
    table = slide.views.get("calc")  # (left out of the slide when it is not legible there: painted only if shown)

    watch = run.PaintWatch([heatmap.graphics.viewport()] + ([table.viewport()] if table.isVisible() else []))

    def edit(i: int) -> None:
        watch.reset()
        s.set_value("Q", s.query, 0, 1.25 if i % 2 else -0.75)
        s.flush()
        watch.settle(app)

    follow = run.FollowUp(app, warmup)
    edit_ms = run.median_ms(edit, reps, warmup, between=follow)
    edit_follow = follow.median()
    watch.close()

    views = [heatmap.graphics.viewport(), slide.stepper, slide.views.get("plane").plot_widget.viewport(),
             slide.views.get("blend")]
    watch = run.PaintWatch(views)
    order = list(range(len(STAGES))) + list(range(len(STAGES) - 2, 0, -1))  # 0 1 2 3 4 3 2 1
    # (what each stage's slide shows large: a step between two stages of one main view keeps the slide)
    slide_of = [stage_spec(stage).slide_view for stage in STAGES]
    times: dict[str, list[float]] = {"all": [], "slide": [], "same": []}

    def step(i: int) -> None:
        here, there = order[i % len(order)], order[(i + 1) % len(order)]
        watch.reset()
        t = time.perf_counter()
        s.set_stage(STAGES[there])
        s.flush()
        watch.settle(app)
        ms = (time.perf_counter() - t) * 1000.0
        if i >= warmup:
            times["all"].append(ms)
            times["slide" if slide_of[here] != slide_of[there] else "same"].append(ms)

    s.set_stage(STAGES[0])
    app.processEvents()
    follow = run.FollowUp(app, warmup)
    # (at least one round of the stages: each kind of step is measured, even with --quick's one repetition)
    for i in range(warmup + max(reps, len(order))):
        follow(i)
        step(i)
    step_ms, slide_ms, same_ms = (statistics.median(times[k]) for k in ("all", "slide", "same"))
    watch.close()
    print(f"PRESENT_EDIT_MS {edit_ms:.4f}")
    print(f"PRESENT_EDIT_FOLLOW_MS {edit_follow:.4f}")
    print(f"PRESENT_STEP_MS {step_ms:.4f}")
    print(f"PRESENT_STEP_FOLLOW_MS {follow.median():.4f}")
    print(f"PRESENT_STEP_SLIDE_MS {slide_ms:.4f}")
    print(f"PRESENT_STEP_SAME_MS {same_ms:.4f}")
    window.session.undo_stack.setClean()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
