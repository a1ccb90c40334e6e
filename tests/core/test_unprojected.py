"""Without projections (Q = K = V = X): the scene, the facts and a caption true for any scene."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv_studio.core import load_preset
from qkv_studio.core.scene import Scene, SceneError
from qkv_studio.core.unprojected import caption, compare, is_symmetric, without_projections


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_scores_without_projections_are_x_dot_x_transposed_scaled():
    scene = load_preset("projection")
    bare = without_projections(scene)
    x = scene.x
    np.testing.assert_allclose(bare.result().scores, x @ x.T)
    np.testing.assert_allclose(bare.result().scaled, x @ x.T / np.sqrt(x.shape[1]))
    np.testing.assert_allclose(bare.result().weights, _softmax(x @ x.T / np.sqrt(x.shape[1])))
    assert bare.tokens == scene.tokens and bare.mask == scene.mask and bare.scale == scene.scale


def test_a_direct_scene_has_no_x_to_dot():
    with pytest.raises(SceneError, match="projection mode"):
        without_projections(load_preset("lesson"))


def test_the_lessons_projection_preset_in_words():
    scene = load_preset("projection")
    text = caption(compare(scene, without_projections(scene), 2), scene.token_label)
    # "sat": 0.37 on itself without, 0.25 with the projections, where "cat" gets most
    assert text.startswith("Without projections “sat” puts 0.37 on itself; with them 0.25 on itself (most on “cat”).")
    assert "X·Xᵀ is symmetric" in text and "4 of 4 tokens weigh themselves most (2 tied)" in text
    # this preset's W^Q·W^Kᵀ happens to be symmetric: the caption must not call Q·Kᵀ asymmetric
    assert "asymmetric" not in text and "but 1 of 4 weigh themselves most" in text


def test_ties_are_named_as_ties():
    scene = load_preset("projection")
    text = caption(compare(scene, without_projections(scene), 3), scene.token_label)
    assert "0.28 on itself (tied with “cat” and “sat”)" in text


numbers = st.integers(-3, 3).map(float)


@st.composite
def projection_scenes(draw):
    n, d_model, d_k = draw(st.integers(2, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 3))

    def matrix(rows, cols):
        return np.array(draw(st.lists(st.lists(numbers, min_size=cols, max_size=cols), min_size=rows, max_size=rows)))

    mask = draw(st.sampled_from(["none", "causal"]))
    return Scene.create([f"t{i}" for i in range(n)], x=matrix(n, d_model), wq=matrix(d_model, d_k),
                        wk=matrix(d_model, d_k), wv=matrix(d_model, d_k), mask=mask), draw(st.integers(0, n - 1))


@settings(max_examples=150, deadline=None)
@given(projection_scenes())
def test_the_caption_is_true_for_any_scene(case):
    scene, query = case
    bare = without_projections(scene)
    facts = compare(scene, bare, query)
    text = caption(facts, scene.token_label)
    scores = scene.result().scores
    # "symmetric" for the projected grid only when it is; "asymmetric" only when it is not
    if "Q·Kᵀ happens to be symmetric" in text:
        assert np.allclose(scores, scores.T)
    if "Q·Kᵀ asymmetric" in text:
        assert not np.allclose(scores, scores.T)
    assert ("X·Xᵀ is symmetric" in text) == is_symmetric(bare.result().scores)
    # the numbers it quotes are the weights shown (two decimals)
    quoted = re.findall(r"puts (\d\.\d\d) on itself[^;]*; with them (\d\.\d\d) on itself", text)
    assert quoted == [(f"{bare.result().weights[query, query]:.2f}", f"{scene.result().weights[query, query]:.2f}")]
    # the count of tokens that weigh themselves most, as the cells show it
    shown = np.round(bare.result().weights, 2)
    own = int(sum(shown[i, i] >= shown[i].max() for i in range(scene.n)))
    assert f"{own} of {scene.n} tokens weigh themselves most" in text


def test_x_dot_x_is_symmetric_but_a_causal_mask_breaks_the_grid():
    scene = load_preset("projection").with_mask("causal")
    bare = without_projections(scene)
    assert not is_symmetric(bare.result().scores)  # −∞ above the diagonal, finite below
    text = caption(compare(scene, bare, 1), scene.token_label)
    assert "X·Xᵀ is symmetric" not in text
