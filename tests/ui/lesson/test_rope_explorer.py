"""The RoPE explorer: move both positions together and the score stays; move one and it changes."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor

from qkv_studio.core import rope
from qkv_studio.render.theme import get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.lesson.rope_explorer import DIM, RopeExplorer


@pytest.fixture
def explorer(qtbot):
    w = RopeExplorer()
    qtbot.addWidget(w)
    w.resize(520, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_moving_both_together_keeps_the_score_and_moving_one_changes_it(explorer):
    explorer.set_positions(3, 10)
    s = explorer.score()
    assert "offset n − m = <b>7</b>" in explorer.readout.text() and f"{s:.3f}" in explorer.readout.text()
    explorer.set_together(True)
    explorer.m_box.setValue(40)  # the key follows: n = 47
    assert explorer.positions == (40, 47) and explorer.score() == pytest.approx(s, abs=1e-12)
    assert explorer.marker_position() == pytest.approx((7.0, s))
    explorer.n_box.setValue(60)  # the query follows: m = 53
    assert explorer.positions == (53, 60) and explorer.score() == pytest.approx(s, abs=1e-12)
    explorer.set_together(False)
    explorer.n_box.setValue(61)
    assert explorer.positions == (53, 61) and abs(explorer.score() - s) > 1e-3
    offsets, scores = explorer.curve_data()
    i = int(np.flatnonzero(offsets == 8)[0])
    assert scores[i] == pytest.approx(explorer.score(), abs=1e-12)  # the mark sits on the curve


def test_together_stops_at_the_ends_and_the_pairs_show_their_frequencies(explorer):
    explorer.set_positions(500, 510)
    explorer.set_together(True)
    explorer.m_box.setValue(505)  # the key would pass 512: nothing moves
    assert explorer.positions == (500, 510)
    theta, angles = explorer.pair_bars()
    np.testing.assert_allclose(theta, rope.pair_frequencies(DIM, 10_000))
    np.testing.assert_allclose(angles, rope.pair_angles(10, DIM, 10_000))
    s = explorer.score()
    explorer.set_base(100_000)
    assert explorer.base_box.currentIndex() == 1 and explorer.score() != pytest.approx(s)
    np.testing.assert_allclose(explorer.pair_bars()[0], rope.pair_frequencies(DIM, 100_000))


def test_it_follows_the_appearance(explorer):
    look = Appearance()
    explorer.bind_appearance(look)
    look.set_theme(get_theme("projector"))
    assert explorer.curve_plot.backgroundBrush().color() == QColor(get_theme("projector").background)
    assert get_theme("projector").highlight in explorer.readout.text()


def test_the_window_offers_it_in_the_view_menu(show_window, lesson_scene):
    window = show_window(lesson_scene)
    window.acts.rope.trigger()
    assert window.docks.rope.isVisible() and isinstance(window.panel("rope"), RopeExplorer)
    assert window.acts.rope.shortcut().toString() == "Ctrl+Shift+O"
