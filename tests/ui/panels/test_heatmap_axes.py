"""The heatmap's token axes at any size: no two names overlap, the query is always named, one title each."""

import pytest

from qkv_studio.render.label_layout import UPRIGHT
from tests.ui.panels.heatmap_helpers import preset_session, settle, shown

SIZES = [((1000, 800), 1.0), ((480, 380), 1.0), ((1400, 330), 2.0), ((900, 700), 2.2), ((330, 260), 1.0)]


def _pitch_ok(view, axis_name: str) -> bool:
    """Neighbouring labels stand at least a line (upright or rows) or their widths (flat keys) apart."""
    axis = view.plot.getAxis(axis_name)
    plan = view.labeller.rows if axis_name == "left" else view.labeller.keys
    cell = view._cell_h_px() if axis_name == "left" else view._cell_px()
    m = view.labeller.measure
    labels = sorted(axis.shown_labels())
    for (i, a), (j, b) in zip(labels, labels[1:], strict=False):
        if axis_name == "top" and plan.rotation == 0:
            need = (m.width(a, plan.px) + m.width(b, plan.px)) / 2
        else:
            need = m.height(plan.px)
        if (j - i) * cell < need - 0.5:
            return False
    return True


@pytest.mark.parametrize("preset", ["lesson", "long"])
@pytest.mark.parametrize("size, scale", SIZES)
def test_names_never_overlap_and_the_query_is_always_named(qtbot, preset, size, scale):
    session = preset_session(preset)
    view = shown(qtbot, session, size, scale)
    q = session.query
    left = dict(view.plot.getAxis("left").shown_labels())
    top = dict(view.plot.getAxis("top").shown_labels())
    assert q in left and q in top
    assert _pitch_ok(view, "left") and _pitch_ok(view, "top")
    if session.scene.n <= 32:  # the lesson: every token on both axes, whole or abbreviated, none dropped
        assert sorted(left) == sorted(top) == list(range(session.scene.n))
    # one title per axis, never longer than the side it stands beside
    m = view.labeller.measure
    left_title = view.plot.getAxis("left").labelText
    room = view.plot.vb.rect().height()
    assert left_title in ("attending from (query)", "query") or left_title.endswith("…") or left_title == ""
    assert m.width(left_title, view._px(15)) <= room + 1
    assert view.plot.getAxis("top").labelText in ("attending to (key)", "key")


def test_the_long_preset_names_its_keys_upright_and_more_than_four_of_them(qtbot):
    session = preset_session("long")
    view = shown(qtbot, session, (1000, 800))
    top = view.plot.getAxis("top")
    assert top.label_rotation() == UPRIGHT
    assert len(top.shown_labels()) >= 28  # every other one or so (was 4 of 64)
    session.set_query(40)
    settle(qtbot, view)
    assert 40 in dict(view.plot.getAxis("left").shown_labels())


def test_a_new_query_is_named_even_between_thinned_names(qtbot):
    session = preset_session("long")
    view = shown(qtbot, session, (480, 380))
    assert view.labeller.rows.step > 1
    for q in (1, 33, 62):
        session.set_query(q)
        settle(qtbot, view)
        assert q in dict(view.plot.getAxis("left").shown_labels())
