"""The views the presets open with, for tests that build a Session or a window from a preset's scene.

A Scene holds no view state; opening a preset (File ▸ New, ``--preset``) looks at it with the view its
file names (the lesson: query 2, "sat", at the weights).  Tests that start from ``load_preset(...)``
pass that view explicitly, as the app does.
"""

from __future__ import annotations

from qkv_studio.core import View, preset_document


def view_of(name: str) -> View:
    """The view preset ``name`` opens with."""
    return preset_document(name).view


LESSON_VIEW = view_of("lesson")
