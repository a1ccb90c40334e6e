"""The main window end to end: typing, keys, undo, title, files, prompts, 1024 tokens."""


import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit, QMessageBox

from qkv_studio.core import Scene, read_session
from qkv_studio.ui.window.main_window import MainWindow
from tests.views import LESSON_VIEW


def test_opens_on_the_lesson_with_its_numbers(window):
    s = window.session
    assert s.scene.tokens == ("the", "cat", "sat", "mat") and s.query == 2 and s.stage == "weights"
    assert np.round(s.result.weights[2], 2).tolist() == [0.06, 0.54, 0.13, 0.27]
    texts = {t for (_, _, t) in window.heatmap.cell_texts()}
    assert {"0.06", "0.54", "0.13", "0.27"} <= texts


def test_typing_in_a_q_cell_updates_session_heatmap_and_table(qtbot, window):
    table = window.editors["Q"].table
    index = table.model().index(2, 0)
    table.setCurrentIndex(index)
    table.edit(index)
    line = table.findChild(QLineEdit)
    line.clear()
    qtbot.keyClicks(line, "3")
    qtbot.keyClick(line, Qt.Key_Return)
    qtbot.waitUntil(lambda: table.state() != QAbstractItemView.EditingState, timeout=1000)
    s = window.session
    assert s.scene.q[2].tolist() == [3.0, 2.0]
    qtbot.waitUntil(lambda: np.array_equal(window.heatmap.displayed_matrix(), s.result.weights), timeout=1000)
    calc = window.panels.calc.calc_model
    col = calc.columns().index("weight")
    shown = [calc.index(j, col).data() for j in range(4)]
    assert shown == [f"{w:.2f}" for w in s.result.weights[2]]
    assert shown != ["0.06", "0.54", "0.13", "0.27"]


def test_keys_step_stages_and_move_the_query(qtbot, window):
    s = window.session
    window.heatmap.setFocus()
    qtbot.keyClick(window, Qt.Key_Right)
    assert s.stage == "output"
    qtbot.keyClick(window, Qt.Key_Left)
    qtbot.keyClick(window, Qt.Key_PageUp)
    assert s.stage == "scaled"
    qtbot.keyClick(window, Qt.Key_Space)
    assert s.stage == "weights"
    qtbot.keyClick(window, Qt.Key_Home)
    assert s.stage == "vectors"
    qtbot.keyClick(window, Qt.Key_End)
    assert s.stage == "output"
    qtbot.keyClick(window, Qt.Key_Up)
    assert s.query == 1
    qtbot.keyClick(window, Qt.Key_Down)
    qtbot.keyClick(window, Qt.Key_Down)
    assert s.query == 3
    qtbot.keyClick(window, Qt.Key_1)
    assert s.query == 0
    assert s.undo_stack.count() == 0


def test_projection_editors_are_built_when_projection_mode_opens_their_page(qtbot, window):
    editors = window.editors
    assert [e.name for e in editors.built()] == ["Q", "K", "V"]  # the hidden page waits
    window.apply_theme("projector")
    window.acts.projection.trigger()
    assert window.session.scene.mode == "projection"
    assert [e.name for e in editors.built()] == ["Q", "K", "V", "X", "Wq", "Wk", "Wv"]
    assert window.editor_tabs.currentIndex() == 1 and window.editor_tabs.tabBar().isVisible()
    x = editors["X"]
    qtbot.waitUntil(x.isVisible, timeout=1000)
    # its numbers are the scene's, in the window's theme and row height, like the editors built first
    s = window.session.scene
    assert np.allclose(x.model.matrix(), s.x)
    for name in ("Wq", "Wk", "Wv"):
        table = editors[name].table
        assert type(table.style()) is type(editors["Q"].table.style())
        assert (table.verticalHeader().defaultSectionSize()
                == editors["Q"].table.verticalHeader().defaultSectionSize())


