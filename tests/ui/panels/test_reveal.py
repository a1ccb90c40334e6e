"""The reveal follows the stage (issue 18, item 5): no view shows the results of a stage not yet
reached — the blend view's weights and output, the vector plane's best match and output arrow — unless
every stage is shown at once (View → Show all stages at once)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from qkv_studio.core import STAGES, load_preset
from qkv_studio.ui.panels.blend_view import BlendView
from qkv_studio.ui.panels.plane import VectorPlane
from qkv_studio.ui.update_policy import settle as settle_now
from qkv_studio.ui.widgets.frame_throttle import flush_pending
from tests.views import LESSON_VIEW

_NUMBER = re.compile(r"\d\.\d")  # a weight or an output component written out ("0.54", "[1.2, …]")


@pytest.fixture(autouse=True)
def _deleted_after():
    """After each test (and after pytest-qt closed its widgets): the closed panels deleted now, while
    their Python objects are whole — left to the garbage collector, a panel was torn down inside a later
    test's event, its event filters' attributes already cleared."""
    yield
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, (BlendView, VectorPlane)) and not widget.isVisible():
            widget.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _shown(qtbot, widget, size=(800, 500)):
    qtbot.addWidget(widget, before_close_func=_settle)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    flush_pending()
    return widget


def _settle(widget) -> None:
    """Before the widget goes: its next-frame redraw and the re-layouts its new texts posted are done."""
    settle_now(widget)
    widget.hide()
    QApplication.processEvents()


def _at(session, stage):
    session.set_stage(stage)
    flush_pending()


def _blend_shows(view) -> tuple[bool, bool]:
    """(weights, output) as the blend view draws them: bars with their numbers, the output arrow."""
    weights = (view.bars.isVisible() and view.best_bar.isVisible() and view.bar_labels.isVisible()
               and bool(view.bar_labels.labels()))
    output = view._arrow.isVisible() and view._head.isVisible() and view._out_label.isVisible()
    return weights, output


def _plane_shows_output(plane) -> bool:
    xs, _ = plane._output_item.getData()
    drawn = xs is not None and len(xs) > 0
    assert drawn == ("output (blend)" in plane.label_texts()) == plane.output_shown()
    return drawn


@pytest.mark.parametrize("stage", ["vectors", "scores", "scaled"])
def test_before_the_softmax_the_blend_shows_no_weight_and_no_output(qtbot, session, stage):
    view = _shown(qtbot, BlendView(session))
    _at(session, stage)
    assert _blend_shows(view) == (False, False)
    assert not _NUMBER.search(view.title.text()), view.title.text()  # not "cat most (0.54)"
    assert "cat" not in view.title.text()


def test_the_softmax_stage_shows_the_weights_and_the_blend_stage_the_output(qtbot, session):
    view = _shown(qtbot, BlendView(session))
    _at(session, "weights")
    assert _blend_shows(view) == (True, False)
    assert "0.54" in view.title.text() and "[" not in view.title.text()
    _at(session, "output")
    assert _blend_shows(view) == (True, True)
    out = session.result.output[session.query]
    assert "0.54" in view.title.text() and f"{out[0]:.2f}"[:3] in view.title.text()
    _at(session, "vectors")  # and back: hidden again
    assert _blend_shows(view) == (False, False)


@pytest.mark.parametrize("stage", ["vectors", "scores"])
def test_before_the_blend_the_plane_draws_no_output_arrow_and_no_weight(qtbot, session, stage):
    plane = VectorPlane(session)
    _shown(qtbot, plane, (900, 700))
    _at(session, stage)
    assert not _plane_shows_output(plane)
    assert "0.54" not in plane.info.text()
    if stage == "vectors":  # nothing scored yet: no best match either
        assert "best match" not in plane.info.text()
        xs, _ = plane._best_item.getData()
        assert xs is None or len(xs) == 0
    else:
        assert "best match" in plane.info.text() and "k cat" in plane.info.text()


def test_the_plane_draws_the_output_at_the_blend_stage(qtbot, session):
    plane = VectorPlane(session)
    _shown(qtbot, plane, (900, 700))
    _at(session, "output")
    assert _plane_shows_output(plane)
    xs, ys = plane._output_item.getData()
    out = session.result.output[session.query]
    assert np.isclose(xs[1], out[0]) and np.isclose(ys[1], out[1])
    _at(session, "scores")
    assert not _plane_shows_output(plane)


def test_showing_all_stages_at_once_shows_everything_at_every_stage(qtbot, session):
    view = _shown(qtbot, BlendView(session))
    plane = VectorPlane(session)
    _shown(qtbot, plane, (900, 700))
    view.set_show_all_stages(True)
    plane.set_show_all_stages(True)
    for stage in STAGES:
        _at(session, stage)
        assert _blend_shows(view) == (True, True), stage
        assert "0.54" in view.title.text(), stage
        assert _plane_shows_output(plane), stage
        assert "0.54" in plane.info.text(), stage
    _at(session, "scores")
    view.set_show_all_stages(False)
    plane.set_show_all_stages(False)
    flush_pending()
    assert _blend_shows(view) == (False, False) and not _plane_shows_output(plane)


def test_the_view_menu_option_is_remembered_and_drives_both_views(qtbot, lesson_scene):
    from qkv_studio.ui.window.main_window import MainWindow

    first = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(first)
    assert first.acts.show_all_stages.isCheckable() and not first.acts.show_all_stages.isChecked()
    assert first.acts.show_all_stages in first.menu_by_title["&View"].actions()
    first.session.set_stage("scores")
    first.show()
    qtbot.waitExposed(first)
    flush_pending()
    model = first.panels.calc.calc_model
    assert _blend_shows(first.panels.blend) == (False, False)
    assert "weight" not in model.shown_columns()
    first.acts.show_all_stages.trigger()
    flush_pending()
    assert _blend_shows(first.panels.blend) == (True, True) and first.panels.plane.output_shown()
    assert model.shown_columns() == model.columns()  # the calculation table's every column too
    hidden = [model.columns()[c] for c in range(len(model.columns())) if first.panels.calc.isColumnHidden(c)]
    assert set(hidden) == first.panels.calc.left_out()  # (none but a vector column its width cannot show whole)
    second = MainWindow(load_preset("lesson"), view=LESSON_VIEW)  # (settings on: it reads what the first one stored)
    qtbot.addWidget(second)
    assert second.acts.show_all_stages.isChecked()
    second.session.set_stage("vectors")
    second.show()
    qtbot.waitExposed(second)
    flush_pending()
    assert _blend_shows(second.panels.blend) == (True, True)
    assert second.panels.calc.calc_model.shown_columns() == second.panels.calc.calc_model.columns()
    second.acts.show_all_stages.trigger()  # off again: the vectors stage shows its own columns only
    flush_pending()
    assert _blend_shows(second.panels.blend) == (False, False)
    assert second.panels.calc.calc_model.shown_columns() == ("token", "key", "value")
