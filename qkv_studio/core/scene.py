"""The Scene value type: the content the user works on, validated, immutable.

A Scene holds tokens and either Q/K/V directly ("direct" mode) or embeddings X with the learned
matrices W^Q, W^K, W^V ("projection" mode), plus the mask, the ÷√d_k switch, the title and description,
and how many heads the projections split into (``heads``, 1 by default) with the optional
output projection W^O (``wo``, d_v × d_out) that multi-head attention applies to the heads' concatenation.
What is being looked at (the selected query, the stage) is not content: it is a
:class:`qkv_studio.core.view.View`, held beside the Scene.  Every edit returns a new Scene (arrays are
read-only and shared between versions), which is what makes undo, autosave and comparisons trivial.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Literal, Union

import numpy as np

from qkv_studio.core.attention import AttentionResult, compute, project
from qkv_studio.core.multihead import MAX_HEADS, MIN_HEADS, MultiHeadResult, multihead_scene, valid_heads
from qkv_studio.core.stages import STAGE_TITLES, STAGES  # noqa: F401 - (STAGE_TITLES: its old home)

MATRICES_DIRECT = ("Q", "K", "V")
MATRICES_PROJECTION = ("X", "Wq", "Wk", "Wv")
MAX_TOKENS = 1024
MAX_WIDTH = 1024
MAX_TOKEN_CHARS = 64
_INDEX = re.compile(r"\s*-?[0-9]+\s*")
# C0/C1 controls and the Unicode line/paragraph separators break labels; lone surrogates are not text
# at all (a file may spell one as "\\ud800") and could never be saved as UTF-8.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")

Mask = Union[Literal["none", "causal"], np.ndarray]


class SceneError(ValueError):
    """A scene that cannot be: ``field`` names the part at fault, the message says what is wrong."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


def _frozen(a: np.ndarray | None, name: str) -> np.ndarray | None:
    if a is None:
        return None
    try:
        arr = np.array(a, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise SceneError(name, f"{name} must be a table of numbers with rows of equal length") from None
    if arr.ndim != 2:
        raise SceneError(name, f"{name} must be a table of rows")
    arr.flags.writeable = False
    return arr


def _frozen_mask(mask) -> Mask:
    """``"none"``/``"causal"`` as given (None means "none"); anything else as a read-only boolean array."""
    if mask is None:
        return "none"
    if isinstance(mask, str):
        return mask
    try:
        m = np.array(mask, dtype=bool, copy=True)
    except (TypeError, ValueError):
        raise SceneError("mask", "a custom mask must be a matrix of true (blocked) / false values") from None
    m.flags.writeable = False
    return m


# What each derived value (computed once per scene, on first use) is made from: a copy of the scene
# keeps the derived values whose inputs it keeps (see Scene._copy), so a mask edit does not project X
# again, and a drag step does not count the tokens again.
_DERIVED_FROM: dict[str, frozenset[str]] = {
    "token_counts": frozenset({"tokens"}),
    "qkv": frozenset({"q", "k", "v", "x", "wq", "wk", "wv"}),
    "result": frozenset({"q", "k", "v", "x", "wq", "wk", "wv", "mask", "scale"}),
    "multihead": frozenset({"q", "k", "v", "x", "wq", "wk", "wv", "mask", "scale", "heads", "wo"}),
    "head_scenes": frozenset({"tokens", "q", "k", "v", "x", "wq", "wk", "wv", "mask", "scale", "heads", "wo",
                              "title"}),
}


def _shape(a: np.ndarray) -> str:
    return "(" + ", ".join(map(str, a.shape)) + ("," if a.ndim == 1 else "") + ")"


def _as_numbers(a, name: str) -> np.ndarray:
    """``numpy.asarray`` of an argument of :meth:`Scene.from_arrays`, as float64; SceneError if not numbers."""
    try:
        arr = np.asarray(a)
    except Exception as exc:  # noqa: BLE001 - any foreign object: one line, no traceback
        raise SceneError(name.upper(), f"{name} cannot be read as an array of numbers ({type(a).__name__}: "
                                       f"{exc})") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise SceneError(name.upper(), f"{name} must hold numbers with rows of equal length, not {arr.dtype} "
                                       f"values")
    if np.iscomplexobj(arr):
        raise SceneError(name.upper(), f"{name} holds complex numbers; attention needs real numbers")
    return arr.astype(np.float64, copy=False)


def _join_heads(arrays: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], int]:
    """q, k, v of (n, d) as they are, or of (heads, n, d) side by side as (n, heads·d) with that many heads."""
    q, k, v = arrays["q"], arrays["k"], arrays["v"]
    for name, a in arrays.items():
        if a.ndim not in (2, 3):
            raise SceneError(name.upper(), f"{name} must be (n, d) or (heads, n, d), it has shape {_shape(a)}")
    if not q.ndim == k.ndim == v.ndim:
        raise SceneError("K", f"q has shape {_shape(q)}, k {_shape(k)} and v {_shape(v)}: all three must be "
                              f"(n, d) or all (heads, n, d)")
    if q.shape[-2:] != k.shape[-2:] or q.shape[:-2] != k.shape[:-2]:
        raise SceneError("K", f"q has shape {_shape(q)} but k has shape {_shape(k)}: they must match "
                              f"(one row per token, the same d_k)")
    if v.shape[:-1] != k.shape[:-1]:
        raise SceneError("V", f"k has shape {_shape(k)} but v has shape {_shape(v)}: v needs the same "
                              f"{'heads and ' if v.ndim == 3 else ''}rows (one per token)")
    if q.ndim == 2:
        return arrays, 1
    heads = q.shape[0]
    if not MIN_HEADS <= heads <= MAX_HEADS:
        raise SceneError("heads", f"q has shape {_shape(q)}: {heads} heads, but a scene holds {MIN_HEADS}–"
                                  f"{MAX_HEADS}")
    joined = {name: np.concatenate(list(a), axis=1) for name, a in arrays.items()}
    return joined, heads


