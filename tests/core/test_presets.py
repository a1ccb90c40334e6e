"""Built-in scenes: each loads through the ordinary reader and is what its name promises."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core import SessionFileError, list_presets, load_preset, preset_document, read_session
from qkv_studio.core.presets import _ORDER, preset_path

EXPECTED = ["lesson", "causal", "padding", "saturation", "projection", "multihead", "long"]


def test_the_presets_and_their_order():
    names = [p.name for p in list_presets()]
    assert names == EXPECTED
    assert names == [n for n in _ORDER if n in names]  # lecture order, as presets.py says


@pytest.mark.parametrize("name", EXPECTED)
def test_each_preset_loads_with_a_title_and_a_one_line_description(name):
    scene = load_preset(name)
    assert scene.title.strip() and scene.description.strip()
    assert "\n" not in scene.description and len(scene.description) <= 160
    doc = read_session(preset_path(name))  # an ordinary session file
    assert doc.scene.same_as(scene) and doc.view == preset_document(name).view
    assert 0 <= doc.view.query < scene.n
    r = scene.result()
    assert np.all(np.isfinite(r.weights)) and not r.fully_masked.any()


def test_descriptions_are_listed():
    described = {p.name: p.description for p in list_presets()}
    assert described["lesson"] == load_preset("lesson").description


def test_lesson_is_the_lessons_table():
    s, view = preset_document("lesson")
    assert s.tokens == ("the", "cat", "sat", "mat") and s.d_k == 2
    assert s.tokens[view.query] == "sat" and s.q[view.query].tolist() == [1, 2]
    assert [round(w, 2) for w in s.result().weights[view.query]] == [0.06, 0.54, 0.13, 0.27]


def test_causal_has_the_causal_mask_on_a_short_sentence():
    s = load_preset("causal")
    assert s.mask == "causal" and 5 <= s.n <= 8 and s.d_k in (2, 3)
    w = s.result().weights
    assert np.all(w[np.triu_indices(s.n, 1)] == 0.0)


def test_padding_blocks_the_pad_keys_for_every_query():
    s = load_preset("padding")
    assert s.tokens[-2:] == ("[PAD]", "[PAD]") and "[PAD]" not in s.tokens[:-2]
    assert isinstance(s.mask, np.ndarray)
    assert s.mask[:, -2:].all() and not s.mask[:, :-2].any()
    assert np.all(s.result().weights[:, -2:] == 0.0)


def test_saturation_has_d_k_64_and_unit_variance_vectors():
    s = load_preset("saturation")
    assert s.d_k == 64
    for m in (s.q, s.k):
        assert abs(m.mean()) < 0.2 and 0.7 < m.var() < 1.3
    assert "seed" in s.description or "default_rng" in s.description
    # the lesson's argument: unscaled scores swing by ~±8 and the softmax saturates; ÷√d_k rescues it
    assert 5 < s.with_scale(False).result().scores.std() < 12  # typical size ~√64 = 8
    unscaled = s.with_scale(False).result().weights.max(axis=1)
    scaled = s.with_scale(True).result().weights.max(axis=1)
    assert np.median(unscaled) > 0.95 and scaled.max() < 0.7


def test_projection_derives_qkv_from_x():
    s = load_preset("projection")
    assert s.mode == "projection" and s.x.shape == (4, 3)
    assert s.wq.shape == (3, 2) and s.wk.shape == (3, 2) and s.wv.shape == (3, 2)
    assert s.tokens == ("the", "cat", "sat", "mat")
    np.testing.assert_array_equal(s.qkv()[0], s.x @ s.wq)


def test_multihead_splits_d_model_8_into_two_differing_heads():
    from qkv_studio.core.multihead import multihead_scene

    s = load_preset("multihead")
    assert s.mode == "projection" and s.x.shape == (6, 8) and s.d_model == 8
    assert s.wq.shape == s.wk.shape == s.wv.shape == (8, 8)
    assert s.tokens == ("the", "cat", "sat", "on", "the", "mat")
    assert "2 heads" in s.description
    r = multihead_scene(s, 2)
    assert r.d_head_k == 4
    best = r.weights().argmax(axis=2)
    assert (best[0] != best[1]).sum() >= 5  # the two heads look at different tokens


def test_long_has_64_tokens():
    s = load_preset("long")
    assert s.n == 64 and s.d_k == 8
    assert len(set(s.tokens)) > 40  # real words, not one repeated
    assert s.result().weights.shape == (64, 64)


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(SessionFileError) as info:
        load_preset("lecture")
    assert "no such preset" in str(info.value) and "lesson" in str(info.value) and "'lecture'" in str(info.value)
