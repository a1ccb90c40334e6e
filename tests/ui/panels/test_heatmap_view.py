"""The live heatmap: real widget, real clicks, real pixels."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from qkv_studio.core import Scene, View
from qkv_studio.render.colormaps import scale_for
from qkv_studio.render.theme import get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.heatmap_view import HeatmapView, format_value
from qkv_studio.ui.update_policy import settle


def _show(qtbot, session, size=(1000, 800)):
    view = HeatmapView(session)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    session.flush()
    qtbot.wait(10)
    return view


def _settle(qtbot, session):
    session.flush()
    settle()


def _morphed(qtbot, view):
    """Wait for a stage step's morph to reach the new stage's colours and numbers."""
    qtbot.waitUntil(lambda: not view.is_animating(), timeout=3000)


def _click(qtbot, view, row, col, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton, modifier, view.cell_center(row, col))


def test_shows_the_lesson_weights_on_a_fixed_scale(qtbot, session):
    view = _show(qtbot, session)
    assert view.displayed_stage() == "weights"
    np.testing.assert_array_equal(view.displayed_matrix(), session.result.weights)
    assert view.color_levels() == (0.0, 1.0)
    assert view.color_bar.levels() == (0.0, 1.0)
    assert view.image_item.image.shape == (4, 4, 4)
    assert "sums to 1" in view.title.text()


def test_scores_stage_has_symmetric_levels_and_follows_the_stage(qtbot, session):
    view = _show(qtbot, session)
    session.set_stage("scores")
    np.testing.assert_array_equal(view.displayed_matrix(), session.result.scores)
    lo, hi = view.color_levels()
    assert lo == -hi and hi == pytest.approx(np.max(np.abs(session.result.scores)))
    assert view.color_bar.levels() == (lo, hi)
    session.set_stage("scaled")
    np.testing.assert_array_equal(view.displayed_matrix(), session.result.scaled)
    assert view.color_levels()[1] == pytest.approx(np.max(np.abs(session.result.scaled)))
    session.set_stage("vectors")
    assert view.displayed_stage() == "scores"
    assert "next" in view.title.text()
    assert view.cell_texts() == []  # a preview: no numbers yet
    session.set_stage("output")
    assert view.displayed_stage() == "weights"


def test_cell_texts_show_the_lesson_numbers_and_row_sums(qtbot, session):
    view = _show(qtbot, session)
    texts = {(r, c): t for r, c, t in view.cell_texts()}
    assert texts[(2, 0)] == "0.06"
    assert texts[(2, 1)] == "0.54"
    assert texts[(2, 2)] == "0.13"
    assert texts[(2, 3)] == "0.27"
    assert texts[(2, 4)] == "1.00"  # the Σ column
    assert len(texts) == 4 * 5
    weights_colours = view.image_item.image.copy()
    session.set_stage("scores")
    # the step's own frame is the morph's first: the old colours and numbers (in the scores' format;
    # Σ gone with the stage)
    texts = {(r, c): t for r, c, t in view.cell_texts()}
    assert texts[(2, 1)] == "0.539" and (2, 4) not in texts
    assert np.array_equal(view.image_item.image, weights_colours)
    _morphed(qtbot, view)
    texts = {(r, c): t for r, c, t in view.cell_texts()}
    assert texts[(2, 1)] == "4" and (2, 4) not in texts
    assert not np.array_equal(view.image_item.image, weights_colours)


def test_masked_cells_read_minus_infinity_before_the_softmax(qtbot, session):
    view = _show(qtbot, session)
    session.set_mask("causal")
    session.set_stage("scores")
    _settle(qtbot, session)
    texts = {(r, c): t for r, c, t in view.cell_texts()}
    assert texts[(0, 1)] == "−∞" and texts[(1, 0)] != "−∞"
    session.set_stage("weights")
    _morphed(qtbot, view)
    texts = {(r, c): t for r, c, t in view.cell_texts()}
    assert texts[(0, 1)] == "0" and texts[(0, 0)] == "1.00"
    # masked cells take the theme's masked colour, not a colormap colour
    masked = QColor(get_theme("light").masked)
    assert tuple(view.image_item.image[0, 1]) == (masked.red(), masked.green(), masked.blue(), 255)


def test_clicking_a_cell_selects_its_row_as_query(qtbot, session):
    view = _show(qtbot, session)
    assert session.query == 2
    with qtbot.waitSignal(session.query_changed) as blocker:
        _click(qtbot, view, 0, 3)
    assert blocker.args == [0]
    assert session.query == 0
    assert session.undo_stack.count() == 0  # selecting is navigation, not an edit


def test_ctrl_click_toggles_a_mask_cell(qtbot, session):
    view = _show(qtbot, session)
    _click(qtbot, view, 2, 3, Qt.KeyboardModifier.ControlModifier)
    assert bool(session.scene.mask_matrix()[2, 3])
    assert session.scene.mask_matrix().sum() == 1
    assert session.query == 2
    assert session.undo_stack.count() == 1
    _settle(qtbot, session)
    assert view.displayed_matrix()[2, 3] == 0.0
    assert dict(((r, c), t) for r, c, t in view.cell_texts())[(2, 3)] == "0"


def test_clicking_labels_selects_a_query_and_ctrl_click_on_a_key_blocks_its_column(qtbot, session):
    view = _show(qtbot, session)
    vp = view.graphics.viewport()
    left = view.plot.getAxis("left").sceneBoundingRect()
    row_y = view.plot.vb.mapViewToScene(QPointF(0, 1)).y()
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     view.graphics.mapFromScene(QPointF(left.center().x(), row_y)))
    assert session.query == 1
    top = view.plot.getAxis("top").sceneBoundingRect()
    col_x = view.plot.vb.mapViewToScene(QPointF(3, 0)).x()
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     view.graphics.mapFromScene(QPointF(col_x, top.center().y())))
    mask = session.scene.mask_matrix()
    assert mask[:, 3].all() and mask.sum() == 4
    assert session.undo_stack.count() == 1


def test_rendered_pixels_match_the_colour_scale(qtbot, session):
    view = _show(qtbot, session)
    scale = scale_for("weights", session.result.weights)
    image = view.grab().toImage()
    for row, col in [(0, 0), (1, 1), (3, 2)]:
        # off the centre, so the printed number does not cover the sampled pixel
        scene_pt = view.plot.vb.mapViewToScene(QPointF(col - 0.35, row - 0.35))
        pt = view.graphics.viewport().mapTo(view, view.graphics.mapFromScene(scene_pt))
        got = image.pixelColor(pt)
        want = scale.rgba(session.result.weights[row:row + 1, col:col + 1])[0, 0]
        assert abs(got.red() - int(want[0])) <= 3, (row, col, got.name())
        assert abs(got.green() - int(want[1])) <= 3, (row, col, got.name())
        assert abs(got.blue() - int(want[2])) <= 3, (row, col, got.name())


def test_colormap_change_recolours_weights_only(qtbot, session):
    view = _show(qtbot, session)
    before = view.image_item.image.copy()
    look = Appearance()
    view.bind_appearance(look)
    look.set_colormap("magma")
    assert not np.array_equal(before, view.image_item.image)
    np.testing.assert_array_equal(view.image_item.image, scale_for("weights", session.result.weights,
                                                                     "magma").rgba(session.result.weights))
    with pytest.raises(ValueError):
        look.set_colormap("no-such-map")
    np.testing.assert_array_equal(view.image_item.image, scale_for("weights", session.result.weights,
                                                                     "magma").rgba(session.result.weights))


def test_model_to_widget_updates_never_edit(qtbot, session):
    view = _show(qtbot, session)
    with qtbot.assertNotEmitted(session.undo_stack.indexChanged):
        session.set_query(0)
        session.set_stage("scores")
        session.set_stage("weights")
        look = Appearance()
        view.bind_appearance(look)
        look.set_theme(get_theme("projector"))
        look.set_font_scale(1.5)
        qtbot.wait(20)
    session.set_value("Q", 2, 0, 3.0)
    _settle(qtbot, session)
    assert session.undo_stack.count() == 1  # the view's refresh did not add an edit of its own
    np.testing.assert_array_equal(view.displayed_matrix(), session.result.weights)


def _outlined_rows(view, n: int) -> list[int]:
    """The rows whose top edge shows the query outline's colour on screen (at the first column)."""
    image = view.graphics.viewport().grab().toImage()
    highlight = QColor(view._theme.highlight)
    rows = []
    for r in range(n):
        top = (view.cell_center(r - 1, 0).y() + view.cell_center(r, 0).y()) / 2 if r else \
            1.5 * view.cell_center(0, 0).y() - 0.5 * view.cell_center(1, 0).y()
        x = view.cell_center(r, 0).x()
        colours = [image.pixelColor(x, int(round(top)) + dy) for dy in (-1, 0, 1)]
        if any(max(abs(c.red() - highlight.red()), abs(c.green() - highlight.green()),
                   abs(c.blue() - highlight.blue())) < 40 for c in colours):
            rows.append(r)
    return rows


