"""The Scene value type: the content the user works on, validated, immutable.

A Scene holds tokens and either Q/K/V directly ("direct" mode) or embeddings X with the learned
matrices W^Q, W^K, W^V ("projection" mode), plus the mask, the ÷√d_k switch, the title and description,
and how many heads the projections split into (``heads``, 1 by default) with the optional
output projection W^O (``wo``, d_v × d_out) that multi-head attention applies to the heads' concatenation.
What is being looked at (the selected query, the stage) is not content: it is a
:class:`qkv_studio.core.view.View`, held beside the Scene.  Every edit returns a new Scene (arrays are
read-only and shared between versions), which is what makes undo, autosave and comparisons trivial.

This module holds the type, its construction and its derived values (computed once per scene, carried
to the copies that keep their inputs).  Its parts live beside it: :mod:`.scene_checks` (what is valid,
:class:`SceneError`, the limits), :mod:`.scene_arrays` (arrays from outside → fields, for
:meth:`Scene.from_arrays`) and :mod:`.scene_edits` (the ``with_*``/token/dimension edits, the mode changes,
each a function of the scene that the Scene lists as its method).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike

from qkv_studio.core import scene_edits
from qkv_studio.core.attention import AttentionResult, compute, project, resolve_mask
from qkv_studio.core.multihead import MultiHeadResult, multihead_scene, valid_heads
from qkv_studio.core.scene_arrays import fields_from_arrays
from qkv_studio.core.scene_checks import (  # noqa: F401 - (the limits, Mask and SceneError: their public home)
    MAX_TOKEN_CHARS,
    MAX_TOKENS,
    MAX_WIDTH,
    Mask,
    SceneError,
    frozen,
    frozen_mask,
    present,
    scene_widths,
    validate_scene,
)
from qkv_studio.core.scene_edits import projection_of, with_random_projections  # noqa: F401

MATRICES_DIRECT = ("Q", "K", "V")
MATRICES_PROJECTION = ("X", "Wq", "Wk", "Wv")
__all__ = [
    "MATRICES_DIRECT", "MATRICES_PROJECTION", "MAX_TOKENS", "MAX_WIDTH", "MAX_TOKEN_CHARS",
    "Mask", "Scene", "SceneError", "nearest_heads", "projection_of", "shape_equation", "with_random_projections",
]
_INDEX = re.compile(r"\s*-?[0-9]+\s*")
T = TypeVar("T")


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
    _derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # ---- edits: each returns a new, validated Scene (the functions of :mod:`.scene_edits`) -------------
    with_value = scene_edits.with_value
    with_block = scene_edits.with_block
    with_matrix = scene_edits.with_matrix
    with_mask = scene_edits.with_mask
    with_scale = scene_edits.with_scale
    with_heads = scene_edits.with_heads
    with_wo = scene_edits.with_wo
    toggle_blocked = scene_edits.toggle_blocked
    rename_token = scene_edits.rename_token
    insert_token = scene_edits.insert_token
    remove_token = scene_edits.remove_token
    move_token = scene_edits.move_token
    permute = scene_edits.permute
    dim = scene_edits.dim
    add_dim = scene_edits.add_dim
    remove_dim = scene_edits.remove_dim
    to_direct = scene_edits.to_direct
    to_projection = scene_edits.to_projection

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def create(cls, tokens: Iterable[str], *, q: ArrayLike | None = None, k: ArrayLike | None = None,
               v: ArrayLike | None = None, x: ArrayLike | None = None, wq: ArrayLike | None = None,
               wk: ArrayLike | None = None, wv: ArrayLike | None = None, mask: Mask | ArrayLike = "none",
               scale: bool = True, title: str = "", description: str = "", heads: int = 1,
               wo: ArrayLike | None = None) -> Scene:
        """Build and validate a scene; raises :class:`SceneError` with a readable message."""
        mask = frozen_mask(mask)
        scene = cls(
            tokens=tuple(tokens), q=frozen(q, "Q"), k=frozen(k, "K"), v=frozen(v, "V"),
            x=frozen(x, "X"), wq=frozen(wq, "Wq"), wk=frozen(wk, "Wk"), wv=frozen(wv, "Wv"),
            mask=mask, scale=bool(scale), title=title, description=description,
            heads=heads, wo=frozen(wo, "Wo"),
        )
        scene.validate()
        return scene

    @classmethod
    def from_arrays(cls, q: ArrayLike | None = None, k: ArrayLike | None = None, v: ArrayLike | None = None,
                    tokens: Iterable[str] | None = None, *, x: ArrayLike | None = None, wq: ArrayLike | None = None,
                    wk: ArrayLike | None = None, wv: ArrayLike | None = None, mask: Mask | ArrayLike | None = None,
                    scale: bool = True, title: str | None = None, description: str = "") -> Scene:
        """A scene from arrays you already hold (a notebook's NumPy, a model's captured queries and keys).

        Either ``q``, ``k``, ``v`` (direct mode) or ``x``, ``wq``, ``wk``, ``wv`` (projection mode: Q = X·W^Q
        …).  Anything ``numpy.asarray`` takes works: nested lists, NumPy arrays, an object with
        ``__array__`` (a torch tensor after ``.detach().cpu()``).  ``q``/``k``/``v`` are (n, d) or
        (heads, n, d): several heads are laid side by side as the scene's ``heads`` (``head_scene(h)`` gives
        one back).  ``tokens`` default to ``t0 … t{n-1}``; ``mask`` is None/"none", "causal" or an n×n
        boolean matrix (True = blocked).  A Scene is content only: the query and stage to look at it
        with are a :class:`~qkv_studio.core.view.View` (``show(..., query=...)``,
        ``qkv_studio.save(scene, path, view)``).

        Raises :class:`SceneError` with one line (a shape mismatch names both shapes).
        """
        fields = fields_from_arrays(q, k, v, tokens, x, wq, wk, wv, mask)
        return cls.create(**fields, scale=scale, title=title or "", description=description)

    def _evolve(self, **changes: Any) -> Scene:
        """A validated copy with some fields replaced (keeping the derived values it can, see :meth:`_copy`).

        When the change gives Q/K/V (or their W) other widths and does not set ``heads`` itself, the
        head count becomes the nearest one that still splits them, and a W^O that no longer fits d_v is
        dropped (:meth:`add_dim`/:meth:`remove_dim` keep W^O, giving it a row more or less).
        """
        for key in ("q", "k", "v", "x", "wq", "wk", "wv"):
            if key in changes:
                changes[key] = frozen(changes[key], key.upper())
        if "wo" in changes:
            changes["wo"] = frozen(changes["wo"], "Wo")
        if "mask" in changes:
            changes["mask"] = frozen_mask(changes["mask"])
        new = self._copy(**changes)
        if (self.heads != 1 or self.wo is not None) and "heads" not in changes and new._widths_ok():
            new = new._fit_heads(keep_wo="wo" in changes)
        # Tokens carried over unchanged were checked when they came in (1024 of them take ~2 ms).
        new.validate(tokens_checked="tokens" not in changes)
        return new

    def _copy(self, **changes: Any) -> Scene:
        """A copy with some fields replaced, nothing checked; it keeps the derived values whose inputs
        (:data:`_DERIVED_FROM`) it keeps.  Every new version of a scene is made here."""
        kept = {name: value for name, value in self._derived.items() if not _DERIVED_FROM[name] & changes.keys()}
        return replace(self, _derived=kept, **changes)

    def _derive(self, name: str, make: Callable[[], T]) -> T:
        """The derived value ``name``: made once per scene (and carried to copies that keep its inputs)."""
        try:
            return cast(T, self._derived[name])
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

    def _fit_heads(self, *, keep_wo: bool) -> Scene:
        """This scene with ``heads`` moved to the nearest count that splits its widths (and a W^O that no
        longer matches d_v dropped, unless the edit set it)."""
        d_k, d_v = scene_widths(self)
        heads = self.heads
        if d_k % heads or d_v % heads:
            heads = nearest_heads(heads, d_k, d_v)
        wo = self.wo
        if not keep_wo and wo is not None and wo.shape[0] != d_v:
            wo = None
        if heads == self.heads and wo is self.wo:
            return self
        return self._copy(heads=heads, wo=wo)

    def matrix_names(self) -> tuple[str, ...]:
        """The editable matrices of this scene's mode."""
        return MATRICES_PROJECTION if self.mode == "projection" else MATRICES_DIRECT

    def matrix(self, name: str) -> np.ndarray:
        """Q, K, V (derived in projection mode), X, Wq, Wk or Wv by name."""
        if name in MATRICES_DIRECT:
            return self.qkv()["QKV".index(name)]
        arr: np.ndarray | None = getattr(self, name.lower())
        if arr is None:
            raise KeyError(f"this scene has no {name}")
        return arr

    def qkv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The effective Q, K, V: stored, or projected from X in projection mode (cached)."""
        if self.mode == "direct":
            return present(self.q, "Q"), present(self.k, "K"), present(self.v, "V")
        return self._derive("qkv", self._project)

    def _project(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mats = project(present(self.x, "X"), present(self.wq, "Wq"), present(self.wk, "Wk"), present(self.wv, "Wv"))
        for m in mats:
            m.flags.writeable = False
        return mats

    def mask_matrix(self) -> np.ndarray:
        """The n×n boolean mask (True = blocked)."""
        return resolve_mask(self.mask, self.n, self.n)

    def result(self) -> AttentionResult:
        """Every stage of attention for this scene (cached per scene)."""
        return self._derive("result", lambda: compute(*self.qkv(), mask=self.mask, scale=self.scale))

    def multihead(self) -> MultiHeadResult:
        """Multi-head attention of this scene: its ``heads`` heads, their concatenation and ·W^O (cached)."""
        return self._derive("multihead", lambda: multihead_scene(self, self.heads, self.wo))

    def head_scene(self, index: int) -> Scene:
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

    def _make_head_scene(self, index: int) -> Scene:
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
        """Raise :class:`SceneError` naming the field and the problem if this scene is not valid
        (:func:`~qkv_studio.core.scene_checks.validate_scene`).

        ``tokens_checked`` skips the per-token checks (for tokens taken over from a valid scene).
        """
        validate_scene(self, tokens_checked=tokens_checked)
        self._check_projection()

    def _check_projection(self) -> None:
        """In projection mode, Q, K and V = X·W must be finite doubles (computed now, and cached)."""
        if self.x is not None:
            try:
                self.qkv()
            except ValueError as exc:
                raise SceneError("X", str(exc)) from None

    # ---- equality ---------------------------------------------------------------------------------
    def same_as(self, other: Scene) -> bool:
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


def nearest_heads(heads: int, d_k: int, d_v: int) -> int:
    """The head count nearest ``heads`` (the smaller on a tie) that splits both widths (1 always does)."""
    return min(valid_heads(d_k, d_v), key=lambda a: (abs(a - heads), a))


def shape_equation(scene: Scene, which: str) -> str:
    """"4×3 · 3×2 = 4×2" for Q, K or V of a projection scene."""
    w = present({"Q": scene.wq, "K": scene.wk, "V": scene.wv}[which], f"W{which.lower()}")
    n, d_model = present(scene.x, "X").shape
    return f"{n}×{d_model} · {w.shape[0]}×{w.shape[1]} = {n}×{w.shape[1]}"
