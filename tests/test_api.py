"""The Python API: Scene.from_arrays, qkv_studio.save, qkv_studio.export, qkv_studio.show / run."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import qkv_studio
from qkv_studio.cli import main
from qkv_studio.core.scene import Scene, SceneError
from qkv_studio.core.sessionfile import read_session

RNG = np.random.default_rng(7)
Q, K, V = (np.round(RNG.normal(size=(4, 3)), 3) for _ in range(3))
TOKENS = ["the", "cat", "sat", "down"]


class TensorLike:
    """What a detached torch tensor offers NumPy: ``__array__`` (no torch here)."""

    def __init__(self, a) -> None:
        self._a = np.asarray(a, dtype=np.float32)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


# ---- Scene.from_arrays ----------------------------------------------------------------------------
def test_from_arrays_takes_numpy_lists_and_array_likes_alike():
    a = Scene.from_arrays(Q, K, V, TOKENS)
    b = Scene.from_arrays(Q.tolist(), K.tolist(), V.tolist(), tuple(TOKENS))
    c = Scene.from_arrays(TensorLike(Q), TensorLike(K), TensorLike(V), np.array(TOKENS))
    assert a.tokens == b.tokens == c.tokens == tuple(TOKENS)
    assert np.array_equal(a.q, Q) and a.same_as(b)
    assert np.allclose(c.q, Q.astype(np.float32)) and c.q.dtype == np.float64
    w = np.exp(Q @ K.T / np.sqrt(3))
    assert np.allclose(a.result().weights, w / w.sum(axis=1, keepdims=True))


def test_from_arrays_options_mask_scale_title_query():
    s = Scene.from_arrays(Q, K, V, TOKENS, mask="causal", scale=False, title="Mine")
    assert s.mask == "causal" and s.scale is False and s.title == "Mine"
    with pytest.raises(TypeError):  # a Scene is content only: the query is the view's (show(..., query=...))
        Scene.from_arrays(Q, K, V, TOKENS, query="sat")
    assert s.result().weights[0, 1] == 0.0
    m = np.zeros((4, 4), bool)
    m[:, 3] = True
    custom = Scene.from_arrays(Q, K, V, TOKENS, mask=m)
    assert np.array_equal(custom.mask_matrix(), m) and np.all(custom.result().weights[:, 3] == 0)


def test_default_tokens_are_numbered_from_zero():
    assert Scene.from_arrays(Q, K, V).tokens == ("t0", "t1", "t2", "t3")


def test_projection_form():
    x = RNG.normal(size=(4, 5))
    wq, wk, wv = (RNG.normal(size=(5, 2)) for _ in range(3))
    s = Scene.from_arrays(x=x, wq=wq, wk=wk, wv=wv, tokens=TOKENS)
    assert s.mode == "projection" and np.allclose(s.qkv()[0], x @ wq)


def test_heads_n_d_become_a_multi_head_scene():
    q, k, v = (RNG.normal(size=(2, 4, 3)) for _ in range(3))
    s = Scene.from_arrays(q, k, v, TOKENS)
    assert s.heads == 2 and s.q.shape == (4, 6)
    assert np.array_equal(s.head_scene(1).k, k[1])


@pytest.mark.parametrize("kwargs, words", [
    (dict(q=Q, k=np.zeros((4, 2)), v=V), ["(4, 3)", "(4, 2)"]),
    (dict(q=Q, k=K, v=np.zeros((5, 3))), ["(4, 3)", "(5, 3)"]),
    (dict(q=Q, k=K, v=V, tokens=["a", "b"]), ["2 tokens", "(4, 3)"]),
    (dict(q=Q, k=K, v=V, mask=np.zeros((3, 3), bool)), ["(3, 3)", "(4, 4)"]),
    (dict(q=np.zeros(3), k=K, v=V), ["(3,)"]),
    (dict(q=[[1, 2], [3]], k=K, v=V), ["numbers"]),
    (dict(q=[["a", "b"]], k=K, v=V), ["numbers"]),
    (dict(q=Q, k=K, v=np.full((4, 3), np.nan)), ["not a finite number"]),
    (dict(q=Q, k=K), ["v missing"]),
    (dict(q=Q, k=K, v=V, x=Q), ["not both"]),
    (dict(q=Q, k=K, v=V, mask="sideways"), ["unknown mask"]),
])
def test_bad_arrays_raise_one_line_scene_errors(kwargs, words):
    with pytest.raises(SceneError) as info:
        Scene.from_arrays(**kwargs)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_save_writes_a_session_file_that_reads_back(tmp_path):
    s = Scene.from_arrays(Q, K, V, TOKENS, mask="causal", title="Saved")
    qkv_studio.save(s, tmp_path / "s.qkv.json")
    assert read_session(tmp_path / "s.qkv.json").scene.same_as(s)


def test_save_keeps_the_view_it_is_given(tmp_path):
    from qkv_studio.core.view import View

    s = Scene.from_arrays(Q, K, V, TOKENS)
    qkv_studio.save(s, tmp_path / "v.qkv.json", View(query=2, stage="scores"))
    assert read_session(tmp_path / "v.qkv.json").view == View(query=2, stage="scores")


# ---- lazy names -----------------------------------------------------------------------------------
def test_import_qkv_studio_stays_light_and_names_load_on_use():
    code = ("import sys, qkv_studio; heavy = [m for m in ('numpy', 'PySide6', 'qkv_studio.api') if m in sys.modules]; "
            "print(heavy); qkv_studio.Scene; print('numpy' in sys.modules, 'PySide6' in sys.modules); "
            "print(sorted(n for n in ('show', 'run', 'export', 'Scene', 'SceneError') if n in dir(qkv_studio)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(qkv_studio.__file__).parent.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["[]", "True False", "['Scene', 'SceneError', 'export', 'run', 'show']"]


def test_export_is_callable_before_and_after_the_export_package_is_imported(tmp_path):
    import qkv_studio.export.files  # noqa: F401 - the package becomes the attribute qkv_studio.export

    s = Scene.from_arrays(Q, K, V, TOKENS)
    assert qkv_studio.export(s, tmp_path / "w.csv") == tmp_path / "w.csv"
    with pytest.raises(AttributeError):
        qkv_studio.no_such_name  # noqa: B018


# ---- export: the command line's bytes -------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_export_writes_the_same_bytes_as_the_command_line(tmp_path, suffix, capsys):
    s = Scene.from_arrays(Q, K, V, TOKENS, mask="causal")
    qkv_studio.save(s, tmp_path / "s.qkv.json")
    cli_out, api_out = tmp_path / f"cli{suffix}", tmp_path / f"api{suffix}"
    assert main(["export", str(tmp_path / "s.qkv.json"), "--stage", "scaled", "--query", "sat", "--unscaled",
                 "-o", str(cli_out)]) == 0
    qkv_studio.export(s, api_out, stage="scaled", query="sat", scale=False)
    assert api_out.read_bytes() == cli_out.read_bytes()
    other = tmp_path / f"other{suffix}"
    qkv_studio.export(s, other, stage="weights")  # (the comparison above can fail)
    assert other.read_bytes() != cli_out.read_bytes()


def test_export_svg_matches_the_command_line_and_png_is_a_png(qapp, tmp_path):
    s = Scene.from_arrays(Q, K, V, TOKENS, title="Fig")
    qkv_studio.save(s, tmp_path / "s.qkv.json")
    assert main(["export", str(tmp_path / "s.qkv.json"), "--query", "cat", "-o", str(tmp_path / "cli.svg")]) == 0
    qkv_studio.export(s, tmp_path / "api.svg", stage="weights", query="cat")
    svg = (tmp_path / "api.svg").read_bytes()
    assert svg == (tmp_path / "cli.svg").read_bytes() and b"<svg" in svg
    qkv_studio.export(s, tmp_path / "fig.png", width=320)
    png = (tmp_path / "fig.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    from PySide6.QtGui import QImage

    assert QImage(str(tmp_path / "fig.png")).width() == 320


def test_export_refuses_a_bad_suffix_and_bad_options_in_one_line(tmp_path):
    s = Scene.from_arrays(Q, K, V, TOKENS)
    with pytest.raises(ValueError, match="must end in"):
        qkv_studio.export(s, tmp_path / "fig.bmp")
    with pytest.raises(SceneError, match="no token named"):
        qkv_studio.export(s, tmp_path / "fig.csv", query="dog")
    with pytest.raises(TypeError, match="Scene.from_arrays"):
        qkv_studio.export(Q, tmp_path / "fig.csv")
    assert not list(tmp_path.iterdir())


# ---- show / run -----------------------------------------------------------------------------------
def _close(window, qtbot) -> None:
    window.session.undo_stack.setClean()
    window.close()


def test_show_returns_a_live_window_holding_the_arrays(qtbot):
    from qkv_studio.api import _windows

    w = qkv_studio.show(TensorLike(Q), K, V.tolist(), TOKENS, mask="causal", title="From Python", block=False)
    qtbot.addWidget(w)
    assert w.isVisible() and w in _windows
    s = w.session.scene
    assert s.tokens == tuple(TOKENS) and s.mask == "causal" and s.title == "From Python"
    assert np.allclose(s.q, Q.astype(np.float32)) and np.array_equal(s.v, V)
    w.session.set_query(1)  # live: the window's session takes edits and the views follow
    qtbot.waitUntil(lambda: w.session.query == 1)
    _close(w, qtbot)
    qtbot.waitUntil(lambda: w not in _windows)  # closed: the module lets go of it (your reference keeps it)
    assert w.session.scene.tokens == tuple(TOKENS)


def test_show_raises_before_any_window_for_bad_arrays(qtbot):
    from qkv_studio.api import _windows

    before = len(_windows)
    with pytest.raises(SceneError, match=r"\(4, 3\).*\(2, 3\)"):
        qkv_studio.show(Q, K[:2], V, block=False)
    assert len(_windows) == before


def test_show_does_not_block_inside_a_running_event_loop(qtbot):
    from PySide6.QtCore import QTimer

    opened = []
    QTimer.singleShot(0, lambda: opened.append(qkv_studio.show(Q, K, V, TOKENS)))  # block=None: decide
    qtbot.waitUntil(lambda: bool(opened), timeout=10000)
    qtbot.addWidget(opened[0])
    assert opened[0].isVisible()
    _close(opened[0], qtbot)


def test_show_does_not_block_in_ipython_with_gui_qt(qtbot, monkeypatch):
    shell = types.SimpleNamespace(active_eventloop="qt", enable_gui=lambda gui: pytest.fail("already on"))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    from qkv_studio.api import will_block

    assert will_block(None) is False
    w = qkv_studio.show(Q, K, V, TOKENS)
    qtbot.addWidget(w)
    assert w.isVisible()
    _close(w, qtbot)


def test_ipython_without_a_gui_loop_gets_gui_qt_turned_on(monkeypatch):
    asked = []

    def enable_gui(gui):
        asked.append(gui)
        shell.active_eventloop = gui

    shell = types.SimpleNamespace(active_eventloop=None, enable_gui=enable_gui)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    from qkv_studio.api import will_block

    assert will_block(None) is False and asked == ["qt"]
    shell.enable_gui = lambda gui: None  # IPython --simple-prompt: it cannot run the hook, the loop stays off
    shell.active_eventloop = None
    monkeypatch.delattr(sys, "ps1", raising=False)
    assert will_block(None) is True
    shell.active_eventloop = "tk"  # another toolkit's loop is left alone: show() would block
    monkeypatch.setattr(sys, "ps1", ">>> ", raising=False)
    assert will_block(None) is True


def test_a_script_blocks_until_the_window_closes(qtbot, monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from qkv_studio.api import will_block

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    monkeypatch.delattr(sys, "ps1", raising=False)
    assert will_block(None) is True  # no IPython, no prompt, no running loop: a script
    seen = []

    def close_it():
        w = next(t for t in QApplication.topLevelWidgets() if getattr(t, "session", None) is not None
                 and t.isVisible() and t.session.scene.title == "Blocking")
        seen.append(w.isVisible())
        _close(w, qtbot)

    QTimer.singleShot(200, close_it)
    w = qkv_studio.show(Q, K, V, TOKENS, title="Blocking")  # returns only once close_it has run
    qtbot.addWidget(w)
    assert seen == [True] and not w.isVisible()


def test_run_returns_at_once_where_show_would_not_block(monkeypatch):
    shell = types.SimpleNamespace(active_eventloop="qt", enable_gui=lambda gui: None)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    qkv_studio.run()  # (would hang here if it ran the loop)


def test_show_takes_a_scene_a_session_file_or_a_qkv_file(qtbot, tmp_path, monkeypatch):
    from qkv_studio.core.models import registry

    monkeypatch.setattr(registry, "MODELS", dict(registry.MODELS))
    scene = Scene.from_arrays(Q, K, V, TOKENS, title="Given")
    w = qkv_studio.show(scene, block=False)
    qtbot.addWidget(w)
    assert w.session.scene.same_as(scene)
    _close(w, qtbot)
    w = qkv_studio.show(scene, mask="causal", query="sat", block=False)  # the options still apply
    qtbot.addWidget(w)
    assert w.session.scene.mask == "causal" and w.session.query == 2
    _close(w, qtbot)
    with pytest.raises(SceneError, match="not both"):
        qkv_studio.show(scene, k=K, block=False)
    qkv_studio.save(scene, tmp_path / "s.qkv.json")
    w = qkv_studio.show(tmp_path / "s.qkv.json", block=False)
    qtbot.addWidget(w)
    assert w.session.scene.same_as(scene) and w.session.path == str(tmp_path / "s.qkv.json")
    _close(w, qtbot)
    q = RNG.normal(size=(2, 3, 4, 5))
    np.savez(tmp_path / "cap.npz", q=q, k=q, v=q, tokens=np.array(TOKENS))
    w = qkv_studio.show(str(tmp_path / "cap.npz"), block=False)
    qtbot.addWidget(w)
    panel = w.panels.model
    assert panel.model.name == "file-cap-npz" and panel.showing_model_head() and w.session.path == ""
    assert panel.select(1, 2) and np.array_equal(w.session.scene.q, q[1, 2])
    _close(w, qtbot)


def test_a_cancelled_close_keeps_a_blocking_show_running(qtbot, monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    steps = []

    def window():
        return next(t for t in QApplication.topLevelWidgets() if getattr(t, "session", None) is not None
                    and t.isVisible() and t.session.scene.title == "Cancel me")

    def cancel():
        w = window()
        w.confirm_discard = lambda: False  # the user answers Cancel to "save your changes?"
        w.close()
        steps.append(("cancelled", w.isVisible()))
        QTimer.singleShot(100, lambda: (steps.append(("still running", window().isVisible())), accept()))

    def accept():
        w = window()
        w.confirm_discard = lambda: True
        w.close()

    QTimer.singleShot(200, cancel)
    w = qkv_studio.show(Q, K, V, TOKENS, title="Cancel me", block=True)
    qtbot.addWidget(w)
    assert steps == [("cancelled", True), ("still running", True)] and not w.isVisible()


def test_show_weights_alone_shows_them_exactly_and_says_the_scores_are_not_the_models(qtbot):
    from qkv_studio.core.from_weights import NOTE, scene_from_weights
    from qkv_studio.core.models.run import causal_blocked

    raw = np.exp(RNG.normal(size=(4, 4)))
    raw[causal_blocked(4)] = 0  # a causal model's weights: zeros above the diagonal
    tensor = TensorLike(raw / raw.sum(axis=1, keepdims=True))  # (float32, as a torch tensor's)
    weights = np.asarray(tensor, dtype=np.float64)
    weights /= weights.sum(axis=1, keepdims=True)  # (what softmax of log w gives: the rows renormalised)
    w = qkv_studio.show(weights=tensor, tokens=TOKENS, block=False)
    qtbot.addWidget(w)
    scene = w.session.scene
    np.testing.assert_allclose(w.session.result.weights, weights, rtol=0, atol=1e-14)
    assert scene.tokens == tuple(TOKENS) and not scene.scale and np.array_equal(scene.mask_matrix(), causal_blocked(4))
    seen = ~causal_blocked(4)
    np.testing.assert_allclose(scene.result().stage("scores")[seen], np.log(weights[seen]),
                               atol=1e-6)  # (log of the float32 weights given, before renormalising)
    assert "not the model's" in scene.description and w.statusBar().currentMessage() == NOTE
    np.testing.assert_allclose(w.session.result.output, weights, atol=1e-14)  # V = I: the blend is the row
    _close(w, qtbot)
    values = RNG.normal(size=(4, 2))
    np.testing.assert_allclose(scene_from_weights(weights, v=values).result().output, weights @ values, atol=1e-12)
    for bad, words in ((weights[:3], "square"), (weights * 2, "sum to 1"), (-weights, "≥ 0"),
                       (np.full((2, 2), np.nan), "finite"), ([["a"]], "numbers")):
        with pytest.raises(SceneError, match=words):
            qkv_studio.show(weights=bad, block=False)
    with pytest.raises(SceneError, match="v has shape"):
        scene_from_weights(weights, v=np.ones((3, 2)))
    with pytest.raises(SceneError, match="not both"):
        qkv_studio.show(Q, K, V, weights=weights, block=False)
