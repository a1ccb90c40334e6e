"""At the Vectors stage the heatmap only previews the scores, shaded and without numbers: its title says
so (issue 19, item 12), and the numbers come at Q·Kᵀ as it promises."""

from __future__ import annotations

from qkv_studio.core import View
from qkv_studio.ui.widgets.frame_throttle import flush_pending


def test_the_vectors_heatmap_explains_its_shaded_cells(qtbot, show_window, lesson_scene):
    w = show_window(lesson_scene, (1280, 720), view=View(2, "vectors"))
    flush_pending()
    assert w.session.stage == "vectors" and w.heatmap.displayed_stage() == "scores"  # the scores, previewed
    assert w.heatmap.cell_texts() == []  # shaded, no numbers
    title = w.heatmap.title.text()
    assert "faded" in title and "shaded by size" in title and "numbers at Q·K" in title
    w.session.set_stage("scores")
    qtbot.waitUntil(lambda: len(w.heatmap.cell_texts()) == lesson_scene.n ** 2, timeout=2000)
    assert "faded" not in w.heatmap.title.text()
