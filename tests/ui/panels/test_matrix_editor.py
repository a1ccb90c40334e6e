"""Q/K/V editors: typing, refusing bad text, nudging, paste, highlighting, no echo."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit

from qkv_studio.core import Scene
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.matrix_editor import MatrixEditor
from tests.views import LESSON_VIEW


@pytest.fixture
def q_editor(qtbot, session):
    w = MatrixEditor(session, "Q")
    qtbot.addWidget(w)
    w.resize(400, 300)
    w.show()
    qtbot.waitExposed(w)
    return w


def type_into(qtbot, editor, row, col, text):
    table = editor.table
    index = table.model().index(row, col)
    table.setCurrentIndex(index)
    table.edit(index)
    line = table.findChild(QLineEdit)
    assert line is not None, "no cell editor opened"
    line.clear()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key_Return)
    # the delegate commits through a queued call
    qtbot.waitUntil(lambda: table.state() != QAbstractItemView.EditingState, timeout=1000)


def test_typing_a_number_edits_the_session(qtbot, session, q_editor):
    type_into(qtbot, q_editor, 2, 0, "2.5")
    assert session.scene.q[2, 0] == 2.5
    assert q_editor.table.model().index(2, 0).data() == "2.5"
    assert session.undo_stack.count() == 1


@pytest.mark.parametrize("text", ["abc", "nan", "1e999", "-inf", ""])
def test_bad_text_is_refused_with_a_message_and_the_value_stays(qtbot, session, q_editor, text):
    type_into(qtbot, q_editor, 2, 1, text)
    assert session.scene.q[2, 1] == 2.0
    assert session.undo_stack.count() == 0
    assert q_editor.message.isVisibleTo(q_editor)
    assert "stays 2" in q_editor.message.text()


def test_row_headers_are_tokens_and_query_row_is_highlighted(session, q_editor):
    model = q_editor.table.model()
    assert [model.headerData(i, Qt.Vertical) for i in range(4)] == ["the", "cat", "sat", "mat"]
    assert model.index(2, 0).data(Qt.BackgroundRole) is not None
    assert model.index(1, 0).data(Qt.BackgroundRole) is None
    session.set_query(1)
    assert model.index(1, 0).data(Qt.BackgroundRole) is not None
    assert model.index(2, 0).data(Qt.BackgroundRole) is None


def test_alt_arrow_nudges_and_nudges_merge(qtbot, session, q_editor):
    table = q_editor.table
    table.setFocus()
    table.setCurrentIndex(table.model().index(0, 0))
    for _ in range(3):
        qtbot.keyClick(table, Qt.Key_Up, Qt.AltModifier)
    assert session.scene.q[0, 0] == pytest.approx(0.3)
    qtbot.keyClick(table, Qt.Key_Down, Qt.AltModifier | Qt.ShiftModifier)
    assert session.scene.q[0, 0] == pytest.approx(-0.7)
    assert session.undo_stack.count() == 1


def test_paste_a_block_from_a_spreadsheet(qtbot, session, q_editor):
    table = q_editor.table
    table.setFocus()
    table.setCurrentIndex(table.model().index(1, 0))
    QApplication.clipboard().setText("7\t8\n9\t10\n")
    qtbot.keyClick(table, Qt.Key_V, Qt.ControlModifier)
    assert session.scene.q[1:3].tolist() == [[7, 8], [9, 10]]
    QApplication.clipboard().setText("1\t2\t3\n")
    qtbot.keyClick(table, Qt.Key_V, Qt.ControlModifier)
    assert "does not fit" in q_editor.message.text()
    assert session.scene.q[1:3].tolist() == [[7, 8], [9, 10]]


def test_model_updates_do_not_echo_back_as_edits(qtbot, session, q_editor):
    with qtbot.assertNotEmitted(session.undo_stack.indexChanged):
        session.set_query(0)
        session.set_stage("scores")
        session.flush()
        qtbot.wait(10)
    session.set_value("Q", 0, 0, 4.0)
    assert session.undo_stack.count() == 1
    assert q_editor.table.model().index(0, 0).data() == "4"


def test_dimension_buttons_change_dk_for_q_and_k_together(qtbot, session, q_editor):
    qtbot.mouseClick(q_editor.add_button, Qt.LeftButton)
    assert session.scene.q.shape == (4, 3) and session.scene.k.shape == (4, 3)
    assert q_editor.table.model().columnCount() == 3
    qtbot.mouseClick(q_editor.remove_button, Qt.LeftButton)
    qtbot.mouseClick(q_editor.remove_button, Qt.LeftButton)
    assert session.scene.d_k == 1
    qtbot.mouseClick(q_editor.remove_button, Qt.LeftButton)
    assert session.scene.d_k == 1


def test_1024_tokens_builds_no_widget_per_cell(qtbot):
    rng = np.random.default_rng(0)
    n = 1024
    scene = Scene.create([f"t{i}" for i in range(n)], q=rng.normal(size=(n, 64)), k=rng.normal(size=(n, 64)),
                         v=rng.normal(size=(n, 8)))
    s = Session(scene)
    w = MatrixEditor(s, "Q")
    qtbot.addWidget(w)
    w.show()
    assert w.table.model().rowCount() == 1024
    assert len(w.findChildren(QLineEdit)) == 0
    assert len(w.findChildren(type(w))) == 0
    s.set_value("Q", 1000, 63, 1.5)
    assert w.table.model().index(1000, 63).data() == "1.5"


def _rows_shown_whole(table) -> bool:
    return (not table.verticalScrollBar().isVisible()
            and table.viewport().height() == table.verticalHeader().length())


def test_the_window_editors_are_as_tall_as_their_rows_and_no_taller(qtbot, show_window, lesson_scene):
    """Q, K and V show every row and nothing under the last (an empty band there looked like a missing
    row from the back of a hall); a new token and a message make room again."""
    from qkv_studio.ui.widgets.frame_throttle import flush_pending

    window = show_window(lesson_scene, (1920, 1080), view=LESSON_VIEW)
    flush_pending()
    for name in "QKV":
        table = window.editors[name].table
        qtbot.waitUntil(lambda table=table: _rows_shown_whole(table), timeout=2000)
        assert table.height() == table.content_height() == table.maximumHeight()
    q = window.editors["Q"]
    before = q.table.maximumHeight()
    window.session.insert_token(4, "on")
    qtbot.waitUntil(lambda: q.table.maximumHeight() > before, timeout=2000)
    assert q.table.maximumHeight() - before == q.table.rowHeight(4)  # (room for it, if the dock has it)
    tall = q.maximumHeight()
    q.show_message("not a number: 'abc' in Q[the, 1]")
    qtbot.waitUntil(lambda: q.maximumHeight() > tall, timeout=2000)
    assert q.maximumHeight() - tall >= q.message.sizeHint().height()


def test_a_paste_the_scene_refuses_says_why_beside_the_table(qtbot):
    # Projection mode: a block whose X·W is beyond a double is refused by the scene itself; the editor
    # shows the reason as it does for a block it refuses (found by `make soak`, seed 1, action 8716).
    scene = Scene.create(["a", "b"], x=[[1.0, 1.0], [1.0, 1.0]], wq=[[1.0], [1.0]], wk=[[1.0], [1.0]],
                         wv=[[1.0], [1.0]])
    s = Session(scene)
    w = MatrixEditor(s, "X")
    qtbot.addWidget(w)
    w.show()
    before = s.scene
    assert not w.model.paste(w.model.index(0, 0), "1e308\t1e308\n")
    assert s.scene is before
    assert w.message.isVisible() and "paste into X" in w.message.text()
    assert w.model.paste(w.model.index(0, 0), "2\t3\n")  # a good block still goes in
    assert s.scene.matrix("X")[0].tolist() == [2.0, 3.0]


def test_a_narrow_editor_titles_its_matrix_by_name_and_keeps_the_hint_in_the_tooltip(qtbot, session):
    """A 230-px column cut "learned: d_model × dₖ" to "learned: d_mode": narrow, the title is the
    matrix's name (the shape beside it), the hint in its tooltip; wide, the hint is back."""
    from PySide6.QtGui import QTextDocument

    editor = MatrixEditor(session, "Q")
    qtbot.addWidget(editor)
    editor.resize(600, 200)
    editor.show()
    qtbot.waitExposed(editor)
    assert "what each token is looking for" in editor.title.text() and editor.title.toolTip() == ""
    editor.resize(150, 200)
    qtbot.waitUntil(lambda: "looking for" not in editor.title.text(), timeout=2000)
    assert "Query Q" in editor.title.text()
    assert editor.title.toolTip() == "Query Q: what each token is looking for"
    editor.layout().activate()
    doc = QTextDocument()
    doc.setDefaultFont(editor.title.font())
    doc.setDocumentMargin(0)
    doc.setHtml(editor.title.text())
    assert doc.idealWidth() <= editor.title.contentsRect().width() + 1  # (the name whole, on one line)
    editor.resize(600, 200)
    qtbot.waitUntil(lambda: "looking for" in editor.title.text(), timeout=2000)
    assert editor.title.toolTip() == ""


