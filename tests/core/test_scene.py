"""The Scene value type: validation a person can read, the limits, and every edit."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core import MAX_TOKENS, MAX_WIDTH, STAGES, Scene, SceneError, View, compute
from qkv_studio.core.view import query_after_insert, query_after_remove

TOKENS = ("the", "cat", "sat", "mat")
Q = [[0, 1], [1, 0], [1, 2], [0.5, 0.5]]
K = [[1, 0], [2, 1], [0, 1], [1, 1]]
V = [[1, 0], [0, 1], [1, 1], [0.5, -1]]


def lesson(**kw) -> Scene:
    args = dict(q=Q, k=K, v=V)
    args.update(kw)
    return Scene.create(TOKENS, **args)


def projection_scene() -> Scene:
    x = [[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 1, 0]]
    return Scene.create(TOKENS, x=x, wq=[[1, 0], [0, 1], [1, 1]], wk=[[0, 1], [1, 0], [1, 1]],
                        wv=[[1, 0], [0, 1], [0.5, 0.5]])


def refused(field: str, *fragments: str, **kw) -> SceneError:
    tokens = kw.pop("tokens", TOKENS)
    with pytest.raises(SceneError) as info:
        Scene.create(tokens, **kw)
    err = info.value
    assert err.field == field
    for frag in fragments:
        assert frag in str(err), f"{frag!r} not in {str(err)!r}"
    return err


# ---- validation messages -------------------------------------------------------------------------------
def test_a_valid_scene():
    s = lesson()
    assert s.n == 4 and s.d_k == 2 and s.d_v == 2 and s.mode == "direct" and s.d_model is None
    assert s.tokens == TOKENS and s.mask == "none" and s.scale is True
    assert not s.q.flags.writeable  # arrays are frozen: a Scene is a value


def test_q_k_width_mismatch_names_both_widths():
    k3 = [[1, 0, 0], [2, 1, 0], [0, 1, 0], [1, 1, 0]]
    refused("K", "Q rows have 2 numbers", "K rows have 3", q=Q, k=k3, v=V)


def test_rows_must_match_tokens():
    refused("V", "V has 3 rows", "4 tokens", q=Q, k=K, v=V[:3])
    refused("Q", "Q has 5 rows", "4 tokens", q=Q + [[0, 0]], k=K, v=V)


def test_ragged_rows_are_refused_with_the_field():
    err = refused("Q", "Q", q=[[0, 1], [1], [1, 2], [0.5, 0.5]], k=K, v=V)
    assert "rows of equal length" in str(err)


def test_non_finite_numbers_name_the_cell():
    bad = [row[:] for row in K]
    bad[2][1] = float("nan")
    refused("K", "K row 3, column 2", "not a finite number", q=Q, k=bad, v=V)
    bad[2][1] = float("inf")
    refused("K", "row 3, column 2", q=Q, k=bad, v=V)


def test_missing_matrices():
    refused("V", "missing V", q=Q, k=K)
    refused("Q", "missing Q, K, V")


def test_projection_mode_validation():
    x = [[1, 0, 0]] * 4
    refused("X", "needs X, Wq, Wk and Wv", x=x, wq=[[1]] * 3)
    refused("Wk", "Wk has 2 rows", "X rows have 3", x=x, wq=[[1, 0]] * 3, wk=[[1, 0]] * 2, wv=[[1]] * 3)
    refused("Wk", "Wq makes queries of width 2", "Wk makes keys of width 1",
            x=x, wq=[[1, 0]] * 3, wk=[[1]] * 3, wv=[[1]] * 3)


def test_bad_mask_query_and_stage():
    refused("mask", "unknown mask 'future'", q=Q, k=K, v=V, mask="future")
    refused("mask", "4×4", "3×3", q=Q, k=K, v=V, mask=np.zeros((3, 3), dtype=bool))
    # the query and the stage are a View's, checked against the scene it looks at
    s = lesson()
    for view, field, fragments in ((View(query=4), "query", ("query 4 is out of range", "4 tokens")),
                                   (View(query=-1), "query", ("query -1",)),
                                   (View(stage="blend"), "stage", ("unknown stage 'blend'", *STAGES))):
        with pytest.raises(SceneError) as info:
            view.check(s)
        assert info.value.field == field and all(f in str(info.value) for f in fragments)
    assert View(query=3, stage="scores").check(s) == View(3, "scores")


def test_a_scene_holds_no_view_state():
    s = lesson()
    for name in ("query", "stage", "with_query", "with_stage", "_view"):
        assert not hasattr(s, name), name
    with pytest.raises(TypeError):
        Scene.create(TOKENS, q=Q, k=K, v=V, query=2)
    with pytest.raises(TypeError):
        Scene.create(TOKENS, q=Q, k=K, v=V, stage="scores")


def test_mask_given_as_lists_or_none():
    listed = lesson(mask=[[False, True, False, False]] * 4)
    assert listed.mask.dtype == bool and listed.mask[:, 1].all()
    assert lesson(mask=None).mask == "none"
    assert isinstance(lesson().with_mask([[True] + [False] * 3] * 4).mask, np.ndarray)


# ---- limits --------------------------------------------------------------------------------------------
def test_token_count_limits():
    one = Scene.create(["solo"], q=[[1.0]], k=[[1.0]], v=[[1.0]])
    assert one.n == 1 and one.result().weights.tolist() == [[1.0]]
    refused("tokens", "1–1024 tokens", "has 0", tokens=[], q=np.zeros((0, 1)), k=np.zeros((0, 1)),
            v=np.zeros((0, 1)))
    n = MAX_TOKENS
    ok = Scene.create([f"t{i}" for i in range(n)], q=np.zeros((n, 1)), k=np.zeros((n, 1)), v=np.zeros((n, 1)))
    assert ok.n == 1024
    n = MAX_TOKENS + 1
    refused("tokens", "1–1024 tokens", "has 1025", tokens=[f"t{i}" for i in range(n)],
            q=np.zeros((n, 1)), k=np.zeros((n, 1)), v=np.zeros((n, 1)))


def test_width_limits():
    ok = Scene.create(["a"], q=np.zeros((1, MAX_WIDTH)), k=np.zeros((1, MAX_WIDTH)), v=np.zeros((1, 1)))
    assert ok.d_k == 1024
    refused("Q", "1–1024 numbers", "they have 1025", tokens=["a"], q=np.zeros((1, 1025)), k=np.zeros((1, 1025)),
            v=np.zeros((1, 1)))
    refused("Q", "they have 0", tokens=["a"], q=np.zeros((1, 0)), k=np.zeros((1, 0)), v=np.zeros((1, 1)))


def test_token_name_limits():
    assert Scene.create(["x" * 64], q=[[1]], k=[[1]], v=[[1]]).tokens == ("x" * 64,)
    refused("tokens", "token 1", "1–64 characters", "it has 65", tokens=["x" * 65], q=[[1]], k=[[1]], v=[[1]])
    refused("tokens", "token 2", "it has 0", tokens=["a", ""], q=[[1], [1]], k=[[1], [1]], v=[[1], [1]])
    refused("tokens", "control character", tokens=["a\nb"], q=[[1]], k=[[1]], v=[[1]])


# ---- derived values ------------------------------------------------------------------------------------
def test_result_is_compute_of_the_matrices():
    s = lesson(mask="causal", scale=False)
    r = compute(np.array(Q, float), np.array(K, float), np.array(V, float), mask="causal", scale=False)
    np.testing.assert_array_equal(s.result().weights, r.weights)
    assert s.result() is s.result()  # cached


def test_projection_scene_derives_qkv():
    s = projection_scene()
    q, k, v = s.qkv()
    np.testing.assert_array_equal(q, s.x @ s.wq)
    np.testing.assert_array_equal(k, s.x @ s.wk)
    np.testing.assert_array_equal(v, s.x @ s.wv)
    assert s.mode == "projection" and s.d_model == 3 and s.d_k == 2
    assert s.matrix_names() == ("X", "Wq", "Wk", "Wv")
    np.testing.assert_array_equal(s.matrix("Q"), q)


def test_find_token_by_name_index_and_label():
    s = Scene.create(["the", "cat", "the", "7"], q=[[1]] * 4, k=[[1]] * 4, v=[[1]] * 4)
    assert s.find_token("cat") == 1
    assert s.find_token("the") == 0
    assert s.find_token("the·2") == 2
    assert s.find_token(3) == 3 and s.find_token("3") == 3 and s.find_token(" 2 ") == 2
    with pytest.raises(SceneError, match="no token named 'dog'") as info:
        s.find_token("dog")
    assert info.value.field == "query"
    with pytest.raises(SceneError, match="out of range"):
        s.find_token("4")
    with pytest.raises(SceneError, match="out of range"):
        s.find_token(-1)
    for odd in ("²", "--3", "1e2", ""):  # not an index: looked up (and not found) as a name
        with pytest.raises(SceneError, match="no token named"):
            s.find_token(odd)


def test_same_as():
    assert lesson().same_as(lesson())
    from qkv_studio.core import scene_from_dict, scene_to_dict

    # two files that differ only in their view (query, stage) hold the same scene
    a = scene_from_dict(scene_to_dict(lesson(), View(1, "scores")))
    b = scene_from_dict(scene_to_dict(lesson(), View(3, "weights")))
    assert a.same_as(b) and a.same_as(lesson())
    assert not lesson().same_as(lesson(mask="causal"))
    assert not lesson().same_as(lesson(v=[[1, 0], [0, 1], [1, 1], [0.5, -2]]))
    assert not lesson().same_as(projection_scene())
    assert not lesson().same_as("scene")


# ---- edits ---------------------------------------------------------------------------------------------
def test_with_value_block_and_matrix():
    s = lesson()
    t = s.with_value("Q", 2, 0, 3.5)
    assert t.q[2, 0] == 3.5 and s.q[2, 0] == 1.0  # a new scene; the old one is untouched
    b = s.with_block("K", 1, 0, np.array([[9, 8], [7, 6]]))
    assert b.k[1:3].tolist() == [[9, 8], [7, 6]]
    with pytest.raises(SceneError, match="does not fit"):
        s.with_block("K", 3, 0, np.ones((2, 2)))
    with pytest.raises(SceneError, match="finite"):
        s.with_value("V", 0, 0, float("nan"))
    with pytest.raises(SceneError, match="not editable in direct mode"):
        s.with_value("X", 0, 0, 1.0)
    with pytest.raises(SceneError, match="must stay 4×2"):
        s.with_matrix("Q", np.zeros((3, 2)))
    assert s.with_matrix("V", np.zeros((4, 2))).v.sum() == 0


def test_query_stage_mask_scale():
    s = lesson()
    v = View(query=2)
    assert v.with_query(2) is v
    assert v.with_query(0).query == 0 and v.with_query(0).stage == "weights"
    assert v.with_stage("scores").stage == "scores" and v.with_stage("scores").query == 2
    with pytest.raises(SceneError):
        v.with_stage("nope").check(s)
    assert s.with_mask("causal").mask == "causal"
    assert s.with_scale(False).result().scaled[2].tolist() == [1, 4, 2, 3]


def test_another_query_or_stage_is_a_view_of_the_same_scene_and_checks_only_itself():
    s = projection_scene()
    result, qkv = s.result(), s.qkv()
    looked = View(query=2).with_stage("scores").with_query(0)  # a View: no Scene is made
    assert looked == View(0, "scores") and looked.check(s) is looked
    assert s.result() is result and s.qkv() is qkv  # not projected nor computed again
    with pytest.raises(SceneError) as info:
        View(query=4).check(s)
    assert info.value.field == "query" and "out of range" in str(info.value)
    with pytest.raises(SceneError) as info:
        View(stage="blend").check(s)
    assert info.value.field == "stage"
    assert View(query=9, stage="blend").fitted(s) == View(3, "weights")  # (a file's view onto fewer tokens)
    # a change of the numbers does not keep them
    assert s.with_value("X", 0, 0, 5.0).result() is not result


def test_insert_token():
    s = lesson()
    t = s.insert_token(1, "big", rows={"q": [1, 1], "k": [2, 2], "v": [3, 3]})
    assert t.tokens == ("the", "big", "cat", "sat", "mat")
    assert t.q[1].tolist() == [1, 1] and t.k[1].tolist() == [2, 2] and t.v[1].tolist() == [3, 3]
    q = query_after_insert(2, 1, s.n)
    assert q == 3 and t.tokens[q] == "sat"  # the selected query follows its token
    z = s.insert_token(99, "end")
    assert z.tokens[-1] == "end" and z.q[-1].tolist() == [0, 0] and query_after_insert(2, 99, s.n) == 2


def test_insert_token_grows_a_custom_mask_and_projection_rows():
    m = np.zeros((4, 4), dtype=bool)
    m[:, 3] = True
    t = lesson(mask=m).insert_token(0, "a")
    assert t.mask.shape == (5, 5) and t.mask[1:, 4].all() and t.mask.sum() == 4
    assert not t.mask[0].any() and not t.mask[:, 0].any()
    p = projection_scene().insert_token(4, "new")
    assert p.x.shape == (5, 3) and p.wq.shape == (3, 2) and p.qkv()[0].shape == (5, 2)


def test_insert_beyond_the_limit_is_refused():
    n = MAX_TOKENS
    s = Scene.create([f"t{i}" for i in range(n)], q=np.zeros((n, 1)), k=np.zeros((n, 1)), v=np.zeros((n, 1)))
    with pytest.raises(SceneError, match="at most 1024"):
        s.insert_token(0, "more")


def test_remove_token():
    s = lesson()
    t = s.remove_token(0)
    assert t.tokens == ("cat", "sat", "mat") and t.tokens[query_after_remove(2, 0, s.n)] == "sat"
    assert t.q.tolist() == Q[1:]
    u = s.remove_token(2)  # removing the selected query keeps a valid selection
    assert u.tokens == ("the", "cat", "mat") and 0 <= query_after_remove(2, 2, s.n) < 3
    assert query_after_remove(3, 3, s.n) == 2  # (the last token: the one before it)
    one = Scene.create(["a"], q=[[1]], k=[[1]], v=[[1]])
    with pytest.raises(SceneError, match="last token cannot be removed"):
        one.remove_token(0)
    m = np.zeros((4, 4), dtype=bool)
    m[1, 3] = True
    assert s.with_mask(m).remove_token(0).mask.tolist() == [[False, False, True], [False] * 3, [False] * 3]


def test_move_token_carries_its_rows():
    s = lesson()
    t = s.move_token(2, 0)
    assert t.tokens == ("sat", "the", "cat", "mat")
    assert t.q[0].tolist() == Q[2] and t.k[0].tolist() == K[2] and t.v[0].tolist() == V[2]
    assert t.tokens[0] == s.tokens[2]  # (the tokens panel then selects the moved token: tests/ui)
    # the same attention, rows and columns reordered
    order = [2, 0, 1, 3]
    np.testing.assert_allclose(t.result().weights, s.result().weights[np.ix_(order, order)], rtol=1e-15)


def test_add_and_remove_dims():
    s = lesson()
    t = s.add_dim("qk")
    assert t.q.shape == (4, 3) and t.k.shape == (4, 3) and t.v.shape == (4, 2)
    assert np.all(t.q[:, 2] == 0) and t.dim("qk") == 3
    np.testing.assert_array_equal(t.result().scores, s.result().scores)  # a zero dimension adds nothing
    u = s.add_dim("v", 0)
    assert u.v.shape == (4, 3) and np.all(u.v[:, 0] == 0)
    r = s.remove_dim("qk", 0)
    assert r.q.tolist() == [[row[1]] for row in Q]
    with pytest.raises(SceneError, match="d_k must be at least 1"):
        r.remove_dim("qk")
    with pytest.raises(SceneError, match="no dimension group 'model'"):
        s.add_dim("model")
    p = projection_scene().add_dim("model")
    assert p.x.shape == (4, 4) and p.wq.shape == (4, 2) and p.wv.shape == (4, 2)


def test_toggle_blocked():
    s = lesson()
    a = s.toggle_blocked(2, 1)
    assert isinstance(a.mask, np.ndarray) and a.mask[2, 1] and a.mask.sum() == 1
    assert a.result().weights[2, 1] == 0.0
    assert a.toggle_blocked(2, 1).mask == "none"  # back to no mask at all
    col = s.toggle_blocked(None, 3)
    assert col.mask[:, 3].all() and col.mask.sum() == 4
    assert col.toggle_blocked(None, 3).mask == "none"
    # building the causal pattern cell by cell is recognised as the causal mask
    c = s
    for i in range(4):
        for j in range(i + 1, 4):
            c = c.toggle_blocked(i, j)
    assert c.mask == "causal"


def test_to_direct_and_back_keeps_the_numbers():
    p = projection_scene()
    d = p.to_direct()
    assert d.mode == "direct" and d.x is None
    for a, b in zip(d.qkv(), p.qkv(), strict=False):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(d.result().weights, p.result().weights)
    assert d.to_direct() is d
    back = d.to_projection(p.x, p.wq, p.wk, p.wv)
    assert back.mode == "projection" and back.q is None
    assert back.same_as(p)


# ---- heads and the output projection W^O -------------------------------------------------------------------
def multi(**kw) -> Scene:
    """The lesson widened to d_k = d_v = 4 (zero columns) so that 1, 2 and 4 heads split it."""
    s = lesson().add_dim("qk").add_dim("qk").add_dim("v").add_dim("v")
    return s._evolve(**kw) if kw else s


def test_heads_default_to_one_without_wo():
    s = lesson()
    assert s.heads == 1 and s.wo is None
    assert s.multihead().h == 1
    np.testing.assert_array_equal(s.multihead().output, s.result().output)


def test_heads_and_wo_are_validated_with_the_field_and_the_numbers():
    refused("heads", "heads must be 1–16, not 0", q=Q, k=K, v=V, heads=0)
    refused("heads", "heads must be 1–16, not 17", q=Q, k=K, v=V, heads=17)
    refused("heads", "whole number", q=Q, k=K, v=V, heads=2.0)
    refused("heads", "whole number", q=Q, k=K, v=V, heads=True)
    refused("heads", "heads = 3 cannot split d_k = 2", "possible: 1, 2", q=Q, k=K, v=V, heads=3)
    v3 = [row + [0] for row in V]
    refused("heads", "cannot split d_v = 3", q=Q, k=K, v=v3, heads=2)
    refused("Wo", "Wo has 3 rows", "d_v = 2", q=Q, k=K, v=V, heads=2, wo=np.ones((3, 2)))
    bad = np.eye(2)
    bad[0, 1] = np.nan
    refused("Wo", "Wo row 1, column 2 is not a finite number", q=Q, k=K, v=V, wo=bad)
    refused("Wo", "Wo rows must have 1–1024 numbers, they have 1025", q=Q, k=K, v=V, wo=np.ones((2, 1025)))
    refused("Wo", "Wo must be a table of rows", q=Q, k=K, v=V, wo=[1.0, 2.0])


def test_a_multi_head_scene_is_an_immutable_value():
    wo = np.arange(8.0).reshape(2, 4)
    s = lesson(heads=2, wo=wo)
    assert s.heads == 2 and s.wo.shape == (2, 4) and not s.wo.flags.writeable
    wo[0, 0] = 99  # the caller's array is copied
    assert s.wo[0, 0] == 0
    assert s.same_as(lesson(heads=2, wo=np.arange(8.0).reshape(2, 4)))
    assert not s.same_as(lesson(heads=2))
    assert not s.same_as(lesson(wo=np.arange(8.0).reshape(2, 4)))
    assert not s.same_as(lesson(heads=2, wo=np.ones((2, 4))))
    t = s.with_heads(1)
    assert (t.heads, s.heads) == (1, 2) and t.with_heads(1) is t
    assert s.with_wo(None).wo is None and s.wo is not None
    with pytest.raises(SceneError, match="cannot split d_k = 2"):
        s.with_heads(4)


def test_multihead_result_uses_the_scenes_heads_and_wo():
    from qkv_studio.core.multihead import multihead_scene

    wo = np.random.default_rng(5).normal(size=(4, 3))
    s = multi(heads=2, wo=wo)
    r = s.multihead()
    want = multihead_scene(s, 2, wo)
    np.testing.assert_array_equal(r.output, want.output)
    assert r.h == 2 and r.output.shape == (4, 3)
    assert s.multihead() is r  # cached per scene


def test_head_scene_is_that_heads_columns():
    rng = np.random.default_rng(3)
    s = Scene.create(TOKENS, q=rng.normal(size=(4, 4)), k=rng.normal(size=(4, 4)), v=rng.normal(size=(4, 6)),
                     heads=2, mask="causal", scale=False, title="t")
    h1 = s.head_scene(1)
    assert h1.mode == "direct" and h1.heads == 1 and h1.tokens == s.tokens
    np.testing.assert_array_equal(h1.q, s.q[:, 2:])
    np.testing.assert_array_equal(h1.v, s.v[:, 3:])
    assert (h1.mask, h1.scale) == ("causal", False) and not hasattr(h1, "query")
    np.testing.assert_array_equal(h1.result().weights, s.multihead().heads[1].weights)
    assert "head 1" in h1.title and "0–1" in h1.title
    with pytest.raises(SceneError, match=r"head 2 is out of range: this scene has 2 heads, counted from 0 \(0–1\)"):
        s.head_scene(2)
    with pytest.raises(SceneError, match="out of range"):
        s.head_scene(-1)
    with pytest.raises(SceneError, match="this scene has one head"):
        lesson().head_scene(0)


def test_dimension_edits_keep_heads_valid_and_wo_in_step():
    wo = np.arange(16.0).reshape(4, 4)
    s = multi(heads=4, wo=wo)
    t = s.remove_dim("qk")  # d_k = 3, d_v = 4: only one head splits both
    assert t.d_k == 3 and t.heads == 1
    assert multi(heads=4).add_dim("qk").add_dim("qk").add_dim("qk").add_dim("qk").heads == 1  # via d_k = 5
    eight = Scene.create(TOKENS, q=np.ones((4, 8)), k=np.ones((4, 8)), v=np.ones((4, 12)), heads=4)
    six = eight._evolve(q=np.ones((4, 6)), k=np.ones((4, 6)))  # d_k = 6, d_v = 12: of 1, 2, 3, 6, 3 is nearest 4
    assert six.heads == 3
    u = s.remove_dim("v", 1)  # W^O loses the row of the removed value column
    assert u.d_v == 3 and u.heads == 1 and u.wo.tolist() == np.delete(wo, 1, axis=0).tolist()
    w = s.add_dim("v", 0)  # … and gains a zero row for a new (zero) one: the output is unchanged
    assert w.wo.shape == (5, 4) and np.all(w.wo[0] == 0) and w.heads == 1
    np.testing.assert_allclose(w.multihead().output, s.with_heads(1).multihead().output)
    assert multi(heads=2).with_scale(False).heads == 2  # other edits leave heads alone


def test_mode_switches_keep_heads_and_wo():
    from qkv_studio.core.scene import projection_of

    wo = np.ones((4, 2))
    s = multi(heads=2, wo=wo)
    p = projection_of(s)
    assert p.mode == "projection" and p.heads == 2 and p.wo.tolist() == wo.tolist()
    d = p.to_direct()
    assert d.heads == 2 and d.same_as(s)


def test_a_new_version_keeps_exactly_the_derived_values_whose_inputs_it_keeps():
    from qkv_studio.core import load_preset
    from qkv_studio.core.scene import projection_of

    s = projection_of(load_preset("lesson"))
    r, qkv = s.result(), s.qkv()
    s.token_label(0)
    looked = s.with_heads(s.heads)  # (no change: the same scene, the same numbers)
    assert looked is s and looked.result() is r and looked.qkv() is qkv
    unscaled = s.with_scale(False)  # (the projections stand; attention does not)
    assert unscaled.qkv() is qkv and unscaled.result() is not r
    assert np.array_equal(unscaled.result().scaled, compute(*qkv, scale=False).scaled)
    edited = s.with_value("X", 1, 0, 5.0)
    assert edited.qkv() is not qkv and edited.result() is not r
    np.testing.assert_array_equal(edited.result().weights, compute(*edited.qkv()).weights)
    renamed = s.rename_token(1, "the")  # (a repeated name: the labels are counted again)
    assert renamed.result() is r and renamed.token_label(1) == "the·2" and s.token_label(1) != "the·2"
