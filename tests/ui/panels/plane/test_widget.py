"""The vector plane: arrows follow the Session; what is drawn for d = 1, 2 and > 2, labels and look."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF

from qkv_studio.core import Scene, load_preset
from qkv_studio.render.theme import get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.frame_throttle import flush_pending
from tests.ui.panels.plane.helpers import drag, show, viewport_pos
from tests.views import LESSON_VIEW


def test_shows_the_lesson_vectors_and_best_key(qtbot, session):
    plane = show(qtbot, session)
    assert plane.best_key() == 1  # cat: 0.54 for the query from sat
    labels = plane.label_texts()
    assert "q sat" in labels
    assert "k cat" in labels and "k the" in labels
    assert not any(t.startswith("v ") for t in labels)
    assert plane.head_view_pos("Q", 2) == QPointF(1, 2)
    assert plane.head_view_pos("K", 1) == QPointF(2, 1)
    assert "cat" in plane.info.text() and "0.54" in plane.info.text()
    assert "(w&nbsp;=&nbsp;0.54)" in plane.info.text()  # kept together: never "(weight" / "0.54)"
    # the best key is drawn by its own, thicker item
    assert plane._best_item.opts["pen"].widthF() > plane._keys_item.opts["pen"].widthF()
    xs, ys = plane._best_item.getData()
    assert xs[1] == pytest.approx(2) and ys[1] == pytest.approx(1)


def test_best_key_follows_the_query(qtbot, session):
    plane = show(qtbot, session)
    session.set_query(0)  # q the = [0, 1]
    # what follows from a change made elsewhere is drawn at the next frame
    qtbot.waitUntil(lambda: any(t.startswith("q the") for t in plane.label_texts()), timeout=1000)
    session.set_value("Q", 0, 0, -1.0)  # q the = [-1, 1]: now sat's key matches best
    session.flush()
    flush_pending()
    assert int(np.argmax(session.result.weights[0])) == 2
    assert plane.best_key() == 2
    xs, ys = plane._best_item.getData()
    assert (xs[1], ys[1]) == (pytest.approx(0), pytest.approx(1))  # (the key, to rounding: heads are sized in pixels)
    assert "k sat" in plane.info.text()


def test_values_toggle_and_output_stage(qtbot, session):
    plane = show(qtbot, session)
    plane.set_show_values(True)
    assert plane.values_box.isChecked()
    assert any("v mat" in t for t in plane.label_texts())
    assert any("k the = v the" == t for t in plane.label_texts())  # coincident heads share a label
    plane.set_show_values(False)
    assert not any("v mat" in t for t in plane.label_texts())
    session.set_stage("output")
    flush_pending()
    assert plane.values_visible()
    assert "output (blend)" in plane.label_texts()
    xs, ys = plane._output_item.getData()
    out = session.result.output[2]
    assert xs[1] == pytest.approx(out[0]) and ys[1] == pytest.approx(out[1])


def test_model_to_widget_updates_never_edit(qtbot, session):
    plane = show(qtbot, session)
    with qtbot.assertNotEmitted(session.undo_stack.indexChanged):
        session.set_query(1)
        session.set_stage("output")
        look = Appearance()
        plane.bind_appearance(look)
        look.set_theme(get_theme("dark"))
        look.set_font_scale(2.0)
        plane.set_show_values(True)
        qtbot.wait(20)


def test_projection_mode_is_read_only(qtbot):
    rng = np.random.default_rng(1)
    scene = Scene.create(["a", "b", "c"], x=rng.normal(size=(3, 4)), wq=rng.normal(size=(4, 3)),
                         wk=rng.normal(size=(4, 3)), wv=rng.normal(size=(4, 2)))
    session = Session(scene)
    plane = show(qtbot, session)
    assert plane.read_only()
    assert "edit X or W" in plane.info.text()
    assert "3" in plane.info.text()  # d_k = 3, first two shown
    q_before = np.array(session.scene.matrix("Q"))
    drag(qtbot, plane, plane.head_viewport_pos("Q", 0), viewport_pos(plane, 0.0, 0.0))
    assert session.undo_stack.count() == 0
    np.testing.assert_array_equal(session.scene.matrix("Q"), q_before)


def test_many_tokens_use_one_item_per_set(qtbot):
    rng = np.random.default_rng(2)
    n = 300
    scene = Scene.create([f"t{i}" for i in range(n)], q=rng.normal(size=(n, 2)), k=rng.normal(size=(n, 2)),
                         v=rng.normal(size=(n, 2)))
    session = Session(scene)
    plane = show(qtbot, session)
    plane.set_show_values(True)
    assert len(plane.plot_widget.scene().items()) < 60
    assert len(plane.label_texts()) == 2  # only the query and the best key are labelled
    xs, _ = plane._keys_item.getData()
    assert len(xs) == 6 * n  # shaft + two head strokes per key (the best key is drawn again, on top)


def test_one_dimensional_keys_lie_on_the_horizontal_axis(qtbot):
    scene = Scene.create(["a", "b"], q=[[1.0], [2.0]], k=[[1.0], [-1.0]], v=[[1.0], [0.0]])
    session = Session(scene)
    plane = show(qtbot, session)
    assert "dₖ = 1" in plane.plot.getAxis("left").labelText
    assert plane.head_view_pos("K", 1) == QPointF(-1, 0)
    drag(qtbot, plane, plane.head_viewport_pos("Q", 0), viewport_pos(plane, 0.5, 0.4))
    assert session.scene.q[0, 0] == pytest.approx(0.5, abs=0.05)
    assert session.undo_stack.count() == 1


def test_many_keys_are_drawn_fainter(qtbot):
    rng = np.random.default_rng(3)
    n = 256
    scene = Scene.create([f"t{i}" for i in range(n)], q=rng.normal(size=(n, 2)), k=rng.normal(size=(n, 2)),
                         v=rng.normal(size=(n, 2)))
    plane = show(qtbot, Session(scene))
    assert plane._keys_item.opts["pen"].color().alpha() < 255
    assert plane._query_item.opts["pen"].color().alpha() == 255


def test_pca_view_projects_q_and_k_and_cannot_be_dragged(qtbot):
    from qkv_studio.core.models import pca_basis

    rng = np.random.default_rng(5)
    q, k, v = (rng.normal(size=(5, 6)) for _ in range(3))
    session = Session(Scene.create(list("abcde"), q=q, k=k, v=v))
    plane = show(qtbot, session)
    assert not plane.pca_box.isHidden() and not plane.pca_shown()
    np.testing.assert_allclose(plane.head_view_pos("K", 3).x(), k[3, 0])  # first two components
    plane.pca_box.click()
    assert plane.pca_shown() and plane.read_only()
    basis, explained = pca_basis(q, k)
    head = plane.head_view_pos("K", 3)
    np.testing.assert_allclose([head.x(), head.y()], k[3] @ basis)
    query = session.query
    q_head = plane.head_view_pos("Q", query)
    np.testing.assert_allclose([q_head.x(), q_head.y()], q[query] @ basis)
    assert plane.plot.getAxis("bottom").labelText == f"PCA 1 · {100 * explained[0]:.0f}%"
    assert "PCA" in plane.info.text()
    start = plane.head_viewport_pos("Q", query)
    drag(qtbot, plane, start, start + QPoint(40, -30))
    assert session.undo_stack.count() == 0  # a projection is not edited by dragging
    plane.set_pca(False)
    assert not plane.pca_shown() and not plane.pca_box.isChecked()
    np.testing.assert_allclose(plane.head_view_pos("K", 3).x(), k[3, 0])


def test_pca_is_offered_only_above_two_dimensions(qtbot):
    session = Session(load_preset("lesson"), view=LESSON_VIEW)
    plane = show(qtbot, session)
    assert plane.pca_box.isHidden()  # nothing to project: not shown
    plane.set_pca(True)
    assert not plane.pca_shown() and not plane.read_only()


@pytest.mark.parametrize("big", [1e308, -1e308, 1e-300])
def test_pca_of_extreme_numbers_stays_finite_and_quiet(qtbot, big):
    import warnings

    q, k, v = np.full((3, 4), big), np.full((3, 4), -big), np.full((3, 4), big)
    session = Session(Scene.create(list("abc"), q=q, k=k, v=v))
    plane = show(qtbot, session)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plane.set_pca(True)
        session.set_stage("output")
        session.flush()
        qtbot.wait(10)
    assert plane.pca_shown()
    assert np.all(np.isfinite(plane.view_box.viewRange()))
    assert plane.plot.getAxis("bottom").labelText.startswith("PCA 1")


@pytest.mark.parametrize("size", [(500, 400), (900, 300), (300, 800)])
def test_the_pixel_size_the_arrows_are_drawn_for_is_what_the_view_box_says(qtbot, session, size):
    plane = show(qtbot, session)
    plane.resize(*size)
    qtbot.wait(20)
    plane.plot_widget.viewport().repaint()
    mine, theirs = plane.pixel_size(), plane.view_box.viewPixelSize()
    assert mine == pytest.approx(theirs, rel=1e-9) and mine[0] > 0


def test_a_plane_resized_before_it_shows_draws_when_shown_at_its_size(qtbot, session):
    """Built, resized and its range changed while hidden, the plane draws nothing yet (each step of a
    window's first layout would draw it again); shown, it draws what a plane shown straight away at that
    size draws, with the view fitted."""
    from qkv_studio.ui.panels.plane import VectorPlane

    plane = VectorPlane(session)
    qtbot.addWidget(plane)
    plane.resize(700, 500)
    plane.view_box.setRange(xRange=(-40, 40), yRange=(-40, 40), padding=0)
    assert plane.label_texts() == []
    assert plane._keys_item.getData()[0] is None or len(plane._keys_item.getData()[0]) == 0
    plane.show()
    qtbot.waitExposed(plane)
    flush_pending()
    reference = show(qtbot, session, size=(700, 500))
    flush_pending()
    assert plane.label_texts() == reference.label_texts() and "q sat" in plane.label_texts()
    np.testing.assert_allclose(plane.view_box.viewRange(), reference.view_box.viewRange())
    for mine, theirs in zip(plane._keys_item.getData(), reference._keys_item.getData(), strict=False):
        np.testing.assert_allclose(mine, theirs)
    assert [item.pos() for item in plane.label_items() if item.isVisible()] == \
        [item.pos() for item in reference.label_items() if item.isVisible()]
    assert plane.view_range.state() == "fits"