def test_a_short_column_titles_the_editors_on_one_line_so_every_row_shows(qtbot, show_window, lesson_scene):
    """A 1280×720 screen's window (its frame, menu and status bar taken: 1272×660 inside) left 3½ of Q's,
    K's and V's 4 rows in view behind scroll bars: there the titles take one line (the hint in the
    tooltip) and every row shows; in a taller window the hints are back."""
    from PySide6.QtGui import QFontMetrics

    from qkv_studio.ui.widgets.frame_throttle import flush_pending

    window = show_window(lesson_scene, (1272, 660), view=LESSON_VIEW)
    window.statusBar().showMessage("ready")
    flush_pending()
    for name in "QKV":
        editor = window.editors[name]
        qtbot.waitUntil(lambda t=editor.table: _rows_shown_whole(t), timeout=2000)
        assert not editor.table.verticalScrollBar().isVisible()
        # (the title on one line; its hint beside the name where the column is wide enough — the
        # editors under the table — else in the tooltip)
        line = QFontMetrics(editor.title.font()).lineSpacing()
        assert editor.title.height() < 1.5 * line, (name, editor.title.height(), line)
        assert "token" in editor.title.text() or "token" in editor.title.toolTip()
    # (a window as short beside the heatmap, the editors in their column on the left: the hints in
    # the tooltips, where on two lines they left a row behind each table's scroll bar)
    window = show_window(lesson_scene, (1400, 680), view=LESSON_VIEW)
    window.statusBar().showMessage("ready")
    for name in "QKV":
        editor = window.editors[name]
        qtbot.waitUntil(lambda e=editor: "token" not in e.title.text(), timeout=2000)
        assert "token" in editor.title.toolTip()
        qtbot.waitUntil(lambda t=editor.table: _rows_shown_whole(t), timeout=2000)
    window.resize(1600, 1000)
    q = window.editors["Q"]
    qtbot.waitUntil(lambda: "what each token is looking for" in q.title.text(), timeout=2000)
    for name in "QKV":
        qtbot.waitUntil(lambda t=window.editors[name].table: _rows_shown_whole(t), timeout=2000)


