"""The window on the screens a lecturer meets: each screen of issue 18's matrix in a child process of
Qt's offscreen platform with that screen configuration, the normal window and each slide of
presentation mode, checked on geometry — inside the screen, no cut stage button, no cut caption or
formula, no overlapping docks, the heatmap (or the stage's main view) the largest share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qkv_studio.state.appearance import screen_scale_for

ROOT = Path(__file__).resolve().parents[3]

CHILD = r"""
import json, sys
from qkv_studio.app import ensure_qapp
from qkv_studio.core import preset_document
app = ensure_qapp()
from PySide6.QtCore import QRect
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QDockWidget
from qkv_studio.ui.window.main_window import MainWindow

def settle():
    for _ in range(6):
        app.processEvents()

def rect_in_window(w, widget):
    return QRect(widget.mapTo(w, widget.rect().topLeft()), widget.size())

def facts(w, mode):
    out = {"mode": mode, "stage": w.session.stage}
    avail = w.screen().availableGeometry()
    out["inside"] = avail.contains(w.frameGeometry())
    out["frame"] = [w.frameGeometry().x(), w.frameGeometry().y(), w.frameGeometry().width(), w.frameGeometry().height()]
    out["available"] = [avail.x(), avail.y(), avail.width(), avail.height()]
    cut = []
    for b in w.stepper._buttons():
        if b.isVisible() and QFontMetrics(b.font()).horizontalAdvance(b.text()) > b.contentsRect().width():
            cut.append(b.text())
    out["cut_buttons"] = cut
    labels = []
    step = rect_in_window(w, w.stepper)
    for name in ("caption", "formula", "stage_formula"):
        label = getattr(w.stepper, name)
        if not label.isVisible():
            continue
        doc = label._doc
        doc.setTextWidth(label.contentsRect().width())
        need = doc.size()
        room = label.contentsRect()
        seen = rect_in_window(w, label.parentWidget()).intersected(rect_in_window(w, label))
        if need.width() > room.width() + 1 or need.height() > room.height() + 1 or seen.height() + 1 < need.height():
            labels.append([name, need.width(), need.height(), room.width(), room.height(), seen.height()])
    out["cut_labels"] = labels
    # (a dock tabbed behind another is parked outside the window by Qt, still "visible")
    docks = [d for d in w.findChildren(QDockWidget) if d.isVisible() and not d.isFloating()
             and w.rect().intersects(d.geometry())]
    overlaps = []
    for i, a in enumerate(docks):
        for b in docks[i + 1:]:
            if a.geometry().intersects(b.geometry()):
                overlaps.append([a.objectName(), b.objectName()])
    out["overlaps"] = overlaps
    area = max(1, w.width() * w.height())
    hm = w.heatmap
    out["heatmap_share"] = round(hm.width() * hm.height() / area, 3) if hm.isVisible() else 0.0
    sides = {d.objectName(): round(d.width() * d.height() / area, 3) for d in docks}
    out["docks"] = sides
    out["title_bars"] = [d.objectName() for d in docks if d.titleBarWidget() is None]
    return out

preset, out_dir = sys.argv[1], sys.argv[2]
_doc = preset_document(preset)  # (as --preset opens it: the preset's own query and stage)
w = MainWindow(_doc.scene, "", use_settings=False, view=_doc.view)
w.show()
settle()
w.session.flush()
settle()
res = [facts(w, "normal")]
if out_dir:
    w.grab().save(f"{out_dir}/normal.png")
w.set_presentation(True)
settle()
for stage in ("vectors", "scores", "weights", "output"):
    w.session.set_stage(stage)
    w.session.flush()
    settle()
    res.append(facts(w, "presentation"))
    if out_dir:
        w.grab().save(f"{out_dir}/f5-{stage}.png")
