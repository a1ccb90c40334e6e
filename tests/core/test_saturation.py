"""The √d_k argument, measured: score spread, softmax saturation and its vanishing gradient."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core.saturation import (
    ScoreBank,
    entropy_bits,
    expected_std,
    histogram,
    jacobian,
    jacobian_norm,
    sample_scores,
    saturation,
    softmax_rows,
    softmax_stats,
)

D_KS = (1, 2, 8, 64, 512)


@pytest.mark.parametrize("d_k", D_KS)
def test_unscaled_scores_have_std_root_d_k(d_k):
    s = sample_scores(d_k, n_keys=1, samples=10_000, seed=26, scale=False)
    assert s.shape == (10_000, 1)
    assert abs(s.std() / np.sqrt(d_k) - 1) < 0.05


@pytest.mark.parametrize("d_k", D_KS)
def test_scaled_scores_have_unit_std(d_k):
    s = sample_scores(d_k, n_keys=1, samples=10_000, seed=26, scale=True)
    assert abs(s.std() - 1) < 0.05


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_std_claim_holds_for_other_seeds_and_many_keys(seed):
    raw = sample_scores(64, n_keys=8, samples=10_000, seed=seed, scale=False)
    assert abs(raw.std() / 8 - 1) < 0.05  # the lesson: at d_k = 64 raw scores swing by ±8
    assert abs((raw / 8).std() - 1) < 0.05


def test_seeded_and_reproducible_and_scaling_is_a_division():
    a = sample_scores(16, 8, 500, seed=5, scale=False)
    b = sample_scores(16, 8, 500, seed=5, scale=False)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, sample_scores(16, 8, 500, seed=6, scale=False))
    np.testing.assert_allclose(sample_scores(16, 8, 500, seed=5, scale=True), a / 4)
    np.testing.assert_allclose(sample_scores(16, 8, 500, seed=5, scale=True, temperature=2.0), a / 8)
    assert expected_std(64, False) == 8 and expected_std(64, True) == 1 and expected_std(64, True, 0.5) == 2


def test_growing_d_k_adds_a_term_instead_of_redrawing():
    """Dimension-major draws: the scores at d_k + 1 are those at d_k plus q_{d+1}·k_{d+1}."""
    s10 = sample_scores(10, 4, 300, seed=1, scale=False)
    s11 = sample_scores(11, 4, 300, seed=1, scale=False)
    extra = s11 - s10
    # one product of two standard normals per cell: variance 1, and not identical to the old sum
    assert 0.6 < extra.var() < 1.5
    assert np.corrcoef(s10.ravel(), s11.ravel())[0, 1] > 0.9


def test_the_bank_matches_fresh_samples_for_every_d_k():
    bank = ScoreBank(n_keys=8, samples=400, seed=3)
    for d in (1, 2, 17, 64, 200, 512, 33):  # out of order: later requests reuse the sums
        np.testing.assert_allclose(bank.raw(d), sample_scores(d, 8, 400, seed=3, scale=False), rtol=1e-9, atol=1e-9)
    assert bank.depth == 512
    np.testing.assert_allclose(bank.scores(64, True, 2.0), bank.raw(64) / 16)


def test_unscaled_softmax_saturates_as_d_k_grows():
    bank = ScoreBank(n_keys=8, samples=2000, seed=26)
    rows = [saturation(d, False, bank=bank).stats for d in (1, 4, 16, 64, 256, 512)]
    maxw = [r.max_weight for r in rows]
    grad = [r.gradient for r in rows]
    ent = [r.entropy_bits for r in rows]
    assert all(a < b for a, b in zip(maxw, maxw[1:], strict=False)), maxw
    assert all(a > b for a, b in zip(grad, grad[1:], strict=False)), grad
    assert all(a > b for a, b in zip(ent, ent[1:], strict=False)), ent
    assert maxw[3] > 0.8 and grad[3] < 0.5 * grad[0]  # d_k = 64: saturated, learning stalls
    assert maxw[-1] > 0.9 and grad[-1] < 0.25 * grad[0]


def test_scaled_softmax_stays_responsive_at_every_d_k():
    bank = ScoreBank(n_keys=8, samples=2000, seed=26)
    rows = [saturation(d, True, bank=bank).stats for d in (1, 4, 16, 64, 256, 512)]
    for r in rows:
        assert abs(r.score_std - 1) < 0.1
        assert 0.25 < r.max_weight < 0.45
        assert r.entropy_bits > 2.3 and r.gradient > 0.3
    assert rows[0].entropy_max_bits == 3.0


def test_temperature_sharpens_or_flattens():
    cold = saturation(16, True, 0.25, samples=500).stats
    warm = saturation(16, True, 4.0, samples=500).stats
    assert cold.max_weight > 0.7 > 0.2 > warm.max_weight
    assert warm.entropy_bits > cold.entropy_bits


def test_jacobian_norm_equals_the_explicit_matrix():
    rng = np.random.default_rng(0)
    for w in softmax_rows(rng.normal(size=(20, 8)) * 3):
        assert jacobian_norm(w) == pytest.approx(np.linalg.norm(jacobian(w)), rel=1e-12)
    # analytic cases: uniform √(n−1)/n, two-way split ½, one-hot 0
    assert jacobian_norm(np.full(8, 1 / 8)) == pytest.approx(np.sqrt(7) / 8)
    assert jacobian_norm(np.array([0.5, 0.5, 0, 0])) == pytest.approx(0.5)
    assert jacobian_norm(np.array([1.0, 0, 0])) == 0.0
    # and it is the true derivative of the softmax
    s = rng.normal(size=6)
    eps = 1e-6
    num = np.array([(softmax_rows(s + eps * e) - softmax_rows(s - eps * e)) / (2 * eps) for e in np.eye(6)]).T
    np.testing.assert_allclose(jacobian(softmax_rows(s)), num, atol=1e-8)


def test_entropy_and_stats_on_known_rows():
    assert entropy_bits(np.full(8, 1 / 8)) == pytest.approx(3.0)
    assert entropy_bits(np.array([1.0, 0.0])) == 0.0
    st = softmax_stats(np.zeros((3, 4)))
    assert st.max_weight == pytest.approx(0.25) and st.entropy_bits == pytest.approx(2.0)
    assert st.score_std == 0 and st.score_range == 0
    huge = softmax_stats(np.array([[1000.0, 0.0, -1000.0]]))
    assert huge.max_weight == 1.0 and huge.gradient == 0.0 and np.isfinite(huge.entropy_bits)


def test_histogram_keeps_every_score_and_has_unit_area():
    s = sample_scores(64, 8, 1000, scale=False)
    edges, dens = histogram(s, bins=40, limit=16.0)
    assert len(edges) == 41 and edges[0] == -16 and edges[-1] == 16
    assert (dens * np.diff(edges)).sum() == pytest.approx(1.0)
    edges, dens = histogram(s, bins=10)
    assert edges[-1] == pytest.approx(np.abs(s).max())


@pytest.mark.parametrize("bad", [dict(d_k=0), dict(d_k=513), dict(d_k=2.5), dict(d_k=True),
                                 dict(n_keys=0), dict(samples=0), dict(temperature=0.0),
                                 dict(temperature=float("nan"))])
def test_bad_arguments_are_refused_in_words(bad):
    args = dict(d_k=4, n_keys=8, samples=10, seed=0, scale=True, temperature=1.0) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        sample_scores(**args)


def test_typical_query_is_the_median_top_weight():
    from qkv_studio.core.saturation import ScoreBank, softmax_rows, typical_query

    bank = ScoreBank(n_keys=8, samples=101, seed=3)
    top = softmax_rows(bank.raw(64)).max(axis=1)
    i = typical_query(bank)
    assert (top < top[i]).sum() == 50 and (top > top[i]).sum() == 50


def test_histogram_limit_is_four_raw_sigmas():
    from qkv_studio.core.saturation import histogram_limit

    assert histogram_limit(64) == pytest.approx(32.0)
    assert histogram_limit(16, 2.0) == pytest.approx(8.0)


def test_explorer_caption_says_what_the_numbers_say():
    from qkv_studio.core.saturation import saturation
    from qkv_studio.core.saturation_words import explorer_caption

    raw, scl = saturation(64, False).stats, saturation(64, True).stats
    text = explorer_caption(64, 1.0, raw, scl, 1000)
    assert "±√64 = ±8" in text and "all-or-nothing" in text and f"{raw.max_weight:.2f}" in text
    assert f"mean top weight {scl.max_weight:.2f}" in text and "Temperature" not in text
    assert "Temperature 2 divides" in explorer_caption(64, 2.0, raw, scl, 1000)
    short = explorer_caption(64, 1.0, raw, scl, 1000, tight=True)
    assert short.count(".") <= 4 and "saturates" in short
    assert "changes nothing" in explorer_caption(1, 1.0, raw, scl, 1000)
