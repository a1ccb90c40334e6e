"""The interactive page's measures (issue 33), each beside a static page of the same heatmap (the SVG export
inlined in an HTML page) measured in the same run, in headless Chromium (Debian's, through Playwright):

* ``page_kb_lesson`` — the lesson's page, in KB (goal ≤ 150), beside ``static_kb_lesson``;
* ``first_paint_ms_lesson_cpu4x`` — first contentful paint at 4× CPU throttling (goal ≤ 300 ms; median of
  ``--repeat`` loads), beside ``static_first_paint_ms_lesson_cpu4x``;
* ``edit_repaint_ms_n64`` — an edit of a 64-token scene until the next frame is painted (goal ≤ 16 ms; median),
  beside ``static_repaint_ms_n64`` (the static page's frame after a style change: what a page does that
  only shows a picture).

``python benchmarks/page_bench.py [--quick] [--out FILE]`` prints the numbers as JSON (and writes them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qkv_studio.core import View, load_preset  # noqa: E402
from qkv_studio.export.page import page_html  # noqa: E402
from tests.export.page_helpers import ARGS, chromium_path  # noqa: E402

_PAINT = """() => new Promise(done => { const t0 = performance.now();
  requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t0))); })"""


def _static_page(scene, folder: Path) -> Path:
    import qkv_studio

    svg = qkv_studio.export(scene, folder / "figure.svg", stage="weights", query=2).read_text(encoding="utf-8")
    svg = svg[svg.index("<svg"):]
    path = folder / "static.html"
    path.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" '
                    f'content="width=device-width, initial-scale=1"><title>static</title></head><body>{svg}'
                    f"</body></html>", encoding="utf-8")
    return path


def _first_paint(browser, path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        page = browser.new_page(viewport={"width": 390, "height": 844}, bypass_csp=True)  # (Playwright's polling)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        page.goto(path.resolve().as_uri())
        page.wait_for_function("performance.getEntriesByName('first-contentful-paint').length > 0")
        times.append(page.evaluate("performance.getEntriesByName('first-contentful-paint')[0].startTime"))
        page.close()
    return statistics.median(times)


def measure(quick: bool = False, browser=None) -> dict:
    """The measures; ``browser`` is a running Playwright Chromium (None: one is started and closed here)."""
    if browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            own = p.chromium.launch(executable_path=chromium_path(), args=ARGS)
            try:
                return measure(quick, own)
            finally:
                own.close()
    repeat = 1 if quick else 7
    lesson = load_preset("lesson")
    long = load_preset("long")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        page_path = folder / "lesson.html"
        page_path.write_text(page_html([(lesson, View(query=2))]), encoding="utf-8")
        static_path = _static_page(lesson, folder)
        long_path = folder / "long.html"
        long_path.write_text(page_html([(long, View())]), encoding="utf-8")
        long_static = folder / "long-static"
        long_static.mkdir()
        long_static_path = _static_page(long, long_static)
        out = {
            "page_kb_lesson": round(page_path.stat().st_size / 1024, 1),
            "static_kb_lesson": round(static_path.stat().st_size / 1024, 1),
            "first_paint_ms_lesson_cpu4x": round(_first_paint(browser, page_path, repeat), 1),
            "static_first_paint_ms_lesson_cpu4x": round(_first_paint(browser, static_path, repeat), 1),
        }
        page = browser.new_page(viewport={"width": 1280, "height": 720}, bypass_csp=True)
        page.goto(long_path.resolve().as_uri())
        page.wait_for_function("globalThis.qkvApp !== undefined && qkvApp.ready")
        edits = []
        for i in range(3 if quick else 25):
            edits.append(page.evaluate("""i => new Promise(done => { const t0 = performance.now();
                qkvApp.edit('Q', i % 64, 1, String(0.01 * i));
                requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t0))); })""", i))
        page.close()
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(long_static_path.resolve().as_uri())
        frames = []
        for i in range(3 if quick else 25):
            frames.append(page.evaluate("""i => new Promise(done => { const t0 = performance.now();
                document.querySelector('svg').style.opacity = String(0.9 + 0.001 * i);
                requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t0))); })""", i))
        page.close()
    # (two frames: the measure waits for the frame after the one that painted, ~one frame interval more)
    out["edit_repaint_ms_n64"] = round(statistics.median(edits), 1)
    out["static_repaint_ms_n64"] = round(statistics.median(frames), 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one load, three edits (the test's run)")
    parser.add_argument("--out", type=Path, help="write the numbers as JSON here too")
    args = parser.parse_args()
    numbers = measure(quick=args.quick)
    text = json.dumps(numbers, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
