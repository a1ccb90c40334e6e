"""The page's benchmark (benchmarks/page_bench.py) runs and reports every measure the issue names, each
beside the static page's — so it cannot rot.  Times are not asserted here: ``make bench`` is the measure."""

import importlib.util

from tests.conftest import REPO


def test_page_benchmark_reports_every_measure(browser):
    spec = importlib.util.spec_from_file_location("qkv_page_bench", REPO / "benchmarks" / "page_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    numbers = bench.measure(quick=True, browser=browser)
    assert set(numbers) == {"page_kb_lesson", "static_kb_lesson", "first_paint_ms_lesson_cpu4x",
                            "static_first_paint_ms_lesson_cpu4x", "edit_repaint_ms_n64", "static_repaint_ms_n64"}
    assert all(value > 0 for value in numbers.values())
    assert numbers["page_kb_lesson"] <= 150  # the size is not a time: the goal holds on any machine
