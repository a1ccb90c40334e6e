"""Every input path of issue 7 item 3, on the real window: refused with a clear message, work untouched.

cells · tokens · sizes · files · command line.  (The monkey test throws the same inputs at random.)
"""

import errno
import os
import tempfile

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit

from qkv_studio import cli, reliability
from qkv_studio.core import Scene, load_preset, preset_document, read_session, write_session
from qkv_studio.export.figures import ensure_app, resolve_options, svg_bytes
from qkv_studio.ui.window.main_window import MainWindow

from ..core.bad_files import BAD, BAD_IDS


def status(window) -> str:
    return window.statusBar().currentMessage()


def type_into(qtbot, table, row, col, text):
    """Type into a cell through the table's own editor and press Return."""
    index = table.model().index(row, col)
    table.setCurrentIndex(index)
    table.edit(index)
    editor = table.findChild(QLineEdit)
    editor.setText(text)
    qtbot.keyClick(editor, Qt.Key_Return)
    QApplication.processEvents()
    if table.state() == QAbstractItemView.EditingState:
        qtbot.keyClick(table.findChild(QLineEdit) or table, Qt.Key_Escape)


# ---- cells ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["abc", "nan", "NaN", "inf", "-inf", "1e999", "-1e999", "", "   ", "0x10", "1..2"])
def test_bad_cell_text_is_refused_with_a_message(qtbot, window, text):
    s = window.session
    editor = window.editors["Q"]
    before = s.scene
    type_into(qtbot, editor.table, 2, 0, text)
    assert s.scene.same_as(before) and s.undo_stack.count() == 0
    assert editor.message.isVisibleTo(editor) and "the value stays 1" in editor.message.text()


@pytest.mark.parametrize("text,value", [("-0", 0.0), ("1e308", 1e308), ("−2.5", -2.5), (" 7 ", 7.0),
                                        ("1e-300", 1e-300)])
def test_good_cell_text_including_huge_numbers_is_taken(qtbot, window, text, value):
    s = window.session
    type_into(qtbot, window.editors["K"].table, 1, 1, text)
    assert s.scene.k[1, 1] == value
    s.flush()
    QApplication.processEvents()
    assert not np.isnan(s.result.weights).any()
    assert np.allclose(s.result.weights.sum(axis=1), 1)
    assert np.array_equal(window.heatmap.displayed_matrix(), s.result.weights)


def test_huge_values_everywhere_keep_every_view_finite_and_quiet(qtbot, window):
    """Scores that overflow: the legend, the plane and the heatmap stay drawable (no exception in paint)."""
    s = window.session
    for name, r, c, v in [("Q", 0, 0, 1e308), ("K", 1, 1, -1.7e308), ("V", 2, 0, 1e308), ("Q", 2, 1, -1e308)]:
        assert s.set_value(name, r, c, v)
        s.flush()
        for stage in ("vectors", "scores", "scaled", "weights", "output"):
            s.set_stage(stage)
            QApplication.processEvents()  # an exception in a paint override would be raised here
    lo, hi = window.heatmap.color_levels()
    assert np.isfinite(hi - lo)
    window.grab()


def test_tiny_values_everywhere_keep_the_legend_drawable(qtbot, window):
    """Scores of ~1e-323 (subnormal): the legend's ticks no longer divide by zero while painting."""
    s = window.session
    for r in range(s.scene.n):
        for c in range(s.scene.q.shape[1]):
            assert s.set_value("Q", r, c, 1e-323)
    s.flush()
    for stage in ("vectors", "scores", "scaled", "weights", "output"):
        s.set_stage(stage)
        QApplication.processEvents()  # an exception in a paint override would be raised here
        window.grab()
    lo, hi = window.heatmap.color_levels()
    assert 0 < hi - lo and np.isfinite(hi - lo)


def test_paste_a_spreadsheet_block_that_fits(qtbot, window):
    table = window.editors["V"].table
    table.setFocus()
    table.setCurrentIndex(table.model().index(1, 0))
    QApplication.clipboard().setText("7\t8\r\n9\t10\r\n")  # Excel's line ends
    qtbot.keyClick(table, Qt.Key_V, Qt.ControlModifier)
    assert window.session.scene.v[1:3].tolist() == [[7, 8], [9, 10]]


