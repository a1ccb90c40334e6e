"""After a crash (a real process killed with SIGKILL) the next start offers the work back."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from qkv_studio import reliability
from qkv_studio.core import View, load_preset, preset_document, read_session, write_session
from qkv_studio.reliability.autosave import Autosave, pending_recovery

REPO = Path(__file__).resolve().parents[2]


def _child(folder, mode):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "tests.reliability.child_app", str(folder), mode],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("ready"), (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc


def _files(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_kill_9_then_the_next_start_restores_the_scene(qtbot, window, folder, monkeypatch):
    proc = _child(folder, "crash")
    assert pending_recovery(folder) is None  # the process is alive: its autosave is not ours to take
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert any(n.endswith(".lock") for n in _files(folder))  # a dead owner's lock is left behind
    asked = []

    def answer(box):
        asked.append((box.text(), box.informativeText()))
        return QMessageBox.Yes

    monkeypatch.setattr(QMessageBox, "exec", answer)
    recovered = reliability.offer_recovery(None, folder)
    assert recovered is not None and asked and "did not close normally" in asked[0][0]
    assert "4 tokens" in asked[0][1]
    scene, path = recovered
    assert scene.q[2, 0] == 42.0 and scene.tokens[0] == "crash" and path == ""
    assert recovered.view == View(2, "weights")  # the child's view (the lesson's) came through the autosave
    auto = reliability.attach(window, folder=folder)
    reliability.restore(window, recovered)
    s = window.session
    assert s.scene.same_as(scene) and s.modified  # unsaved work again: closing will ask
    auto.wait()
    # the crashed entry is gone; this window's own autosave now holds the work
    names = [n for n in _files(folder) if n.endswith(".qkv.json")]
    assert names == [auto.file().name] and read_session(auto.file()).scene.same_as(scene)
    assert pending_recovery(folder) is None


def test_a_clean_exit_leaves_nothing_to_recover(tmp_path):
    folder = tmp_path / "autosave"
    proc = _child(folder, "clean")
    assert proc.wait(20) == 0
    assert _files(folder) == []


def test_restore_on_top_of_the_original_file_is_one_undo_step(qtbot, window, folder, tmp_path):
    path = tmp_path / "lesson.qkv.json"
    write_session(path, *preset_document("lesson"))
    scene = load_preset("lesson").with_value("K", 1, 1, 8.0)
    reliability.restore(window, (scene, str(path), View(0, "scores")))
    s = window.session
    assert s.scene.same_as(scene) and s.modified and s.path == str(path)
    assert (s.query, s.stage) == (0, "scores")  # the recovered view, not the file's
    assert "Restore unsaved work" in window.acts.undo.text()
    s.undo_stack.undo()
    assert s.scene.k[1, 1] == load_preset("lesson").k[1, 1] and not s.modified


def test_restore_when_the_original_file_is_gone(qtbot, window, tmp_path):
    scene = load_preset("causal")
    gone = str(tmp_path / "deleted.qkv.json")
    reliability.restore(window, (scene, gone))
    s = window.session
    assert s.scene.same_as(scene) and s.modified and s.path == gone
    assert window._write(gone) and read_session(gone).scene.same_as(scene)


def test_discard_deletes_and_not_now_keeps_for_next_time(qtbot, window, folder, monkeypatch):
    auto = Autosave(window.session, folder=folder)
    window.session.set_value("Q", 0, 0, 5.0)
    assert auto.save_now()
    auto._entry.release()  # its owner "died"
    auto._entry = None
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Cancel)
    assert reliability.offer_recovery(None, folder) is None
    assert len([n for n in _files(folder) if n.endswith(".qkv.json")]) == 1  # kept
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Discard)
    assert reliability.offer_recovery(None, folder) is None
    assert _files(folder) == []
    assert reliability.offer_recovery(None, folder) is None  # nothing left: no question asked


def test_attach_adopts_recovered_work_the_window_was_opened_with(qtbot, folder, monkeypatch):
    from qkv_studio.reliability.autosave import Entry
    from qkv_studio.ui.window.main_window import MainWindow

    folder.mkdir()
    Entry(folder, "1-dead").write(load_preset("padding"), "")
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Yes)
    scene, path = reliability.offer_recovery(None, folder)
    w = MainWindow(scene, path, use_settings=False)  # the way a caller may use the plain tuple
    qtbot.addWidget(w)
    auto = reliability.attach(w, folder=folder)
    assert w.session.modified  # recovered work is unsaved work
    auto.wait()
    assert [n for n in _files(folder) if n.endswith(".qkv.json")] == [auto.file().name]
    assert reliability.claimed() == []
