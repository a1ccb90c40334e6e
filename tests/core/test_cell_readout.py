"""The hover read-out of a cell: the maths of the stage, from the Scene, in words a student can check."""

import numpy as np
import pytest

from qkv_studio.core import Scene, load_preset
from qkv_studio.core.cell_readout import cell_readout, dot_text


def _small():
    return Scene.create(["sat", "cat"], q=np.array([[1.0, 2.0], [0.0, 1.0]]),
                        k=np.array([[1.0, 0.0], [2.0, 1.0]]), v=np.eye(2))


def test_scores_show_the_dot_product_term_by_term():
    scene = _small()
    q, k, _ = scene.qkv()
    text = cell_readout(["sat", "cat"], q, k, scene.result(), "scores", 0, 1)
    assert text.splitlines() == ["query “sat” → key “cat”", "q·k = 1×2 + 2×1 = 4"]


def test_scaled_and_weights_build_on_the_stages_before():
    scene = _small()
    q, k, _ = scene.qkv()
    r = scene.result()
    scaled = cell_readout(["sat", "cat"], q, k, r, "scaled", 0, 1).splitlines()
    assert scaled[-1] == "÷ √2: 4 / 1.41 = 2.83"
    weights = cell_readout(["sat", "cat"], q, k, r, "weights", 0, 1).splitlines()
    assert weights[1:3] == scaled[1:3]
    assert weights[-1] == f"w(sat→cat) = exp(2.83) / Σⱼ exp(s̃ⱼ) = {r.weights[0, 1]:.2f}"
    # the blend stage shows its weights, the vectors stage previews the scores
    assert cell_readout(["sat", "cat"], q, k, r, "output", 0, 1) == "\n".join(weights)
    assert cell_readout(["sat", "cat"], q, k, r, "vectors", 0, 1).splitlines()[-1].startswith("q·k")


def test_the_lesson_numbers_agree_with_the_result():
    scene = load_preset("lesson")
    q, k, _ = scene.qkv()
    r = scene.result()
    tokens = [scene.token_label(i) for i in range(scene.n)]
    for i in range(scene.n):
        for j in range(scene.n):
            last = cell_readout(tokens, q, k, r, "weights", i, j).splitlines()[-1]
            assert last.endswith(f"= {r.weights[i, j]:.2f}")


def test_long_dot_products_are_folded():
    q = np.arange(64.0)
    text = dot_text(q, np.ones(64))
    assert text.endswith("… (64 terms)") and text.count("×") == 3


def test_a_masked_cell_says_it_is_blocked():
    scene = _small().with_mask("causal")
    q, k, _ = scene.qkv()
    text = cell_readout(["sat", "cat"], q, k, scene.result(), "weights", 0, 1)
    assert "blocked" in text and "exp" not in text


def test_negative_factors_are_bracketed_and_a_cell_outside_is_refused():
    scene = Scene.create(["a", "b"], q=np.array([[1.0, -2.0], [0, 1]]), k=np.array([[-1.0, 3.0], [1, 1]]),
                         v=np.eye(2))
    q, k, _ = scene.qkv()
    assert "1×(−1) + −2×3 = −7" in cell_readout(["a", "b"], q, k, scene.result(), "scores", 0, 0)
    with pytest.raises(IndexError):
        cell_readout(["a", "b"], q, k, scene.result(), "scores", 2, 0)
