"""The colour bar's tick labels never overlap, at any panel size and text scale."""

import pytest

from qkv_studio.ui.panels.heatmap_legend import candidate_ticks
from tests.ui.panels.heatmap_helpers import preset_session, shown


@pytest.mark.parametrize("size, scale", [((1000, 800), 1.0), ((960, 300), 2.0), ((600, 200), 1.0),
                                         ((900, 700), 2.2), ((500, 160), 2.0)])
@pytest.mark.parametrize("stage", ["scores", "weights"])
def test_tick_labels_have_room_and_keep_the_ends(qtbot, size, scale, stage):
    session = preset_session("lesson")
    session.set_stage(stage)
    view = shown(qtbot, session, size, scale)
    axis = view.color_bar.axis
    lo, hi = view.color_levels()
    line = view.labeller.measure.height(view._px(17))

    def check() -> None:
        view.graphics.viewport().repaint()
        ticks = axis.given_ticks()[0]
        height = axis.size().height()
        ys = sorted((v - lo) / (hi - lo) * height for v, _ in ticks)
        assert all(b - a >= line for a, b in zip(ys, ys[1:]))
        values = [v for v, _ in ticks]
        assert lo in values  # the low end always
        if height >= 2.5 * line:
            assert hi in values

    qtbot.waitUntil(check, timeout=2000)  # (once the bar has its height: it follows the layouts)


def test_candidate_ticks_are_nice_and_include_the_ends_and_zero():
    assert candidate_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    signed = candidate_ticks(-4.3, 4.3)
    assert signed[0] == -4.3 and signed[-1] == 4.3 and 0.0 in signed