def _ordinal(i: int) -> str:
    return f"row {i + 1}"


@dataclass(frozen=True, eq=False)
class Scene:
    """Tokens plus the matrices of attention and the options of computing it (no view state).

    ``heads`` (1–16, dividing d_k and d_v) says how many heads the Q/K/V columns split into and ``wo``
    (d_v × d_out, or None) is the output projection of their concatenation; both only matter for the
    multi-head view and :meth:`head_scene` — :meth:`result` is always the whole-width attention.
    """

    tokens: tuple[str, ...]
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None
    x: np.ndarray | None = None
    wq: np.ndarray | None = None
    wk: np.ndarray | None = None
    wv: np.ndarray | None = None
    mask: Mask = "none"
    scale: bool = True
    title: str = ""
    description: str = ""
    heads: int = 1
    wo: np.ndarray | None = None
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def create(cls, tokens: Iterable[str], *, q=None, k=None, v=None, x=None, wq=None, wk=None, wv=None,
               mask: Mask = "none", scale: bool = True,
               title: str = "", description: str = "", heads: int = 1, wo=None) -> "Scene":
        """Build and validate a scene; raises :class:`SceneError` with a readable message."""
        mask = _frozen_mask(mask)
        scene = cls(
            tokens=tuple(tokens), q=_frozen(q, "Q"), k=_frozen(k, "K"), v=_frozen(v, "V"),
            x=_frozen(x, "X"), wq=_frozen(wq, "Wq"), wk=_frozen(wk, "Wk"), wv=_frozen(wv, "Wv"),
            mask=mask, scale=bool(scale), title=title, description=description,
            heads=heads, wo=_frozen(wo, "Wo"),
        )
        scene.validate()
        return scene

    @classmethod
    def from_arrays(cls, q=None, k=None, v=None, tokens: Iterable[str] | None = None, *, x=None, wq=None, wk=None,
                    wv=None, mask=None, scale: bool = True, title: str | None = None,
                    description: str = "") -> "Scene":
        """A scene from arrays you already hold (a notebook's NumPy, a model's captured queries and keys).

        Either ``q``, ``k``, ``v`` (direct mode) or ``x``, ``wq``, ``wk``, ``wv`` (projection mode: Q = X·W^Q
        …).  Anything ``numpy.asarray`` takes works: nested lists, NumPy arrays, an object with
        ``__array__`` (a torch tensor after ``.detach().cpu()``).  ``q``/``k``/``v`` are (n, d) or
        (heads, n, d): several heads are laid side by side as the scene's ``heads`` (``head_scene(h)`` gives
        one back).  ``tokens`` default to ``t0 … t{n-1}``; ``mask`` is None/"none", "causal" or an n×n
        boolean matrix (True = blocked).  A Scene is content only: the query and stage to look at it
        with are a :class:`~qkv_studio.core.view.View` (``show(..., query=...)``, ``save(path, view)``).

        Raises :class:`SceneError` with one line (a shape mismatch names both shapes).
        """
        direct, projection = (q, k, v), (x, wq, wk, wv)
        if any(a is not None for a in direct) and any(a is not None for a in projection):
            raise SceneError("Q", "give q, k, v or x, wq, wk, wv, not both")
        if all(a is None for a in projection):
            names, given = ("q", "k", "v"), direct
        else:
            names, given = ("x", "wq", "wk", "wv"), projection
        missing = [name for name, a in zip(names, given) if a is None]
        if missing:
            raise SceneError(missing[0].upper(), f"{', '.join(missing)} missing: give all of {', '.join(names)}")
        arrays = {name: _as_numbers(a, name) for name, a in zip(names, given)}
        heads = 1
        if names[0] == "q":
            arrays, heads = _join_heads(arrays)
        else:
            for name, a in arrays.items():
                if a.ndim != 2:
                    raise SceneError(name.upper(), f"{name} must be 2-D, it has shape {_shape(a)}")
            for w in ("wq", "wk", "wv"):
                if arrays[w].shape[0] != arrays["x"].shape[1]:
                    raise SceneError(w.upper(), f"x has shape {_shape(arrays['x'])} but {w} has shape "
                                                f"{_shape(arrays[w])}: {w} needs one row per column of x")
            if arrays["wq"].shape[1] != arrays["wk"].shape[1]:
                raise SceneError("Wk", f"wq has shape {_shape(arrays['wq'])} but wk has shape "
                                       f"{_shape(arrays['wk'])}: queries and keys must share d_k")
        n = arrays[names[0]].shape[0]
        if tokens is None:
            tokens = tuple(f"t{i}" for i in range(n))
        else:
            if isinstance(tokens, str):
                raise SceneError("tokens", "tokens must be a list of strings, one per row, not one string")
            tokens = tuple(tokens.tolist()) if isinstance(tokens, np.ndarray) else tuple(tokens)
            if len(tokens) != n:
                raise SceneError("tokens", f"there are {len(tokens)} tokens but {names[0]} has shape "
                                           f"{_shape(arrays[names[0]])}: one token per row")
        if isinstance(mask, str) and mask not in ("none", "causal"):
            raise SceneError("mask", f"unknown mask {mask!r}: use None, 'none', 'causal' or an n×n boolean matrix")
        if mask is not None and not isinstance(mask, str):
            m = np.asarray(mask)
            if m.shape != (n, n):
                raise SceneError("mask", f"the mask has shape {_shape(m)} but there are {n} tokens: it must be "
                                         f"({n}, {n})")
            if m.dtype != bool and not np.isin(m, (0, 1)).all():
                raise SceneError("mask", "a mask must hold true (blocked) / false values only")
            mask = m.astype(bool)
        return cls.create(tokens, **arrays, mask=mask, scale=scale, title=title or "", description=description,
                          heads=heads)

    def save(self, path, view=None) -> None:
        """Write this scene as a session file (``*.qkv.json``), atomically, looked at with ``view`` (a
        :class:`~qkv_studio.core.view.View`; default: the first query, the weights); the app and the
        command line open it.  Raises OSError with a one-line message when the file cannot be written."""
        from qkv_studio.core.sessionfile import write_session  # (the file format builds on this module)
        from qkv_studio.core.view import View

        write_session(path, self, View() if view is None else view)

    def _evolve(self, **changes) -> "Scene":
        """A validated copy with some fields replaced (keeping the derived values it can, see :meth:`_copy`).

        When the change gives Q/K/V (or their W) other widths and does not set ``heads`` itself, the
        head count becomes the nearest one that still splits them, and a W^O that no longer fits d_v is
        dropped (:meth:`add_dim`/:meth:`remove_dim` keep W^O, giving it a row more or less).
        """
        for key in ("q", "k", "v", "x", "wq", "wk", "wv"):
            if key in changes:
                changes[key] = _frozen(changes[key], key.upper())
        if "wo" in changes:
            changes["wo"] = _frozen(changes["wo"], "Wo")
        if "mask" in changes:
            changes["mask"] = _frozen_mask(changes["mask"])
        new = self._copy(**changes)
        if (self.heads != 1 or self.wo is not None) and "heads" not in changes and new._widths_ok():
            new = new._fit_heads(keep_wo="wo" in changes)
        # Tokens carried over unchanged were checked when they came in (1024 of them take ~2 ms).
        new.validate(tokens_checked="tokens" not in changes)
        return new

    def _copy(self, **changes) -> "Scene":
        """A copy with some fields replaced, nothing checked; it keeps the derived values whose inputs
        (:data:`_DERIVED_FROM`) it keeps.  Every new version of a scene is made here."""
        kept = {name: value for name, value in self._derived.items() if not _DERIVED_FROM[name] & changes.keys()}
        return replace(self, _derived=kept, **changes)

    def _derive(self, name: str, make):
        """The derived value ``name``: made once per scene (and carried to copies that keep its inputs)."""
        try:
            return self._derived[name]
        except KeyError:
            value = self._derived[name] = make()
            return value

    # ---- shape ------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        """``"projection"`` when Q, K, V are derived from X, else ``"direct"``."""
        return "projection" if self.x is not None else "direct"

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def d_k(self) -> int:
        return int(self.qkv()[0].shape[1])

    @property
    def d_v(self) -> int:
        return int(self.qkv()[2].shape[1])

    @property
    def d_model(self) -> int | None:
        return None if self.x is None else int(self.x.shape[1])

    def _widths_ok(self) -> bool:
        """Whether Q/K/V can be formed (so that their widths can be asked for)."""
        mats = (self.x, self.wq, self.wk, self.wv) if self.x is not None else (self.q, self.k, self.v)
        return all(m is not None and m.ndim == 2 for m in mats)

    def _fit_heads(self, *, keep_wo: bool) -> "Scene":
        """This scene with ``heads`` moved to the nearest count that splits its widths (and a W^O that no
        longer matches d_v dropped, unless the edit set it)."""
        d_k, d_v = self._widths()
        heads = self.heads
        if d_k % heads or d_v % heads:
            heads = nearest_heads(heads, d_k, d_v)
        wo = self.wo
        if not keep_wo and wo is not None and wo.shape[0] != d_v:
            wo = None
        if heads == self.heads and wo is self.wo:
            return self
        return self._copy(heads=heads, wo=wo)

    def _widths(self) -> tuple[int, int]:
        """(d_k, d_v) without projecting (for validation)."""
        if self.x is not None:
            return int(self.wq.shape[1]), int(self.wv.shape[1])
        return int(self.q.shape[1]), int(self.v.shape[1])

    def matrix_names(self) -> tuple[str, ...]:
        """The editable matrices of this scene's mode."""
        return MATRICES_PROJECTION if self.mode == "projection" else MATRICES_DIRECT

    def matrix(self, name: str) -> np.ndarray:
        """Q, K, V (derived in projection mode), X, Wq, Wk or Wv by name."""
        if name in MATRICES_DIRECT:
            return self.qkv()["QKV".index(name)]
        arr = getattr(self, name.lower())
        if arr is None:
            raise KeyError(f"this scene has no {name}")
        return arr

    def qkv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The effective Q, K, V: stored, or projected from X in projection mode (cached)."""
        if self.mode == "direct":
            return self.q, self.k, self.v  # type: ignore[return-value]
        return self._derive("qkv", self._project)

    def _project(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mats = project(self.x, self.wq, self.wk, self.wv)
        for m in mats:
            m.flags.writeable = False
        return mats

    def mask_matrix(self) -> np.ndarray:
        """The n×n boolean mask (True = blocked)."""
        from qkv_studio.core.attention import resolve_mask

        return resolve_mask(self.mask, self.n, self.n)

    def result(self) -> AttentionResult:
        """Every stage of attention for this scene (cached per scene)."""
        return self._derive("result", lambda: compute(*self.qkv(), mask=self.mask, scale=self.scale))

    def multihead(self) -> MultiHeadResult:
        """Multi-head attention of this scene: its ``heads`` heads, their concatenation and ·W^O (cached)."""
        return self._derive("multihead", lambda: multihead_scene(self, self.heads, self.wo))

    def head_scene(self, index: int) -> "Scene":
        """Head ``index`` (0-based) as a single-head direct-mode scene: its own columns of Q, K, V, the same
        tokens, mask and ÷√d_k switch, and a title naming the head.  Raises SceneError."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise SceneError("head", f"the head must be a whole number, not {index!r}")
        index = int(index)
        if self.heads == 1:
            raise SceneError("head", f"head {index} was asked for but this scene has one head (set \"heads\" in "
                                     f"the session file, as the multihead preset does)")
        if not 0 <= index < self.heads:
            raise SceneError("head", f"head {index} is out of range: this scene has {self.heads} heads, "
                                     f"counted from 0 (0–{self.heads - 1})")
        made = self._derive("head_scenes", dict)  # (the views show a head on every edit: made once)
        if index not in made:
            made[index] = self._make_head_scene(index)
        return made[index]

    def _make_head_scene(self, index: int) -> "Scene":
        q, k, v = self.multihead().head_qkv(index)
        title = self.title or "Multi-head attention"
        return Scene.create(
            self.tokens, q=q, k=k, v=v, mask=self.mask, scale=self.scale,
            title=f"{title} — head {index} (of heads 0–{self.heads - 1})",
            description=(f"head {index} (counted from 0) of {self.heads}: columns {index * q.shape[1] + 1}–"
                         f"{(index + 1) * q.shape[1]} of Q and K, d_k = {q.shape[1]}"),
        )

    def token_label(self, i: int) -> str:
        """A token's name, made distinguishable when the same name occurs more than once."""
        name = self.tokens[i]
        # (counted once per scene: labelling every token stays O(n), not O(n²))
        counts = self._derive("token_counts", lambda: Counter(self.tokens))
        if counts[name] > 1:
            return f"{name}·{self.tokens[: i + 1].count(name)}"
        return name

    def find_token(self, ref: str | int) -> int:
        """Resolve a token by index (int or digit string) or by name; raises SceneError."""
        if isinstance(ref, (int, np.integer)) or (isinstance(ref, str) and _INDEX.fullmatch(ref)):
            i = int(ref)
            if not 0 <= i < self.n:
                raise SceneError("query", f"query index {i} is out of range (0–{self.n - 1})")
            return i
        if ref in self.tokens:
            return self.tokens.index(ref)
        labels = [self.token_label(i) for i in range(self.n)]
        if ref in labels:
            return labels.index(ref)
        raise SceneError("query", f"no token named {ref!r} (tokens: {', '.join(self.tokens[:12])}"
                                  f"{', …' if self.n > 12 else ''})")

    # ---- validation -------------------------------------------------------------------------------
    def validate(self, *, tokens_checked: bool = False) -> None:
        """Raise :class:`SceneError` naming the field and the problem if this scene is not valid.

        ``tokens_checked`` skips the per-token checks (for tokens taken over from a valid scene).
        """
        n = len(self.tokens)
        if not 1 <= n <= MAX_TOKENS:
            raise SceneError("tokens", f"a scene needs 1–{MAX_TOKENS} tokens, this one has {n}")
        for i, t in enumerate(() if tokens_checked else self.tokens):
            if not isinstance(t, str):
                raise SceneError("tokens", f"token {i + 1} is not text")
            if not 1 <= len(t) <= MAX_TOKEN_CHARS:
                raise SceneError("tokens", f"token {i + 1} must be 1–{MAX_TOKEN_CHARS} characters long, "
                                           f"it has {len(t)}")
            if _CONTROL.search(t):
                raise SceneError("tokens", f"token {i + 1} contains a control character")
            if _SURROGATE.search(t):
                raise SceneError("tokens", f"token {i + 1} contains an invalid character (a lone surrogate)")
        for name in ("title", "description"):
            if not isinstance(getattr(self, name), str):
                raise SceneError(name, f"the {name} must be text")
            if _SURROGATE.search(getattr(self, name)):
                raise SceneError(name, f"the {name} contains an invalid character (a lone surrogate)")
        direct = [self.q, self.k, self.v]
        proj = [self.x, self.wq, self.wk, self.wv]
        if self.x is not None:
            if any(m is None for m in proj):
                raise SceneError("X", "projection mode needs X, Wq, Wk and Wv together")
            self._check_rows("X", self.x, n)
            d_model = self.x.shape[1]
            self._check_width("X", d_model)
            for name, w in (("Wq", self.wq), ("Wk", self.wk), ("Wv", self.wv)):
                if w.shape[0] != d_model:
                    raise SceneError(name, f"{name} has {w.shape[0]} rows but X rows have {d_model} numbers "
                                           f"(d_model): {name} must be d_model×d")
                self._check_width(name, w.shape[1])
                self._check_finite(name, w)
            if self.wq.shape[1] != self.wk.shape[1]:
                raise SceneError("Wk", f"Wq makes queries of width {self.wq.shape[1]} but Wk makes keys of width "
                                       f"{self.wk.shape[1]}: they must share d_k")
        else:
            if any(m is None for m in direct):
                missing = [nm for nm, m in zip("QKV", direct) if m is None]
                raise SceneError(missing[0], f"missing {', '.join(missing)} (or X with Wq, Wk, Wv)")
            for name, m in zip("QKV", direct):
                self._check_rows(name, m, n)
                self._check_width(name, m.shape[1])
            if self.q.shape[1] != self.k.shape[1]:
                raise SceneError("K", f"Q rows have {self.q.shape[1]} numbers but K rows have {self.k.shape[1]}: "
                                      f"queries and keys must share d_k")
        if isinstance(self.mask, str):
            if self.mask not in ("none", "causal"):
                raise SceneError("mask", f"unknown mask {self.mask!r}: use 'none', 'causal' or a boolean matrix")
        else:
            if self.mask.shape != (n, n):
                raise SceneError("mask", f"the mask must be {n}×{n} (one row and column per token), "
                                         f"it is {'×'.join(map(str, self.mask.shape))}")
        self._check_heads()
        self._check_projection()

    def _check_projection(self) -> None:
        """In projection mode, Q, K and V = X·W must be finite doubles (computed now, and cached)."""
        if self.x is not None:
            try:
                self.qkv()
            except ValueError as exc:
                raise SceneError("X", str(exc)) from None

    def _check_heads(self) -> None:
        """``heads`` 1–16 dividing d_k and d_v; W^O d_v × d_out with finite numbers."""
        h = self.heads
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)):
            raise SceneError("heads", f"heads must be a whole number, not {h!r}")
        if not MIN_HEADS <= h <= MAX_HEADS:
            raise SceneError("heads", f"heads must be {MIN_HEADS}–{MAX_HEADS}, not {h}")
        d_k, d_v = self._widths()
        for name, width in (("d_k", d_k), ("d_v", d_v)):
            if width % h:
                ok = ", ".join(map(str, valid_heads(d_k, d_v)))
                raise SceneError("heads", f"heads = {h} cannot split {name} = {width} into equal parts: heads must "
                                          f"divide both d_k = {d_k} and d_v = {d_v} (possible: {ok})")
        if self.wo is not None:
            if self.wo.shape[0] != d_v:
                raise SceneError("Wo", f"Wo has {self.wo.shape[0]} rows but the heads' concatenation has d_v = {d_v} "
                                       f"columns: Wo must be d_v×d_out ({d_v}×…)")
            self._check_width("Wo", self.wo.shape[1])
            self._check_finite("Wo", self.wo)

    @staticmethod
    def _check_rows(name: str, m: np.ndarray, n: int) -> None:
        if m.shape[0] != n:
            raise SceneError(name, f"{name} has {m.shape[0]} rows but there are {n} tokens: one row per token")
        Scene._check_finite(name, m)

    @staticmethod
    def _check_finite(name: str, m: np.ndarray) -> None:
        bad = np.argwhere(~np.isfinite(m))
        if bad.size:
            r, c = bad[0]
            raise SceneError(name, f"{name} row {r + 1}, column {c + 1} is not a finite number")

    @staticmethod
    def _check_width(name: str, w: int) -> None:
        if not 1 <= w <= MAX_WIDTH:
            raise SceneError(name, f"{name} rows must have 1–{MAX_WIDTH} numbers, they have {w}")

    # ---- equality ---------------------------------------------------------------------------------
    def same_as(self, other: "Scene") -> bool:
        """Exact equality of the content (every field), arrays compared element by element."""
        if not isinstance(other, Scene):
            return False
        for name in ("tokens", "scale", "title", "description", "heads"):
            if getattr(self, name) != getattr(other, name):
                return False
        for name in ("q", "k", "v", "x", "wq", "wk", "wv", "wo"):
            a, b = getattr(self, name), getattr(other, name)
            if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
                return False
        if isinstance(self.mask, str) or isinstance(other.mask, str):
            return isinstance(self.mask, str) and isinstance(other.mask, str) and self.mask == other.mask
        return np.array_equal(self.mask, other.mask)

    # ---- edits (each returns a new, validated Scene) -----------------------------------------------
    def with_value(self, matrix: str, row: int, col: int, value: float) -> "Scene":
        """Set one number of an editable matrix."""
        return self.with_block(matrix, row, col, np.array([[value]], dtype=np.float64))

    def with_block(self, matrix: str, row: int, col: int, block: np.ndarray) -> "Scene":
        """Paste a block of numbers with its top-left corner at (row, col)."""
        block = np.asarray(block, dtype=np.float64)
        if block.ndim != 2:
            raise SceneError(matrix, "a pasted block must be a table of numbers")
        if matrix not in self.matrix_names():
            raise SceneError(matrix, f"{matrix} is not editable in {self.mode} mode")
        arr = self.matrix(matrix)
        r, c = block.shape
        if row < 0 or col < 0 or row + r > arr.shape[0] or col + c > arr.shape[1]:
            raise SceneError(matrix, f"a {r}×{c} block at row {row + 1}, column {col + 1} does not fit in "
                                     f"{matrix} ({arr.shape[0]}×{arr.shape[1]})")
        if not np.all(np.isfinite(block)):
            raise SceneError(matrix, "only finite numbers can be entered")
        new = np.array(arr)
        new[row:row + r, col:col + c] = block
        new.flags.writeable = False
        # The same shape, finite numbers in a valid scene: nothing else to check (a drag step comes
        # here 60 times a second, and re-validating every matrix took a fifth of a millisecond).
        scene = self._copy(**{matrix.lower(): new})
        scene._check_projection()  # (the projection is needed next anyway; it stays cached)
        return scene

    def with_matrix(self, matrix: str, values: np.ndarray) -> "Scene":
        """Replace a whole editable matrix (same shape)."""
        return self.with_block(matrix, 0, 0, values) if np.shape(values) == self.matrix(matrix).shape else \
            self._raise(matrix, f"{matrix} must stay {'×'.join(map(str, self.matrix(matrix).shape))}")

    @staticmethod
    def _raise(name: str, msg: str):
        raise SceneError(name, msg)

    def with_mask(self, mask: Mask) -> "Scene":
        return self._evolve(mask=mask)

    def with_scale(self, scale: bool) -> "Scene":
        return self._evolve(scale=bool(scale))

    def with_heads(self, heads: int) -> "Scene":
        """Split into ``heads`` heads (1–16, dividing d_k and d_v); raises SceneError saying what would work."""
        return self._evolve(heads=heads) if heads != self.heads else self

    def with_wo(self, wo: np.ndarray | None) -> "Scene":
        """Set (or, with None, remove) the output projection W^O, d_v × d_out."""
        return self._evolve(wo=wo)

    def toggle_blocked(self, row: int | None, col: int) -> "Scene":
        """Block or unblock one cell (row given) or a whole key column (row None): a custom mask."""
        m = np.array(self.mask_matrix())
        if row is None:
            m[:, col] = not bool(np.all(m[:, col]))
        else:
            m[row, col] = not m[row, col]
        if not m.any():
            return self._evolve(mask="none")
        if np.array_equal(m, np.triu(np.ones_like(m), 1)):
            return self._evolve(mask="causal")
        return self._evolve(mask=m)

    def _row_matrices(self) -> tuple[str, ...]:
        return ("x",) if self.mode == "projection" else ("q", "k", "v")

    def rename_token(self, index: int, name: str) -> "Scene":
        tokens = list(self.tokens)
        tokens[index] = name
        return self._evolve(tokens=tuple(tokens))

    def insert_token(self, index: int, name: str, rows: dict[str, np.ndarray] | None = None) -> "Scene":
        """Insert a token before ``index`` with zero rows (or the given ones) in every per-token matrix."""
        if self.n >= MAX_TOKENS:
            raise SceneError("tokens", f"a scene holds at most {MAX_TOKENS} tokens")
        index = max(0, min(index, self.n))
        changes: dict = {"tokens": self.tokens[:index] + (name,) + self.tokens[index:]}
        for key in self._row_matrices():
            arr = getattr(self, key)
            row = np.zeros(arr.shape[1]) if not rows or key not in rows else np.asarray(rows[key], float)
            changes[key] = np.insert(arr, index, row, axis=0)
        if not isinstance(self.mask, str):
            m = np.insert(self.mask, index, False, axis=0)
            changes["mask"] = np.insert(m, index, False, axis=1)
        return self._evolve(**changes)

    def remove_token(self, index: int) -> "Scene":
        if self.n <= 1:
            raise SceneError("tokens", "the last token cannot be removed: a scene needs at least one")
        changes: dict = {"tokens": self.tokens[:index] + self.tokens[index + 1:]}
        for key in self._row_matrices():
            changes[key] = np.delete(getattr(self, key), index, axis=0)
        if not isinstance(self.mask, str):
            changes["mask"] = np.delete(np.delete(self.mask, index, axis=0), index, axis=1)
        return self._evolve(**changes)

    def move_token(self, src: int, dst: int) -> "Scene":
        """Move token ``src`` to position ``dst``; its rows (and mask row/column) travel with it."""
        order = list(range(self.n))
        order.insert(dst, order.pop(src))
        return self.permute(order)

    def permute(self, order: list[int]) -> "Scene":
        """Reorder tokens: new token i is old token ``order[i]``."""
        idx = np.asarray(order)
        changes: dict = {"tokens": tuple(self.tokens[i] for i in order)}
        for key in self._row_matrices():
            changes[key] = getattr(self, key)[idx]
        if not isinstance(self.mask, str):
            changes["mask"] = self.mask[np.ix_(idx, idx)]
        return self._evolve(**changes)

    def _dim_targets(self, group: str) -> list[tuple[str, int]]:
        """(matrix, axis) pairs that gain or lose a column for a dimension group."""
        if self.mode == "direct":
            table = {"qk": [("q", 1), ("k", 1)], "v": [("v", 1)]}
        else:
            table = {"qk": [("wq", 1), ("wk", 1)], "v": [("wv", 1)],
                     "model": [("x", 1), ("wq", 0), ("wk", 0), ("wv", 0)]}
        if group not in table:
            raise SceneError(group, f"no dimension group {group!r} in {self.mode} mode")
        return table[group]

    def dim(self, group: str) -> int:
        key, axis = self._dim_targets(group)[0]
        return int(getattr(self, key).shape[axis])

    def add_dim(self, group: str, index: int | None = None) -> "Scene":
        """Add a zero dimension to a group: ``qk`` (d_k, Q and K together), ``v`` (d_v) or ``model``."""
        size = self.dim(group)
        if size >= MAX_WIDTH:
            raise SceneError(group, f"widths are at most {MAX_WIDTH}")
        index = size if index is None else max(0, min(index, size))
        changes = {key: np.insert(getattr(self, key), index, 0.0, axis=axis) for key, axis in self._dim_targets(group)}
        if group == "v" and self.wo is not None:  # the new (zero) value column meets a new (zero) row of W^O
            changes["wo"] = np.insert(self.wo, index, 0.0, axis=0)
        return self._evolve(**changes)

    def remove_dim(self, group: str, index: int | None = None) -> "Scene":
        size = self.dim(group)
        if size <= 1:
            names = {"qk": "d_k", "v": "d_v", "model": "d_model"}
            raise SceneError(group, f"the last dimension cannot be removed: {names[group]} must be at least 1")
        index = size - 1 if index is None else index
        changes = {key: np.delete(getattr(self, key), index, axis=axis) for key, axis in self._dim_targets(group)}
        if group == "v" and self.wo is not None:
            changes["wo"] = np.delete(self.wo, index, axis=0)
        return self._evolve(**changes)

    def to_direct(self) -> "Scene":
        """Projection → direct: the derived Q, K, V become the editable ones."""
        if self.mode == "direct":
            return self
        q, k, v = self.qkv()
        return self._evolve(q=q, k=k, v=v, x=None, wq=None, wk=None, wv=None)

    def to_projection(self, x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray) -> "Scene":
        """Direct → projection with the given X and W matrices (Q, K, V are then derived)."""
        return self._evolve(q=None, k=None, v=None, x=x, wq=wq, wk=wk, wv=wv)


