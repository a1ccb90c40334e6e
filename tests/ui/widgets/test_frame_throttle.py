"""The next-frame throttle the panels that follow an edit use (qkv_studio/ui/widgets/frame_throttle.py)."""

import time

import numpy as np

from qkv_studio.state.session import Session
from qkv_studio.ui.panels.blend_view import BlendView
from qkv_studio.ui.panels.calc_table import CalcTable
from qkv_studio.ui.widgets.formatting import fmt
from qkv_studio.ui.widgets.frame_throttle import FRAME_MS, FrameThrottle, flush_pending
from tests.views import LESSON_VIEW


def test_requests_merge_into_one_call_a_frame_later(qtbot):
    calls = []
    throttle = FrameThrottle(lambda: calls.append(time.perf_counter()))
    start = time.perf_counter()
    for _ in range(10):
        throttle.request()
    assert calls == [] and throttle.pending
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=1000)
    assert calls[0] - start >= (FRAME_MS - 2) / 1000.0
    assert not throttle.pending
    qtbot.wait(3 * FRAME_MS)
    assert len(calls) == 1  # nothing asked since: nothing runs


def test_a_steady_stream_of_requests_runs_about_once_a_frame(qtbot):
    calls = []
    throttle = FrameThrottle(lambda: calls.append(1))
    end = time.perf_counter() + 0.2
    while time.perf_counter() < end:
        throttle.request()
        qtbot.wait(2)
    qtbot.waitUntil(lambda: not throttle.pending, timeout=1000)
    assert 3 <= len(calls) <= 0.2 / (FRAME_MS / 1000.0) + 2  # ≤ 60 Hz, yet it kept up


def test_flush_pending_runs_what_waits_and_cancel_drops_it(qtbot):
    calls = []
    a = FrameThrottle(lambda: calls.append("a"))
    b = FrameThrottle(lambda: calls.append("b"))
    a.request()
    b.request()
    b.cancel()
    flush_pending()
    assert calls == ["a"]
    assert not a.pending and not b.pending
    qtbot.wait(3 * FRAME_MS)
    assert calls == ["a"]


def test_an_edit_shows_in_the_table_at_once_and_in_the_blend_a_frame_later(qtbot, lesson_scene):
    session = Session(lesson_scene, view=LESSON_VIEW)
    table, blend = CalcTable(session), BlendView(session)
    for w in (table, blend):
        qtbot.addWidget(w)
        w.show()
    qtbot.waitExposed(blend)
    flush_pending()
    session.set_value("Q", 2, 0, 3.0)
    session.flush()
    assert table.calc_model.text(2, table.calc_model.columns().index("weight")) == \
        f"{session.result.weights[2, 2]:.2f}"
    assert not np.allclose(blend.bars.opts["height"], session.result.weights[2])  # not yet
    qtbot.waitUntil(lambda: np.allclose(blend.bars.opts["height"], session.result.weights[2]), timeout=1000)


def test_a_drag_shows_in_the_heatmap_at_once_and_in_the_table_and_editors_a_frame_later(qtbot, lesson_scene):
    from qkv_studio.ui.panels.heatmap_view import HeatmapView
    from qkv_studio.ui.panels.matrix_editor import MatrixEditor

    session = Session(lesson_scene, view=LESSON_VIEW)
    heatmap, table, editor = HeatmapView(session), CalcTable(session), MatrixEditor(session, "Q")
    for w in (heatmap, table, editor):
        qtbot.addWidget(w)
        w.show()
    qtbot.waitExposed(editor)
    flush_pending()
    model = table.calc_model
    weight = model.columns().index("weight")
    told = []
    model.dataChanged.connect(lambda *a: told.append("table"))
    editor.model.dataChanged.connect(lambda *a: told.append("editor"))

    session.begin_drag()
    session.drag_vector("Q", 2, 3.0, 0.5)
    session.flush()
    assert np.array_equal(heatmap.displayed_matrix()[2], session.result.weights[2])  # at once
    assert told == []  # the numbers follow …
    qtbot.waitUntil(lambda: "table" in told and "editor" in told, timeout=1000)  # … at the next frame
    assert model.text(2, weight) == f"{session.result.weights[2, 2]:.2f}"

    told.clear()
    session.drag_vector("Q", 2, -1.0, 2.0)
    session.flush()
    assert told == []
    session.end_drag()  # the release: the last step shows everywhere now
    assert "table" in told and "editor" in told
    assert model.text(2, weight) == f"{session.result.weights[2, 2]:.2f}"
    assert editor.model.index(2, 0).data() == fmt(-1.0) and editor.model.index(2, 1).data() == "2"