def test_arrow_keys_inside_a_table_keep_their_meaning(qtbot, window):
    table = window.editors["K"].table
    table.setFocus()
    table.setCurrentIndex(table.model().index(0, 0))
    qtbot.keyClick(table, Qt.Key_Down)
    assert table.currentIndex().row() == 1
    assert window.session.query == 2 and window.session.stage == "weights"


def test_undo_redo_by_shortcut_and_menu_text(qtbot, window):
    s = window.session
    s.set_value("K", 1, 0, 5.0)
    assert window.acts.undo.text().startswith("&Undo Edit K[cat, 1]") or "Edit K[cat, 1]" in window.acts.undo.text()
    qtbot.keyClick(window, Qt.Key_Z, Qt.ControlModifier)
    assert s.scene.k[1, 0] == 2.0
    qtbot.keyClick(window, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert s.scene.k[1, 0] == 5.0


def test_title_shows_file_and_modified_mark(qtbot, window, tmp_path):
    assert window.windowTitle().startswith("The lesson's example[*]")
    assert not window.isWindowModified()
    window.session.set_value("V", 0, 0, 2.0)
    assert window.isWindowModified()
    path = tmp_path / "mine.qkv.json"
    assert window._write(str(path))
    assert window.windowTitle().startswith("mine.qkv.json")
    assert not window.isWindowModified()
    assert read_session(path).scene.v[0, 0] == 2.0


def test_open_refuses_a_bad_file_and_keeps_the_work(qtbot, window, tmp_path, monkeypatch):
    bad = tmp_path / "bad.qkv.json"
    bad.write_text('{"format": "qkv-studio-session", "version": 1, "tokens": ["a"], '
                   '"Q": [["x"]], "K": [[1]], "V": [[1]]}')
    messages = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: messages.append(a[2]))
    window.session.set_value("Q", 0, 0, 9.0)
    before = window.session.scene
    assert not window.open_path(str(bad), ask=False)
    assert window.session.scene is before
    assert messages and "bad.qkv.json" in messages[0] and "Q row 1, column 1" in messages[0]


def test_unsaved_changes_prompt_on_new_can_cancel(qtbot, window, monkeypatch):
    window.session.set_value("Q", 0, 0, 9.0)
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Cancel)
    window.new_scene()
    assert window.session.scene.q[0, 0] == 9.0
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Discard)
    window.open_preset("causal")
    assert window.session.scene.mask == "causal"
    assert not window.session.modified


def test_causal_action_and_scale_action(qtbot, window):
    window.acts.causal.trigger()
    s = window.session
    assert s.scene.mask == "causal"
    assert s.result.weights[0, 1:].tolist() == [0, 0, 0]
    window.acts.scale.trigger()
    assert not s.scene.scale
    s.undo_stack.undo()
    s.undo_stack.undo()
    assert s.scene.mask == "none" and s.scene.scale


