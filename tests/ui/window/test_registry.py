"""The panel registry: one entry per panel, read by the window's docks and menus, the command line and
``prepare_window``; a panel registered at runtime is offered everywhere."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtWidgets import QDockWidget, QLabel, QWidget

from qkv_studio.cli import options as cli_options
from qkv_studio.core import load_preset
from qkv_studio.ui import registry
from qkv_studio.ui.registry import PanelSpec
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from tests.views import LESSON_VIEW


def _panel_choices() -> list[str]:
    parser = cli_options._screenshot_parser()
    (action,) = [a for a in parser._actions if a.dest == "panel"]
    return list(action.choices)


def _menu(window, title: str):
    return window.menu_by_title[title]


def test_importing_the_registry_loads_no_qt():
    code = ("import sys; import qkv_studio.ui.registry as r; r.panels(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_cli_panel_choices_are_the_registry_s():
    assert _panel_choices() == list(registry.cli_names()) == ["explorer", "heads", "model", "rope", "unprojected",
                                                              "quiz"]
    assert cli_options.PANELS == registry.cli_names()


def test_the_view_and_help_menus_list_every_registered_panel(show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    docks = {d.objectName(): d for d in window.findChildren(QDockWidget)}
    assert sorted(docks) == sorted(f"dock_{s.name}" for s in registry.panels() if s.docked)
    for title in ("&View", "&Help"):
        entries = [a for a in _menu(window, title).actions()]
        expected = []
        for spec in registry.panels():
            if spec.menu != title:
                continue
            if spec.lazy:
                expected.append(window.acts[spec.name])
            else:  # a core dock: its own show/hide toggle
                expected.append(window.dock(spec.name).toggleViewAction())
        panel_entries = [a for a in entries if a in expected]
        assert panel_entries == expected
        assert [a.text() for a in panel_entries] == [s.menu_text or s.title for s in registry.panels()
                                                     if s.menu == title]
    assert window.acts.explorer.shortcut().toString() == "Ctrl+Shift+D"
    assert window.acts.model.shortcut().toString() == "Ctrl+Shift+M"


def test_view_menu_panels_wait_until_first_shown(show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    assert window.built_panel("explorer") is None and window.built_panel("quiz") is None
    assert type(window.docks.explorer.widget()) is QWidget and window._built_panels() == ()  # a placeholder
    window.acts.explorer.trigger()
    assert window.docks.explorer.isVisible()
    assert window.built_panel("explorer") is window.panels.explorer is window.docks.explorer.widget()
    assert window._built_panels() == (window.panels.explorer,)


class _Probe(FollowsAppearance, QLabel):
    """A test panel that follows the app's look: records what its Appearance tells it."""

    def __init__(self, window) -> None:
        super().__init__(f"{len(window.session.scene.tokens)} tokens")
        self.told: list[tuple[str, object]] = []

    def _restyle_theme(self, theme) -> None:
        self.told.append(("theme", theme.name))

    def _restyle_colormap(self, name: str) -> None:
        self.told.append(("colormap", name))

    def _restyle_scale(self, scale: float) -> None:
        self.told.append(("font_scale", scale))


@pytest.fixture
def with_probe(monkeypatch):
    made: list[_Probe] = []

    def factory(window):
        made.append(_Probe(window))
        return made[-1]

    probe = PanelSpec("probe", "Probe", factory, menu_text="&Probe panel", shortcut="Ctrl+Shift+J",
                      cli_name="probe", tip="A panel registered by a test")
    monkeypatch.setattr(registry, "PANELS", registry.PANELS + (probe,))
    return made


def test_a_panel_registered_at_runtime_is_in_the_view_menu_and_opens(show_window, lesson_scene, with_probe):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    view = _menu(window, "&View")
    assert window.acts.probe in view.actions() and window.acts.probe.text() == "&Probe panel"
    assert window.acts.probe.shortcut().toString() == "Ctrl+Shift+J"
    assert window.docks.probe.windowTitle() == "Probe" and not window.docks.probe.isVisible()
    assert with_probe == []  # built when first shown, not with the window
    window.apply_theme("dark")
    window.acts.probe.trigger()
    assert window.docks.probe.isVisible()
    (probe,) = with_probe
    assert window.panel("probe") is probe is window.docks.probe.widget() and probe.text() == "4 tokens"
    assert ("theme", "dark") in probe.told and probe.appearance is window.appearance
    window.apply_theme("projector")  # a built panel follows the window's theme like the others
    assert probe.told[-1] == ("theme", "projector")
    assert "probe" in _panel_choices()


def test_a_runtime_panel_opens_from_the_command_line_name(qtbot, with_probe):
    from qkv_studio.app import prepare_window

    window = prepare_window(load_preset("lesson"), size=(1280, 720), panels=("probe",))
    qtbot.addWidget(window)
    assert window.docks.probe.isVisible() and window.panel("probe") is with_probe[0]
    window.close()


def _offscreen_dialog(window):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDialog

    dialog = QDialog(window)
    dialog.setAttribute(Qt.WA_DontShowOnScreen, True)
    return dialog


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # (offscreen: a dialog cannot be raised)
def test_a_dialog_panel_in_a_menu_of_its_own(show_window, lesson_scene, monkeypatch):
    from PySide6.QtWidgets import QDialog

    spec = PanelSpec("notes", "Notes", _offscreen_dialog, menu="&Lesson", menu_text="&Notes…",
                     kind="dialog", cli_name="notes")
    monkeypatch.setattr(registry, "PANELS", registry.PANELS + (spec,))
    window = show_window(lesson_scene, view=LESSON_VIEW)
    lesson = _menu(window, "&Lesson")
    assert [a.text() for a in lesson.actions()] == ["&Notes…"]
    assert window.menuBar().actions()[-1].menu() is lesson
    assert window.built_panel("notes") is None and "notes" not in window.docks
    window.acts.notes.trigger()
    dialog = window.built_panel("notes")
    assert isinstance(dialog, QDialog) and dialog.isVisible() and dialog.parent() is window
    dialog.close()


def test_bad_entries_are_refused_with_a_message(monkeypatch):
    with pytest.raises(ValueError, match="not 'module:attribute'"):
        PanelSpec("x", "X", "no_colon").build(None)
    with pytest.raises(ValueError, match="lazy"):
        PanelSpec("x", "X", "m:f", kind="dialog", lazy=False)
    with pytest.raises(ValueError, match="identifier"):
        PanelSpec("two words", "X", "m:f")
    twin = PanelSpec("explorer2", "Again", "m:f", shortcut="Ctrl+Shift+D")
    monkeypatch.setattr(registry, "PANELS", registry.PANELS + (twin,))
    with pytest.raises(ValueError, match="share a shortcut: Ctrl\\+Shift\\+D"):
        registry.panels()
    with pytest.raises(ValueError, match="unknown panel 'calcs'"):
        registry.by_cli_name("calcs")
    with pytest.raises(KeyError, match="unknown panel"):
        registry.get("calcs")


def test_every_factory_path_resolves():
    for spec in registry.panels():
        assert callable(registry.resolve(spec.factory)), spec.name
        if spec.on_show is not None:
            assert callable(registry.resolve(spec.on_show)), spec.name
