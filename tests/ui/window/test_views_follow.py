"""Every view follows the selected head and every scene load (issue 19, items 2 and 3).

A multi-head scene (the ``multihead`` preset: 6 tokens, d_model = 8 split into 2 heads of 4) is opened,
head 1 selected in the Heads panel; then another scene (4 tokens, d_k = 2, one head — or a real model's
head) comes in by each of the ways a scene can: File → Open, a preset, a deck step, the model panel's
Run, an undoable switch and its undo.  After each, every panel of the registry (and the heatmap and the
stepper at the centre) is asked what it shows — tokens, shape, head, numbers — and must agree with the
Session.  A new panel needs a row in ``PROBES`` (the test checks that each registered panel has one).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from PySide6.QtCore import Qt

from qkv_studio.core import View, load_preset, preset_document, write_session
from qkv_studio.ui import registry
from qkv_studio.ui.panels.calc_table import VECTOR_LIMIT
from qkv_studio.ui.update_policy import settle
from qkv_studio.ui.widgets.formatting import fmt_fixed, fmt_vector


def _settle(qtbot, window) -> None:
    window.session.flush()
    settle(window)
    window.session.flush()


# ---- what each view shows --------------------------------------------------------------------------
def _heatmap(w) -> dict:
    m = np.array(w.heatmap.displayed_matrix())
    return {"n": m.shape[0], "weights": m}


def _stepper(w) -> dict:
    text = w.stepper.caption_text()
    head = re.search(r"Head (\d+)</b> of (\d+) \(dₖ = (\d+)\)", text)
    weight, name = re.search(r"(\d\.\d\d) on “([^”]+)”", text).groups()
    out = {"head": int(head.group(1)) if head else 0, "best": (name, weight)}
    if head:
        out["d_k"] = int(head.group(3))
    return out


def _editors(w) -> dict:
    ed = w.editors["Q"]
    m = ed.model
    rows, cols = m.rowCount(), m.columnCount()
    bold = [c for c in range(cols) if m.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.FontRole)]
    head = re.search(r"head (\d+)</b>: columns (\d+)–(\d+)", ed.shape_label.text())
    if head:
        assert bold == list(range(int(head.group(2)) - 1, int(head.group(3))))  # the label and the header agree
    return {"tokens": tuple(m.headerData(i, Qt.Orientation.Vertical) for i in range(rows)), "n": rows,
            "d_k": len(bold) if head else cols, "head": int(head.group(1)) if head else 0}


def _plane(w) -> dict:
    p = w.panels.plane
    p.set_pca(False)  # (the first two components, as drawn without the PCA)
    keys = []
    while True:
        try:
            pos = p.head_view_pos("K", len(keys))
        except IndexError:
            break
        keys.append((pos.x(), pos.y()))
    return {"n": len(keys), "keys2": np.array(keys)}


def _calc(w) -> dict:
    m = w.panels.calc.model()
    cols = m.columns()
    n = m.rowCount() - 1  # (and the total row)
    text = lambda j, c: m.data(m.index(j, cols.index(c)), Qt.ItemDataRole.DisplayRole)  # noqa: E731
    return {"n": n, "tokens": tuple(text(j, "token") for j in range(n)),
            "keys_text": tuple(text(j, "key") for j in range(n)),
            "weights_row": tuple(text(j, "weight") for j in range(n))}


def _blend(w) -> dict:
    name, weight = re.search(r"“([^”]+)” most \((\d\.\d\d)\)", w.panels.blend.title.text()).groups()
    return {"best": (name, weight)}


def _explorer(w) -> dict:
    b = w.panels.explorer.scene_button
    assert b.isVisibleTo(w.panels.explorer)
    return {"d_k": int(b.text().lstrip("▸"))}


def _heads(w) -> dict:
    h = w.panels.heads
    r = h.result()
    return {"head": h.selected(), "d_k": r.d_head_k, "n": r.heads[h.selected()].weights.shape[0],
            "weights": np.array(h.big_image.image)}


def _model(w) -> dict:
    return {"model_head": w.panel("model").showing_model_head()}


def _quiz(w) -> dict:
    return {}  # the lesson's own questions: nothing of the scene to follow


def _rope(w) -> dict:
    return {}  # seeded toy vectors of its own: nothing of the scene to follow


def _unprojected(w) -> dict:
    p = w.built_panel("unprojected")
    if p is None or not p.isVisible() or p.canvas.scene is None:
        return {}  # (shown in the heatmap's place on demand; tests/ui/lesson/test_unprojected_view.py)
    right = p.canvas.options.compare_with
    return {"n": right.n, "d_k": right.d_k, "weights": right.result().weights}


PROBES = {"editors": _editors, "plane": _plane, "calc": _calc, "blend": _blend, "explorer": _explorer,
          "heads": _heads, "model": _model, "quiz": _quiz, "rope": _rope, "unprojected": _unprojected}
CENTRE = {"heatmap": _heatmap, "stepper": _stepper}


def _expected(session, *, model_head: bool = False) -> dict:
    """What every view must show: the Session's scene, looked at through its selected head."""
    scene, head, q = session.scene, session.head, session.query
    shown = scene.head_scene(head) if scene.heads > 1 else scene
    result = shown.result()
    _, k, _ = shown.qkv()
    w = result.weights
    best = int(np.argmax(w[q]))
    return {"tokens": tuple(scene.token_label(i) for i in range(scene.n)), "n": scene.n, "d_k": shown.d_k,
            "head": head, "weights": w, "best": (shown.token_label(best), fmt_fixed(float(w[q, best]))),
            "keys2": k[:, :2], "keys_text": tuple(fmt_vector(k[j], limit=VECTOR_LIMIT) for j in range(scene.n)),
            "weights_row": tuple(fmt_fixed(float(x)) for x in w[q]), "model_head": model_head}


