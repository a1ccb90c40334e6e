"""RoPE as the lesson shows it: the score depends on the offset only; the pairs' frequencies."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core import rope
from qkv_studio.core.models.smollm2 import apply_rope, rope_tables

RNG = np.random.default_rng(21)


def test_the_score_depends_only_on_the_offset():
    q, k = RNG.normal(size=(2, 8))
    s = rope.score(q, k, 3, 10)
    assert s == pytest.approx(rope.score(q, k, 3 + 40, 10 + 40), abs=1e-12)  # both moved together
    assert s == pytest.approx(rope.scores_by_offset(q, k, [7])[0], abs=1e-12)
    assert abs(s - rope.score(q, k, 3, 11)) > 1e-3  # one moved: another score
    assert rope.score(q, k, 5, 5) == pytest.approx(float(q @ k), abs=1e-12)  # offset 0: no turn at all


def test_frequencies_and_the_rotation_are_transformers():
    theta = rope.pair_frequencies(8, 10_000)
    np.testing.assert_allclose(theta, [1, 10_000 ** -0.25, 10_000 ** -0.5, 10_000 ** -0.75])
    x = RNG.normal(size=(3, 64))
    cos, sin = rope_tables(np.array([0, 5, 17]), 64, 1e5)  # the model's own float32 RoPE
    ours = np.stack([rope.rotate(x[i], p, 1e5) for i, p in enumerate((0, 5, 17))])
    np.testing.assert_allclose(ours, apply_rope(x.astype(np.float32), cos, sin), atol=1e-4)
    assert np.linalg.norm(rope.rotate(x[0], 123, 1e5)) == pytest.approx(np.linalg.norm(x[0]))  # a rotation
    assert rope.pair_angles(np.pi, 2)[0] == pytest.approx(np.pi)
    for bad in ((7, 10_000), (8, 1.0), (0, 10)):
        with pytest.raises(ValueError):
            rope.pair_frequencies(*bad)


def test_a_pair_before_and_after_its_turn():
    base, d = 1e5, 8
    raw = RNG.normal(size=(4, d))
    positions = np.array([0, 1, 5, 30])
    turned = np.stack([rope.rotate(raw[j], p, base) for j, p in enumerate(positions)])
    for pair in (0, 3):
        before, after, angles = rope.pair_before_after(turned, positions, pair, base)
        np.testing.assert_allclose(before, raw[:, [pair, pair + d // 2]], atol=1e-12)  # turned back
        np.testing.assert_allclose(after, turned[:, [pair, pair + d // 2]], atol=1e-12)
        np.testing.assert_allclose(angles, positions * rope.pair_frequencies(d, base)[pair])
        # the turn keeps each vector's length and moves it by exactly its angle
        np.testing.assert_allclose(np.linalg.norm(before, axis=1), np.linalg.norm(after, axis=1))
        turned_by = np.angle((after[:, 0] + 1j * after[:, 1]) / (before[:, 0] + 1j * before[:, 1]))
        np.testing.assert_allclose(turned_by, np.angle(np.exp(1j * angles)), atol=1e-9)
    assert rope.pair_before_after(turned, positions, 0, base)[2][0] == 0  # position 0: no turn
    for bad in ((turned, positions, 4), (turned, positions, -1), (turned, positions[:3], 0),
                (turned[:, :7], positions, 0)):
        with pytest.raises(ValueError):
            rope.pair_before_after(*bad, base)
