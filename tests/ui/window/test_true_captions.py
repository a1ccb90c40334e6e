"""Captions and labels that say what is true for the numbers shown (issue 19, items 5–9), through the window."""

import re

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from qkv_studio.core import Scene, View, list_presets, read_session, write_session
from qkv_studio.render.theme import THEMES
from qkv_studio.ui.update_policy import settle
from qkv_studio.ui.widgets.formatting import fmt_fixed
from tests.views import LESSON_VIEW


def _pick_scene(stage="weights") -> Scene:
    """“cat” takes all the weight: 1.00 / 0.00 / 0.00, and the output [1, 6e-22] in floats."""
    return Scene.create(["cat", "mat", "sat"], q=[[70, 0], [0, 1], [1, 1]], k=[[1, 0], [0, 1], [0, 1]],
                        v=[[1, 0], [0, 1], [0, 1]])


def _settle(qtbot, window):
    window.session.flush()
    settle(window)  # (the caption and the blend follow at the next frame: run now, no waiting)


# ---- item 5: a pick is not called a blend; blends are rounded as the cells show them -------------------

def test_a_pick_is_called_a_pick_and_the_blend_reads_as_the_cells(qtbot, show_window):
    window = show_window(_pick_scene(), view=View(0, "weights"))
    _settle(qtbot, window)
    text = window.stepper.caption.text()
    assert "Almost a pick" in text and "“cat” takes 1.00" in text
    assert "A blend, not a pick" not in text
    window.session.set_stage("output")
    _settle(qtbot, window)
    text = window.stepper.caption.text()
    assert "= [1.00, 0.00]" in text and "e−" not in text and "e-" not in text
    assert "Every token contributes" not in text and "v<sub>cat</sub> alone" in text
    assert "[1.00, 0.00]" in window.panels.blend.title.text()
    blend = window.panels.blend.title.text()
    assert "almost a pick" in blend and "every token contributes" not in blend and "e-" not in blend
    cell = window.panels.calc.calc_model.index(3, window.panels.calc.calc_model.columns().index("weighted")).data()
    assert cell == "o = [1.00, 0.00]"  # the same rounding as the captions