def _check_every_view(qtbot, window, **flags) -> None:
    _settle(qtbot, window)
    want = _expected(window.session, **flags)
    for name, probe in {**PROBES, **CENTRE}.items():
        seen = probe(window)
        for key, value in seen.items():
            if isinstance(value, np.ndarray):
                assert value.shape == want[key].shape, (name, key)
                np.testing.assert_allclose(value, want[key], atol=1e-9, err_msg=f"{name}: {key}")
            else:
                assert value == want[key], (name, key, value, want[key])


def test_every_registered_panel_has_a_probe():
    assert set(PROBES) == {spec.name for spec in registry.panels()}


@pytest.fixture
def window(qtbot, show_window):
    doc = preset_document("multihead")
    w = show_window(doc.scene, (1600, 950), view=doc.view)
    for spec in registry.panels():
        if spec.lazy:
            w.panel(spec.name)  # built, as the View menu builds it
    w.show_panel("heads")
    qtbot.waitUntil(lambda: w.panels.heads.isVisible(), timeout=2000)
    return w


def _pick_head_1(qtbot, window) -> None:
    heads = window.panels.heads
    qtbot.mouseClick(heads.graphics.viewport(), Qt.MouseButton.LeftButton, pos=heads.head_center(1))
    assert heads.selected() == 1 and window.session.head == 1


def test_the_selected_head_is_shown_by_every_view(qtbot, window):
    s = window.session
    _check_every_view(qtbot, window)  # head 0 of the split, everywhere
    weights0 = np.array(window.heatmap.displayed_matrix())
    _pick_head_1(qtbot, window)
    _check_every_view(qtbot, window)
    assert s.head == 1 and s.result.d_k == 4 and not np.allclose(window.heatmap.displayed_matrix(), weights0)
    assert s.undo_stack.count() == 0 and not s.modified  # looking at a head edits nothing
    s.set_head(0)  # from the window (the Session's view): the Heads panel follows too
    _check_every_view(qtbot, window)
    assert window.panels.heads.selected() == 0
    # an edit keeps the head and every view shows the new numbers of it
    s.set_head(1)
    assert s.set_value("X", 2, 0, 1.75)
    _check_every_view(qtbot, window)


def _by_open(window, tmp_path, monkeypatch):
    path = tmp_path / "b.qkv.json"
    write_session(path, load_preset("lesson"), View(query=1))
    assert window.open_path(str(path), ask=False)


def _by_preset(window, tmp_path, monkeypatch):
    window.open_preset("lesson")


def _by_deck(window, tmp_path, monkeypatch):
    deck = tmp_path / "lecture.qkvdeck.json"
    deck.write_text(json.dumps({"format": "qkv-studio-deck", "version": 1,
                                "scenes": ["preset:multihead", "preset:lesson"]}))
    assert window.open_deck(str(deck), ask=False)
    window.session.set_head(1)
    window.lecture.show_scene(1, "weights")  # the deck's next scene


def _by_model_run(window, tmp_path, monkeypatch):
    from tests.toy_model import register_toy

    register_toy(monkeypatch)
    panel = window.panel("model")
    panel.set_model("toy")
    assert panel.run_text("one two three four five")


def _by_switch(window, tmp_path, monkeypatch):
    assert window.session.replace_scene(load_preset("lesson"), "Switch")


LOADS = {"open": _by_open, "preset": _by_preset, "deck": _by_deck, "model run": _by_model_run,
         "switch": _by_switch}


@pytest.mark.parametrize("how", LOADS)
def test_a_new_scene_leaves_nothing_of_the_old_one(qtbot, window, tmp_path, monkeypatch, how):
    s = window.session
    _pick_head_1(qtbot, window)
    old = s.scene
    LOADS[how](window, tmp_path, monkeypatch)
    new = s.scene
    assert new.n != old.n and new.d_k != old.d_k and new.heads == 1  # another shape and no heads
    assert s.head == 0
    _check_every_view(qtbot, window, model_head=how == "model run")
    window.show_panel("heads")  # (shown again: it computes what it took note of while hidden)
    _check_every_view(qtbot, window, model_head=how == "model run")
    assert window.panels.heads.heads() == 1 and len(window.panels.heads.small_images) == 1
    if how == "switch":  # undo of the switch brings the split back, every view with it
        s.undo_stack.undo()
        assert s.scene is old and s.head == 0
        _check_every_view(qtbot, window)
        assert window.panels.heads.heads() == 2 and window.panels.heads.selected() == 0