def test_query_change_moves_the_outline_and_keeps_the_colours(qtbot, session):
    view = _show(qtbot, session)
    n = session.scene.n
    shown = view.image_item.image
    colours = shown.copy()
    old = session.query
    assert old in _outlined_rows(view, n)
    new = (old + 1) % n
    session.set_query(new)
    qtbot.wait(20)
    outlined = _outlined_rows(view, n)
    assert new in outlined and old not in outlined
    assert view.image_item.image is shown and np.array_equal(shown, colours)  # the colours stay as they were
    session.set_value("Q", 1, 0, 2.0)
    _settle(qtbot, session)
    # the edit recolours the image's row
    weights = session.result.weights
    assert np.array_equal(view.image_item.image[1], scale_for("weights", weights).rgba(weights[1:2])[0])


def _random_session(n: int = 16) -> Session:
    rng = np.random.default_rng(1)
    return Session(Scene.create([f"t{i}" for i in range(n)], q=rng.normal(size=(n, 2)),
                                k=rng.normal(size=(n, 2)), v=rng.normal(size=(n, 2))))


@pytest.mark.perf
def test_query_change_repaints_the_two_rows_only(qtbot):
    n = 16
    session = _random_session(n)
    view = _show(qtbot, session)
    view.resize(700, 700)
    qtbot.wait(50)
    asked = []
    update = view.overlay.update
    view.overlay.update = lambda *a: (asked.append(QRectF(*a) if a else None), update(*a))
    old = session.query
    session.set_query(9)
    assert asked and None not in asked  # no whole-overlay update
    rows = set()
    for rect in asked:
        assert rect.height() < 1.5
        rows |= {r for r in range(n) if rect.top() < r < rect.bottom()}
    assert rows == {old, 9}  # where the outline was, and where it is


