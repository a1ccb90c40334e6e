"""The Session: edits through the undo stack, coalesced recomputation, navigation."""

import numpy as np
import pytest

from qkv_studio.core import View, compute, load_preset
from qkv_studio.state.session import Session


def test_edit_updates_result_and_undo_restores_exactly(session, qtbot):
    before = session.scene
    with qtbot.waitSignal(session.result_changed, timeout=1000):
        assert session.set_value("Q", 2, 0, 3.25)
    assert session.scene.q[2, 0] == 3.25
    q, k, v = session.scene.qkv()
    np.testing.assert_allclose(session.result.weights, compute(q, k, v).weights, rtol=0, atol=1e-15)
    session.undo_stack.undo()
    assert session.scene.same_as(before)
    np.testing.assert_array_equal(session.result.weights, before.result().weights)
    session.undo_stack.redo()
    assert session.scene.q[2, 0] == 3.25


def test_query_row_edit_recomputes_only_that_row_but_equals_full(session):
    _ = session.result  # prime the cache
    session.set_value("Q", 1, 1, -7.5)
    session.set_value("Q", 3, 0, 2.0)
    q, k, v = session.scene.qkv()
    full = compute(q, k, v)
    for name in ("scores", "scaled", "weights", "output"):
        np.testing.assert_allclose(getattr(session.result, name), getattr(full, name), atol=1e-15)


def test_result_changed_is_coalesced_per_event_loop_turn(session, qtbot):
    seen = []
    session.result_changed.connect(lambda: seen.append(1))
    for i in range(10):
        session.set_value("K", 0, 0, float(i))
    qtbot.wait(20)
    assert len(seen) == 1


def test_refused_edit_keeps_scene_and_says_why(session, qtbot):
    before = session.scene
    with qtbot.waitSignal(session.message, timeout=1000) as blocker:
        assert not session.set_value("Q", 0, 0, float("nan"))
    assert "finite" in blocker.args[0]
    assert session.scene.same_as(before)
    assert session.undo_stack.count() == 0


def test_a_drag_is_on_between_begin_and_end_or_until_another_edit(qtbot, session):
    told = []
    session.drag_changed.connect(told.append)
    assert not session.dragging
    session.begin_drag()
    session.begin_drag()  # (a new drag right after one: still one "on")
    session.drag_vector("Q", 2, 1.5, 1.5)
    assert session.dragging and told == [True]
    session.end_drag()
    session.end_drag()
    assert not session.dragging and told == [True, False]
    session.begin_drag()
    session.set_value("K", 0, 0, 2.0)  # a release that went astray: the next edit ends the drag
    assert not session.dragging and told == [True, False, True, False]


def test_drag_steps_merge_into_one_undo_step(session):
    session.begin_drag()
    for x in np.linspace(1, 2, 8):
        session.drag_vector("Q", 2, float(x), 1.5)
    assert session.undo_stack.count() == 1
    assert session.scene.q[2].tolist() == [2.0, 1.5]
    session.begin_drag()
    session.drag_vector("Q", 2, 0.0, 0.0)
    assert session.undo_stack.count() == 2
    session.undo_stack.undo()
    session.undo_stack.undo()
    assert session.scene.q[2].tolist() == [1.0, 2.0]


def test_navigation_is_not_an_edit(session):
    session.set_query(0)
    session.set_stage("scores")
    assert session.undo_stack.count() == 0
    assert not session.modified
    assert session.step_stage(+1) and session.stage == "scaled"
    session.set_stage("output")
    assert not session.step_stage(+1)


def test_undo_keeps_current_query_and_stage(session):
    session.set_value("V", 0, 0, 9.0)
    session.set_query(1)
    session.set_stage("scores")
    session.undo_stack.undo()
    assert session.query == 1 and session.stage == "scores"


