"""Test setup: no display, pyqtgraph on PySide6, settings and data folders isolated per test run."""

import gc
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PYQTGRAPH_QT_LIB"] = "PySide6"

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# Chromium for the interactive page's tests (tests/export/test_page*.py, tests/test_notebook.py): one browser
# per run, defined once here so that every module shares it.
from tests.export.page_helpers import browser  # noqa: E402, F401


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory, monkeypatch):
    """Every test gets its own QSettings/QStandardPaths locations (never the user's)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    # Qt reads the settings folder once per process, so point QSettings at this test's folder explicitly.
    from PySide6.QtCore import QSettings

    for fmt in (QSettings.NativeFormat, QSettings.IniFormat):
        QSettings.setPath(fmt, QSettings.UserScope, str(home / "config"))
    yield


@pytest.fixture
def show_window(qtbot):
    """A factory: ``show_window(scene, (w, h), view=None)`` → a shown, active MainWindow (no saved
    settings) looking at ``scene`` with ``view`` (default: the first query's weights)."""
    def make(scene, size=(1600, 950), view=None):
        from qkv_studio.ui.window.main_window import MainWindow

        w = MainWindow(scene, use_settings=False, view=view)
        qtbot.addWidget(w)
        w.resize(*size)
        w.show()
        qtbot.waitExposed(w)
        w.activateWindow()
        return w

    return make


@pytest.fixture
def lesson_scene():
    from qkv_studio.core import load_preset

    return load_preset("lesson")


@pytest.fixture
def session(qtbot, lesson_scene):
    """A Session on the lesson scene looking at ``LESSON_VIEW`` (the query from "sat", the weights)."""
    from qkv_studio.state.session import Session
    from tests.views import LESSON_VIEW

    return Session(lesson_scene, view=LESSON_VIEW)


@pytest.fixture
def warnings(monkeypatch):
    """The texts of the warning dialogs shown (each answered OK), in order."""
    from PySide6.QtWidgets import QMessageBox

    texts = []

    def record(parent, title, text, *args, **kwargs):
        texts.append(text)
        return QMessageBox.Ok

    monkeypatch.setattr(QMessageBox, "warning", staticmethod(record))
    return texts


@pytest.fixture(autouse=True)
def _no_modal_dialogs(monkeypatch):
    """A modal dialog would block an offscreen test forever: answer them (tests can override)."""
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "exec", lambda self: QMessageBox.Discard)
    for name in ("warning", "information", "critical", "question", "about"):
        monkeypatch.setattr(QMessageBox, name, staticmethod(lambda *a, **k: QMessageBox.Ok))
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Delete each test's widgets when its teardown is over, not in the middle of a later test.

    pytest-qt closes the widgets a test added and calls ``deleteLater`` on them, but a deferred
    delete runs only when an event loop next turns — inside some later test's ``qtbot.wait``, while
    Qt dispatches that test's events — and pytest-qt holds the widgets only weakly, so their Python
    halves (most sit in reference cycles: slots that capture their owner) are then reclaimed by the
    cyclic garbage collector on its own schedule. A pyqtgraph view torn down that way crashed the run
    now and then (``GraphicsWidget.boundingRect`` on the stack; equinor/ert#14421 saw the same). So
    the collector stays off during a test, and after its teardown — no event being dispatched — the
    pending deletes run and the test's cycles are collected.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    if was_enabled:
        gc.enable()
    # Everything the test made is still in the youngest generation (the collector was off), so
    # collecting that one frees the test's cycles without walking the whole heap after every test.
    gc.collect(0)