@pytest.mark.parametrize("edit", [None, -123.456, "font"])
def test_every_number_is_whole_in_a_narrow_editor(qtbot, edit):
    """dₖ = 8 in a 1024×768 window's editor column: the cells read "0.1…"; the columns keep the width of
    their numbers and the table scrolls sideways."""
    from PySide6.QtGui import QFontMetrics

    from qkv_studio.core import load_preset

    s = Session(load_preset("long"))
    w = MatrixEditor(s, "Q")
    qtbot.addWidget(w)
    w.resize(330, 300)
    w.show()
    qtbot.waitExposed(w)
    if edit == "font":  # (the window's fonts arrive after the editor is built)
        font = w.font()
        font.setPointSizeF(font.pointSizeF() * 1.5)
        w.setFont(font)
    elif edit is not None:
        s.set_value("Q", 0, 3, edit)
        s.flush()
    table = w.table
    fm = QFontMetrics(table.font())
    cut = []
    for r in range(3):
        for c in range(table.model().columnCount()):
            text = table.model().index(r, c).data()
            if fm.horizontalAdvance(text) > table.columnWidth(c) - 6:
                cut.append((r, c, text, table.columnWidth(c)))
    assert not cut, cut


def test_a_short_title_keeps_the_whole_one_in_its_tooltip_and_accessible_name(qtbot, session):
    w = MatrixEditor(session, "Q")
    qtbot.addWidget(w)
    w.resize(200, 300)  # (too narrow for "Query Q  what each token is looking for")
    w.show()
    qtbot.waitExposed(w)
    assert w.title.accessibleName() == "Query Q: what each token is looking for"
    assert "looking for" not in w.title.text() and "looking for" in w.title.toolTip()
