"""The blend view's texts on a crowded plot: the weights above the bars never over each other (the
largest always written, the top one inside the plot), every key named under its bar up to 32 tokens,
and no header of its own on a slide (the stage caption above says the same)."""

import numpy as np
from PySide6.QtCore import QRectF

from qkv_studio.core import View
from qkv_studio.core.scene import Scene
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.blend_view import BlendView


def _scene(n: int, *, causal: bool = False) -> Scene:
    rng = np.random.default_rng(3)
    scene = Scene.create([f"␣tok{i}" for i in range(n)], q=rng.normal(size=(n, 2)), k=rng.normal(size=(n, 2)),
                         v=rng.normal(size=(n, 2)))
    return scene.with_mask("causal") if causal else scene


def _shown(qtbot, session: Session, size=(420, 320)) -> BlendView:
    view = BlendView(session)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return view


def _drawn(qtbot, view: BlendView) -> list[tuple[str, QRectF]]:
    qtbot.waitUntil(lambda: bool(view.bar_labels.labels()))
    view.grab()  # (painted: the labels are laid out as they are drawn)
    return view.bar_labels.drawn()


def test_the_weights_above_crowded_bars_never_overlap_and_the_largest_is_written(qtbot):
    session = Session(_scene(10), view=View(query=9, stage="output"))
    view = _shown(qtbot, session)
    drawn = _drawn(qtbot, view)
    assert drawn
    for i, (_, a) in enumerate(drawn):
        for _, b in drawn[i + 1:]:
            assert not a.intersects(b), drawn
    w = session.result.weights[session.query]
    texts = [text for text, _ in drawn]
    assert f"{w.max():.2f}" in texts  # (the best match's weight is always labelled)
    # wide enough, every weight is written
    view.resize(1400, 500)
    qtbot.waitUntil(lambda: len(_drawn(qtbot, view)) == 10, timeout=2000)


def test_a_weight_of_one_is_written_inside_the_plot(qtbot):
    """The first token of a causal scene takes all the weight: its "1.00" stood above the plot's top."""
    session = Session(_scene(10, causal=True), view=View(query=0, stage="output"))
    view = _shown(qtbot, session)
    drawn = dict(_drawn(qtbot, view))
    assert "1.00" in drawn
    vb = view.bars_plot.getViewBox()
    top = vb.mapViewToDevice(vb.viewRect()).boundingRect().top()
    assert drawn["1.00"].top() >= top - 0.5, (drawn["1.00"], top)


def test_every_key_is_named_under_its_bar_at_ten_tokens(qtbot):
    session = Session(_scene(10), view=View(query=9, stage="output"))
    view = _shown(qtbot, session, size=(420, 320))
    qtbot.waitUntil(lambda: view._ticks is not None)
    names = [text.strip("\n") for _, text in view._ticks[0]]
    assert [j for j, _ in view._ticks[0]] == list(range(10))
    assert all(name.startswith("␣t") for name in names), names  # (whole, or shortened with "…")
    # the axis leaves out a name that sticks out of its ends: the last bar's name has room
    axis = view.bars_plot.getAxis("bottom")
    assert axis.range[1] >= 9.6


def test_on_a_slide_the_blend_has_no_header_of_its_own(qtbot):
    session = Session(_scene(4), view=View(query=2, stage="output"))
    view = _shown(qtbot, session)
    qtbot.waitUntil(lambda: "Blend for" in view.title.text())
    assert view.title.isVisible()
    view.set_on_slide(True)
    assert not view.title.isVisible() and view.on_slide()
    view.set_on_slide(False)
    assert view.title.isVisible()


def test_a_new_size_shows_the_value_arrows_heads_for_that_size_at_once(qtbot):
    """The heads are a fixed number of pixels long: the repaint a new size brings draws them for that
    size (drawn for the old one and again a frame later, they were drawn twice — at 4K ~40 ms each)."""
    session = Session(_scene(6), view=View(query=2, stage="output"))
    view = _shown(qtbot, session)
    qtbot.wait(50)
    view.resize(900, 700)
    after = view.values_plot.grab().toImage()  # (the picture at the new size before any frame later)
    fresh = _shown(qtbot, session, size=(900, 700))
    qtbot.wait(50)
    assert fresh.values_plot.size() == view.values_plot.size()
    assert after == fresh.values_plot.grab().toImage()
