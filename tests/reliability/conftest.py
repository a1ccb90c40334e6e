import pytest


@pytest.fixture
def window(show_window, lesson_scene):
    return show_window(lesson_scene, (1400, 900))


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "autosave"