@pytest.mark.parametrize("text,fragment", [
    ("1\t2\t3\n", "does not fit"),  # too wide
    ("1\t2\n3\t4\n5\t6\n7\t8\n", "does not fit"),  # too tall from row 2
    ("1\t2\n3\n", "different lengths"),
    ("1\tabc\n", "not a number"),
    ("1\tnan\n", "not a finite number"),
    ("", "no numbers"),
    ("  \n\t\n", "no numbers"),
])
def test_paste_of_the_wrong_shape_or_bad_numbers_is_refused(qtbot, window, text, fragment):
    s = window.session
    editor = window.editors["Q"]
    table = editor.table
    table.setFocus()
    table.setCurrentIndex(table.model().index(1, 0))
    QApplication.clipboard().setText(text)
    before = s.scene
    qtbot.keyClick(table, Qt.Key_V, Qt.ControlModifier)
    assert s.scene.same_as(before)
    assert not editor.message.isHidden() and fragment in editor.message.text()


# ---- tokens ------------------------------------------------------------------------------------------
def rename(window, index, name) -> bool:
    model = window.tokens_panel.model
    return model.setData(model.index(index), name)


@pytest.mark.parametrize("name,fragment", [
    ("", "1–64 characters"),
    ("x" * 10_000, "it has 10000"),
    ("x" * 65, "it has 65"),
    ("a\nb", "control character"),
    ("tab\there", "control character"),
    ("nul\x00", "control character"),
    ("c1\x85", "control character"),
    ("line\u2028break", "control character"),
])
def test_bad_token_names_are_refused_with_the_reason(qtbot, window, name, fragment):
    s = window.session
    before = s.scene
    assert not rename(window, 1, name)
    assert s.scene.same_as(before)
    panel = window.tokens_panel
    assert not panel.message.isHidden()
    assert fragment in panel.message.text() and "“cat”" in panel.message.text()  # why, and what stays
    assert fragment in status(window)
    assert len(panel.message.text()) < 200  # the 10 000 characters are not echoed back


def test_duplicate_names_are_allowed_and_told_apart(qtbot, window):
    s = window.session
    assert rename(window, 3, "cat")
    assert s.scene.tokens == ("the", "cat", "sat", "cat")
    labels = [s.scene.token_label(i) for i in range(4)]
    assert labels == ["the", "cat·1", "sat", "cat·2"]
    panel = [window.tokens_panel.model.index(i).data() for i in range(4)]
    assert panel == ["1. the", "2. cat·1", "3. sat", "4. cat·2"]
    assert [window.editors["Q"].model.headerData(i, Qt.Vertical) for i in range(4)] == labels


@pytest.mark.parametrize("name", ["שלום", "مرحبا", "😀🐱", "👩‍💻", "naïve", "日本語"])
def test_right_to_left_and_emoji_names_are_taken_and_drawn(qtbot, window, name):
    s = window.session
    assert rename(window, 0, name)
    assert s.scene.tokens[0] == name
    s.flush()
    QApplication.processEvents()
    assert window.tokens_panel.model.index(0).data() == f"1. {name}"
    assert window.editors["K"].model.headerData(0, Qt.Vertical) == name
    calc = window.panels.calc.calc_model
    assert calc.index(0, calc.columns().index("token")).data() == name
    assert name in window.heatmap._labels
    window.grab()  # every panel paints it
    ensure_app()
    assert name in svg_bytes(s.scene, resolve_options(s.scene)).decode("utf-8")  # exported as real text
    # and it survives a save and a reload byte for byte
    path = os.path.join(tempfile.mkdtemp(), "names.qkv.json")
    write_session(path, s.scene, s.view)
    assert read_session(path).scene.tokens[0] == name


# ---- sizes ------------------------------------------------------------------------------------------
def test_removing_the_last_token_is_refused(qtbot, window):
    s = window.session
    for _ in range(3):
        window.acts.remove_token.trigger()
    assert s.scene.n == 1
    before = s.scene
    window.acts.remove_token.trigger()
    assert s.scene.same_as(before)
    assert "last token cannot be removed" in status(window)
    assert "last token" in window.tokens_panel.message.text()