def test_1024_tokens_open_and_edit(qtbot):
    rng = np.random.default_rng(1)
    n = 1024
    scene = Scene.create([f"w{i}" for i in range(n)], q=rng.normal(size=(n, 64)), k=rng.normal(size=(n, 64)),
                         v=rng.normal(size=(n, 16)))
    w = MainWindow(scene, use_settings=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.session.set_value("Q", 5, 5, 3.0)
    w.session.flush()
    QApplication.processEvents()
    assert np.array_equal(w.heatmap.displayed_matrix(), w.session.result.weights)
    assert len(w.findChildren(QLineEdit)) < 20  # no widget per cell


def test_settings_remember_theme_and_layout(qtbot, lesson_scene):
    a = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(a)
    a.show()
    a.apply_theme("dark")
    a.docks.plane.hide()
    a.close()
    b = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(b)
    b.show()
    assert b.theme_actions["dark"].isChecked()
    assert not b.docks.plane.isVisible()


@pytest.mark.parametrize("theme", ["dark", "projector"])
def test_themes_colour_the_window_without_a_window_style_sheet(window, theme):
    from PySide6.QtGui import QPalette

    from qkv_studio.render.theme import get_theme

    t = get_theme(theme)
    window.apply_theme(theme)
    # a style sheet on the window would make every table cell paint through the style-sheet style
    assert window.styleSheet() == ""
    caption = window.stepper.caption
    assert caption.palette().color(caption.foregroundRole()).name() == t.text  # readable on the panel
    assert window.panels.calc.viewport().palette().color(QPalette.ColorRole.Base).name() == t.background
    assert window.panels.calc._grid_pen.color().name() == t.grid  # grid lines seen on black too
    checked = window.stepper.stage_buttons[window.session.stage]
    assert t.accent in checked.styleSheet()
    # dialogs and message boxes are windows of their own: the application's palette carries the theme
    from PySide6.QtWidgets import QDialog

    dialog = QDialog(window)
    assert dialog.palette().color(QPalette.ColorRole.Window).name() == t.panel
    dialog.deleteLater()
    window.apply_theme("light")
    assert QApplication.palette().color(QPalette.ColorRole.Window).name() != t.panel
    assert window.panels.calc._grid_pen.color().name() != t.grid
    # the current stage's button stands out in the light theme too, in the formula's colour, and a
    # button with a sheet keeps the window's size of text (it would take the application's)
    light = get_theme("light")
    button = window.stepper.stage_buttons[window.session.stage]
    assert f"QPushButton:checked {{ background: {light.highlight}" in button.styleSheet()
    assert button.fontInfo().pixelSize() == window.fontInfo().pixelSize()


@pytest.mark.parametrize("theme", ["light", "projector"])
def test_the_current_stage_button_shows_its_whole_label_in_a_small_window(show_window, lesson_scene, theme):
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QStyle, QStyleOptionButton

    window = show_window(lesson_scene, (1280, 720), view=LESSON_VIEW)
    window.apply_theme(theme)
    QApplication.processEvents()
    # its filled box had wide padding: "softmax" showed as "oftma" at 1280 × 720
    for stage in ("vectors", "weights", "output"):
        window.session.set_stage(stage)
        QApplication.processEvents()
        button = window.stepper.stage_buttons[window.session.stage]
        assert button.isChecked()
        option = QStyleOptionButton()
        button.initStyleOption(option)
        inside = button.style().subElementRect(QStyle.SubElement.SE_PushButtonContents, option, button)
        # (the style's contents rectangle keeps a few pixels of margin inside the padding)
        assert inside.width() + 4 >= QFontMetrics(button.font()).horizontalAdvance(button.text()), button.text()


@pytest.mark.perf
def test_the_docks_are_laid_out_before_the_first_show_so_each_plot_is_sized_once(qtbot, lesson_scene):
    from PySide6.QtCore import QEvent, QObject

    class Resizes(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.sizes: dict[str, list] = {}

        def eventFilter(self, obj, event) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Resize:
                self.sizes.setdefault(obj.objectName(), []).append(event.size().toTuple())
            return False

    window = MainWindow(lesson_scene, use_settings=False, view=LESSON_VIEW)
    qtbot.addWidget(window)
    window.resize(1920, 1080)
    watch = Resizes()
    for name, view in (("heatmap", window.heatmap.graphics), ("plane", window.panels.plane.plot_widget)):
        view.setObjectName(name)
        view.installEventFilter(watch)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    # one resize each, to the size they keep (a layout made after the show resized them twice)
    assert {name: len(sizes) for name, sizes in watch.sizes.items()} == {"heatmap": 1, "plane": 1}
    assert watch.sizes["heatmap"][0] == window.heatmap.graphics.size().toTuple()
    # and the calculation dock is as wide as its table (measured before the first show)
    assert window.docks.calc.width() >= window.panels.calc.content_width()
