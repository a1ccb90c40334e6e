"""The colour bar's tick labels never overlap, at any panel size and text scale."""

import pytest

from qkv_studio.ui.panels.heatmap_legend import candidate_ticks
from tests.ui.panels.heatmap_helpers import preset_session, settle, shown


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
        assert all(b - a >= line for a, b in zip(ys, ys[1:], strict=False))
        values = [v for v, _ in ticks]
        assert lo in values  # the low end always
        if height >= 2.5 * line:
            assert hi in values

    qtbot.waitUntil(check, timeout=2000)  # (once the bar has its height: it follows the layouts)


def test_candidate_ticks_are_nice_and_include_the_ends_and_zero():
    assert candidate_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    signed = candidate_ticks(-4.3, 4.3)
    assert signed[0] == -4.3 and signed[-1] == 4.3 and 0.0 in signed


def test_candidate_ticks_keep_ends_that_are_not_round_numbers():
    """÷√dₖ's ends (±2√2) and a real head's maxima are not round: they stay labelled (compared with the
    rounded values, they were taken for a nice value crowding the end and dropped)."""
    root8 = 8 ** 0.5
    ticks = candidate_ticks(-root8, root8)
    assert ticks[0] == pytest.approx(-root8) and ticks[-1] == pytest.approx(root8) and 0.0 in ticks
    big = candidate_ticks(-1300.9689999999998, 1300.9689999999998)
    assert big[0] == pytest.approx(-1300.969) and big[-1] == pytest.approx(1300.969)


def _label_room(view) -> tuple[float, float]:
    """The widest tick label the bar shows now (px) and the room its axis gives labels."""
    axis = view.color_bar.axis
    widest = max(view.labeller.measure.width(text, view._px(17)) for _, text in axis.given_ticks()[0])
    return widest, axis.width()


def test_the_labels_column_is_as_wide_as_the_labels_and_steady_across_the_stages(qtbot):
    """The bar's labels have the room they need — no more ("1.0" beside a band as wide as four labels'
    heights: 100 px of a 1024×768 slide empty), no less ("−1.3e+03" was cut) — and it is the same at
    every stage, so a step does not move the matrix."""
    session = preset_session("lesson")
    view = shown(qtbot, session, (900, 700), 2.0)
    xs, rooms = [], []
    for stage in ("scores", "scaled", "weights", "scaled"):
        session.set_stage(stage)
        session.flush()
        settle(qtbot, view)
        widest, room = _label_room(view)
        assert widest <= room - 10  # (the tick and its gap beside the text)
        xs.append(view.cell_center(0, 0).x())
        rooms.append(room)
    # (the softmax's Σ column moves the matrix on purpose; the two score stages share its place)
    assert len(set(rooms)) == 1 and abs(xs[0] - xs[1]) < 1 and abs(xs[1] - xs[3]) < 1
    # the room is the widest stage's ("−2.83"), not a fixed guess: one label's width and the tick
    assert rooms[0] < view.labeller.measure.width("−2.83", view._px(17)) + 30



def test_long_labels_of_large_scores_get_their_room(qtbot):
    import numpy as np

    from qkv_studio.core import View
    from qkv_studio.core.scene import Scene
    from qkv_studio.state.session import Session

    q = np.array([[31.7, 12.1], [20.3, 18.9], [27.2, 13.3], [11.1, 29.4]])
    session = Session(Scene.from_arrays(q, q * 1.13, q, "the cat sat mat".split()), view=View(stage="scores"))
    view = shown(qtbot, session, (900, 700), 2.0)
    texts = [text for _, text in view.color_bar.axis.given_ticks()[0]]
    assert "−1.3e+03" in texts  # (the end, not only the nice ±1e+03)
    widest, room = _label_room(view)
    assert widest <= room - 10


def _drawn_labels(axis) -> list[str]:
    """The tick labels the colour bar's axis draws (pyqtgraph leaves out a label it finds out of its
    range or overhanging its bounds)."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    painter.setFont(axis.style["tickFont"])
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _, _, text in texts]


@pytest.mark.parametrize("size, scale", [((900, 700), 1.0), ((1280, 560), 2.2)])
def test_the_largest_score_is_labelled_on_the_bar_in_the_thousands(qtbot, size, scale):
    """Scores of ±2.5e3 (Q and K of 30–40): at Q·Kᵀ and at ÷√dₖ, whose ends are not round (±1.8e3 =
    2540/√2), the bar draws its two ends' labels — rounded to 12 decimals, ÷√dₖ's end fell a hair
    outside the bar's range and its label was not drawn, at either end."""
    import numpy as np

    from qkv_studio.core import View
    from qkv_studio.core.scene import Scene
    from qkv_studio.state.session import Session

    q = np.array([[30, 40], [-35, 30], [40, -30], [35, 35]], dtype=float)
    k = np.array([[32, 38], [-30, 36], [38, -34], [-33, -31]], dtype=float)
    session = Session(Scene.from_arrays(q, k, np.eye(4)[:, :2], "the cat sat mat".split()),
                      view=View(query=2, stage="scores"))
    view = shown(qtbot, session, size, scale)
    for stage in ("scores", "scaled"):
        session.set_stage(stage)
        session.flush()
        settle(qtbot, view)
        lo, hi = view.color_levels()
        assert abs(hi) >= 1e3
        ticks = dict(view.color_bar.axis.given_ticks()[0])
        top, bottom = ticks[max(ticks)], ticks[min(ticks)]
        assert max(ticks) == hi and min(ticks) == lo, (stage, ticks)

        def both_ends_drawn() -> None:
            view.graphics.viewport().repaint()
            drawn = _drawn_labels(view.color_bar.axis)
            assert top in drawn and bottom in drawn, (stage, top, bottom, drawn)

        qtbot.waitUntil(both_ends_drawn, timeout=2000)
