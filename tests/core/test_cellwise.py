"""Q·Kᵀ cell by cell: the terms of a cell sum to its score; long sums fold; stepping walks the grid."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv_studio.core import Scene, load_preset
from qkv_studio.core.cellwise import MAX_TERMS, cell_text, products, step_cell


def test_the_lessons_cell_in_words():
    scene = load_preset("lesson")
    text = cell_text(scene, scene.result(), 2, 1, "scores")
    assert "q<sub>sat</sub> · k<sub>cat</sub>" in text and text.endswith("= 1×2 + 2×1 = 4")
    scaled = cell_text(scene, scene.result(), 2, 1, "scaled")
    assert scaled.endswith("= 4, ÷ √2 = 2.828")
    assert cell_text(scene, scene.result(), 2, 1, "weights") == ""  # (a cell of Q·Kᵀ only)


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 5), st.integers(1, 12), st.data())
def test_the_terms_sum_to_the_cells_score(n, d, data):
    values = st.floats(-50, 50, allow_nan=False).map(lambda x: round(x, 3))
    q = np.array(data.draw(st.lists(st.lists(values, min_size=d, max_size=d), min_size=n, max_size=n)))
    k = np.array(data.draw(st.lists(st.lists(values, min_size=d, max_size=d), min_size=n, max_size=n)))
    scene = Scene.create([f"t{i}" for i in range(n)], q=q, k=k, v=k)
    i, j = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))
    assert np.isclose(sum(products(scene, i, j)), scene.result().scores[i, j], rtol=1e-9, atol=1e-9)
    text = cell_text(scene, scene.result(), i, j, "scores")
    terms = text.split(") = ", 1)[1].rsplit(" = ", 1)[0].split(" + ")
    if d <= MAX_TERMS:
        assert len(terms) == d
    else:
        assert len(terms) == MAX_TERMS and terms[-1] == f"… ({d} terms)"


def test_sixty_four_terms_fold():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 3, 64))
    scene = Scene.create(["a", "b", "c"], q=q, k=k, v=k)
    text = cell_text(scene, scene.result(), 0, 1, "scores")
    assert "… (64 terms)" in text and len(re.findall("×", text)) == MAX_TERMS - 1


def test_step_cell_walks_row_by_row_and_wraps():
    assert step_cell(0, 0, 3) == (0, 1)
    assert step_cell(0, 2, 3) == (1, 0)
    assert step_cell(2, 2, 3) == (0, 0)
    assert step_cell(0, 0, 3, -1) == (2, 2)
