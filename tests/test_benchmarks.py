"""The benchmark runs (tiny sizes, one repetition) and writes the keys it promises — so it cannot rot.

Times are not asserted here: the benchmark (``make bench``) is the measure.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN = REPO / "benchmarks" / "run.py"


def _load_run():
    spec = importlib.util.spec_from_file_location("qkv_bench_run", RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_full_run_writes_exactly_the_issue_keys():
    keys = _load_run().metric_keys()
    assert keys == [
        "edit_repaint_ms_n4", "edit_repaint_ms_n16", "edit_repaint_ms_n64", "edit_repaint_ms_n256",
        "edit_repaint_ms_n1024", "drag_step_ms_n64", "step_ms_n64", "query_change_ms_n64", "startup_s",
        "startup_bare_qt_s", "export_png_4k_ms_n64", "export_svg_ms_n64", "export_pdf_ms_n64",
        "peak_rss_mb_n1024", "present_edit_ms_n64_1080p", "present_step_ms_n64_1080p",
        "present_step_slide_ms_n64_1080p", "present_step_heatmap_ms_n64_1080p",
        "present_edit_ms_n64_4k2x", "present_step_ms_n64_4k2x",
        "present_step_slide_ms_n64_4k2x", "present_step_heatmap_ms_n64_4k2x",
        "matplotlib_redraw_ms_n16", "matplotlib_redraw_ms_n64",
    ]


def test_quick_run_measures_everything_and_writes_json(tmp_path):
    have_mpl = importlib.util.find_spec("matplotlib") is not None
    out = tmp_path / "results.json"
    args = [sys.executable, str(RUN), "--quick", "--out", str(out)]
    if not have_mpl:  # matplotlib is in the "bench" extra, not the "test" one
        args += ["--only", "edit,drag,step,query,startup,export,rss,present"]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYQTGRAPH_QT_LIB="PySide6")
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    expected = _load_run().metric_keys(sizes=(4, 16), n=16, mpl_sizes=(4,) if have_mpl else (), rss_n=16)
    assert list(results) == expected
    assert all(isinstance(v, float) and math.isfinite(v) and v > 0 for v in results.values()), results
    assert "metric" in proc.stdout and "target" in proc.stdout  # the table was printed
    assert not (REPO / "benchmarks" / "results.json.tmp").exists()


def test_png_bench_runs_every_encoder_and_checks_their_pixels(tmp_path):
    # png_bench.py asserts that every encoder's PNG decodes to exactly the rendered pixels.
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYQTGRAPH_QT_LIB="PySide6")
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "png_bench.py"), "--reps", "1", "--n", "8",
                           "--width", "400"], capture_output=True, text=True, env=env, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout
    for row in ("export/png.py", "Pillow", "compress_level=1", "QImage.save", "export_file, as the app exports"):
        assert row in table, row
    assert table.count("export_file, as the app exports") == 2  # opaque and transparent
    assert "target met" in table
