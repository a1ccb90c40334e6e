"""Q·Kᵀ cell by cell in the window: a click or K selects a cell, the caption works it out, K's row lights up."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QApplication

from qkv_studio.core import View, load_preset
from qkv_studio.ui.widgets.frame_throttle import flush_pending


def _caption(w) -> str:
    flush_pending()
    return w.stepper.caption_text()


def _press(qtbot, w, key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    """A key to whatever has the keyboard focus in the window, as a keyboard (or a clicker) sends it."""
    focus = QApplication.focusWidget()
    qtbot.keyClick(focus if focus is not None and w.isAncestorOf(focus) else w.stepper, key, modifiers)


def _lit_rows(editor_model) -> list[int]:
    return [r for r in range(editor_model.rowCount())
            if isinstance(editor_model.data(editor_model.index(r, 0), Qt.ItemDataRole.BackgroundRole), QBrush)]


def test_k_steps_through_the_cells_and_the_caption_works_each_out(qtbot, show_window):
    w = show_window(load_preset("lesson"), (1280, 720), view=View(2, "weights"))
    qtbot.waitUntil(w.isActiveWindow, timeout=2000)  # (the lecture keys follow the active window)
    w.set_presentation(True, fullscreen=False)
    _press(qtbot, w, Qt.Key_K)  # from softmax, K goes back to Q·Kᵀ and takes the query's first cell
    s = w.session
    assert (s.stage, s.query, s.cell_key) == ("scores", 2, 0)
    assert "q<sub>sat</sub> · k<sub>the</sub>" in _caption(w) and _caption(w).endswith("= 1×1 + 2×0 = 1")
    _press(qtbot, w, Qt.Key_K)
    assert s.cell_key == 1 and _caption(w).endswith("= 1×2 + 2×1 = 4")
    assert w.heatmap.selected_cell() == (2, 1)
    assert _lit_rows(w.editors["K"].model) == [1, 2]  # the key's row beside the query's own
    for _ in range(3):
        _press(qtbot, w, Qt.Key_K)
    assert (s.query, s.cell_key) == (3, 0)  # past the row's end: the next row
    _press(qtbot, w, Qt.Key_K, Qt.KeyboardModifier.ShiftModifier)
    assert (s.query, s.cell_key) == (2, 3)  # Shift+K: back


def test_a_click_on_a_cell_selects_it(qtbot, show_window):
    w = show_window(load_preset("lesson"), (1280, 720), view=View(0, "scaled"))
    hm = w.heatmap
    pos = hm.plot.vb.mapViewToScene(QPointF(1, 2))  # key column 1, query row 2
    view_pos = hm.graphics.mapFromScene(pos)
    qtbot.mouseClick(hm.graphics.viewport(), Qt.MouseButton.LeftButton, pos=view_pos)
    s = w.session
    assert (s.query, s.cell_key) == (2, 1)
    assert _caption(w).endswith("= 4, ÷ √2 = 2.828")
    s.set_stage("weights")  # a stage that is no longer Q·Kᵀ: no cell worked out, none outlined
    assert "Cell" not in _caption(w) and hm.selected_cell() is None


def test_a_new_scene_clears_the_cell(qtbot, show_window):
    w = show_window(load_preset("lesson"), (1280, 720), view=View(2, "scores"))
    w.session.select_cell(1)
    w.session.load(load_preset("long"))
    assert w.session.cell_key is None and "Cell" not in _caption(w)
