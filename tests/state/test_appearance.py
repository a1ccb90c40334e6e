"""The Appearance: validated values, signals only on a real change; widgets bound to it follow it."""

import pytest
from PySide6.QtWidgets import QWidget

from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, SEQUENTIAL
from qkv_studio.render.theme import DEFAULT_THEME, THEMES
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance


@pytest.fixture
def look(qtbot):
    return Appearance()


def _record(look: Appearance) -> list:
    seen = []
    look.theme_changed.connect(lambda t: seen.append(("theme", t.name)))
    look.colormap_changed.connect(lambda n: seen.append(("colormap", n)))
    look.font_scale_changed.connect(lambda f: seen.append(("font_scale", f)))
    look.screen_scale_changed.connect(lambda s: seen.append(("screen_scale", s)))
    look.scale_changed.connect(lambda s: seen.append(("scale", s)))
    look.changed.connect(lambda: seen.append("changed"))
    return seen


def test_defaults(look):
    assert look.theme is THEMES[DEFAULT_THEME]
    assert look.colormap == DEFAULT_SEQUENTIAL
    assert look.font_scale == 1.0 and look.screen_scale == 1.0 and look.scale == 1.0


def test_each_setter_announces_its_noun_then_changed(look):
    seen = _record(look)
    look.set_theme("dark")
    look.set_colormap("magma")
    look.set_font_scale(2.0)
    look.set_screen_scale(1.5)
    assert seen == [("theme", "dark"), "changed", ("colormap", "magma"), "changed",
                    ("font_scale", 2.0), ("scale", 2.0), "changed",
                    ("screen_scale", 1.5), ("scale", 3.0), "changed"]
    assert look.theme is THEMES["dark"] and look.colormap == "magma"
    assert look.scale == pytest.approx(3.0)


def test_setting_the_same_value_again_says_nothing(look):
    look.set_theme("projector")
    seen = _record(look)
    look.set_theme("projector")
    look.set_theme(THEMES["projector"])  # (a Theme or its name)
    look.set_colormap(DEFAULT_SEQUENTIAL)
    look.set_font_scale(1.0)
    look.set_font_scale("1")
    look.set_screen_scale(1.0)
    assert seen == []


@pytest.mark.parametrize("call, bad", [
    ("set_theme", "sepia"), ("set_theme", None), ("set_theme", 3),
    ("set_colormap", "jet"), ("set_colormap", "CET-CBD1"),  # (the diverging map is the scores', not a choice)
    ("set_font_scale", 0), ("set_font_scale", 20), ("set_font_scale", float("nan")), ("set_font_scale", "big"),
    ("set_screen_scale", -1), ("set_screen_scale", float("inf")), ("set_screen_scale", None),
])
def test_bad_values_are_refused_with_a_message_and_change_nothing(look, call, bad):
    seen = _record(look)
    with pytest.raises(ValueError) as info:
        getattr(look, call)(bad)
    assert str(info.value)
    assert seen == []
    assert look.theme is THEMES[DEFAULT_THEME] and look.colormap == DEFAULT_SEQUENTIAL and look.scale == 1.0


def test_every_weights_colormap_is_accepted(look):
    for name in SEQUENTIAL:
        look.set_colormap(name)
        assert look.colormap == name


def test_the_constructor_validates_too(qtbot):
    with pytest.raises(ValueError):
        Appearance(theme="sepia")
    with pytest.raises(ValueError):
        Appearance(font_scale=0)
    a = Appearance(theme="dark", colormap="cividis", font_scale=2.2, screen_scale=2.0)
    assert (a.theme.name, a.colormap, a.scale) == ("dark", "cividis", pytest.approx(4.4))


# ---- binding (model → widget) ---------------------------------------------------------------------
class _Swatch(FollowsAppearance, QWidget):
    """A widget that records what it was told to restyle to."""

    def __init__(self, appearance=None, parts=()) -> None:
        super().__init__()
        self.told: list = []
        self._parts = tuple(parts)
        self.bind_appearance(appearance)

    def _appearance_parts(self):
        return self._parts

    def _restyle_theme(self, theme):
        self.told.append(("theme", theme.name))

    def _restyle_colormap(self, name):
        self.told.append(("colormap", name))

    def _restyle_scale(self, f):
        self.told.append(("scale", f))


def test_a_widget_bound_to_the_default_look_does_no_work(qtbot, look):
    w = _Swatch(look)
    qtbot.addWidget(w)
    assert w.appearance is look and w.told == []


def test_binding_synchronises_once_what_differs(qtbot):
    look = Appearance(theme="dark", font_scale=2.0)
    w = _Swatch(look)
    qtbot.addWidget(w)
    assert w.told == [("theme", "dark"), ("scale", 2.0)]


def test_a_bound_widget_follows_every_change_once(qtbot, look):
    w = _Swatch(look)
    qtbot.addWidget(w)
    look.set_theme("projector")
    look.set_colormap("magma")
    look.set_font_scale(2.2)
    look.set_screen_scale(2.0)  # (the screen's share: the widget is sized by font × screen)
    look.set_theme("projector")
    assert w.told == [("theme", "projector"), ("colormap", "magma"), ("scale", 2.2), ("scale", 4.4)]


def test_rebinding_leaves_the_old_appearance_and_takes_the_new_look(qtbot, look):
    w = _Swatch(look)
    qtbot.addWidget(w)
    other = Appearance(theme="dark")
    w.bind_appearance(other)
    assert w.appearance is other and w.told == [("theme", "dark")]
    look.set_theme("projector")  # the old one no longer reaches it
    assert w.told == [("theme", "dark")]
    w.bind_appearance(None)
    other.set_theme("light")
    assert w.appearance is None and w.told == [("theme", "dark")]


def test_parts_are_bound_with_their_widget(qtbot, look):
    part = _Swatch()
    w = _Swatch(look, parts=(part,))
    qtbot.addWidget(w)
    qtbot.addWidget(part)
    assert part.appearance is look
    look.set_colormap("cividis")
    assert part.told == [("colormap", "cividis")] and w.told == [("colormap", "cividis")]
