"""The Scene value type: validation a person can read, the limits, and every edit."""

from __future__ import annotations

import numpy as np
import pytest

from qkv_studio.core import MAX_TOKENS, MAX_WIDTH, STAGES, Scene, SceneError, compute

TOKENS = ("the", "cat", "sat", "mat")
Q = [[0, 1], [1, 0], [1, 2], [0.5, 0.5]]
K = [[1, 0], [2, 1], [0, 1], [1, 1]]
V = [[1, 0], [0, 1], [1, 1], [0.5, -1]]


def lesson(**kw) -> Scene:
    args = dict(q=Q, k=K, v=V, query=2)
    args.update(kw)
    return Scene.create(TOKENS, **args)


def projection_scene() -> Scene:
    x = [[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 1, 0]]
    return Scene.create(TOKENS, x=x, wq=[[1, 0], [0, 1], [1, 1]], wk=[[0, 1], [1, 0], [1, 1]],
                        wv=[[1, 0], [0, 1], [0.5, 0.5]], query=2)


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
    assert s.tokens == TOKENS and s.stage == "weights" and s.mask == "none" and s.scale is True
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
    refused("query", "query 4 is out of range", "4 tokens", q=Q, k=K, v=V, query=4)
    refused("query", "query -1", q=Q, k=K, v=V, query=-1)
    refused("stage", "unknown stage 'blend'", *STAGES, q=Q, k=K, v=V, stage="blend")


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
    assert not lesson().same_as(lesson(query=1))
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
    assert s.with_query(2) is s
    assert s.with_query(0).query == 0
    assert s.with_stage("scores").stage == "scores"
    with pytest.raises(SceneError):
        s.with_stage("nope")
    assert s.with_mask("causal").mask == "causal"
    assert s.with_scale(False).result().scaled[2].tolist() == [1, 4, 2, 3]


def test_insert_token():
    s = lesson()
    t = s.insert_token(1, "big", rows={"q": [1, 1], "k": [2, 2], "v": [3, 3]})
    assert t.tokens == ("the", "big", "cat", "sat", "mat")
    assert t.q[1].tolist() == [1, 1] and t.k[1].tolist() == [2, 2] and t.v[1].tolist() == [3, 3]
    assert t.query == 3 and t.tokens[t.query] == "sat"  # the selected query follows its token
    z = s.insert_token(99, "end")
    assert z.tokens[-1] == "end" and z.q[-1].tolist() == [0, 0] and z.query == 2


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
    assert t.tokens == ("cat", "sat", "mat") and t.tokens[t.query] == "sat"
    assert t.q.tolist() == Q[1:]
    u = s.remove_token(2)  # removing the selected query keeps a valid selection
    assert u.tokens == ("the", "cat", "mat") and 0 <= u.query < 3
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
    assert t.query == 0
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
    for a, b in zip(d.qkv(), p.qkv()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(d.result().weights, p.result().weights)
    assert d.to_direct() is d
    back = d.to_projection(p.x, p.wq, p.wk, p.wv)
    assert back.mode == "projection" and back.q is None
    assert back.same_as(p)
