import pytest

from qkv_studio.core import load_preset
from qkv_studio.state.session import Session
from tests.views import LESSON_VIEW


@pytest.fixture
def session():
    return Session(load_preset("lesson"), view=LESSON_VIEW)
