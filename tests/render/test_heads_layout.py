"""The heads panel's layout numbers, without a window."""

from __future__ import annotations

import numpy as np

from qkv_studio.render.colormaps import lut
from qkv_studio.render.heads_layout import dark_text, grid_columns, subscript, symmetric_limit, tick_step


def test_grid_columns_make_the_heads_largest():
    assert grid_columns(4, 400, 400, 0) == 2  # a square room: 2 × 2
    assert grid_columns(4, 800, 200, 0) == 4  # wide and short: one row
    assert grid_columns(4, 200, 800, 0) == 1  # tall and narrow: one column
    assert grid_columns(1, 10, 10, 0) == 1


def test_tick_step_never_overlaps():
    assert tick_step(10, 20) == 1
    assert tick_step(45, 20) == 3
    assert tick_step(0, 20) == 1


def test_symmetric_limit_is_the_largest_magnitude():
    assert symmetric_limit(np.array([[1.0, -3.0], [2.0, 0.5]])) == 3.0
    assert symmetric_limit(np.zeros((2, 2))) == 1.0
    assert symmetric_limit(np.zeros((0, 3))) == 1.0
    assert symmetric_limit(np.array([[np.inf]])) == 1.0


def test_dark_text_on_light_cells_only():
    table = lut("viridis")  # dark at 0, light (yellow) at 1
    dark = dark_text(np.array([[0.0, 1.0]]), table)
    assert not dark[0, 0] and dark[0, 1]


def test_subscript():
    assert subscript(12) == "₁₂"
