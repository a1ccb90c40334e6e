"""Hovering a heatmap cell shows its computation (from core), outlines it and names its row and column."""

from PySide6.QtCore import QPoint

from tests.ui.panels.heatmap_helpers import preset_session, settle, shown


def _hover(qtbot, view, row, col):
    """Move the mouse onto the cell (pyqtgraph ignores moves closer together than its rate limit: moved
    again, a pixel apart, until the view has seen one)."""
    centre = view.cell_center(row, col)
    moves = iter(range(1000))

    def arrived() -> bool:
        qtbot.mouseMove(view.graphics.viewport(), centre + QPoint(next(moves) % 2, 0))
        return view.hovered_cell() == (row, col)

    qtbot.waitUntil(arrived, timeout=3000)


def test_hovering_a_cell_reads_out_its_computation_at_each_stage(qtbot):
    session = preset_session("lesson")
    view = shown(qtbot, session)
    sat, cat = session.scene.tokens.index("sat"), session.scene.tokens.index("cat")
    _hover(qtbot, view, sat, cat)
    text = view.hover.text(sat, cat)
    lines = text.splitlines()
    assert lines[0] == "query “sat” → key “cat”"
    assert lines[-1].startswith("w(sat→cat) = exp(") and lines[-1].endswith("= 0.54")
    assert view.hover.readout.isVisible() and view.hover.readout_text() == text
    assert view.hover.readout.geometry().intersects(view.graphics.geometry().translated(-view.graphics.pos()))
    session.set_stage("scores")
    assert view.hover.text(sat, cat).splitlines()[-1].startswith("q·k = ")
    session.set_stage("scaled")
    assert view.hover.text(sat, cat).splitlines()[-1].startswith("÷ √2: ")


def test_the_hovered_cell_is_outlined_and_named_on_a_thinned_axis(qtbot):
    session = preset_session("long")
    view = shown(qtbot, session, (480, 380))
    assert view.labeller.rows.step > 1
    row, col = 41, 17
    _hover(qtbot, view, row, col)
    settle(qtbot, view)
    assert row in dict(view.plot.getAxis("left").shown_labels())
    assert col in dict(view.plot.getAxis("top").shown_labels())
    assert session.query in dict(view.plot.getAxis("left").shown_labels())  # the query keeps its name
    view.hover.leave()
    assert view.hovered_cell() is None and not view.hover.readout.isVisible()


def test_hovering_never_edits_the_session(qtbot):
    session = preset_session("lesson")
    view = shown(qtbot, session)
    before = (session.query, session.stage, session.undo_stack.count())
    _hover(qtbot, view, 0, 3)
    _hover(qtbot, view, 3, 0)
    assert (session.query, session.stage, session.undo_stack.count()) == before
