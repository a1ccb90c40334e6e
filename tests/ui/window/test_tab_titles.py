"""The docks' tabs shorten by one rule (issue 31): every tab whole, by its whole title where those fit,
else by its short one; the whole title always in the tooltip and the accessible name."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar

from qkv_studio.ui import registry


def _bars(window) -> list[QTabBar]:
    return [b for b in window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
            if b.isVisible() and b.count() > 1]


def _whole_titles(window) -> set[str]:
    return {s.title for s in registry.panels()}


@pytest.mark.parametrize("panel", ["model", "rope"])
def test_a_panel_opened_in_a_small_window_leaves_every_tab_whole(qtbot, show_window, lesson_scene, panel):
    """At 1280×720 the Real model or the RoPE explorer joined the right column's tabs: "Bl…",
    "Tokens and vect…", "Real mo…"."""
    window = show_window(lesson_scene, (1280, 720))
    window.layout_docks()
    window.show_panel(window.dock(panel))
    qtbot.waitUntil(lambda: window.dock(panel).isVisible(), timeout=3000)
    qtbot.waitUntil(lambda: any(b.count() >= 3 for b in _bars(window)), timeout=3000)
    bars = _bars(window)
    assert bars
    for bar in bars:
        for i in range(bar.count()):
            text = bar.tabText(i)
            assert bar.tabRect(i).width() >= bar.tabSizeHint(i).width(), (text, bar.tabRect(i), bar.width())
            assert bar.rect().contains(bar.tabRect(i)), (text, bar.tabRect(i), bar.width())
            spec = next(s for s in registry.panels() if text in (s.title, s.short_title))
            assert bar.accessibleTabName(i) == spec.title
            assert bar.tabToolTip(i) == spec.title
    assert window.dock(panel).accessibleName() == registry.get(panel).title


def test_tabs_keep_their_whole_titles_where_they_fit(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, (1600, 950))
    window.layout_docks()
    for bar in _bars(window):
        assert all(bar.tabText(i) in _whole_titles(window) for i in range(bar.count())), \
            [bar.tabText(i) for i in range(bar.count())]


def test_the_view_menu_keeps_the_whole_titles(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, (1280, 720))
    window.layout_docks()
    window.show_panel(window.docks.model)
    qtbot.waitUntil(lambda: window.docks.model.isVisible(), timeout=3000)
    for spec in registry.panels():
        if spec.docked:
            assert window.dock(spec.name).toggleViewAction().text() == spec.title
