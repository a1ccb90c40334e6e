"""The √d_k explorer, driven with qtbot: sliders, the ÷√d_k box and what the readouts then say."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QSlider

from qkv_studio.render.theme import THEMES
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.lesson.sqrt_dk_explorer import SqrtDkExplorer


@pytest.fixture
def explorer(qtbot):
    w = SqrtDkExplorer()
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


def num(text: str) -> float:
    return float(text.split()[0].replace("−", "-"))


def test_opens_on_the_lessons_case_d_k_64_unscaled(explorer):
    r = explorer.readouts()
    assert explorer.d_k() == 64 and not explorer.scaled()
    assert abs(num(r["std"]) / 8 - 1) < 0.05  # raw scores swing by ±8
    assert num(r["max_weight"]) > 0.8  # saturated
    assert num(r["gradient"]) < 0.2
    assert "±√64 = ±8" in explorer.caption.text() and "learning stalls" in explorer.caption.text()


def test_the_scale_box_brings_the_spread_back_to_one(qtbot, explorer):
    before = explorer.readouts()
    box = explorer.scale_box
    qtbot.mouseClick(box, Qt.LeftButton, pos=QPoint(10, box.height() // 2))  # on the box itself
    assert explorer.scaled()
    r = explorer.readouts()
    assert abs(num(r["std"]) - 1) < 0.05
    assert num(r["max_weight"]) < 0.45 < num(before["max_weight"])
    assert num(r["gradient"]) > 2 * num(before["gradient"])
    assert num(r["entropy"]) > num(before["entropy"])
    assert explorer.current().scale and not explorer.other().scale


def test_dragging_the_slider_updates_the_readouts(qtbot, explorer):
    slider = explorer.d_k_slider.findChild(QSlider)
    slider.setFocus()
    old = explorer.readouts()["std"]
    qtbot.keyClick(slider, Qt.Key_Home)  # the user's own keys: to d_k = 1
    qtbot.waitUntil(lambda: explorer.d_k() == 1 and explorer.readouts()["std"] != old, timeout=2000)
    assert abs(num(explorer.readouts()["std"]) - 1) < 0.05
    for _ in range(15):
        qtbot.keyClick(slider, Qt.Key_Right)  # a quick run of moves: throttled, the last one is drawn
    qtbot.waitUntil(lambda: explorer.current().d_k == 16, timeout=2000)
    assert abs(num(explorer.readouts()["std"]) / 4 - 1) < 0.05
    explorer.d_k_slider.setValue(256)
    explorer.flush()
    assert abs(num(explorer.readouts()["std"]) / 16 - 1) < 0.05


@pytest.mark.parametrize("d_k", [1, 8, 64, 512])
def test_scaled_std_is_about_one_at_every_d_k(explorer, d_k):
    explorer.set_scaled(True)
    explorer.set_d_k(d_k)
    assert abs(num(explorer.readouts()["std"]) - 1) < 0.05
    assert abs(explorer.current().stats.score_std - 1) < 0.05


def test_quick_buttons_and_saturation_grows_with_d_k(qtbot, explorer):
    tops = []
    for button in explorer.quick_buttons:  # 1, 8, 64, 512
        qtbot.mouseClick(button, Qt.LeftButton)
        tops.append(explorer.current().stats.max_weight)
    assert [explorer.d_k()] == [512]
    assert tops == sorted(tops) and tops[-1] > 0.9


def test_temperature_divides_the_scores(explorer):
    base = explorer.current().stats.score_std
    explorer.set_temperature(2.0)
    assert explorer.current().stats.score_std == pytest.approx(base / 2, rel=1e-9)
    assert "Temperature 2" in explorer.caption.text()
    explorer.set_temperature(0.5)
    assert explorer.current().stats.max_weight > 0.9


def test_side_by_side_bars_show_raw_saturated_and_scaled_spread(explorer):
    raw_w, scaled_w = explorer.sample_weights()
    raw_s, scaled_s = explorer.sample_scores()
    assert raw_w.shape == scaled_w.shape == (8,)
    np.testing.assert_allclose(scaled_s, raw_s / 8)
    assert np.abs(raw_s).max() > 5  # the raw scores swing by several units
    assert raw_w.max() > 0.8 > 0.5 > scaled_w.max()
    heights = explorer.bars["raw"].opts["height"]
    np.testing.assert_allclose(heights, raw_w)


def test_histogram_follows_the_setting(explorer):
    edges, dens = explorer.histogram_data()
    centres = (edges[:-1] + edges[1:]) / 2
    mass = dens * np.diff(edges)
    assert mass.sum() == pytest.approx(1.0)
    assert mass[np.abs(centres) > 4].sum() > 0.4  # raw: much of it beyond ±4
    explorer.set_scaled(True)
    edges2, dens2 = explorer.histogram_data()
    np.testing.assert_array_equal(edges, edges2)  # one x-range: the narrowing is seen
    mass2 = dens2 * np.diff(edges2)
    assert mass2[np.abs(centres) > 4].sum() < 0.01


def test_theme_and_font_scale(explorer):
    look = Appearance()
    explorer.bind_appearance(look)
    for theme in THEMES.values():
        look.set_theme(theme)
    look.set_font_scale(2.0)
    assert explorer.caption.font().pointSizeF() == pytest.approx(20.0)
    assert explorer.std_readout.value.font().pointSizeF() > explorer.std_readout.title.font().pointSizeF()
    with pytest.raises(ValueError):
        look.set_font_scale(0.1)
    look.set_colormap("magma")  # (the explorer draws no colour-mapped data: it just goes on)
    assert explorer.readouts()["std"]


def test_changed_is_emitted(qtbot, explorer):
    with qtbot.waitSignal(explorer.changed, timeout=1000):
        explorer.set_scaled(True)


def test_a_short_slim_dock_keeps_the_plots(qtbot, explorer):
    explorer.resize(440, 480)
    qtbot.waitUntil(lambda: explorer.summary.isVisible(), timeout=1000)
    assert not explorer.std_readout.isVisible()
    assert "σ <b>" in explorer.summary.text() and "gradient" in explorer.summary.text()
    assert explorer.graphics.height() > 200
    explorer.resize(1000, 700)
    qtbot.waitUntil(lambda: explorer.std_readout.isVisible(), timeout=1000)
    assert not explorer.summary.isVisible()


def test_a_very_short_dock_says_it_in_one_sentence_and_puts_the_plots_in_a_row(qtbot, explorer):
    look = Appearance()
    explorer.bind_appearance(look)
    look.set_font_scale(2.2)  # the projector, in a dock under the calculation table
    explorer.resize(860, 560)
    qtbot.waitUntil(explorer.plots_in_a_row, timeout=1000)
    text = explorer.caption.text()
    assert "±√64 = ±8" in text and "saturates" in text and "learning stalls" not in text  # the short caption
    assert explorer.summary.isVisible() and "(÷√dₖ:" not in explorer.summary.text()
    hist, raw, scaled = (p.sceneBoundingRect() for p in (explorer.hist_plot, explorer.raw_plot, explorer.scaled_plot))
    assert hist.right() <= raw.left() + 1 and raw.right() <= scaled.left() + 1  # side by side …
    assert scaled.right() <= explorer.graphics.width() + 1  # … and all inside the panel
    assert min(r.height() for r in (hist, raw, scaled)) > 150  # each tall enough to read
    assert "raw" in explorer.raw_plot.titleLabel.text and "top" in explorer.raw_plot.titleLabel.text
    look.set_font_scale(1.0)
    explorer.resize(1000, 900)
    qtbot.waitUntil(lambda: not explorer.plots_in_a_row(), timeout=1000)
    assert "learning stalls" in explorer.caption.text()
    assert "raw q·k → softmax: top " in explorer.raw_plot.titleLabel.text  # (the long name, with its own top)