def test_removing_the_last_dimension_is_refused(qtbot, window):
    s = window.session
    window.editors["V"].remove_button.click()
    assert s.scene.d_v == 1
    window.editors["V"].remove_button.click()
    assert s.scene.d_v == 1
    assert "last dimension cannot be removed" in status(window)
    window.editors["Q"].remove_button.click()
    window.editors["K"].remove_button.click()
    assert s.scene.d_k == 1 and "d_k must be at least 1" in status(window)


def test_going_past_1024_tokens_or_widths_is_refused(qtbot):
    n = 1024
    scene = Scene.create([f"t{i}" for i in range(n)], q=np.zeros((n, 1)), k=np.zeros((n, 1)), v=np.zeros((n, 1)))
    w = MainWindow(scene, use_settings=False)
    qtbot.addWidget(w)
    w.acts.add_token.trigger()
    assert w.session.scene.n == 1024 and "at most 1024 tokens" in status(w)
    assert "1024" in w.tokens_panel.message.text()
    wide = Scene.create(["a"], q=np.zeros((1, 1024)), k=np.zeros((1, 1024)), v=np.zeros((1, 1024)))
    w.session.load(wide)
    w.editors["Q"].add_button.click()
    w.editors["V"].add_button.click()
    assert w.session.scene.d_k == 1024 and w.session.scene.d_v == 1024
    assert "at most 1024" in status(w)


# ---- files ------------------------------------------------------------------------------------------
def test_every_bad_file_is_refused_and_the_work_stays(qtbot, window, warnings, tmp_path):
    """The whole corpus through one window, one file after another (the reader's and the CLI's own
    tests take each file separately): every one refused with its name and reason, the work kept."""
    s = window.session
    s.set_value("Q", 0, 0, 9.0)
    before, path_before = s.scene, s.path
    failures = []
    for ident, make, fragment in BAD:
        folder = tmp_path / ident
        folder.mkdir()
        bad = make(folder)
        count = len(warnings)
        opened = window.open_path(str(bad), ask=False)
        said = warnings[-1] if len(warnings) == count + 1 else None
        if opened or said is None or bad.name not in said or fragment not in said:
            failures.append((ident, opened, said))
        if not (s.scene is before and s.path == path_before and s.modified):
            failures.append((ident, "the work changed"))
        bad.unlink()  # (the 64 MB one is sparse, but need not stay)
    assert failures == []
    assert len(warnings) == len(BAD) == len(BAD_IDS)


def test_a_file_deleted_while_open(qtbot, window, warnings, tmp_path):
    path = tmp_path / "lesson.qkv.json"
    write_session(path, window.session.scene, window.session.view)
    assert window.open_path(str(path), ask=False)
    auto = reliability.attach(window, folder=tmp_path / "autosave")
    window.session.set_value("Q", 0, 0, 3.0)
    path.unlink()
    assert "was deleted or moved" in auto.disk_watch.check()
    assert "Save writes it again" in status(window)
    assert window.session.scene.q[0, 0] == 3.0 and window.session.modified  # the work is still here
    assert window.save()  # and Save puts it back
    assert read_session(path).scene.q[0, 0] == 3.0
    # reopening a file that no longer exists (Open recent) is refused with its name
    path.unlink()
    assert not window.open_path(str(path), ask=False)
    assert "lesson.qkv.json" in warnings[-1] and "no such file" in warnings[-1]


def test_a_file_changed_on_disk_while_open(qtbot, window, tmp_path):
    path = tmp_path / "lesson.qkv.json"
    write_session(path, window.session.scene, window.session.view)
    assert window.open_path(str(path), ask=False)
    auto = reliability.attach(window, folder=tmp_path / "autosave")
    assert auto.disk_watch.check() is None  # nothing changed
    write_session(path, *preset_document("causal"))  # another program rewrites it
    message = auto.disk_watch.check()
    assert "changed on disk" in message and "Save overwrites" in status(window)
    assert auto.disk_watch.check() is None  # said once
    assert window.session.scene.same_as(load_preset("lesson"))  # our version is untouched
    assert window.save()
    assert auto.disk_watch.check() is None  # our own save is not "another program"
    assert read_session(path).scene.same_as(window.session.scene)