def test_a_query_or_stage_change_makes_no_new_scene_and_recomputes_nothing(session, qtbot):
    scene, result = session.scene, session.result
    arrays = {name: getattr(result, name) for name in ("scores", "scaled", "weights", "output")}
    told = []
    session.query_changed.connect(lambda q: told.append(("query", q)))
    session.stage_changed.connect(lambda st: told.append(("stage", st)))
    session.set_query(0)
    session.set_stage("scores")
    assert session.step_stage(+1) and session.stage == "scaled"
    session.move_query(+3)
    assert told == [("query", 0), ("stage", "scores"), ("stage", "scaled"), ("query", 3)]
    assert session.scene is scene and session.result is result  # the same content, the same numbers
    assert all(getattr(session.result, name) is a for name, a in arrays.items())
    assert session.view == View(3, "scaled") and (session.query, session.stage) == (3, "scaled")
    assert not hasattr(session.scene, "query") and not hasattr(session.scene, "stage")
    session.set_query(9)  # out of range: nothing happens
    session.set_stage("blend")
    assert session.view == View(3, "scaled") and len(told) == 4
    told.clear()
    session.head_changed.connect(lambda h: told.append(("head", h)))
    session.set_head(1)  # a scene of one head has no head 1 (see the multi-head test below)
    session.set_head(-1)
    assert session.head == 0 and session.view == View(3, "scaled") and told == []


def test_the_selected_head_is_view_state_and_every_view_reads_it(qtbot):
    """The selected head of a split is view state, like the query: no new Scene, no undo step; the views
    read the shown head's own scene and attention (its columns of Q, K, V, ÷√ its own dₖ)."""
    scene = load_preset("multihead")
    session = Session(scene, view=View(2, "weights"))
    assert session.shown is scene.head_scene(0) and session.result.d_k == 4
    with qtbot.waitSignal(session.head_changed, timeout=1000) as sig:
        session.set_head(1)  # the selected head of a split is view state too
    assert sig.args == [1] and session.view == View(2, "weights", head=1) and session.scene is scene
    assert session.undo_stack.count() == 0 and not session.modified
    with qtbot.waitSignal(session.result_changed, timeout=1000):
        pass  # (another head is other attention: announced, as an edit's numbers are)
    head = scene.head_scene(1)
    assert session.shown is head and session.shown.d_k == 4
    np.testing.assert_array_equal(session.result.weights, head.result().weights)
    assert not np.allclose(session.result.weights, scene.head_scene(0).result().weights)
    session.set_head(-1)
    session.set_head(2)  # two heads: 0 and 1
    assert session.head == 1
    # An edit keeps the head and recomputes it; fewer heads bring the last one; a load the file's view.
    assert session.set_value("X", 0, 0, 2.5)
    session.flush()
    np.testing.assert_allclose(session.result.weights, session.scene.head_scene(1).result().weights, atol=1e-15)
    with qtbot.waitSignal(session.head_changed, timeout=1000) as sig:
        session.edit(lambda s: s.with_heads(1), "Heads: 1")
    assert sig.args == [0] and session.head == 0 and session.shown is session.scene
    session.undo_stack.undo()
    assert session.scene.heads == 2 and session.head == 0
    session.set_head(1)
    session.load(load_preset("lesson"), "", View(1, "scores", head=1))  # one head: the view fits it
    assert session.view == View(1, "scores", head=0) and session.result.d_k == 2


def test_undo_and_redo_of_token_edits_move_the_query_as_they_did(session):
    assert session.query == 2  # "sat"
    session.insert_token(0, "a")  # before the query: it follows "sat" to 3
    assert session.query == 3 and session.scene.tokens[3] == "sat"
    session.set_stage("scores")
    session.undo_stack.undo()  # back to 4 tokens: the query the edit started from, the stage kept
    assert session.scene.n == 4 and session.query == 2 and session.stage == "scores"
    session.undo_stack.redo()
    assert session.query == 3 and session.scene.tokens[3] == "sat"
    session.remove_token(3)  # the selected token itself: the one after it takes its place
    assert session.scene.tokens == ("a", "the", "cat", "mat") and session.query == 3
    session.set_query(0)
    session.undo_stack.undo()
    assert session.query == 3 and session.scene.tokens[3] == "sat"  # (the edit's own "before")


def test_load_takes_the_view_given_and_fits_it_to_the_scene(session, qtbot):
    three = load_preset("lesson").remove_token(3)
    session.set_query(0)
    with qtbot.waitSignals([session.query_changed, session.stage_changed], timeout=1000):
        session.load(three, "", View(query=7, stage="output"))
    assert session.view == View(2, "output")  # a query past the tokens: the last one
    session.load(load_preset("lesson"))
    assert session.view == View()  # no view given: the first query's weights (and head 0)