def _scopes():
    """The two repaint scopes of the heatmap's view: (clipped to what changed, the view whole)."""
    from PySide6.QtWidgets import QGraphicsView

    return (QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate,
            QGraphicsView.ViewportUpdateMode.FullViewportUpdate)


@pytest.mark.perf
def test_an_edit_of_a_row_repaints_that_row_and_a_new_stage_repaints_unclipped(qtbot):
    session = _random_session()
    view = _show(qtbot, session)
    view.animate = False
    minimal, full = _scopes()
    session.set_value("Q", session.query, 0, 1.5)
    _settle(qtbot, session)
    assert view.graphics.viewportUpdateMode() == minimal  # one row: clipped to it
    session.set_stage("scores")
    assert view.graphics.viewportUpdateMode() == full  # every cell, the legend and Σ change
    _settle(qtbot, session)
    session.set_value("Q", 9, 0, -1.5)
    _settle(qtbot, session)
    assert view.graphics.viewportUpdateMode() == minimal


def test_font_scale_grows_tick_fonts(qtbot, session):
    view = _show(qtbot, session)
    small = view.plot.getAxis("left").style["tickFont"].pixelSize()
    view.bind_appearance(Appearance(font_scale=2.0))
    assert view.plot.getAxis("left").style["tickFont"].pixelSize() == 2 * small


