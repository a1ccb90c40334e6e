"""Fixtures shared by the window's tests."""

import pytest

from tests.views import LESSON_VIEW


@pytest.fixture
def window(show_window, lesson_scene):
    """The window at 1600×950 on the lesson scene, looking at ``LESSON_VIEW``."""
    return show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
