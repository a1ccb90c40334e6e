"""The attention maths: hand-worked values, an independent implementation, masks, extremes, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from qkv_studio.core import (
    causal_mask,
    compute,
    masked_softmax,
    project,
    row_stats,
    softmax,
    update_rows,
)

# The lesson's example (README.md's opening and the `lesson` preset, resources/presets/lesson.qkv.json): keys
# the=[1,0], cat=[2,1], sat=[0,1], mat=[1,1]; query from sat = [1, 2].
Q = np.array([[0, 1], [1, 0], [1, 2], [0.5, 0.5]], dtype=float)
K = np.array([[1, 0], [2, 1], [0, 1], [1, 1]], dtype=float)
V = np.array([[1, 0], [0, 1], [1, 1], [0.5, -1]], dtype=float)
SAT = 2

FAST = settings(max_examples=60, deadline=None)


# ---- an independent implementation: plain Python loops and the math module -------------------------------
def reference(q, k, v, blocked=None, scale=True):
    """softmax(Q·Kᵀ/√d_k)·V written out cell by cell (no NumPy maths)."""
    q, k, v = np.asarray(q).tolist(), np.asarray(k).tolist(), np.asarray(v).tolist()
    n, m, d = len(q), len(k), len(q[0])
    blocked = [[False] * m for _ in range(n)] if blocked is None else np.asarray(blocked).tolist()
    div = math.sqrt(d) if scale else 1.0
    scores = [[math.fsum(q[i][t] * k[j][t] for t in range(d)) for j in range(m)] for i in range(n)]
    scaled = [[s / div for s in row] for row in scores]
    weights = []
    for i in range(n):
        allowed = [j for j in range(m) if not blocked[i][j]]
        row = [0.0] * m
        if allowed:
            top = max(scaled[i][j] for j in allowed)
            e = {j: math.exp(scaled[i][j] - top) for j in allowed}
            total = math.fsum(e.values())
            for j in allowed:
                row[j] = e[j] / total
        weights.append(row)
    output = [[math.fsum(weights[i][j] * v[j][c] for j in range(m)) for c in range(len(v[0]))] for i in range(n)]
    for i in range(n):
        for j in range(m):
            if blocked[i][j]:
                scores[i][j] = scaled[i][j] = -math.inf
    return tuple(np.array(a, dtype=float) for a in (scores, scaled, weights, output))


def assert_same(result, ref, rtol=1e-12, atol=1e-12):
    for name, expected in zip(("scores", "scaled", "weights", "output"), ref, strict=False):
        np.testing.assert_allclose(getattr(result, name), expected, rtol=rtol, atol=atol, err_msg=name)


# ---- the lesson's hand-worked numbers ------------------------------------------------------------------
def test_lesson_scores_are_the_dot_products():
    r = compute(Q, K, V)
    assert r.scores[SAT].tolist() == [1.0, 4.0, 2.0, 3.0]  # sat·the, sat·cat, sat·sat, sat·mat
    assert r.scores.tolist() == [[0, 1, 1, 1], [1, 2, 0, 1], [1, 4, 2, 3], [0.5, 1.5, 0.5, 1.0]]


def test_lesson_scaled_divides_by_root_two():
    r = compute(Q, K, V)
    np.testing.assert_allclose(r.scaled[SAT], np.array([1, 4, 2, 3]) / math.sqrt(2), rtol=1e-15)
    assert r.d_k == 2 and r.scale is True


def test_lesson_weights_match_the_lesson_table():
    w = compute(Q, K, V).weights[SAT]
    assert [round(x, 2) for x in w] == [0.06, 0.54, 0.13, 0.27]  # the, cat, sat, mat
    # hand-worked: e^{(s-4)/√2} for s = 1, 4, 2, 3, normalised
    e = [math.exp((s - 4) / math.sqrt(2)) for s in (1, 4, 2, 3)]
    np.testing.assert_allclose(w, [x / sum(e) for x in e], rtol=1e-14)


def test_lesson_output_is_the_weighted_blend_of_values():
    r = compute(Q, K, V)
    w = r.weights[SAT]
    by_hand = w[0] * V[0] + w[1] * V[1] + w[2] * V[2] + w[3] * V[3]
    np.testing.assert_allclose(r.output[SAT], by_hand, rtol=1e-14)
    np.testing.assert_allclose(r.output[SAT], [0.3283971, 0.4041079], atol=1e-7)


def test_lesson_matches_the_lessons_own_numpy_code():
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    x = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(x)
    weights = e / e.sum(axis=-1, keepdims=True)
    r = compute(Q, K, V)
    np.testing.assert_allclose(r.weights, weights, rtol=1e-15)
    np.testing.assert_allclose(r.output, weights @ V, rtol=1e-15)


def test_unscaled_leaves_scores_alone_and_sharpens_the_softmax():
    r = compute(Q, K, V, scale=False)
    assert np.array_equal(r.scaled, r.scores)
    assert r.scale is False
    assert r.weights[SAT].max() > compute(Q, K, V).weights[SAT].max()
    assert_same(r, reference(Q, K, V, scale=False))


def test_every_stage_matches_the_independent_implementation():
    assert_same(compute(Q, K, V), reference(Q, K, V))


def test_stage_lookup():
    r = compute(Q, K, V)
    assert r.stage("scores") is r.scores and r.stage("weights") is r.weights
    assert r.stage("vectors") is r.scores and r.stage("output") is r.weights
    with pytest.raises(ValueError, match="unknown stage"):
        r.stage("blend")


def test_rectangular_queries_and_keys():
    q = np.array([[1.0, -2.0, 0.5]])
    k = np.array([[0.1, 0.2, 0.3], [1.0, 1.0, 1.0], [-3.0, 0.0, 2.0]])
    v = np.array([[1.0], [2.0], [3.0]])
    r = compute(q, k, v)
    assert r.weights.shape == (1, 3) and r.output.shape == (1, 1)
    assert_same(r, reference(q, k, v))


# ---- masks -------------------------------------------------------------------------------------------
def test_causal_mask_shape():
    assert causal_mask(3).tolist() == [[False, True, True], [False, False, True], [False, False, False]]


def test_causal_matches_reference_and_blocks_the_future():
    r = compute(Q, K, V, mask="causal")
    blocked = causal_mask(4)
    assert_same(r, reference(Q, K, V, blocked))
    assert r.weights[0].tolist() == [1.0, 0.0, 0.0, 0.0]  # the first token can only see itself
    assert np.all(r.weights[blocked] == 0.0)
    assert np.all(np.isneginf(r.scores[blocked])) and np.all(np.isneginf(r.scaled[blocked]))
    assert np.all(np.isfinite(r.scores[~blocked]))
    assert not r.fully_masked.any()


def test_custom_mask_matches_reference():
    blocked = np.zeros((4, 4), dtype=bool)
    blocked[:, 1] = True  # nobody may look at cat
    blocked[3, 0] = True
    r = compute(Q, K, V, mask=blocked)
    assert_same(r, reference(Q, K, V, blocked))
    assert r.weights[SAT, 1] == 0.0
    assert r.weights[SAT].sum() == pytest.approx(1.0)


def test_fully_masked_row_is_zero_and_flagged_never_nan():
    blocked = np.zeros((4, 4), dtype=bool)
    blocked[1, :] = True
    r = compute(Q, K, V, mask=blocked)
    assert r.fully_masked.tolist() == [False, True, False, False]
    assert r.weights[1].tolist() == [0.0] * 4
    assert r.output[1].tolist() == [0.0, 0.0]
    assert np.all(np.isneginf(r.scores[1]))
    assert not np.isnan(r.weights).any() and not np.isnan(r.output).any()
    assert row_stats(r, 1).fully_masked and row_stats(r, 1).row_sum == 0.0


def test_bad_masks_are_refused():
    with pytest.raises(ValueError, match="unknown mask"):
        compute(Q, K, V, mask="future")
    with pytest.raises(ValueError, match="shape"):
        compute(Q, K, V, mask=np.zeros((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="boolean"):
        compute(Q, K, V, mask=np.zeros((4, 4)))


def test_bad_shapes_and_values_are_refused():
    with pytest.raises(ValueError, match="share d_k"):
        compute(Q, K[:, :1], V)
    with pytest.raises(ValueError, match="one key and one value"):
        compute(Q, K, V[:3])
    with pytest.raises(ValueError, match="2-D"):
        compute(Q[0], K, V)
    with pytest.raises(ValueError, match="finite"):
        compute(np.array([[np.nan, 1.0]]), K, V)


# ---- incremental updates, projections, statistics ----------------------------------------------------
def test_update_rows_equals_a_full_recompute():
    prev = compute(Q, K, V, mask="causal")
    q2 = Q.copy()
    q2[2] = [3.0, -1.0]
    q2[0] = [0.25, 0.75]
    part = update_rows(prev, [0, 2], q2, K, V, mask="causal")
    full = compute(q2, K, V, mask="causal")
    for name in ("scores", "scaled", "weights", "output", "fully_masked", "blocked"):
        np.testing.assert_array_equal(getattr(part, name), getattr(full, name), err_msg=name)
    assert not np.array_equal(part.weights[2], prev.weights[2])  # the edit did change the row
    np.testing.assert_array_equal(part.weights[1], prev.weights[1])


def test_project_is_x_times_w():
    x = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0]])
    wq, wk, wv = np.arange(6.0).reshape(3, 2), -np.ones((3, 2)), np.eye(3)
    q, k, v = project(x, wq, wk, wv)
    np.testing.assert_array_equal(q, x @ wq)
    np.testing.assert_array_equal(k, x @ wk)
    np.testing.assert_array_equal(v, x @ wv)
    with pytest.raises(ValueError, match="W\\^K has 2 rows but X rows have 3"):
        project(x, wq, np.ones((2, 2)), wv)


def test_project_of_huge_values_stays_finite_and_right_or_is_refused():
    # (issue 20) 1e308·2 overflows on the way, but the true Q[0][0] = 2e308 − 1.9e308 = 1e307 is a double
    x = np.array([[1e308, -1e308], [1.0, 1.0]])
    q, k, _ = project(x, np.array([[2.0], [1.9]]), np.ones((2, 1)), np.ones((2, 1)))
    assert np.all(np.isfinite(q)) and q[0, 0] == pytest.approx(1e307, rel=1e-9) and q[1, 0] == pytest.approx(3.9)
    assert k[0, 0] == 0.0  # 1e308 − 1e308
    # 1e300·1e300 + 1e300·1e300 is no double: refused, never saturated to a wrong finite number
    x = np.array([[1e300, 1e300]])
    with pytest.raises(ValueError, match="Q = X·W\\^Q is too large: row 1, column 1"):
        project(x, np.full((2, 1), 1e300), np.ones((2, 1)), np.ones((2, 1)))


def test_row_stats():
    r = compute(Q, K, V)
    s = row_stats(r, SAT)
    w = r.weights[SAT]
    assert s.row_sum == pytest.approx(1.0, abs=1e-15)
    assert s.max_weight == w.max() and s.argmax == 1  # cat
    assert s.entropy_bits == pytest.approx(-sum(p * math.log2(p) for p in w), rel=1e-12)
    assert not s.fully_masked
    one_hot = row_stats(compute(Q, K, V, mask="causal"), 0)
    assert one_hot.entropy_bits == 0.0 and one_hot.max_weight == 1.0


# ---- extreme magnitudes --------------------------------------------------------------------------------
def test_huge_scores_saturate_instead_of_overflowing():
    q = np.array([[1e300, 1e300]])
    k = np.array([[1e300, 0.0], [1.0, 1.0], [-1e300, -1e300]])
    r = compute(q, k, np.eye(3))
    assert r.weights.tolist() == [[1.0, 0.0, 0.0]]
    assert np.all(np.isfinite(r.scores)) and np.all(np.isfinite(r.output))
    assert r.scores[0, 1] == 2e300  # a product that fits keeps its exact value


def test_a_huge_key_does_not_wash_out_the_tiny_ones():
    # q·k = 1 and 2 for the tiny keys; a 1e300 key elsewhere must not flatten them to a tie
    q = np.array([[1e300, 0.0]])
    k = np.array([[1e-300, 0.0], [2e-300, 0.0], [0.0, 1e300]])
    r = compute(q, k, np.eye(3))
    np.testing.assert_allclose(r.scores, [[1.0, 2.0, 0.0]], rtol=1e-12)
    np.testing.assert_allclose(r.weights, softmax(np.array([[1.0, 2.0, 0.0]]) / np.sqrt(2)), rtol=1e-12)


def test_all_hugely_negative_row_picks_the_least_negative():
    q = np.array([[1e300, 1e300]])
    k = np.array([[-2e300, -2e300], [-1e300, -1e300]])
    r = compute(q, k, np.eye(2))
    assert r.weights.tolist() == [[0.0, 1.0]]


def test_tiny_values_give_a_uniform_softmax():
    r = compute(np.full((2, 3), 1e-300), np.full((4, 3), 1e-300), np.ones((4, 2)))
    np.testing.assert_allclose(r.weights, 0.25)
    np.testing.assert_allclose(r.output, 1.0)


def test_values_near_max_double_blend_without_overflow():
    big = np.finfo(float).max
    r = compute(np.zeros((1, 1)), np.zeros((3, 1)), np.array([[big], [big], [big]]))
    assert np.isfinite(r.output).all() and r.output[0, 0] == pytest.approx(big)


# ---- properties (Hypothesis) ----------------------------------------------------------------------------
def _mats(n, m, d, dv, elements):
    return st.tuples(
        hnp.arrays(np.float64, (n, d), elements=elements),
        hnp.arrays(np.float64, (m, d), elements=elements),
        hnp.arrays(np.float64, (m, dv), elements=elements),
    )


MODERATE = st.floats(-20, 20, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw, elements=MODERATE, square=True):
    n = draw(st.integers(1, 6))
    m = n if square else draw(st.integers(1, 6))
    d = draw(st.integers(1, 4))
    dv = draw(st.integers(1, 3))
    return draw(_mats(n, m, d, dv, elements))


@FAST
@given(problems(), st.booleans())
def test_prop_agrees_with_the_independent_implementation(p, scale):
    q, k, v = p
    assert_same(compute(q, k, v, scale=scale), reference(q, k, v, scale=scale), rtol=1e-9, atol=1e-9)


@FAST
@given(problems(), st.data())
def test_prop_weight_rows_sum_to_one_and_masked_weights_are_zero(p, data):
    q, k, v = p
    n = q.shape[0]
    blocked = data.draw(hnp.arrays(bool, (n, n)))
    r = compute(q, k, v, mask=blocked)
    sums = r.weights.sum(axis=1)
    np.testing.assert_allclose(sums[~r.fully_masked], 1.0, atol=1e-12)
    assert np.all(sums[r.fully_masked] == 0.0)
    np.testing.assert_array_equal(r.fully_masked, blocked.all(axis=1))
    assert np.all(r.weights[blocked] == 0.0)
    assert np.all(np.isneginf(r.scores[blocked])) and np.all(np.isneginf(r.scaled[blocked]))
    assert np.all(r.weights >= 0.0)


@FAST
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 6)), elements=MODERATE),
       st.floats(-1e3, 1e3), st.data())
def test_prop_adding_a_constant_to_a_row_of_scores_leaves_weights_unchanged(x, c, data):
    blocked = data.draw(hnp.arrays(bool, x.shape))
    w, fully = masked_softmax(x, np.ones((x.shape[0], 1)), blocked)
    w2, fully2 = masked_softmax(x + c, np.ones((x.shape[0], 1)), blocked)
    np.testing.assert_allclose(w2, w, atol=1e-9)
    np.testing.assert_array_equal(fully, fully2)
    np.testing.assert_allclose(softmax(x + c), softmax(x), atol=1e-9)


@FAST
@given(problems(), hnp.arrays(np.float64, st.integers(1, 1), elements=st.floats(-50, 50)))
def test_prop_a_constant_added_to_every_score_of_a_query_changes_no_weight(p, c):
    # An extra dimension with K = 1 everywhere adds Q's value there to the whole row of scores.
    q, k, v = p
    n, m = q.shape[0], k.shape[0]
    k1 = np.hstack([k, np.ones((m, 1))])
    shifted = compute(np.hstack([q, np.full((n, 1), c[0])]), k1, v, scale=False)
    plain = compute(np.hstack([q, np.zeros((n, 1))]), k1, v, scale=False)
    np.testing.assert_allclose(shifted.scores, plain.scores + c[0], atol=1e-9)
    np.testing.assert_allclose(shifted.weights, plain.weights, atol=1e-9)


@FAST
@given(problems(), st.randoms(use_true_random=False), st.sampled_from(["none", "custom"]), st.data())
def test_prop_permuting_tokens_permutes_every_result(p, rnd, kind, data):
    q, k, v = p
    n = q.shape[0]
    order = list(range(n))
    rnd.shuffle(order)
    idx = np.array(order)
    mask = "none" if kind == "none" else data.draw(hnp.arrays(bool, (n, n)))
    pmask = "none" if kind == "none" else mask[np.ix_(idx, idx)]
    a = compute(q, k, v, mask=mask)
    b = compute(q[idx], k[idx], v[idx], mask=pmask)
    np.testing.assert_allclose(b.scores, a.scores[np.ix_(idx, idx)], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.weights, a.weights[np.ix_(idx, idx)], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.output, a.output[idx], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(b.fully_masked, a.fully_masked[idx])


EXTREME = st.one_of(
    st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 1e-300, -1e-300, 1e300, -1e300, 1.0, -1.0, 5e-324]),
)


@FAST
@given(problems(EXTREME), st.data())
def test_prop_under_the_causal_mask_later_tokens_do_not_change_earlier_rows(p, data):
    q, k, v = p
    n = q.shape[0]
    i = data.draw(st.integers(0, n - 1))
    later = n - i - 1
    q2, k2, v2 = q.copy(), k.copy(), v.copy()
    if later:
        q2[i + 1:] = data.draw(hnp.arrays(np.float64, (later, q.shape[1]), elements=EXTREME))
        k2[i + 1:] = data.draw(hnp.arrays(np.float64, (later, k.shape[1]), elements=EXTREME))
        v2[i + 1:] = data.draw(hnp.arrays(np.float64, (later, v.shape[1]), elements=EXTREME))
    a = compute(q, k, v, mask="causal")
    b = compute(q2, k2, v2, mask="causal")
    for name in ("scores", "scaled", "weights", "output"):
        np.testing.assert_allclose(getattr(b, name)[: i + 1], getattr(a, name)[: i + 1], rtol=1e-12, atol=0,
                                   err_msg=name)


@FAST
@given(problems(EXTREME, square=False), st.booleans(), st.sampled_from([False, True]))
def test_prop_no_nan_or_inf_for_extreme_magnitudes(p, scale, causal):
    q, k, v = p
    mask = causal_mask(q.shape[0], k.shape[0]) if causal else "none"
    r = compute(q, k, v, scale=scale, mask=mask)
    assert np.all(np.isfinite(r.weights)) and np.all(np.isfinite(r.output))
    assert not np.isnan(r.scores).any() and not np.isnan(r.scaled).any()
    assert np.all(np.isfinite(r.scores[~r.blocked])) and np.all(np.isfinite(r.scaled[~r.blocked]))
    sums = r.weights.sum(axis=1)
    np.testing.assert_allclose(sums[~r.fully_masked], 1.0, atol=1e-12)
    # the output is a convex blend of the values, so it stays inside their range
    hi, lo = v.max(axis=0), v.min(axis=0)
    assert np.all(r.output <= hi + 1e-12 * np.abs(hi) + 1e-300)
    assert np.all(r.output >= lo - 1e-12 * np.abs(lo) - 1e-300)


def test_the_row_fields_are_read_from_the_result_type_and_every_revealed_result_is_one():
    from dataclasses import fields

    from qkv_studio.core.attention import ROW_FIELDS, AttentionResult, update_rows
    from qkv_studio.core.stages import RESULTS

    names = {f.name for f in fields(AttentionResult)}
    assert ROW_FIELDS == ("scores", "scaled", "weights", "output", "fully_masked")
    assert set(RESULTS) <= set(ROW_FIELDS) <= names and RESULTS == ("scores", "scaled", "weights", "output")
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 5, 2))
    before = compute(q, k, v, mask="causal")
    q2 = q.copy()
    q2[[1, 3]] += 1.0
    after, whole = update_rows(before, [1, 3], q2, k, v, mask="causal"), compute(q2, k, v, mask="causal")
    for name in ROW_FIELDS:  # every per-query field is recomputed for the edited rows, and only those
        np.testing.assert_array_equal(getattr(after, name), getattr(whole, name))
        np.testing.assert_array_equal(getattr(after, name)[[0, 2, 4]], getattr(before, name)[[0, 2, 4]])