def test_the_watcher_reacts_by_itself(qtbot, window, tmp_path):
    path = tmp_path / "w.qkv.json"
    write_session(path, window.session.scene, window.session.view)
    window.open_path(str(path), ask=False)
    reliability.attach(window, folder=tmp_path / "autosave")
    write_session(path, *preset_document("padding"))
    qtbot.waitUntil(lambda: "changed on disk" in status(window), timeout=10000)


def test_saving_into_a_read_only_folder_keeps_the_work(qtbot, window, warnings, tmp_path, monkeypatch):
    target = tmp_path / "ro" / "mine.qkv.json"
    target.parent.mkdir()
    write_session(target, *preset_document("causal"))
    old = target.read_bytes()
    window.session.set_value("Q", 0, 0, 4.0)

    def denied(*a, **k):  # the tests run as root, where chmod cannot make a folder read-only
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    assert not window._write(str(target))
    assert "Permission denied" in warnings[-1] and "mine.qkv.json" in warnings[-1]
    assert "still open" in warnings[-1]
    assert target.read_bytes() == old
    assert window.session.modified and window.session.scene.q[0, 0] == 4.0


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_saving_into_a_really_read_only_folder(qtbot, window, warnings, tmp_path):  # pragma: no cover
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert not window._write(str(folder / "x.qkv.json"))
        assert "Permission denied" in warnings[-1]
    finally:
        folder.chmod(0o755)


def test_a_write_failing_half_way_leaves_the_old_file_intact(qtbot, window, warnings, tmp_path, monkeypatch):
    target = tmp_path / "mine.qkv.json"
    write_session(target, *preset_document("causal"))
    old = target.read_bytes()
    window.session.set_value("Q", 0, 0, 4.0)
    real_fdopen = os.fdopen

    class HalfWriter:
        def __init__(self, fh):
            self._fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._fh.close()

        def write(self, data):
            self._fh.write(data[: len(data) // 2])  # half of it reaches the disk …
            raise OSError(errno.ENOSPC, "No space left on device")  # … then the disk is full

        def __getattr__(self, name):
            return getattr(self._fh, name)

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: HalfWriter(real_fdopen(fd, *a, **k)))
    assert not window._write(str(target))
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert "No space left on device" in warnings[-1]
    assert target.read_bytes() == old  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.qkv.json"]  # no half-written temporary
    assert window.session.modified and window.session.scene.q[0, 0] == 4.0


# ---- command line ------------------------------------------------------------------------------------
@pytest.mark.parametrize("args,fragments", [
    (["--frobnicate"], ["unrecognized arguments: --frobnicate"]),
    (["-x"], ["unrecognized arguments: -x"]),
    (["export", "-o", "x.csv", "--stage"], ["--stage", "expected one argument"]),
    (["missing.qkv.json"], ["missing.qkv.json", "no such file"]),
    (["export", "missing.qkv.json", "-o", "x.csv"], ["missing.qkv.json", "no such file"]),
    (["--preset", "nope"], ["no such preset", "lesson"]),
    (["export", "--preset", "nope", "-o", "x.csv"], ["no such preset"]),
    (["export", "--query", "dog", "-o", "x.csv"], ["no token named 'dog'", "the, cat, sat, mat"]),
    (["export", "--query", "", "-o", "x.csv"], ["no token named ''"]),
    (["export", "--query", "-1", "-o", "x.csv"], ["out of range"]),
    (["screenshot", "--query", "dog", "-o", "x.png"], ["no token named 'dog'"]),
    (["--query", "dog"], ["unrecognized arguments: --query"]),  # the window has no --query
])
def test_command_line_refusals_are_one_line_with_exit_2(tmp_path, capsys, monkeypatch, args, fragments):
    monkeypatch.chdir(tmp_path)
    assert cli.main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("qkv-studio: error: ")
    assert "Traceback" not in err
    for f in fragments:
        assert f in err
    assert sorted(os.listdir(tmp_path)) == []  # nothing written
