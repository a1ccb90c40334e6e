import pytest

from qkv_studio.ui.main_window import MainWindow


@pytest.fixture
def window(qtbot, lesson_scene):
    w = MainWindow(lesson_scene, use_settings=False)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    return w


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "autosave"
