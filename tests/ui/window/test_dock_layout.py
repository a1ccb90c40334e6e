"""The default dock layout decided from the window's size class (issue 31 item 2)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QSize, Qt

from qkv_studio.core import load_preset
from qkv_studio.ui.widgets.scroll_column import ScrollColumn
from qkv_studio.ui.widgets.size_classes import size_class


def _rect_in(widget, ancestor) -> QRect:
    return QRect(widget.mapTo(ancestor, widget.rect().topLeft()), widget.size())


@pytest.mark.parametrize("preset", ["lesson", "multihead"])
def test_the_editors_tab_shows_rows_in_a_window_a_few_lines_high(qtbot, show_window, preset):
    """A 1920×1080 laptop at 200 % (a 960×500 window): the Editors tab showed the token list and no whole
    row of the first editor without scrolling."""
    window = show_window(load_preset(preset), (960, 500))
    window.layout_docks()
    qtbot.waitUntil(lambda: window.docks.editors.isVisible() and not window.docks.editors.visibleRegion().isEmpty(),
                    timeout=3000)
    assert size_class(QSize(window.width(), window.height()), window.font()).height.name == "cramped"
    column = window.docks.editors.findChild(ScrollColumn)
    view = column.viewport()
    editor = next(ed for ed in window.editors.built() if ed.isVisible())
    table = editor.table
    first_row = QRect(0, table.rowViewportPosition(0), table.viewport().width(), table.rowHeight(0))
    row = QRect(table.viewport().mapTo(view, first_row.topLeft()), first_row.size())
    assert column.verticalScrollBar().value() == 0
    assert view.rect().contains(row), (editor.name, row, view.rect())


def test_a_taller_window_shows_every_token_of_a_short_scene(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, (1280, 680))
    window.layout_docks()
    view = window.tokens_panel.view
    assert view.minimumHeight() >= 4 * view.sizeHintForRow(0)


def test_the_tables_vector_columns_show_whole_or_not_at_all(qtbot, show_window):
    """dₖ = 4 at 1024×768: the key and value columns were cut at the table's edge ("[−4.12, 0.64, … (");
    where they cannot show whole they are left out — the numbers whole, each token's vectors on hover —
    and a window with room shows them."""
    from qkv_studio.core import STAGES
    from qkv_studio.ui.widgets.frame_throttle import flush_pending

    for size, whole in (((1016, 728), False), ((1900, 1000), True)):
        window = show_window(load_preset("multihead"), size)
        window.layout_docks()
        table = window.panels.calc
        for stage in STAGES[1:]:
            window.session.set_stage(stage)
            window.session.flush()
            flush_pending()
            table.fit_columns()
            shown = [c for c in range(table.calc_model.columnCount()) if not table.isColumnHidden(c)]
            names = [table.calc_model.columns()[c] for c in shown]
            assert sum(table.columnWidth(c) for c in shown) <= table.viewport().width(), (size, stage, names)
            if whole and stage != STAGES[-1]:  # (the blend's w·vⱼ, a third vector, may be left out)
                assert not table.left_out() and "key" in names, (size, stage, names)
        if not whole:
            assert {"key", "value"} <= table.left_out()
            tip = table.calc_model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
            assert tip.startswith("k = [") and "v = [" in tip


def test_a_shortened_table_heading_keeps_the_whole_one_for_hover_and_screen_readers(qtbot, show_window, lesson_scene):
    from qkv_studio.ui.panels.calc_table import HEADERS

    window = show_window(lesson_scene, (1016, 728))
    window.layout_docks()
    model = window.panels.calc.calc_model
    for c, name in enumerate(model.columns()):
        for role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            assert model.headerData(c, Qt.Orientation.Horizontal, role) == HEADERS[name]