def nearest_heads(heads: int, d_k: int, d_v: int) -> int:
    """The head count nearest ``heads`` (the smaller on a tie) that splits both widths (1 always does)."""
    return min(valid_heads(d_k, d_v), key=lambda a: (abs(a - heads), a))


def projection_of(scene: Scene) -> Scene:
    """Direct → projection keeping every number: X = [Q | K | V] and W^Q, W^K, W^V select its parts.

    Q = X·W^Q reproduces the user's Q exactly (likewise K, V); editing a W then mixes the columns.
    """
    if scene.mode == "projection":
        return scene
    q, k, v = scene.qkv()
    d_k, d_v = q.shape[1], v.shape[1]
    d_model = 2 * d_k + d_v
    if d_model > MAX_WIDTH:
        raise SceneError("X", f"X = [Q | K | V] would be {d_model} wide; widths are at most {MAX_WIDTH}")
    x = np.hstack([q, k, v])
    eye = np.eye(d_model)
    return scene.to_projection(x, eye[:, :d_k], eye[:, d_k:2 * d_k], eye[:, 2 * d_k:])


def with_random_projections(scene: Scene, seed: int) -> Scene:
    """Projection mode with W^Q, W^K, W^V drawn at random (seeded, variance 1/d_model, as at initialisation)."""
    s = projection_of(scene)
    rng = np.random.default_rng(seed)
    d_model = s.x.shape[1]
    std = 1.0 / np.sqrt(d_model)
    shapes = (s.wq.shape, s.wk.shape, s.wv.shape)
    wq, wk, wv = (np.round(rng.normal(0.0, std, size=shape), 3) for shape in shapes)
    return s._evolve(wq=wq, wk=wk, wv=wv, description="")  # (new numbers: the old description is false)


def shape_equation(scene: Scene, which: str) -> str:
    """"4×3 · 3×2 = 4×2" for Q, K or V of a projection scene."""
    w = {"Q": scene.wq, "K": scene.wk, "V": scene.wv}[which]
    n, d_model = scene.x.shape
    return f"{n}×{d_model} · {w.shape[0]}×{w.shape[1]} = {n}×{w.shape[1]}"
