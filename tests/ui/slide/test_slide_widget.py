"""The slide of its own (qkv_studio.ui.slide.widget): on the score stages the calculation table stands
beside or under the heatmap only where both stay legible at the caption's text size, else it is left out
with the P hint — never a scrolling table under a heatmap flattened into thin rows (issue 31: the
multihead preset, the long preset, a real model's head with 64-number vectors)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from qkv_studio.core import View, load_preset
from qkv_studio.core.scene import Scene
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.slide import SlideLook, SlideWidget
from qkv_studio.ui.update_policy import settle

SIZES = [(1024, 768), (1280, 720), (1366, 768), (1920, 1080), (960, 540)]


def _head64() -> Scene:
    """Ten tokens of 64-number vectors, as a real model's head."""
    rng = np.random.default_rng(3)
    tokens = "the cat sat on the mat and then it slept".split()
    q, k, v = (rng.normal(size=(10, 64)) for _ in range(3))
    return Scene.from_arrays(q, k, v, tokens)


SCENES = {"lesson": lambda: load_preset("lesson"), "multihead": lambda: load_preset("multihead"),
          "long": lambda: load_preset("long"), "head64": _head64}


def _slide(qtbot, scene: Scene, size: tuple[int, int], stage: str) -> SlideWidget:
    session = Session(scene, view=View(stage=stage))
    look = SlideLook(Appearance())
    look.fit(*size)
    slide = SlideWidget(session, look)
    session.setParent(slide)
    qtbot.addWidget(slide)
    slide.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    slide.resize(*size)
    slide.show()
    settle(slide)
    return slide


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", list(SCENES))
@pytest.mark.parametrize("stage", ["scores", "scaled", "weights"])
def test_the_table_is_beside_or_under_only_where_both_stay_legible(qtbot, name, size, stage):
    slide = _slide(qtbot, SCENES[name](), size, stage)
    heatmap, table = slide.views.get("heatmap"), slide.views.built("calc")
    line = QFontMetricsF(slide.caption_font()).height()
    assert heatmap.isVisible() and slide.main_name == "heatmap"
    shown = table is not None and table.isVisible()
    if shown:
        assert slide.placement.where in ("beside", "under") and not slide.hint.isVisible()
        # the table whole in the caption's text: nothing scrolls, nothing cut
        assert table.font().pointSizeF() == pytest.approx(slide.caption_font().pointSizeF())
        assert table.content_height() <= table.height() + 2
        assert not table.verticalScrollBar().isVisible() and not table.horizontalScrollBar().isVisible()
        # the heatmap's rows at least a line of that text tall (they were a thin strip under the table)
        assert heatmap._cell_h_px() >= 0.8 * line, (heatmap._cell_h_px(), line)
        # the two side by side or one above the other, inside the slide, not overlapping
        a, b = heatmap.geometry(), table.geometry()
        assert not a.intersects(b) and slide.body.rect().contains(a) and slide.body.rect().contains(b)
    else:
        assert slide.placement.left_out and slide.hint.isVisible() and "P" in slide.hint.text()
        assert not slide.hint.geometry().intersects(heatmap.geometry())  # (the hint covers nothing)
    if name == "lesson":  # (the lesson's table always stands with its heatmap; beside wherever it fits)
        assert shown and (slide.placement.where == "beside" or size[0] <= 1024), slide.placement
    if name in ("multihead", "long", "head64") and size[1] <= 768:
        assert not shown  # (the scrolling table under a flattened heatmap, issue 31)


def test_the_main_view_changes_with_the_stage_and_p_brings_the_table_to_any_slide(qtbot):
    slide = _slide(qtbot, load_preset("lesson"), (1280, 720), "vectors")
    assert slide.main_name == "plane" and slide.views.get("plane").isVisible()
    assert slide.views.built("calc") is None or not slide.views.get("calc").isVisible()
    slide.toggle_side()
    assert slide.views.get("calc").isVisible() and slide.side_shown()
    slide.session.set_stage("output")
    settle(slide)
    assert slide.main_name == "blend" and not slide.views.get("plane").isVisible()
    assert slide.views.get("blend").isVisible()


def test_a_step_between_the_score_stages_moves_nothing(qtbot):
    slide = _slide(qtbot, load_preset("lesson"), (1920, 1080), "scores")
    places = []
    for stage in ("scores", "scaled", "weights", "scaled"):
        slide.session.set_stage(stage)
        settle(slide)
        # (the heatmap's height follows the stage's caption above it; its width and the table stay)
        places.append((slide.views.get("heatmap").width(), slide.views.get("calc").geometry().getRect()))
    assert len(set(places)) == 1


def _model_like() -> Scene:
    """Six tokens of a language model's head (names with the "␣" of a leading space), 64-number vectors."""
    rng = np.random.default_rng(5)
    tokens = ["The", " cat", " sat", " on", " the", " cat"]
    q, k, v = (rng.normal(scale=0.05, size=(6, 64)) for _ in range(3))
    return Scene.from_arrays(q, k, v, tokens)


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720), (960, 540)], ids=["1024x768", "1280x720", "960x540"])
def test_the_blend_slide_writes_every_bar_name_whole(qtbot, size):
    """A real model's blend slide: every bar's name whole ("␣ca…" before, in the column beside the
    writer), and the names' row as tall as their text (their lower half was cut at the slide's edge)."""
    slide = _slide(qtbot, _model_like(), size, "output")
    blend = slide.views.get("blend")
    assert blend.isVisible() and slide.main_name == "blend"
    axis = blend.bars_plot.getAxis("bottom")
    ticks = blend._ticks
    assert ticks is not None
    names = [text.strip() for _, text in ticks[0]]
    assert len(names) == 6 and not any("…" in n for n in names), names
    font = axis.style["tickFont"]
    assert axis.height() >= QFontMetricsF(font).height()
    bottom = blend.bars_plot.mapTo(slide, blend.bars_plot.rect().bottomLeft()).y()
    assert bottom < slide.height()  # (the plot, its names included, inside the slide)