def test_a_near_tie_a_leader_and_a_masked_row_are_told_apart(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    s = window.session
    s.set_query(0)  # 0.29 / 0.29 / 0.29 / 0.14
    _settle(qtbot, window)
    assert "near tie: “cat”, “sat” and “mat” share the lead (0.29 each)" in window.stepper.caption.text()
    s.set_query(2)  # 0.54 on cat
    _settle(qtbot, window)
    assert "A blend led by “cat” (0.54)" in window.stepper.caption.text()
    s.set_mask("causal")
    s.set_query(0)  # "the" may see only itself
    _settle(qtbot, window)
    text = window.stepper.caption.text()
    assert "a pick, not a blend" in text.lower() and "only key it may see" in text


def test_labels_of_coinciding_and_close_arrows_do_not_overprint(qtbot, show_window):
    scene = Scene.create(["a", "b", "c", "d"], q=[[0, 1], [1, 0], [0, 1], [-1, 0]],
                         k=[[1.0, 0.0], [1.01, 0.01], [1.01, 0.01], [-1, -1]], v=[[1, 0], [0, 1], [1, 1], [0, 0]])
    window = show_window(scene)
    window.show_panel(window.docks.plane)  # (at the window's 1600×950 a tab behind the blend)
    plane = window.panels.plane
    settle(window)
    texts = plane.label_texts()
    assert any("k b = k c" in t and "k a" in t for t in texts), texts  # one label, not three on top of each other

    def overlapping() -> list:
        rects = [item.sceneBoundingRect() for item in plane._labels if item.isVisible()]
        return [(a, b) for i, a in enumerate(rects) for b in rects[i + 1:] if a.intersects(b)]

    # (the docks settle into their sizes over the first frames; the plane redraws its labels for each)
    settle(window)
    assert overlapping() == [], plane.label_texts()


# ---- item 6: the explorer's numbers say where they come from ------------------------------------------

def test_the_explorer_labels_its_mean_and_its_one_query(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    explorer = window.panels.explorer
    window.show_panel(window.docks.explorer)
    explorer.set_scaled(False)
    explorer.set_d_k(64)
    mean_raw = explorer.current().stats.max_weight
    mean_scaled = explorer.other().stats.max_weight
    caption = explorer.caption.text()
    assert f"top weight <b>{mean_raw:.2f}</b> on average over 1,000 random queries" in caption
    assert f"mean top weight {mean_scaled:.2f}" in caption
    assert explorer.max_readout.title.text() == "mean top weight"
    assert explorer.readouts()["max_weight"] == f"{mean_raw:.2f}"
    raw_w, scaled_w = explorer.sample_weights()
    for plot, w in ((explorer.raw_plot, raw_w), (explorer.scaled_plot, scaled_w)):
        title = plot.titleLabel.text
        assert "one query" in title and f"top {fmt_fixed(float(w.max()))}" in title
        shown = [float(item.toPlainText()) for item in explorer.bar_labels["raw" if plot is explorer.raw_plot
                                                                           else "scaled"]]
        assert max(shown) == pytest.approx(float(w.max()), abs=0.005)  # the bars are that query's
    assert fmt_fixed(float(raw_w.max())) != f"{mean_raw:.2f}"  # (two numbers: each says which it is)


# ---- item 7: a description is shown as the preset's, and only while it is true ------------------------

def test_a_presets_description_is_shown_as_its_own_and_dropped_once_false(qtbot, show_window, lesson_scene,
                                                                           tmp_path):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    window.open_preset("lesson")
    _settle(qtbot, window)
    tip = window.stepper.caption.toolTip()
    assert tip.startswith("Preset “lesson”: ") and "0.54 on cat" in tip
    s = window.session
    s.set_value("Q", 2, 0, 3.0)
    _settle(qtbot, window)
    assert window.stepper.caption.toolTip() == "" and s.scene.description == ""
    w = s.result.weights[2]
    top = int(np.argmax(w))
    assert f"{fmt_fixed(float(w[top]))} on “{s.scene.token_label(top)}”" in window.stepper.caption.text()
    assert "0.54 on “cat”" not in window.stepper.caption.text()
    path = tmp_path / "edited.qkv.json"
    write_session(path, s.scene, s.view)
    assert "0.54 on cat" not in path.read_text() and read_session(path).scene.description == ""
    s.undo_stack.undo()  # the preset's numbers again: its description is true again
    _settle(qtbot, window)
    assert "0.54 on cat" in window.stepper.caption.toolTip()
    s.set_stage("output")  # (a step changes no number)
    assert s.scene.description
    window.acts.randomise.trigger()  # new numbers from a whole new scene: its description is dropped too
    _settle(qtbot, window)
    assert s.scene.description == "" and window.stepper.caption.toolTip() == ""


# ---- item 8: no "…." ; descriptions cut at words; one W notation ---------------------------------------

def test_a_long_list_of_weights_ends_in_one_full_stop(qtbot, show_window):
    rng = np.random.default_rng(5)
    scene = Scene.create([f"token{i}" for i in range(6)], q=rng.normal(size=(6, 2)), k=rng.normal(size=(6, 2)),
                         v=rng.normal(size=(6, 2)))
    window = show_window(scene)
    _settle(qtbot, window)
    text = window.stepper.caption.text()
    assert "…." not in text and ", …" not in text and " and 2 smaller." in text


def test_preset_menu_cuts_descriptions_at_a_word_and_tips_the_whole(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    window.submenus["preset_menu"].aboutToShow.emit()
    described = {p.name: p.description for p in list_presets()}
    actions = window.submenus["preset_menu"].actions()
    assert len(actions) == len(described)
    for act in actions:
        name, shown = act.text().split(" — ", 1)
        whole = described[name]
        assert act.statusTip() == whole and act.toolTip() == whole
        if shown != whole:
            assert shown.endswith("…") and len(shown) <= 61
            head = shown[:-1]
            assert whole.startswith(head) and whole[len(head):][:1] in (" ", ",", ";", ":", ".")  # a word's end
    assert not any("blocks th…" in a.text() for a in actions)


def _all_actions(menu):
    for act in menu.actions():
        yield act
        if act.menu() is not None:
            yield from _all_actions(act.menu())


def test_one_w_notation_in_menus_and_editors(qtbot, show_window, lesson_scene):
    window = show_window(lesson_scene, view=LESSON_VIEW)
    for top in window.menuBar().actions():
        for act in _all_actions(top.menu()):
            for text in (act.text(), act.statusTip(), act.toolTip()):
                assert not re.search(r"W\^|W[ᵠᴷⱽᴼ]", text), text
    window.acts.projection.trigger()
    for name, letter in (("Wq", "Q"), ("Wk", "K"), ("Wv", "V")):
        title = window.editors[name].title.text()
        assert f"W<sup>{letter}</sup>" in title and "^" not in title
    assert "W<sup>Q</sup>" in window.editors["Q"].shape_label.text()


# ---- item 9: right and wrong in the theme's good and bad colours, with ✓ / ✗ --------------------------

def _contrast(a: str, b: str) -> float:
    def lum(h: str) -> float:
        c = [int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # (offscreen: the dialog's raise_())
@pytest.mark.parametrize("theme", list(THEMES))
def test_the_quiz_marks_right_and_wrong_in_good_and_bad(qtbot, show_window, lesson_scene, theme):
    t = THEMES[theme]
    for colour in (t.good, t.bad):
        assert _contrast(colour, t.background) >= 4.5 and _contrast(colour, t.panel) >= 4.5
    window = show_window(lesson_scene, view=LESSON_VIEW)
    window.apply_theme(theme)
    window.show_quiz()
    quiz = window._quiz
    question = quiz.questions[0]
    right = next(i for i, o in enumerate(question.question.options) if o.correct)
    wrong = next(i for i, o in enumerate(question.question.options) if not o.correct)
    rb = question.options[right]
    qtbot.mouseClick(rb, Qt.LeftButton, pos=QPoint(rb.width() // 2, rb.height() // 2))
    text = question.feedback.text()
    assert f"color:{t.good}" in text and "✓" in text and t.output_color not in text
    rb = question.options[wrong]
    qtbot.mouseClick(rb, Qt.LeftButton, pos=QPoint(rb.width() // 2, rb.height() // 2))
    text = question.feedback.text()
    assert f"color:{t.bad}" in text and "✗" in text


def test_an_exported_figures_description_ends_its_token_list_in_one_full_stop(tmp_path):
    from qkv_studio.export.files import export_file
    from qkv_studio.render.figure import FigureOptions

    rng = np.random.default_rng(1)
    scene = Scene.create([f"t{i}" for i in range(70)], q=rng.normal(size=(70, 2)), k=rng.normal(size=(70, 2)),
                         v=rng.normal(size=(70, 2)))
    out = tmp_path / "long.svg"
    export_file(scene, out, options=FigureOptions())
    text = out.read_text(encoding="utf-8")
    import re
    desc = re.search(r"<desc>(.*?)</desc>", text, re.S).group(1)
    assert "for 70 tokens (t0, t1, t2, t3, t4, …, t68, t69)" in desc  # (the alt text: the first and the last)
    assert desc.endswith(".") and not desc.endswith("..") and "…." not in text and ". ." not in desc
