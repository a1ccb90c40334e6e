"""What the window remembers: every value type-checked, a damaged settings file never stops the window."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QByteArray, QSettings

from qkv_studio.ui.window.settings import MAX_RECENT, Remembered, WindowSettings, check
from tests.views import LESSON_VIEW


def test_missing_values_are_the_defaults():
    assert check({}) == Remembered()
    assert Remembered() == Remembered(None, None, "light", "viridis", 1.0, True)


@pytest.mark.parametrize("raw, field, expected", [
    ({"theme": "dark"}, "theme", "dark"),
    ({"theme": "neon"}, "theme", "light"),
    ({"theme": 3}, "theme", "light"),
    ({"colormap": "magma"}, "colormap", "magma"),
    ({"colormap": "jet"}, "colormap", "viridis"),
    ({"zoom": "1.5"}, "zoom", 1.5),
    ({"zoom": 99}, "zoom", 1.0),  # out of range: ignored (logged), as a bad value
    ({"zoom": 0.01}, "zoom", 1.0),
    ({"zoom": "big"}, "zoom", 1.0),
    ({"zoom": float("nan")}, "zoom", 1.0),
    ({"zoom": [1, 2]}, "zoom", 1.0),
    ({"animate": "false"}, "animate", False),
    ({"animate": False}, "animate", False),
    ({"animate": "0"}, "animate", False),
    ({"animate": "true"}, "animate", True),
    ({"show_all_stages": "true"}, "show_all_stages", True),
    ({"show_all_stages": "maybe"}, "show_all_stages", False),
    ({"geometry": "not bytes"}, "geometry", None),
    ({"geometry": QByteArray()}, "geometry", None),
    ({"window_state": b"\x00\x01"}, "window_state", QByteArray(b"\x00\x01")),
])
def test_each_value_is_checked(raw, field, expected):
    value = getattr(check(raw), field)
    assert value == expected and (not isinstance(value, float) or math.isfinite(value))


def test_recent_files_and_last_folder(qapp, tmp_path):
    store = WindowSettings()
    assert store.recent() == []
    for i in range(MAX_RECENT + 3):
        store.add_recent(f"/f{i}.qkv.json")
    store.add_recent("/f5.qkv.json")  # again: moves to the front, once
    recent = store.recent()
    assert recent[0] == "/f5.qkv.json" and recent.count("/f5.qkv.json") == 1 and len(recent) == MAX_RECENT
    QSettings().setValue("recent_files", "/only.qkv.json")  # an INI file hands one entry back as a string
    assert store.recent() == ["/only.qkv.json"]
    QSettings().setValue("recent_files", 7)
    assert store.recent() == []
    store.store("last_folder", str(tmp_path))
    assert store.last_folder() == str(tmp_path)
    off = WindowSettings(enabled=False)
    off.add_recent("/x.qkv.json")
    off.store("theme", "dark")
    assert off.recent() == [] and off.read() == Remembered() and QSettings().value("theme") is None


def test_a_window_opens_on_damaged_settings(qtbot, lesson_scene):
    from qkv_studio.ui.window.main_window import MainWindow

    st = QSettings()
    for key, value in {"geometry": "junk", "window_state": 12, "theme": "neon", "zoom": "huge",
                       "colormap": "rainbow", "animate": "false", "recent_files": 5}.items():
        st.setValue(key, value)
    st.sync()
    window = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.theme_actions["light"].isChecked() and window._zoom == 1.0
    assert not window.heatmap.animate and not window.acts.animate.isChecked()
    qtbot.waitUntil(lambda: window.cmap_actions["viridis"].isChecked(), timeout=1000)
    window.close()
