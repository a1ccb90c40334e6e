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


def _crowded_values(n: int = 10) -> Scene:
    """Ten tokens whose values crowd around the origin but for a few (as a real model's head's do), the
    query leaning on one of the crowd."""
    rng = np.random.default_rng(11)
    v = rng.normal(scale=0.15, size=(n, 2))
    v[[2, 5, 8]] = [[1.4, 0.3], [-1.2, 0.9], [0.2, -1.3]]
    q = rng.normal(size=(n, 2))
    k = rng.normal(size=(n, 2))
    k[4] = 3 * q[n - 1]  # (the last query's best key: a value in the crowd)
    return Scene.create([f"␣tok{i}" for i in range(n)], q=q, k=k, v=v)


def _value_labels(view: BlendView) -> tuple[list[tuple[str, QRectF]], QRectF, list[tuple[str, object]], QRectF]:
    """The values' names drawn (scene rects), the output's label, each value's head (scene point, by
    name) and the plot's box."""
    import pyqtgraph as pg

    view.grab()
    plot = view.values_plot.getPlotItem()
    vb = plot.getViewBox()
    out = [item for item in plot.items if isinstance(item, pg.TextItem) and item.toPlainText() == "output"][0]
    s = view._session.shown
    v = s.qkv()[2]
    heads = [(f"v {s.token_label(j)}", vb.mapViewToScene(pg.Point(float(v[j, 0]), float(v[j, 1]))))
             for j in range(s.n)]
    return (view.value_labels.drawn(), out.mapRectToScene(out.boundingRect()), heads,
            vb.mapRectToScene(vb.boundingRect()))


def test_the_values_names_never_cover_each_other_the_output_or_other_heads(qtbot):
    """Ten values, most in a crowd (a real model's head): the names drawn never overlap one another or
    the output's label, stand inside the plot, cover no other value's head (the leading value's may
    stand over the crowd rather than go unnamed), and the value with the largest weight is named —
    each name written at its head overprinted the next ("v ␣the v The v 's" over the arrows)."""
    for size in ((600, 360), (900, 420)):
        session = Session(_crowded_values(), view=View(query=9, stage="output"))
        view = _shown(qtbot, session, size)
        qtbot.waitUntil(lambda: bool(view.value_labels.drawn()), timeout=2000)
        drawn, output, heads, plot = _value_labels(view)
        w = session.result.weights[9]
        lead = f"v {session.shown.token_label(int(np.argmax(w)))}"
        texts = [text for text, _ in drawn]
        assert lead in texts, (size, texts)
        for i, (name, rect) in enumerate(drawn):
            assert plot.contains(rect), (size, name, rect, plot)
            assert not rect.intersects(output), (size, name, rect, output)
            for other, r in drawn[i + 1:]:
                assert not rect.intersects(r), (size, name, other)
            if name != lead:
                covered = [h for h, at in heads if h != name and rect.contains(at)]
                assert not covered, (size, name, covered)
        assert len(texts) >= 3  # (thinned, not emptied: the values apart from the crowd keep their names)


def test_every_value_is_named_where_there_is_room(qtbot):
    """The lesson's four values, apart from each other: every one named, none cut at the plot's edge
    (at 1366×768 "v sat" and "v the" ran off the plot's right side)."""
    from qkv_studio.core import load_preset

    session = Session(load_preset("lesson"), view=View(query=2, stage="output"))
    for size in ((520, 300), (900, 420)):
        view = _shown(qtbot, session, size)
        qtbot.waitUntil(lambda: len(view.value_labels.drawn()) == 4, timeout=2000)
        drawn, output, _, plot = _value_labels(view)
        for name, rect in drawn:
            assert plot.contains(rect) and not rect.intersects(output), (size, name)


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
