"""Autosave: written a moment after a change, atomically, with its file name; gone when nothing is unsaved."""

import json
import os
import subprocess
import sys

from PySide6.QtCore import QSysInfo
from PySide6.QtWidgets import QMessageBox

from qkv_studio import reliability
from qkv_studio.core import load_preset, read_session, write_session
from qkv_studio.reliability import autosave as autosave_mod
from qkv_studio.reliability.autosave import Autosave, Entry, pending_recovery


def files(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def scene_files(folder):
    return [n for n in files(folder) if n.endswith(".qkv.json")]


def test_a_change_is_written_after_the_delay_with_its_file_name(qtbot, window, folder, tmp_path):
    path = tmp_path / "mine.qkv.json"
    write_session(path, window.session.scene, window.session.view)
    window.open_path(str(path), ask=False)
    auto = Autosave(window.session, folder=folder, delay_ms=100)
    window.session.set_value("Q", 2, 0, 7.5)
    assert auto.pending() and auto.file() is None  # not at once: a moment later
    qtbot.waitUntil(lambda: auto.file() is not None and auto.file().exists(), timeout=3000)
    assert auto.wait()
    saved, view = read_session(auto.file())
    assert saved.same_as(window.session.scene) and saved.q[2, 0] == 7.5
    assert view == window.session.view  # the autosave keeps what was being looked at
    meta = json.loads(auto.file().with_name(auto.file().name.replace(".qkv.json", ".meta.json")).read_text())
    assert meta["path"] == str(path.resolve()) and meta["pid"] == os.getpid()
    assert not [n for n in files(folder) if n.endswith(".tmp")]  # atomic: no temporary left behind


def test_edits_in_a_burst_are_written_once(qtbot, window, folder):
    auto = Autosave(window.session, folder=folder, delay_ms=1500, max_delay_ms=10000)
    for i in range(5):
        window.session.set_value("K", 0, 0, float(i + 10))
        assert auto._timer.remainingTime() > 1000  # each edit restarts the countdown
        qtbot.wait(30)
    assert auto.file() is None
    qtbot.waitUntil(lambda: not auto.pending(), timeout=3000)
    assert auto.wait()
    assert auto._state.writes == 1
    assert read_session(auto.file()).scene.k[0, 0] == 14.0


def test_a_long_drag_is_still_saved_every_few_seconds(qtbot, window, folder):
    auto = Autosave(window.session, folder=folder, delay_ms=150, max_delay_ms=400)
    s = window.session
    s.begin_drag()
    for i in range(30):  # 1.2 s of continuous dragging, never a 150 ms pause
        s.drag_vector("Q", 2, 1.0 + i / 10, 2.0)
        qtbot.wait(40)
    auto.wait()
    assert auto._state.writes >= 2


def test_navigation_alone_writes_nothing(qtbot, window, folder):
    auto = Autosave(window.session, folder=folder, delay_ms=20)
    window.session.set_query(0)
    window.session.set_stage("scores")
    qtbot.wait(100)
    assert auto.file() is None and scene_files(folder) == []


def test_saving_undoing_or_opening_removes_the_autosave(qtbot, window, folder, tmp_path):
    s = window.session
    auto = Autosave(s, folder=folder, delay_ms=10)
    s.set_value("V", 0, 0, 3.0)
    assert auto.save_now() and len(scene_files(folder)) == 1
    assert window._write(str(tmp_path / "a.qkv.json"))
    auto.wait()
    assert files(folder) == []
    s.set_value("V", 0, 0, 4.0)
    assert auto.save_now() and len(scene_files(folder)) == 1
    s.undo_stack.undo()  # back to the saved state: nothing unsaved any more
    auto.wait()
    assert files(folder) == []
    s.set_value("V", 0, 0, 5.0)
    assert auto.save_now() and len(scene_files(folder)) == 1
    window.open_preset("causal")  # conftest answers the prompt with Discard
    auto.wait()
    assert files(folder) == []


def test_a_clean_close_removes_it_and_a_cancelled_close_keeps_it(qtbot, window, folder, monkeypatch):
    auto = reliability.attach(window, folder=folder)
    assert reliability.attach(window) is auto  # once per window
    window.session.set_value("Q", 0, 0, 9.0)
    assert auto.save_now() and len(scene_files(folder)) == 1
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Cancel)
    assert not window.close()
    qtbot.wait(20)
    assert window.isVisible() and len(scene_files(folder)) == 1
    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Discard)
    assert window.close()
    qtbot.wait(20)
    assert files(folder) == []


