"""Issue 20, class 5: recovery finds every orphaned autosave whatever state its lock is in; a failed
autosave is reported at once and stays visible until a later one succeeds; a corrupt autosave is
moved aside (kept) with a message."""

import os
import subprocess
import sys
import time

import pytest
from PySide6.QtWidgets import QMessageBox

from qkv_studio import reliability
from qkv_studio.core import load_preset, read_session
from qkv_studio.reliability.autosave import Entry, pending_recovery

from .conftest import REPO, TIMEOUT


def orphan(folder, ident, lock: bytes | None, *, age: float = 3600.0):
    """An autosave entry as a crash leaves it, with the lock file holding ``lock`` (None: no lock)."""
    folder.mkdir(exist_ok=True)
    Entry(folder, ident).write(load_preset("causal"), "/work/lecture.qkv.json")
    if lock is not None:
        p = folder / f"{ident}.lock"
        p.write_bytes(lock)
        old = time.time() - age
        os.utime(p, (old, old))


@pytest.mark.parametrize("lock", [b"", b"\x00\x00\x00\x00", b"garbage\xff\xfe", b"not a pid\nx\n", b"\n\n\n"],
                         ids=["empty", "zeros", "garbage", "words", "blank-lines"])
def test_an_orphan_whose_lock_cannot_be_read_is_offered(qtbot, folder, lock):
    orphan(folder, "4242-deadbeef", lock)
    rec = pending_recovery(folder)
    assert rec is not None, "an unreadable lock must count as stale"
    assert rec.scene.same_as(load_preset("causal")) and rec.path == "/work/lecture.qkv.json"
    rec.discard()
    assert sorted(os.listdir(folder)) == []


@pytest.mark.parametrize("lock", [b"", b"garbage\xff\xfe"], ids=["empty", "garbage"])
def test_a_fresh_unreadable_lock_whose_owner_is_gone_is_offered(qtbot, folder, lock):
    """Issue 32: recovery never depends on the lock's contents (nor its age): nobody holds it, so it is offered."""
    orphan(folder, "4242-fresh", lock, age=0.0)
    rec = pending_recovery(folder)
    assert rec is not None and rec.scene.same_as(load_preset("causal"))
    rec.discard()


def test_a_lock_naming_a_running_pid_but_held_by_nobody_is_offered(qtbot, folder):
    """The pid in a dead owner's lock may name another process by now (pid reuse): the kernel's lock decides."""
    from PySide6.QtCore import QSysInfo

    orphan(folder, "4242-reused", f"{os.getpid()}\npython3\n{QSysInfo.machineHostName()}\n".encode(), age=0.0)
    rec = pending_recovery(folder)
    assert rec is not None and rec.path == "/work/lecture.qkv.json"
    rec.discard()


