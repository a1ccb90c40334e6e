"""Never a traceback: an exception in a slot is a dialog with details, a log entry, and the app goes on."""

import sys
import threading

import pytest
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMessageBox

from qkv_studio.reliability import excepthook as eh


@pytest.fixture
def hook(monkeypatch, tmp_path):
    """The real hook, installed for the test and removed after it (pytest-qt's own hook comes back)."""
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    monkeypatch.setattr(eh, "_installed", None)
    boxes = []

    def capture(box):
        boxes.append({"text": box.text(), "info": box.informativeText(), "details": box.detailedText(),
                      "icon": box.icon()})
        return QMessageBox.Ok

    monkeypatch.setattr(QMessageBox, "exec", capture)
    h = eh.install_excepthook(tmp_path / "logs" / "qkv-studio.log")
    h.boxes = boxes
    yield h
    h.uninstall()
    for handler in list(eh.log.handlers):
        if str(tmp_path) in getattr(handler, "baseFilename", ""):
            eh.log.removeHandler(handler)
            handler.close()


class Emitter(QObject):
    fired = Signal()


def _log_text(h):
    for handler in eh.log.handlers:
        handler.flush()
    return h.log_file.read_text(encoding="utf-8")


def test_an_exception_in_a_slot_shows_a_dialog_logs_and_the_app_keeps_running(qtbot, hook, capfd):
    def broken_slot():
        raise ZeroDivisionError("the demo divided by zero")

    e = Emitter()
    e.fired.connect(broken_slot)
    later = []
    e.fired.connect(lambda: later.append("still running"))
    e.fired.emit()
    assert later == ["still running"]  # the other slots and the event loop carry on
    assert hook.count == 1
    box = hook.boxes[0]
    assert box["text"] == "Something went wrong: ZeroDivisionError: the demo divided by zero."
    assert box["icon"] == QMessageBox.Critical
    assert "Traceback (most recent call last)" in box["details"] and "broken_slot" in box["details"]
    assert "work is still open" in box["info"] and str(hook.log_file) in box["info"]
    text = _log_text(hook)
    assert "ZeroDivisionError: the demo divided by zero" in text and "broken_slot" in text
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ZeroDivisionError" in err  # one line on the terminal


def test_an_exception_in_a_timer_and_a_window_slot(qtbot, hook, window):
    QTimer.singleShot(0, lambda: [][1])
    qtbot.waitUntil(lambda: hook.count == 1, timeout=2000)
    assert "IndexError" in hook.boxes[0]["text"]
    # a broken view slot during an edit: the Session stays right and the next edit works
    calls = []

    def bad_view():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a view failed to redraw")

    window.session.scene_changed.connect(bad_view)
    window.session.set_value("Q", 2, 0, 3.0)
    assert hook.count == 2 and "a view failed to redraw" in hook.boxes[1]["text"]
    assert window.session.scene.q[2, 0] == 3.0
    qtbot.wait(50)  # the hook asks every view to redraw from the Session
    window.session.flush()
    QApplication.processEvents()
    import numpy as np

    assert np.array_equal(window.heatmap.displayed_matrix(), window.session.result.weights)
    window.session.set_value("Q", 2, 1, 1.0)
    assert window.session.scene.q[2, 1] == 1.0 and hook.count == 2


def test_a_repeating_error_shows_one_dialog(qtbot, hook):
    e = Emitter()
    e.fired.connect(lambda: 1 / 0)
    for _ in range(50):  # e.g. a paint that fails every frame
        e.fired.emit()
    assert hook.count == 50 and len(hook.boxes) == 1


def test_an_error_while_the_dialog_is_open_is_only_logged(qtbot, hook, monkeypatch):
    e = Emitter()
    e.fired.connect(lambda: (_ for _ in ()).throw(ValueError("inner")))

    def exec_and_fail_again(box):
        hook.boxes.append(box.text())
        e.fired.emit()  # the dialog's own event loop repaints something broken
        return QMessageBox.Ok

    monkeypatch.setattr(QMessageBox, "exec", exec_and_fail_again)
    QTimer.singleShot(0, lambda: (_ for _ in ()).throw(KeyError("outer")))
    qtbot.waitUntil(lambda: hook.count == 2, timeout=2000)
    assert len(hook.boxes) == 1 and "inner" in _log_text(hook)


def test_threads_are_logged_and_installing_twice_is_harmless(qtbot, hook):
    assert eh.install_excepthook() is hook
    t = threading.Thread(target=lambda: 1 / 0, name="worker")
    t.start()
    t.join()
    assert hook.count == 1 and hook.boxes == []
    assert "in thread worker" in _log_text(hook)


def test_keyboard_interrupt_goes_to_the_previous_hook(qtbot, hook, monkeypatch):
    seen = []
    monkeypatch.setattr(hook, "_previous", lambda *a: seen.append(a[0]))
    hook(KeyboardInterrupt, KeyboardInterrupt(), None)
    assert seen == [KeyboardInterrupt] and hook.count == 0


def test_the_log_rotates(tmp_path, monkeypatch):
    monkeypatch.setattr(eh, "MAX_LOG_BYTES", 2000)
    path = tmp_path / "rot" / "qkv-studio.log"
    assert eh.setup_logging(path) == path
    assert eh.setup_logging(path) == path  # once
    try:
        for i in range(100):
            eh.log.error("line %d %s", i, "x" * 50)
        assert (tmp_path / "rot" / "qkv-studio.log.1").exists()
    finally:
        for handler in list(eh.log.handlers):
            if str(tmp_path) in getattr(handler, "baseFilename", ""):
                eh.log.removeHandler(handler)
                handler.close()


def test_an_unwritable_log_folder_still_shows_the_dialog(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(eh, "_installed", None)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    boxes = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: boxes.append(box.informativeText()) or QMessageBox.Ok)
    h = eh.install_excepthook(blocker / "qkv-studio.log")
    try:
        assert h.log_file is None
        h(RuntimeError, RuntimeError("x"), None)
        assert "could not be written" in boxes[0]
    finally:
        h.uninstall()