w.session.set_stage("weights")
settle()
w.toggle_plane()  # P: a side panel
settle()
res.append(facts(w, "presentation+P"))
print(json.dumps(res))
"""

SCREENS = [(1024, 768, 1), (1280, 720, 1), (1280, 800, 1), (1366, 768, 1), (1920, 1080, 1), (1920, 1080, 1.5),
           (1920, 1080, 2), (2560, 1440, 1)]


def run_screen(tmp_path: Path, width: int, height: int, dpr: float, preset: str = "lesson",
               out_dir: str = "") -> list[dict]:
    cfg = tmp_path / "screens.json"
    cfg.write_text(json.dumps({"screens": [{"name": "s", "x": 0, "y": 0, "width": int(width * dpr),
                                            "height": int(height * dpr), "logicalDpi": 96,
                                            "logicalBaseDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={cfg}", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=str(ROOT))
    env.pop("QT_SCALE_FACTOR", None)
    if dpr != 1:
        env["QT_SCALE_FACTOR"] = str(dpr)
    res = subprocess.run([sys.executable, "-c", CHILD, preset, out_dir], env=env, capture_output=True,
                         text=True, timeout=180, cwd=str(ROOT))
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("[")]
    assert res.returncode == 0 and lines, res.stderr[-2000:]
    return json.loads(lines[-1])


@pytest.mark.parametrize("width,height,dpr", SCREENS, ids=[f"{w}x{h}@{d}" for w, h, d in SCREENS])
def test_the_window_and_its_slides_fit_the_screen(tmp_path, width, height, dpr):
    results = run_screen(tmp_path, width, height, dpr)
    for r in results:
        where = f"{width}x{height}@{dpr} {r['mode']} {r['stage']}"
        assert r["inside"], f"{where}: window {r['frame']} outside {r['available']}"
        assert not r["cut_buttons"], f"{where}: cut stage buttons {r['cut_buttons']}"
        assert not r["cut_labels"], f"{where}: cut captions {r['cut_labels']}"
        assert not r["overlaps"], f"{where}: overlapping docks {r['overlaps']}"
    normal = results[0]
    # (≥ 29 % of a 1024×768 window: the lesson's caption — five lines there since the captions say what
    # the numbers are — takes the rest of the centre column; the heatmap stays the largest panel)
    assert normal["heatmap_share"] >= 0.28, normal
    assert all(normal["heatmap_share"] > share for share in normal["docks"].values()), normal
    slides = {r["stage"]: r for r in results[1:5]}
    for stage in ("scores", "weights"):
        s = slides[stage]
        assert s["heatmap_share"] >= 0.35, s
        assert all(s["heatmap_share"] > share for share in s["docks"].values()), s
        assert not s["title_bars"], s
    assert slides["vectors"]["docks"].get("dock_plane", 0) >= 0.5, slides["vectors"]
    assert slides["output"]["docks"].get("dock_blend", 0) >= 0.5, slides["output"]
    side = results[5]
    assert side["heatmap_share"] >= 0.22 and side["heatmap_share"] > side["docks"]["dock_plane"], side


def test_the_screen_scale_follows_the_screen():
    assert screen_scale_for(1920, 1080) == 1.0
    assert screen_scale_for(1024, 768) == 1.0  # (the desktop's text never shrinks: the layout yields)
    assert screen_scale_for(2560, 1440) == pytest.approx(1.333)
    assert screen_scale_for(2560, 1440, 1.5) == 1.0
    assert screen_scale_for(1024, 768, slide=True) == pytest.approx(0.64)
    assert screen_scale_for(1920, 1080, slide=True) == 1.0
    assert screen_scale_for(3840, 2160, slide=True) == 2.0
    assert screen_scale_for(float("nan"), 0) == 1.0


@pytest.mark.parametrize("width,height", [(1024, 768), (1920, 1080)])
def test_a_long_scene_fits_too(tmp_path, width, height):
    """64 tokens: the calculation table scrolls (it cannot show 64 rows) but takes no more than a
    quarter of the slide; the heatmap keeps the largest share."""
    results = run_screen(tmp_path, width, height, 1, "long")
    for r in results:
        where = f"long {width}x{height} {r['mode']} {r['stage']}"
        assert r["inside"] and not r["cut_buttons"] and not r["cut_labels"] and not r["overlaps"], (where, r)
    weights = next(r for r in results if r["mode"] == "presentation" and r["stage"] == "weights")
    assert weights["heatmap_share"] >= 0.4 and weights["docks"]["dock_calc"] <= 0.26, weights


def test_a_slide_is_sized_from_its_screen_and_the_desktop_comes_back(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, (1024, 768))
    assert window.appearance.screen_scale == 1.0
    window.set_presentation(True, fullscreen=False)
    assert window.appearance.screen_scale == pytest.approx(screen_scale_for(1024, 768, slide=True))
    assert window.stepper.caption.font().pointSizeF() < 11.0 * 2.2 * 1.15  # (not the 1080-px slide's)
    window.set_presentation(False)
    assert window.appearance.screen_scale == 1.0
    assert window.heatmap.isVisible() and window.dock_calc.titleBarWidget() is None


def test_the_stage_bar_takes_two_rows_rather_than_cut_a_label(qtbot, show_window, lesson_scene):
    from PySide6.QtGui import QFontMetrics

    window = show_window(lesson_scene, (1600, 950))
    stepper = window.stepper
    stepper.resize(480, stepper.height())
    stepper.fit_bar()
    assert stepper.bar_form[1] == 2
    stepper.layout().activate()
    for b in stepper._buttons():
        assert QFontMetrics(b.font()).horizontalAdvance(b.text()) <= b.contentsRect().width(), b.text()
    stepper.resize(1400, stepper.height())
    stepper.fit_bar()
    assert stepper.bar_form == (False, 1) and stepper.back_button.text() == "◀ Back"


def test_maximised_is_remembered(qtbot, lesson_scene):
    from qkv_studio.ui.window.main_window import MainWindow

    a = MainWindow(lesson_scene)
    qtbot.addWidget(a)
    a.showMaximized()
    qtbot.waitUntil(a.isMaximized, timeout=2000)
    a.close()
    assert a.settings_store.read().maximized
    b = MainWindow(lesson_scene)
    qtbot.addWidget(b)
    assert b.windowState() & b.windowState().WindowMaximized


def test_leaving_presentation_restores_the_window_inside_the_screen(qtbot, show_window, lesson_scene):
    """Esc gives back the window F5 left, inside the screen: with the slide's large text still on, the
    window's minimum size was taller than the screen and the restored window kept that height."""
    from PySide6.QtWidgets import QApplication

    screen = QApplication.primaryScreen().availableGeometry()
    window = show_window(lesson_scene, (screen.width() - 20, screen.height() - 40))
    before = window.geometry()
    window.set_presentation(True)
    qtbot.waitUntil(window.isFullScreen, timeout=2000)
    window.set_presentation(False)
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=2000)
    QApplication.processEvents()
    assert screen.contains(window.frameGeometry()), (window.frameGeometry(), screen)
    assert window.geometry().size() == before.size()