@pytest.mark.parametrize("lock", [b"", b"\x00garbage", None], ids=["blanked", "garbage", "as-written"])
def test_a_live_instances_entry_is_never_offered_whatever_its_lock_holds(qtbot, child, lock):
    folder = child.home / "autosave"
    proc = subprocess.Popen([sys.executable, "-m", "tests.reliability.child_app", str(folder), "crash"],
                            cwd=REPO, env=child.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("ready "), proc.stderr.read() if proc.poll() is not None else line
        (lock_file,) = folder.glob("*.lock")
        if lock is not None:
            with open(lock_file, "r+b") as f:  # rewritten in place: the live owner's flock stays on it
                f.truncate(0)
                f.write(lock)
            os.utime(lock_file, (time.time() - 3600, time.time() - 3600))
        assert pending_recovery(folder) is None  # the owner is running
        assert lock_file.exists() and len(list(folder.glob("*.qkv.json"))) == 1
    finally:
        proc.kill()
        proc.wait(timeout=TIMEOUT)
    rec = pending_recovery(folder)  # … and once it is gone, its work is offered
    assert rec is not None and rec.scene.tokens[0] == "crash"
    rec.discard()


def test_after_kill_9_and_a_blanked_lock_the_next_start_offers_the_work(qtbot, child):
    """A real crash (kill -9), then the power cut leaves the lock empty: the next start still offers it."""
    folder = child.home / "autosave"
    proc = subprocess.Popen([sys.executable, "-m", "tests.reliability.child_app", str(folder), "crash"],
                            cwd=REPO, env=child.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # "ready <file>" once autosaved
        assert line.startswith("ready "), proc.stderr.read() if proc.poll() is not None else line
    finally:
        proc.kill()
        proc.wait(timeout=TIMEOUT)
    (lock,) = folder.glob("*.lock")
    lock.write_bytes(b"")
    os.utime(lock, (time.time() - 60, time.time() - 60))
    rec = pending_recovery(folder)
    assert rec is not None and rec.scene.tokens[0] == "crash" and rec.scene.q[2, 0] == 42.0
    rec.discard()


@pytest.mark.parametrize("content", [b'{"format": "qkv-studio-session", "vers', b"\x00" * 100, b"[]",
                                     b'{"format": "qkv-studio-session", "version": 1, "version": 1}'],
                         ids=["truncated", "zeros", "not-a-session", "duplicate-key"])
def test_a_corrupt_autosave_is_moved_aside_with_a_message(qtbot, folder, monkeypatch, content):
    folder.mkdir()
    (folder / "77-corrupt.qkv.json").write_bytes(content)
    (folder / "77-corrupt.meta.json").write_text('{"path": "/x.qkv.json"}')
    told = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: told.append(a[2]) or QMessageBox.Ok))
    assert reliability.offer_recovery(None, folder) is None
    kept = sorted((folder / "unreadable").iterdir())
    scene_copy = [p for p in kept if p.name.endswith(".qkv.json")]
    assert len(scene_copy) == 1 and scene_copy[0].read_bytes() == content  # kept, byte for byte
    assert len(told) == 1 and "could not be read" in told[0] and str(scene_copy[0]) in told[0]
    assert [n for n in os.listdir(folder) if n != "unreadable"] == []
    assert reliability.offer_recovery(None, folder) is None and len(told) == 1  # told once, not every start


def _failing_fsync(monkeypatch):
    def broken(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken)


def test_a_failed_autosave_is_reported_at_once_without_another_edit(qtbot, window, folder, monkeypatch):
    auto = reliability.attach(window, folder=folder)
    auto._timer.setInterval(20)
    messages = []
    window.session.message.connect(messages.append)
    _failing_fsync(monkeypatch)
    window.session.set_value("Q", 0, 0, 5.0)  # one edit, then nothing: no later timer to notice the failure
    qtbot.waitUntil(lambda: any("Autosave failed" in m for m in messages), timeout=5000)
    assert "No space left on device" in messages[-1]
    label = auto.failure_label
    assert label.isVisible() and "No space left on device" in label.text()


def test_the_failure_stays_visible_until_an_autosave_succeeds(qtbot, window, folder, monkeypatch):
    auto = reliability.attach(window, folder=folder)
    auto._timer.setInterval(20)
    real_fsync = os.fsync
    _failing_fsync(monkeypatch)
    window.session.set_value("Q", 0, 0, 5.0)
    label = auto.failure_label
    qtbot.waitUntil(label.isVisible, timeout=5000)
    window.statusBar().showMessage("Deck: scene 2 of 3", 50)  # other messages come and go …
    qtbot.wait(120)
    window.statusBar().clearMessage()
    assert label.isVisible() and "Ctrl+S" in label.text()  # … the failure stays
    monkeypatch.setattr(os, "fsync", real_fsync)
    window.session.set_value("Q", 0, 0, 6.0)
    qtbot.waitUntil(lambda: not label.isVisible(), timeout=5000)
    assert auto.wait() and read_session(auto.file()).scene.q[0, 0] == 6.0


def test_a_full_disk_autosave_is_shown_until_space_returns(qtbot, window, tiny_disk):
    mount, _fill, free = tiny_disk
    auto = reliability.attach(window, folder=mount / "autosave")
    auto._timer.setInterval(20)
    window.session.set_value("K", 1, 0, 3.0)
    label = auto.failure_label
    qtbot.waitUntil(label.isVisible, timeout=5000)
    assert "No space left on device" in label.text() or "cannot be used" in label.text()
    assert not [p for p in (mount / "autosave").glob("*.tmp")] if (mount / "autosave").exists() else True
    free()
    window.session.set_value("K", 1, 0, 4.0)
    qtbot.waitUntil(lambda: not label.isVisible(), timeout=5000)
    assert auto.wait() and read_session(auto.file()).scene.k[1, 0] == 4.0
    auto.discard()