def test_modified_flag_follows_the_undo_stack(session, qtbot):
    with qtbot.waitSignal(session.modified_changed) as blocker:
        session.set_value("V", 1, 1, 2.0)
    assert blocker.args == [True] and session.modified
    session.mark_saved("/tmp/x.qkv.json")
    assert not session.modified and session.path == "/tmp/x.qkv.json"


def test_token_edits_follow_rows(session):
    session.insert_token(1, "big")
    assert session.scene.tokens == ("the", "big", "cat", "sat", "mat")
    assert session.scene.q[1].tolist() == [0, 0]
    session.move_token(1, 4)
    assert session.scene.tokens[-1] == "big"
    session.remove_token(4)
    assert session.scene.tokens == ("the", "cat", "sat", "mat")
    assert session.scene.same_as(load_preset("lesson"))
    assert session.query == 3  # "sat" moved to 3 when "big" came before it; a move keeps the index
    while session.scene.n > 1:
        session.remove_token(0)
    assert not session.remove_token(0)


def test_row_edits_patch_the_sessions_own_result_and_name_the_rows(session):
    first = session.scene
    kept = first.result()  # an earlier scene's result is its own: later edits never touch it
    kept_weights = kept.weights.copy()
    _ = session.result
    seen = []
    session.result_changed.connect(lambda change: seen.append(change.rows))
    session.set_value("Q", 1, 0, 4.0)
    session.set_value("Q", 3, 1, -2.0)
    session.flush()
    session.set_value("Q", 0, 0, 1.5)
    session.flush()
    session.set_value("K", 0, 0, 9.0)  # a key edit changes every row
    session.flush()
    assert seen == [(1, 3), (0,), None]
    q, k, v = session.scene.qkv()
    np.testing.assert_allclose(session.result.weights, compute(q, k, v).weights, atol=1e-15)
    np.testing.assert_array_equal(kept.weights, kept_weights)
    np.testing.assert_array_equal(first.result().weights, kept_weights)


def test_views_get_read_only_arrays_that_the_session_updates_in_place(session):
    live = session.result
    for name in ("scores", "scaled", "weights", "output", "blocked", "fully_masked"):
        assert not getattr(live, name).flags.writeable
    with pytest.raises(ValueError):
        live.weights[0, 0] = 1.0
    session.set_value("Q", 2, 0, 5.0)
    assert session.result is live  # (a row edit: the same live result, its rows rewritten)
    q, k, v = session.scene.qkv()
    np.testing.assert_allclose(live.weights, compute(q, k, v).weights, atol=1e-15)
    assert not live.weights.flags.writeable
    session.set_value("K", 0, 0, 2.0)
    assert session.result is not live  # (a key edit: a new result)


def test_rows_written_in_place_are_announced_before_anything_else_changes(session, qtbot):
    _ = session.result
    told = []
    session.result_changed.connect(lambda change: told.append(("result", change.rows)))
    session.stage_changed.connect(lambda stage: told.append(("stage", stage)))
    session.scene_changed.connect(lambda: told.append(("scene",)))
    session.set_value("Q", 1, 0, 4.0)
    _ = session.result  # (a view reads the new numbers before the coalesced signal)
    session.set_stage("scores")
    assert told == [("scene",), ("result", (1,)), ("stage", "scores")]
    told.clear()
    session.set_value("Q", 2, 0, 7.0)
    _ = session.result
    session.set_value("K", 0, 0, 3.0)  # (the arrays a view holds are replaced: first the rows written)
    session.flush()
    assert told == [("scene",), ("result", (2,)), ("scene",), ("result", None)]


def test_a_drag_moves_the_shown_heads_own_columns(qtbot):
    """The plane draws the selected head's vectors: dragging one moves that head's first two columns."""
    scene = load_preset("multihead").to_direct()  # Q, K, V given, 2 heads of 4 columns
    session = Session(scene)
    session.set_head(1)
    before = np.array(session.scene.q)
    session.begin_drag()
    assert session.drag_vector("Q", 0, 5.0, 6.0)
    session.end_drag()
    q = session.scene.q
    np.testing.assert_array_equal(q[0, 4:6], [5.0, 6.0])
    np.testing.assert_array_equal(np.delete(q, [4, 5], axis=1), np.delete(before, [4, 5], axis=1))
    np.testing.assert_array_equal(session.shown.q[0, :2], [5.0, 6.0])
    np.testing.assert_allclose(session.result.weights, session.scene.head_scene(1).result().weights, atol=1e-15)
