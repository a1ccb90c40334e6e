"""Tokens panel, stage stepper, calculation table and blend view, driven with qtbot."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit

from qkv_studio.core import View
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.blend_view import BlendView
from qkv_studio.ui.panels.calc_table import CalcTable
from qkv_studio.ui.panels.stage_stepper import StageStepper
from qkv_studio.ui.panels.tokens_panel import TokensPanel
from qkv_studio.ui.widgets.frame_throttle import flush_pending
from tests.views import LESSON_VIEW


def shown(qtbot, w, size=(700, 500)):
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_tokens_panel_add_rename_move_remove(qtbot, session):
    panel = shown(qtbot, TokensPanel(session))
    qtbot.mouseClick(panel.add_button, Qt.LeftButton)
    assert session.scene.n == 5 and session.scene.tokens[3] == "token5"
    assert session.query == 3
    view = panel.view
    index = panel.model.index(3)
    view.edit(index)
    line = view.findChild(QLineEdit)
    line.clear()
    qtbot.keyClicks(line, "on")
    qtbot.keyClick(line, Qt.Key_Return)
    qtbot.waitUntil(lambda: view.state() != QAbstractItemView.EditingState, timeout=1000)
    assert session.scene.tokens == ("the", "cat", "sat", "on", "mat")
    qtbot.mouseClick(panel.up_button, Qt.LeftButton)
    assert session.scene.tokens == ("the", "cat", "on", "sat", "mat") and session.query == 2
    qtbot.mouseClick(panel.remove_button, Qt.LeftButton)
    assert session.scene.tokens == ("the", "cat", "sat", "mat")


def test_tokens_panel_refuses_empty_and_control_names(qtbot, session):
    panel = shown(qtbot, TokensPanel(session))
    assert not panel.model.setData(panel.model.index(0), "")
    assert not panel.model.setData(panel.model.index(0), "a\x07b")
    assert session.scene.tokens[0] == "the"
    assert panel.message.isVisibleTo(panel)


def test_selecting_a_token_selects_the_query(qtbot, session):
    panel = shown(qtbot, TokensPanel(session))
    panel.view.setCurrentIndex(panel.model.index(0))
    assert session.query == 0
    session.set_query(3)
    assert panel.view.currentIndex().row() == 3


def test_stepper_buttons_and_caption(qtbot, session):
    stepper = shown(qtbot, StageStepper(session), (1000, 200))
    assert "0.54 on “cat”" in stepper.caption.text()
    assert "softmax" in stepper.formula.text() and "√" in stepper.formula.text()
    qtbot.mouseClick(stepper.next_button, Qt.LeftButton)
    assert session.stage == "output"
    assert not stepper.next_button.isEnabled() and stepper.stage_buttons["output"].isChecked()  # at once
    assert "<i>V</i></span>" in stepper.formula.text()  # the formula highlights the stage's piece
    assert "The output for" not in stepper.caption.text()  # the caption follows at the next frame
    qtbot.waitUntil(lambda: "The output for “sat” is the weighted blend" in stepper.caption.text(), timeout=1000)
    qtbot.mouseClick(stepper.stage_buttons["scores"], Qt.LeftButton)
    assert session.stage == "scores"
    flush_pending()
    assert "“cat” best" in stepper.caption.text()
    qtbot.mouseClick(stepper.back_button, Qt.LeftButton)
    assert session.stage == "vectors" and not stepper.back_button.isEnabled()


def test_calc_table_columns_appear_stage_by_stage(qtbot, session):
    table = shown(qtbot, CalcTable(session))
    model = table.calc_model
    session.set_stage("vectors")
    flush_pending()  # (the table's columns follow a stage step at the next frame)
    assert model.shown_columns() == ("token", "key", "value")
    assert [table.isColumnHidden(c) for c in range(model.columnCount())] == \
        [name not in ("token", "key", "value") for name in model.columns()]
    session.set_stage("scores")
    assert model.shown_columns() == ("token", "key", "value")  # not yet: the next frame
    qtbot.waitUntil(lambda: model.shown_columns()[-1] == "score", timeout=1000)
    assert not table.isColumnHidden(model.columns().index("score"))
    session.set_stage("weights")
    flush_pending()
    col = model.columns().index("weight")
    weights = [model.index(j, col).data() for j in range(4)]
    assert weights == ["0.06", "0.54", "0.13", "0.27"]
    assert model.index(4, col).data() == "1.00"
    assert model.index(4, 0).data() == "Σ"
    session.set_stage("output")
    out = model.index(4, model.columns().index("weighted")).data()
    o = session.result.output[2]
    assert out == f"o = [{o[0]:.2f}, {o[1]:.2f}]"  # (a blend is rounded as its weights are)


def test_calc_table_follows_edits_and_query(qtbot, session):
    table = shown(qtbot, CalcTable(session))
    model = table.calc_model
    session.set_stage("scores")
    session.set_value("Q", 2, 0, 0.0)
    session.flush()
    col = model.columns().index("score")
    assert [model.index(j, col).data() for j in range(4)] == ["0", "2", "2", "2"]
    session.set_query(0)
    assert [model.index(j, col).data() for j in range(4)] == ["0", "1", "1", "1"]


def test_blend_view_shows_weights_as_bars(qtbot, session):
    view = shown(qtbot, BlendView(session))
    heights = view.bars.opts["height"]
    np.testing.assert_allclose(heights, session.result.weights[2])
    assert "cat" in view.title.text() and "0.54" in view.title.text()
    session.set_query(0)
    # the blend follows at the next frame
    qtbot.waitUntil(lambda: np.allclose(view.bars.opts["height"], session.result.weights[0]), timeout=1000)


def test_blend_view_writes_each_weight_above_its_bar_and_names_every_token(qtbot, session):
    view = shown(qtbot, BlendView(session))
    view.resize(700, 400)
    qtbot.waitUntil(lambda: view._ticks is not None and len(view._ticks[0]) == 4)
    assert [text for _, _, text in view.bar_labels.labels()] == ["0.06", "0.54", "0.13", "0.27"]
    assert [(x, round(y, 4)) for x, y, _ in view.bar_labels.labels()][1] == (1.0, 0.5388)
    assert [name for _, name in view._ticks[0]] == ["the", "cat", "sat", "mat"]
    session.set_value("Q", 2, 0, 3.0)
    session.flush()
    flush_pending()
    np.testing.assert_allclose([y for _, y, _ in view.bar_labels.labels()], session.result.weights[2])


def test_blend_view_thins_token_names_that_cannot_fit(qtbot):
    from qkv_studio.core.scene import Scene

    rng = np.random.default_rng(0)
    n = 40
    scene = Scene.create([f"token{i}" for i in range(n)], q=rng.normal(size=(n, 2)), k=rng.normal(size=(n, 2)),
                         v=rng.normal(size=(n, 2)))
    view = shown(qtbot, BlendView(Session(scene)))
    view.resize(400, 300)
    qtbot.waitUntil(lambda: view._ticks is not None and 1 < len(view._ticks[0]) < n)
    assert view.bar_labels.labels() == []  # more than 16 bars: no numbers over them


def test_calc_table_puts_the_numbers_before_long_vectors(qtbot):
    from qkv_studio.core.scene import Scene

    rng = np.random.default_rng(1)
    scene = Scene.create(list("abcd"), q=rng.normal(size=(4, 8)), k=rng.normal(size=(4, 8)),
                         v=rng.normal(size=(4, 8)))
    session = Session(scene)
    table = CalcTable(session)
    qtbot.addWidget(table)
    assert table.calc_model.shown_columns() == ("token", "score", "scaled", "weight", "key", "value")
    session.set_stage("output")
    flush_pending()
    assert table.calc_model.shown_columns() == ("token", "score", "scaled", "weight", "key", "value", "weighted")
    col = table.calc_model.columns().index("weight")
    weights = [float(table.calc_model.index(j, col).data()) for j in range(4)]
    np.testing.assert_allclose(weights, session.result.weights[session.query], atol=0.006)
    assert table.calc_model.index(0, table.calc_model.columns().index("key")).data().endswith("… (8)]")
    # an edit of the query's own vector tells the view about the number columns only, not the vectors
    session.set_value("Q", session.query, 0, 2.5)
    session.flush()
    told = []
    table.calc_model.dataChanged.connect(lambda a, b, *_: told.append((a.column(), b.column())))
    best = int(np.argmax(session.result.weights[session.query]))
    session.set_value("Q", session.query, 0, 2.51)  # (the best key stays: its row is not re-emboldened)
    session.flush()
    assert int(np.argmax(session.result.weights[session.query])) == best
    cols = table.calc_model.columns()
    changed = {c for first, last in told for c in range(first, last + 1)}
    assert told and changed == {cols.index(c) for c in ("score", "scaled", "weight", "weighted")}


def test_calc_table_keeps_its_scroll_bar_through_the_stages_when_the_last_one_needs_it(qtbot, session):
    from qkv_studio.core.scene import Scene

    rng = np.random.default_rng(2)
    wide = Session(Scene.create(list("abcd"), q=rng.normal(size=(4, 8)), k=rng.normal(size=(4, 8)),
                                v=rng.normal(size=(4, 8))), view=View(stage="scores"))
    table = CalcTable(wide)
    qtbot.addWidget(table)
    table.resize(520, 300)
    table.show()
    qtbot.waitExposed(table)
    table.fit_columns()
    visible = sum(table.columnWidth(c) for c in range(table.calc_model.columnCount()))
    assert visible < table.viewport().width()  # the scores stage's columns fit…
    assert table.horizontalScrollBarPolicy() == Qt.ScrollBarAlwaysOn  # …but the rows will not jump later
    from PySide6.QtCore import SIGNAL

    def relayouts() -> int:  # the scroll area's show-or-hide re-layout on each range change
        return table.horizontalScrollBar().receivers(SIGNAL("rangeChanged(int,int)"))

    assert relayouts() == 0  # (a bar that is always on has nothing to show or hide)
    table.resize(1400, 300)  # wide enough for every stage: the bar comes and goes as Qt sees fit
    qtbot.waitUntil(lambda: table.horizontalScrollBarPolicy() == Qt.ScrollBarAsNeeded, timeout=1000)
    assert relayouts() == 1
    table.resize(520, 300)
    qtbot.waitUntil(lambda: table.horizontalScrollBarPolicy() == Qt.ScrollBarAlwaysOn, timeout=1000)
    assert relayouts() == 0
    rows_at = table.viewport().geometry()
    wide.set_stage("output")
    flush_pending()
    assert table.viewport().geometry() == rows_at
    # a table whose every stage fits has no scroll bar
    narrow = shown(qtbot, CalcTable(session))
    narrow.resize(700, 300)
    narrow.fit_columns()
    assert narrow.horizontalScrollBarPolicy() == Qt.ScrollBarAsNeeded
    assert not narrow.horizontalScrollBar().isVisible()


def test_blend_bars_are_in_the_key_colour_the_best_one_full(qtbot, session):
    from PySide6.QtGui import QColor

    view = shown(qtbot, BlendView(session))
    key = QColor(view._theme.key_color)
    best_brush = view.best_bar.opts["brush"].color()
    other_brush = view.bars.opts["brush"].color()
    assert best_brush.rgb() == key.rgb() and best_brush.alpha() == 255
    assert other_brush.rgb() == key.rgb() and other_brush.alpha() < 255
    assert best_brush.rgb() != QColor(view._theme.query_color).rgb()  # pink is the query's, not a key's
    assert view.best_bar.opts["x"] == [1]  # "cat", the best match of "sat"


def test_tokens_list_has_room_for_every_token_of_a_short_scene(qtbot, session):
    panel = shown(qtbot, TokensPanel(session), size=(300, 60))  # squeezed: the list keeps its minimum
    view = panel.view
    rows_shown = lambda: (view.minimumHeight() - 2 * view.frameWidth()) // view.sizeHintForRow(0)  # noqa: E731
    assert rows_shown() >= 4
    session.insert_token(4, "rug")
    assert rows_shown() >= 5
    for name in ("a", "b", "c"):
        session.insert_token(0, name)
    assert 6 <= rows_shown() < 7  # beyond six tokens the list scrolls instead of growing


def test_blend_plots_stack_in_a_narrow_dock_and_keep_every_name(qtbot, session):
    view = shown(qtbot, BlendView(session), size=(900, 500))
    assert not view.plots_stacked()
    view.resize(280, 520)
    qtbot.waitUntil(view.plots_stacked)
    # (every name whole in one row once stacked; mid-resize, at half the width, they were in two rows)
    qtbot.waitUntil(lambda: view._ticks is not None and [name for _, name in view._ticks[0]]
                    == ["the", "cat", "sat", "mat"])
    assert view.bars_plot.width() > 220  # each plot as wide as the dock


def test_blend_plots_stack_in_a_tall_dock_the_values_plot_taller(qtbot, session):
    view = shown(qtbot, BlendView(session), size=(900, 500))
    assert not view.plots_stacked()
    view.resize(520, 900)  # wide enough for both side by side, but each would be a thin strip
    qtbot.waitUntil(view.plots_stacked)
    qtbot.waitUntil(lambda: view.values_plot.height() > 1.3 * view.bars_plot.height(), timeout=2000)
    (_, _), (y0, y1) = view.values_plot.getViewBox().viewRange()
    assert y1 - y0 < 4.5  # the values (within ±1) fill the plot instead of a third of it
    view.resize(900, 500)
    qtbot.waitUntil(lambda: not view.plots_stacked())


def test_blend_names_among_the_vectors_grow_less_than_the_rest(qtbot, session):
    from qkv_studio.ui.panels.blend_view import LABEL_SCALE_MAX

    view = shown(qtbot, BlendView(session, appearance=Appearance(font_scale=2.2)), size=(900, 700))  # projector type
    flush_pending()
    label = view.value_labels.items[0]
    assert label.textItem.font().pointSizeF() == pytest.approx(11 * LABEL_SCALE_MAX)
    assert view.bars_plot.getAxis("left").style["tickFont"].pointSizeF() == pytest.approx(11 * 2.2)


def test_calculation_columns_keep_their_widths_and_the_dock_fits_a_short_table(qtbot, lesson_scene, show_window):
    window = show_window(lesson_scene, (1920, 1080), view=LESSON_VIEW)
    window.layout_docks()
    qtbot.wait(50)
    table, header = window.panels.calc, window.panels.calc.horizontalHeader()
    weight = table.calc_model.columns().index("weight")
    # the weights stand beside the other numbers, not at the dock's far edge
    assert header.sectionSize(weight) < 2 * table._delegate.text_width(1, weight) + 40
    # a four-token table: the dock is as tall as its rows, the blend view has the rest
    assert window.docks.calc.height() < table.content_height() + 80
    assert window.docks.blend.height() > 2 * window.docks.calc.height()
    assert table.verticalScrollBar().maximum() == 0  # every row in view
    # the dock is as wide as the last stage's table: no scroll bar at any stage
    window.session.set_stage("output")
    flush_pending()
    qtbot.wait(20)
    assert not table.horizontalScrollBar().isVisible()
    assert table.viewport().width() >= sum(table.columnWidth(c) for c in range(table.calc_model.columnCount()))


def test_token_list_and_editor_titles_follow_the_theme_legibly(qtbot, lesson_scene, show_window):
    from PySide6.QtGui import QPalette

    window = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
    view = window.tokens_panel.view
    query_row = window.editors["Q"].model.index(window.session.query, 0).data(Qt.ItemDataRole.BackgroundRole)
    for theme in ("light", "dark", "projector"):
        window.apply_theme(theme)
        palette = view.palette()
        # pink like the query's row in the editors beneath it, not the style's blue selection
        assert palette.color(QPalette.ColorRole.Highlight) == query_row.color()
        assert palette.color(QPalette.ColorRole.HighlightedText).lightness() < 60
        calc_base = window.panels.calc.viewport().palette().color(QPalette.ColorRole.Base)
        assert palette.color(QPalette.ColorRole.Base) == calc_base
        # and each editor's hint ("what each token is looking for") in the theme's muted text colour
        from qkv_studio.render.theme import get_theme

        hint = "#666666" if theme == "light" else get_theme(theme).muted
        assert f"color:{hint}" in window.editors["Q"].title.text()


def test_a_stage_brings_its_view_forward_when_it_is_a_tab_behind_another(qtbot, lesson_scene, show_window):
    """At 1600×950 the vector plane is a tab behind the blend: the Vectors stage shows the plane (it
    showed the blend's empty bars), the blend stage the blend; a score stage leaves the tabs alone."""
    window = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
    qtbot.waitUntil(lambda: not window.docks.blend.visibleRegion().isEmpty(), timeout=2000)
    assert window.docks.plane in window.tabifiedDockWidgets(window.docks.blend)
    window.session.set_stage("vectors")
    qtbot.waitUntil(lambda: not window.docks.plane.visibleRegion().isEmpty(), timeout=2000)
    assert window.docks.blend.visibleRegion().isEmpty()
    window.session.set_stage("scores")
    qtbot.wait(50)
    assert not window.docks.plane.visibleRegion().isEmpty()
    window.session.set_stage("output")
    qtbot.waitUntil(lambda: not window.docks.blend.visibleRegion().isEmpty(), timeout=2000)
    assert window.docks.plane.visibleRegion().isEmpty()


def test_a_narrow_table_shortens_its_headings_and_names_them_in_full_on_hover(qtbot, show_window, lesson_scene):
    """A compact table (a folded column, a slide): a heading wider than its numbers even on two lines
    shows its symbol ("w"), the whole heading on hover; every column still as wide as its numbers."""
    from tests.views import LESSON_VIEW

    window = show_window(lesson_scene, view=LESSON_VIEW)
    table, model = window.panels.calc, window.panels.calc.calc_model
    table.set_compact(False)
    col = model.columns().index("weight")
    assert model.headerData(col, Qt.Horizontal) == "weight w"
    wide = table.content_width(through="output")
    table.set_compact(True)
    assert model.headerData(col, Qt.Horizontal) == "w"
    assert model.headerData(col, Qt.Horizontal, Qt.ToolTipRole) == "weight w"
    assert table.content_width(through="output") < wide
    fm = table.fontMetrics()
    for c in range(model.columnCount()):
        if not table.isColumnHidden(c):
            widest = max(fm.horizontalAdvance(model.index(r, c).data() or "") for r in range(model.rowCount()))
            assert table.columnWidth(c) >= widest, model.columns()[c]