def test_1024_tokens_render_without_per_cell_items(qtbot):
    rng = np.random.default_rng(0)
    n = 1024
    scene = Scene.create([f"t{i}" for i in range(n)], q=rng.normal(size=(n, 8)), k=rng.normal(size=(n, 8)),
                         v=rng.normal(size=(n, 4)))
    session = Session(scene, view=View(query=5))
    view = _show(qtbot, session)
    assert view.displayed_matrix().shape == (n, n)
    assert view.image_item.image.shape == (n, n, 4)
    assert len(view.graphics.scene().items()) < 80
    assert view.cell_texts() == []  # cells are ~1 px: no numbers
    ticks = view.plot.getAxis("left").given_ticks()[0]
    assert 2 <= len(ticks) < 100  # labels thinned, not 1024 on top of each other


@pytest.mark.parametrize("value, stage, text", [
    (0.5412, "weights", "0.54"), (0.0, "weights", "0"), (-np.inf, "scores", "−∞"),
    (4.0, "scores", "4"), (-1.25, "scaled", "−1.25"), (12345.0, "scores", "1.23e4"), (-1e300, "scores", "−1e300"),
])
def test_format_value(value, stage, text):
    assert format_value(value, stage) == text


def test_row_edits_repainted_in_place_leave_the_picture_whole(qtbot, session):
    """Edits of query rows recolour and repaint only those rows: what is on screen (the window's
    backing store) must equal a full repaint of the same view."""
    view = _show(qtbot, session)
    view.animate = False
    for row, value in ((1, 2.0), (3, -1.5), (1, 0.25), (2, 4.0)):
        session.set_value("Q", row, 0, value)
        _settle(qtbot, session)
    on_screen = view.screen().grabWindow(view.winId()).toImage()
    full = view.grab().toImage().convertToFormat(on_screen.format())
    assert on_screen.size() == full.size() and on_screen == full


def _bar_level_with_the_cells(view) -> bool:
    """The legend's strip spans the matrix's cells, row for row (read after a paint: a ViewBox places
    its items for a new size when it next paints)."""
    view.graphics.viewport().repaint()
    cells = view.image_item.sceneBoundingRect()  # the matrix's cells, inside the padded view box
    bar = view.color_bar.bar.sceneBoundingRect()  # the coloured strip itself
    return abs(bar.top() - cells.top()) <= 1.5 and abs(bar.bottom() - cells.bottom()) <= 1.5


def test_colour_bar_spans_the_matrix_so_its_end_labels_are_not_cut_off(qtbot, session):
    view = _show(qtbot, session)
    _settle(qtbot, session)
    # level with the first and last rows: "1.0" beside the top of the matrix, "0" beside its bottom
    # (aligned once the layouts have settled)
    qtbot.waitUntil(lambda: _bar_level_with_the_cells(view), timeout=2000)
    assert view.plot.vb.sceneBoundingRect().top() < view.image_item.sceneBoundingRect().top() - 2  # (padding)
    view.resize(view.width(), view.height() - 150)  # and again after the panel changes size
    qtbot.waitUntil(lambda: _bar_level_with_the_cells(view), timeout=2000)
    bar = view.color_bar.bar.sceneBoundingRect()
    assert bar.top() > view.color_bar.sceneBoundingRect().top() + 5  # room above for the "1.0" label


