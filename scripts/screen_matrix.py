"""Open the window as a lecturer would on each screen of the matrix and save what it shows.

For each screen (logical size × device-pixel ratio) a child process starts Qt's offscreen platform
with that screen configuration, opens the window on a preset the way ``qkv-studio`` does (its own
default geometry, no resize from outside), optionally enters presentation mode (F5), grabs the
window and prints one line of facts: the window against the screen's available geometry and the
heatmap's share of the window.  Open the PNGs and look at them.

    python scripts/screen_matrix.py -o /tmp/screens                       # the whole matrix, normal + F5
    python scripts/screen_matrix.py -o /tmp/screens --only 1024x768@1 --preset long --presentation-only

For HiDPI (dpr > 1) the screen is configured at its physical size with QT_SCALE_FACTOR=dpr, since
offscreen windows paint at 1× on a dpr-2 screen.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MATRIX = [(1024, 768, 1), (1280, 720, 1), (1280, 800, 1), (1366, 768, 1), (1920, 1080, 1),
          (1920, 1080, 1.5), (1920, 1080, 2), (2560, 1440, 1), (2560, 1440, 2), (3840, 2160, 2)]

CHILD = r"""
import json, sys
from qkv_studio.app import ensure_qapp
from qkv_studio.core import preset_document
app = ensure_qapp()
from PySide6.QtWidgets import QApplication
from qkv_studio.ui.window.main_window import MainWindow
preset, presentation, out, stage = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4]
doc = preset_document(preset)  # as --preset opens it, with its own query and stage (or --stage's)
view = doc.view.with_stage(stage) if stage else doc.view
w = MainWindow(doc.scene, "", use_settings=False, view=view)
import tempfile
from qkv_studio import reliability
reliability.attach(w, folder=tempfile.mkdtemp())  # (as qkv-studio does: autosave, and its status bar)
w.show()
for _ in range(5):
    app.processEvents()
if presentation:
    w.set_presentation(True)
    for _ in range(10):
        app.processEvents()
w.session.flush()
for _ in range(5):
    app.processEvents()
img = w.grab().toImage()
img.save(out)
avail = w.screen().availableGeometry()
g = w.frameGeometry()
hm = w.heatmap
facts = {"window": [g.x(), g.y(), g.width(), g.height()],
         "available": [avail.x(), avail.y(), avail.width(), avail.height()],
         "inside": avail.contains(g),
         "heatmap": [hm.width(), hm.height()],
         "heatmap_share": round(hm.width() * hm.height() / max(1, w.width() * w.height()), 3)}
print(json.dumps(facts))
"""


def run_one(w: int, h: int, dpr: float, preset: str, presentation: bool, out: Path, stage: str = "") -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "screens.json"
        phys_w, phys_h = int(w * dpr), int(h * dpr)
        cfg.write_text(json.dumps({"screens": [{"name": "p", "x": 0, "y": 0, "width": phys_w, "height": phys_h,
                                                "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
        env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={cfg}", HOME=tmp,
                   XDG_CONFIG_HOME=str(Path(tmp) / "config"), XDG_DATA_HOME=str(Path(tmp) / "data"))
        if dpr != 1:
            env["QT_SCALE_FACTOR"] = str(dpr)
        else:
            env.pop("QT_SCALE_FACTOR", None)
        res = subprocess.run([sys.executable, "-c", CHILD, preset, "1" if presentation else "0", str(out), stage],
                             env=env, capture_output=True, text=True, timeout=120)
        lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
        if res.returncode != 0 or not lines:
            return f"FAILED ({res.returncode}): {res.stderr.strip().splitlines()[-1:]}"
        return lines[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", type=Path, required=True, help="folder for the PNGs")
    ap.add_argument("--preset", default="lesson")
    ap.add_argument("--only", default="", help="comma-separated WxH@DPR entries, e.g. 1024x768@1,1920x1080@2")
    ap.add_argument("--stage", default="", help="the stage to open at (default: the preset's own)")
    ap.add_argument("--presentation-only", action="store_true")
    ap.add_argument("--normal-only", action="store_true")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    matrix = MATRIX
    if args.only:
        matrix = []
        for item in args.only.split(","):
            size, _, dpr = item.partition("@")
            w, h = size.split("x")
            matrix.append((int(w), int(h), float(dpr or 1)))
    modes = [False, True]
    if args.presentation_only:
        modes = [True]
    if args.normal_only:
        modes = [False]
    for w, h, dpr in matrix:
        for pres in modes:
            stage = f"-{args.stage}" if args.stage else ""
            name = f"{args.preset}{stage}-{w}x{h}@{dpr:g}-{'f5' if pres else 'normal'}.png"
            facts = run_one(w, h, dpr, args.preset, pres, args.out / name, args.stage)
            print(f"{name:45s} {facts}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
