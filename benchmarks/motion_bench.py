#!/usr/bin/env python
"""Animated and slide exports against their targets (issue 22), beside matplotlib doing the same GIF.

* the app's GIF of the lesson's 5 stages at 1280×720, 30 fps, 1 s hold (``export_file(… .gif)``:
  frames drawn through the figure renderer, the window's 0.5 s morphs, a shared palette) — target ≤ 5 s;
* the app's 5-slide PPTX (``export_file(… .pptx)``, pictures 1600 px wide) — target ≤ 3 s;
* the app's MP4 of the same animation (no target; for the table);
* matplotlib's ``FuncAnimation`` writing the same GIF (same size, frame rate, holds and morph: an
  ``imshow`` heatmap with the numbers in the cells, colours and numbers interpolated per frame) with
  ``PillowWriter`` — the way such a GIF is made by hand today.

Each runs ``--reps`` times round-robin in one process (so drift touches them alike); the table shows the
median seconds and the file size.  Exit status 1 when a target is missed.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/motion_bench.py [--reps 3] [--quick]

``--quick`` (320×180 at 4 fps, one repetition, no targets) only checks that the benchmark runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
sys.path.insert(0, str(HERE.parent))

TARGETS = {"gif": 5.0, "pptx": 3.0}
SIZE = (1280, 720)
QUERY = 2  # the lesson's query, "sat" (as the preset opens)
FPS, HOLD, MORPH = 30, 1.0, 0.5


def ours(suffix: str, folder: Path) -> Path:
    from qkv_studio.core import load_preset
    from qkv_studio.export.files import export_file
    from qkv_studio.export.timeline import MotionOptions

    out = folder / f"ours{suffix}"
    width = SIZE[0] if suffix != ".pptx" else (1600 if SIZE[0] >= 1280 else SIZE[0])
    export_file(load_preset("lesson"), out, width=width, query=QUERY, motion=MotionOptions(fps=FPS, hold=HOLD,
                                                                                           morph=MORPH))
    return out


def matplotlib_gif(folder: Path) -> Path:
    """The same animation drawn and written by matplotlib (Agg + PillowWriter)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.animation import FuncAnimation, PillowWriter

    from qkv_studio.core import STAGES, load_preset
    from qkv_studio.export.timeline import MotionOptions, timeline

    scene = load_preset("lesson")
    result = scene.result()
    frames = [f for f in timeline(MotionOptions(fps=FPS, hold=HOLD, morph=MORPH)) for _ in range(f.count)]
    fig, ax = plt.subplots(figsize=(SIZE[0] / 100, SIZE[1] / 100), dpi=100)
    n = scene.n

    def colours(stage: str):
        m = result.stage(stage)
        if stage in ("weights", "output"):
            return plt.get_cmap("viridis")(m)
        lim = max(1e-9, float(np.abs(m[np.isfinite(m)]).max()))
        return plt.get_cmap("BrBG_r")((m / lim + 1) / 2)

    cache = {s: (colours(s), result.stage(s)) for s in STAGES}
    image = ax.imshow(cache[STAGES[0]][0])
    texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=14) for j in range(n)] for i in range(n)]
    ax.set_xticks(range(n), scene.tokens)
    ax.set_yticks(range(n), scene.tokens)
    title = ax.set_title("")

    def draw(k: int):
        f = frames[k]
        rgba, values = cache[f.stage]
        if f.source is not None:
            old_rgba, old_values = cache[f.source]
            rgba = old_rgba * (1 - f.t) + rgba * f.t
            values = old_values * (1 - f.t) + values * f.t
        image.set_data(rgba)
        for i in range(n):
            for j in range(n):
                texts[i][j].set_text(f"{values[i, j]:.2f}")
        title.set_text(f"{f.stage} · query “{scene.token_label(QUERY)}”")
        return [image, title, *[t for row in texts for t in row]]

    out = folder / "matplotlib.gif"
    FuncAnimation(fig, draw, frames=len(frames), blit=False).save(str(out), writer=PillowWriter(fps=FPS))
    plt.close(fig)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="tiny and once: does it run?")
    args = parser.parse_args()
    global SIZE, FPS
    if args.quick:
        SIZE, FPS, args.reps = (320, 180), 4, 1
        TARGETS.clear()
    from qkv_studio.export.figures import ensure_app

    ensure_app()
    jobs = {
        "gif": lambda d: ours(".gif", d),
        "pptx": lambda d: ours(".pptx", d),
        "mp4": lambda d: ours(".mp4", d),
        "matplotlib gif": matplotlib_gif,
    }
    times: dict[str, list[float]] = {name: [] for name in jobs}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="qkv-motion-bench-") as tmp:
        ours(".gif", Path(tmp))  # warm up: fonts, imports
        for _ in range(max(1, args.reps)):
            for name, job in jobs.items():
                t0 = time.perf_counter()
                out = job(Path(tmp))
                times[name].append(time.perf_counter() - t0)
                sizes[name] = out.stat().st_size
    print(f"Lesson scene, 5 stages, {SIZE[0]}×{SIZE[1]}, {FPS} fps, {HOLD:g} s hold, {MORPH:g} s morph; "
          f"median of {args.reps} (seconds)\n")
    print("| export | median s | target | file |")
    print("|---|---:|---:|---:|")
    failed = False
    for name in jobs:
        med = statistics.median(times[name])
        target = TARGETS.get(name)
        ok = target is None or med <= target
        failed |= not ok
        print(f"| {name} | {med:.2f} | {f'≤ {target:g} s' if target else '—'}{'' if ok else ' MISSED'} "
              f"| {sizes[name] / 1024:.0f} KB |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