def test_projector_sized_legend_keeps_its_end_labels(qtbot, session):
    from PySide6.QtGui import QImage, QPainter

    view = _show(qtbot, session)
    view.resize(900, 800)
    view.bind_appearance(Appearance(font_scale=2.2))  # presentation mode's text
    _settle(qtbot, session)
    qtbot.wait(50)
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    specs = view.color_bar.axis.generateDrawSpecs(painter)
    painter.end()
    texts = {text for _, _, text in specs[2]}
    assert {"0", "1.0"} <= texts or {"0.0", "1.0"} <= texts  # pyqtgraph drops overhanging labels otherwise
    # and the bottom one has room under the bar, inside the panel (a ViewBox places its items for the
    # new size when it next paints: wait for the layouts, with a paint, before reading positions)
    def room_under_the_bar() -> float:
        view.graphics.viewport().repaint()
        return view.graphics.sceneRect().bottom() - view.color_bar.bar.sceneBoundingRect().bottom()

    qtbot.waitUntil(lambda: room_under_the_bar() >= view._px(17) // 2, timeout=2000)


def test_a_title_that_wraps_at_one_stage_takes_its_room_at_the_step_and_nothing_moves_later(qtbot, session):
    """The update policy (qkv_studio.ui.update_policy): a step's title is laid out in the step — its
    second line's room taken at the step to it and given back at the step away — and nothing moves
    afterwards (the room was given back 350 ms later, a jump of its own well after the step)."""
    view = _show(qtbot, session, size=(500, 500))
    session.set_stage("weights")
    settle(view)
    one_line = view.graphics.height()
    session.set_stage("output")  # "softmax weights w — the blend: output = w · V" takes two lines here
    settle(view)
    assert view.title.heightForWidth(view.title.width()) > view.title.fontMetrics().lineSpacing() * 1.5
    two_lines = view.graphics.height()
    assert two_lines < one_line
    QApplication.processEvents()
    assert view.graphics.height() == two_lines  # (settled: nothing waits to move after the step)
    session.set_stage("weights")
    settle(view)  # (no sleeping: the room comes back in the step's own events)
    assert view.graphics.height() == one_line


@pytest.mark.parametrize("name", ["viridis", "cividis", "magma", "grayscale", "CET-CBD1"])
def test_the_legend_bar_has_the_colours_of_the_cells(qtbot, session, name):
    from qkv_studio.render.colormaps import lut

    view = _show(qtbot, session)
    if name == "CET-CBD1":
        session.set_stage("scores")  # (the diverging map of the scores)
    else:
        view.bind_appearance(Appearance(colormap=name))
    strip = view.color_bar.bar.pixmap().toImage()
    assert (strip.width(), strip.height()) == (1, 256) and view.color_bar.strip_name == name
    colours = [strip.pixelColor(0, y) for y in range(256)]
    table = lut(name)
    assert [(c.red(), c.green(), c.blue(), c.alpha()) for c in colours] == [tuple(map(int, row)) for row in table]


def test_the_vectors_stage_fades_image_and_legend_together_and_the_next_stage_restores_them(qtbot, session):
    view = _show(qtbot, session)
    session.set_stage("vectors")
    _settle(qtbot, session)
    faded = view.image_item.opacity()
    assert faded < 1.0 and view.color_bar.opacity() == faded
    session.set_value("Q", 2, 0, 1.5)  # an edit in the vectors stage keeps the fade
    _settle(qtbot, session)
    assert view.image_item.opacity() == faded == view.color_bar.opacity()
    session.set_stage("scores")
    _settle(qtbot, session)
    assert view.image_item.opacity() == 1.0 == view.color_bar.opacity()


@pytest.mark.perf
def test_the_morph_repaints_the_view_whole_with_the_step_and_then_only_the_matrix(qtbot):
    session = _random_session()
    view = _show(qtbot, session)
    view.animate = True
    minimal, full = _scopes()
    session.set_stage("scaled")
    session.flush()
    assert view.is_animating()
    assert view.graphics.viewportUpdateMode() == full  # the step: new legend, title and ticks too
    scopes = []
    view._anim.valueChanged.connect(lambda *_: scopes.append(view.graphics.viewportUpdateMode()))
    qtbot.waitUntil(lambda: not view.is_animating(), timeout=3000)
    assert scopes and set(scopes) == {minimal}  # its later frames change the matrix only
    np.testing.assert_array_equal(view.displayed_matrix(), session.result.stage("scaled"))


@pytest.mark.parametrize("size, stage", [((1000, 800), "weights"), ((420, 300), "scores"), ((1600, 500), "output")])
def test_cell_width_in_pixels_is_what_the_view_box_says(qtbot, session, size, stage):
    """The view's cheap cell width (it sizes the numbers and thins the names) agrees with pyqtgraph's
    own measure of a view pixel, at any panel size and with or without the Σ column."""
    view = _show(qtbot, session, size=size)
    session.set_stage(stage)
    _settle(qtbot, session)
    view.graphics.viewport().repaint()
    expected = 1.0 / view.plot.vb.viewPixelSize()[0]
    assert view._cell_px() == pytest.approx(expected, rel=1e-9)
    assert expected > 10


@pytest.mark.perf
def test_a_step_that_adds_the_sigma_column_redraws_the_key_names_not_the_query_names(qtbot):
    """Σ joins the top axis at the softmax; the left axis (the query names) keeps its picture."""
    session = _random_session()
    session.set_stage("scaled")
    view = _show(qtbot, session)
    view.animate = False
    painted = []
    for side in ("left", "top"):
        axis = view.plot.getAxis(side)
        original = axis.paint
        axis.paint = lambda p, *a, side=side, original=original: painted.append(side) or original(p, *a)
    session.set_stage("weights")
    view.graphics.viewport().repaint()
    assert painted == ["top"]
    assert view.plot.getAxis("top").given_ticks()[0][-1][1] == "Σ"


def test_numbers_during_the_morph_are_dark_or_light_for_the_colours_on_screen(qtbot, session):
    """The morph's first frame shows the old colours: a number's colour is chosen for those, not for the
    new stage's (black on the weights' dark purple was unreadable for a quarter of a second)."""
    from qkv_studio.render.colormaps import text_is_dark

    view = _show(qtbot, session)
    view.animate = True
    session.set_stage("scaled")
    assert view.is_animating()
    cells = view._text_plan()["cells"]
    on_screen = [bool(text_is_dark(view.image_item.image[r:r + 1, c:c + 1])[0, 0]) for r, c, _, _ in cells]
    target = [bool(text_is_dark(view._rgba[r:r + 1, c:c + 1])[0, 0]) for r, c, _, _ in cells]
    assert [dark for *_, dark in cells] == on_screen != target
    _morphed(qtbot, view)
    assert [dark for *_, dark in view._text_plan()["cells"]] == target


def test_the_colours_follow_row_edits_that_another_view_read_first(qtbot, session):
    # The Session rewrites an edited row in place when the result is first read, maybe by another
    # view before the heatmap hears of it; the change it then announces is what recolours the row,
    # and stepping through the stages never shows the colours the numbers had before.
    view = _show(qtbot, session)
    view.animate = False
    session.set_stage("scores")
    session.set_stage("weights")  # (both stages' colours are now kept for stepping back and forth)
    for value in (6.0, -3.0):
        session.set_value("Q", 1, 0, value)
        _ = session.result  # (another view reads first)
        session.set_stage("scores")
        session.set_stage("weights")
        _settle(qtbot, session)
        for stage in ("scores", "weights", "scaled"):
            session.set_stage(stage)
            m = session.result.stage(stage)
            np.testing.assert_array_equal(view.displayed_matrix(), m)
            np.testing.assert_array_equal(view.image_item.image, scale_for(stage, m).rgba(m))


def test_on_a_flat_short_slide_numbers_fit_their_rows_and_side_titles_stay_whole(qtbot, session):
    # A HiDPI laptop's presentation (960×540 logical px, large type): rows much flatter than wide.
    look = Appearance()
    look.set_font_scale(2.0)
    view = HeatmapView(session, appearance=look)
    qtbot.addWidget(view)
    view.resize(1400, 330)
    view.show()
    qtbot.waitExposed(view)
    session.flush()
    qtbot.waitUntil(lambda: view._text_plan()["font"] is not None, timeout=2000)
    plan = view._text_plan()
    from PySide6.QtGui import QFontMetricsF

    assert QFontMetricsF(plan["font"]).height() <= view._cell_h_px()  # each number inside its own row
    assert len(plan["cells"]) == 16  # and every cell still shows its number
    qtbot.waitUntil(lambda: view.plot.getAxis("left").labelText == "query", timeout=2000)
    assert view.color_bar.getAxis("left").labelText == "softmax weight"  # the ticks still say 0 … 1
    view.resize(1400, 900)  # room again: the whole titles come back
    qtbot.waitUntil(lambda: view.plot.getAxis("left").labelText == "attending from (query)", timeout=2000)


def test_cell_texts_reformat_only_the_rows_whose_values_changed():
    from qkv_studio.ui.panels.heatmap_overlay import CellTexts

    cache = CellTexts()
    values = np.array([[0.5, 0.25], [0.125, 1.0], [0.0, np.nan]])
    texts, longest = cache.texts(values, "weights", 0, 0)
    assert texts[:2] == [["0.50", "0.25"], ["0.12", "1.00"]] and texts[2][0] == "0" and longest == "0.50"
    rows = [list(r) for r in texts]
    kept = [texts[0], texts[2]]
    values[1, 0] = 12.5
    texts, longest = cache.texts(values, "weights", 0, 0)
    assert texts[1] == ["12.50", "1.00"] and longest == "12.50"
    assert texts[0] is kept[0] and texts[2] is kept[1]  # (the unchanged rows, NaN included, kept as they were)
    assert cache.texts(values, "scores", 0, 0)[0][0] == ["0.5", "0.25"]  # another stage's rule: all anew
    assert cache.texts(values[1:], "scores", 1, 0)[0] == [["12.5", "1"], ["0", rows[2][1]]]


def test_an_edit_shows_its_new_numbers_and_keeps_the_others(qtbot, session):
    view = _show(qtbot, session)
    view.animate = False
    before = {(r, c): t for r, c, t in view.cell_texts()}
    assert before
    session.set_value("Q", 1, 0, 7.0)
    _settle(qtbot, session)
    m = session.result.stage(view.displayed_stage())
    after = {(r, c): t for r, c, t in view.cell_texts() if c < m.shape[1]}
    assert after == {(r, c): format_value(float(m[r, c]), view.displayed_stage())
                     for r in range(m.shape[0]) for c in range(m.shape[1])}
    assert any(after[1, c] != before[1, c] for c in range(m.shape[1]))
    assert all(after[r, c] == before[r, c] for r in (0, 2, 3) for c in range(m.shape[1]))


def test_rows_too_flat_for_numbers_format_none(qtbot, session, monkeypatch):
    # A slide's 64 rows are ~4 px tall: no number is drawn, and none is formatted on each paint.
    import qkv_studio.ui.panels.heatmap_overlay as overlay

    view = _show(qtbot, session, size=(1000, 60))
    calls = []
    monkeypatch.setattr(overlay, "format_value", lambda x, stage: calls.append(x) or "0")
    plan = view._text_plan()
    assert plan["font"] is None and plan["cells"] == [] and view.cell_texts() == []
    assert calls == []