def test_an_unusable_folder_is_a_message_not_a_crash(qtbot, window, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    auto = Autosave(window.session, folder=blocker / "autosave", delay_ms=10)
    messages = []
    window.session.message.connect(messages.append)
    window.session.set_value("Q", 0, 0, 2.0)
    assert not auto.save_now()
    assert messages and messages[-1].startswith("Autosave failed") and "Ctrl+S" in messages[-1]
    assert window.session.scene.q[0, 0] == 2.0  # the work itself is untouched


def test_a_write_failing_half_way_keeps_the_previous_autosave(qtbot, window, folder, monkeypatch):
    s = window.session
    auto = Autosave(s, folder=folder, delay_ms=10)
    s.set_value("Q", 0, 0, 2.0)
    assert auto.save_now()
    good = auto.file().read_bytes()
    real_fsync = os.fsync

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    messages = []
    s.message.connect(messages.append)
    s.set_value("Q", 0, 0, 3.0)
    assert not auto.save_now()
    assert "No space left on device" in messages[-1]
    assert auto.file().read_bytes() == good
    assert not [n for n in files(folder) if n.endswith(".tmp")]
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert auto.save_now() and read_session(auto.file()).scene.q[0, 0] == 3.0


def test_a_live_entry_is_not_offered_but_a_dead_one_is(qtbot, window, folder):
    auto = Autosave(window.session, folder=folder, delay_ms=10)
    window.session.set_value("Q", 0, 0, 6.0)
    assert auto.save_now()
    assert pending_recovery(folder) is None  # this process still holds it
    auto._entry.release()  # as if the owner had died: its lock is gone, its files remain
    rec = pending_recovery(folder)
    assert rec is not None
    scene, path = rec
    assert scene.q[0, 0] == 6.0 and path == ""
    assert pending_recovery(folder) is None  # claimed now: offered once
    rec.discard()
    assert files(folder) == []


def test_unreadable_or_empty_entries_are_cleaned_up(qtbot, folder):
    folder.mkdir()
    corrupt = '{"format": "qkv-studio-session", "version": 1, "tok'
    (folder / "111-aaaa.qkv.json").write_text(corrupt)
    (folder / "111-aaaa.meta.json").write_text("{}")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          timeout=60)
    host = QSysInfo.machineHostName()
    (folder / "222-bbbb.lock").write_text(f"{dead.stdout.strip()}\npython3\n{host}\n")  # died before its first autosave
    assert pending_recovery(folder) is None
    # the empty entry is gone; the unreadable autosave is no longer an entry but is kept, moved aside (issue 20)
    assert files(folder) == ["unreadable"]
    kept = files(folder / "unreadable")
    assert len(kept) == 2 and kept[0].startswith("111-aaaa-") and kept[0].endswith(".meta.json")
    assert (folder / "unreadable" / kept[1]).read_text() == corrupt
    notes = autosave_mod.take_notices()
    assert len(notes) == 1 and "could not be read" in notes[0] and kept[1] in notes[0]
    assert pending_recovery(folder) is None and autosave_mod.take_notices() == []  # said once
    assert pending_recovery(folder / "missing") is None


def test_the_newest_entry_is_offered_first(qtbot, folder):
    folder.mkdir()
    old, new = Entry(folder, "1-old"), Entry(folder, "2-new")
    old.write(load_preset("causal"), "/somewhere/old.qkv.json")
    new.write(load_preset("padding"), "")
    os.utime(old.scene_file, (1, 1))
    first = pending_recovery(folder)
    assert first.scene.same_as(load_preset("padding"))
    second = pending_recovery(folder)
    assert second.path == "/somewhere/old.qkv.json"
    first.discard()
    second.release()  # "not now": kept for the next start
    assert scene_files(folder) == ["1-old.qkv.json"]
