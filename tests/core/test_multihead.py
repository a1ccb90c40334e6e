"""Multi-head attention equals an independent implementation; one head is ordinary attention."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core import Scene, causal_mask, compute, load_preset
from qkv_studio.core.multihead import check_heads, multihead, multihead_qkv, multihead_scene, valid_heads


def reference_multihead(x, wq, wk, wv, h, wo=None, mask=None, scale=True):
    """Written from the paper, independently of compute(): loops, explicit reshapes, its own softmax."""
    n, _ = x.shape
    q_all, k_all, v_all = x @ wq, x @ wk, x @ wv
    dk = wq.shape[1] // h
    dv = wv.shape[1] // h
    # reshape n × (h·d) → h × n × d (the usual framework layout)
    qh = q_all.reshape(n, h, dk).transpose(1, 0, 2)
    kh = k_all.reshape(n, h, dk).transpose(1, 0, 2)
    vh = v_all.reshape(n, h, dv).transpose(1, 0, 2)
    outs = []
    for i in range(h):
        s = np.zeros((n, n))
        for a in range(n):
            for b in range(n):
                s[a, b] = sum(qh[i, a, t] * kh[i, b, t] for t in range(dk))
        if scale:
            s = s / np.sqrt(dk)
        if mask is not None:
            s = np.where(mask, -np.inf, s)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w = w / w.sum(axis=1, keepdims=True)
        outs.append(w @ vh[i])
    concat = np.concatenate(outs, axis=1)
    return concat @ wo if wo is not None else concat, concat


@pytest.fixture
def mats():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(6, 8))
    return x, rng.normal(size=(8, 8)) / 2, rng.normal(size=(8, 8)) / 2, rng.normal(size=(8, 8)) / 2


@pytest.mark.parametrize("h", [1, 2, 4, 8])
def test_equals_an_independent_implementation(mats, h):
    x, wq, wk, wv = mats
    wo = np.random.default_rng(1).normal(size=(8, 5))
    r = multihead(x, wq, wk, wv, h, wo=wo)
    want, want_concat = reference_multihead(x, wq, wk, wv, h, wo)
    np.testing.assert_allclose(r.concat, want_concat, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.output, want, rtol=1e-12, atol=1e-12)
    assert r.h == h and r.d_head_k == 8 // h and r.output.shape == (6, 5)
    assert r.weights().shape == (h, 6, 6)
    np.testing.assert_allclose(r.weights().sum(axis=2), 1.0)


def test_causal_and_unscaled_match_the_reference(mats):
    x, wq, wk, wv = mats
    r = multihead(x, wq, wk, wv, 2, mask="causal", scale=False)
    want, _ = reference_multihead(x, wq, wk, wv, 2, mask=causal_mask(6), scale=False)
    np.testing.assert_allclose(r.output, want, rtol=1e-12, atol=1e-12)
    for head in r.heads:
        assert np.all(head.weights[np.triu_indices(6, 1)] == 0)


def test_one_head_is_single_head_attention(mats):
    x, wq, wk, wv = mats
    r = multihead(x, wq, wk, wv, 1)
    single = compute(x @ wq, x @ wk, x @ wv)
    np.testing.assert_array_equal(r.heads[0].weights, single.weights)
    np.testing.assert_array_equal(r.output, single.output)
    assert r.wo is None and r.heads[0].d_k == 8


def test_each_head_scales_by_its_own_width(mats):
    x, wq, wk, wv = mats
    r = multihead(x, wq, wk, wv, 4)
    q0, k0, _ = r.head_qkv(0)
    assert q0.shape == (6, 2) and r.heads[0].d_k == 2
    np.testing.assert_allclose(r.heads[0].scaled, (q0 @ k0.T) / np.sqrt(2))
    np.testing.assert_array_equal(q0, (x @ wq)[:, :2])
    np.testing.assert_allclose(r.concat[:, r.head_columns(3, "v")], r.heads[3].output)


def test_different_widths_for_keys_and_values():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 4))
    wq, wk, wv = rng.normal(size=(4, 6)), rng.normal(size=(4, 6)), rng.normal(size=(4, 4))
    r = multihead(x, wq, wk, wv, 2)
    want, _ = reference_multihead(x, wq, wk, wv, 2)
    np.testing.assert_allclose(r.output, want, rtol=1e-12)
    assert r.d_head_k == 3 and r.d_head_v == 2 and r.concat.shape == (5, 4)


def test_scene_in_either_mode_gives_the_same_heads():
    s = load_preset("projection")  # d_k = 2
    r = multihead_scene(s, 2)
    q, k, v = s.qkv()
    direct = Scene.create(s.tokens, q=q, k=k, v=v)
    np.testing.assert_array_equal(multihead_scene(direct, 2).output, r.output)
    np.testing.assert_allclose(r.output, reference_multihead(s.x, s.wq, s.wk, s.wv, 2)[0], rtol=1e-12)


@pytest.mark.parametrize("heads, words", [
    (3, "3 heads cannot split d_k = 8"), (0, "from 1 to 16"), (17, "from 1 to 16"), (2.0, "whole number"),
    (True, "whole number"),
])
def test_bad_head_counts_are_refused_in_words(mats, heads, words):
    x, wq, wk, wv = mats
    with pytest.raises(ValueError, match=words):
        multihead(x, wq, wk, wv, heads)


def test_other_refusals(mats):
    x, wq, wk, wv = mats
    with pytest.raises(ValueError, match="possible here: 1, 2, 4, 8"):
        multihead(x, wq, wk, wv, 5)
    with pytest.raises(ValueError, match="d_v = 6"):
        multihead(x, wq, wk, wv[:, :6], 4)
    with pytest.raises(ValueError, match="W\\^O has 3 rows"):
        multihead(x, wq, wk, wv, 2, wo=np.ones((3, 2)))
    with pytest.raises(ValueError, match="share d_k"):
        multihead(x, wq, wk[:, :4], wv, 2)
    with pytest.raises(ValueError, match="d_model"):
        multihead(x[:, :5], wq, wk, wv, 2)
    with pytest.raises(ValueError, match="share d_k"):
        multihead_qkv(x, x[:, :4], x, 2)


def test_valid_heads():
    assert valid_heads(8) == [1, 2, 4, 8]
    assert valid_heads(12, 8) == [1, 2, 4]
    assert valid_heads(64) == [1, 2, 4, 8, 16]
    assert check_heads(np.int64(4), 8) == 4


def test_the_callers_arrays_stay_writable(mats):
    x, wq, wk, wv = mats
    q = x @ wq
    r = multihead_qkv(q, q, q, 2)
    q[0, 0] = 1.0  # still the caller's to change
    assert not r.q.flags.writeable and r.q[0, 0] == (x @ wq)[0, 0]
