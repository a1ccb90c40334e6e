"""What makes a Scene valid: the limits, read-only copies of its arrays, and the checks with their messages.

:func:`validate_scene` is :meth:`Scene.validate <qkv_studio.core.scene.Scene.validate>`; every check raises
:class:`SceneError` naming the field at fault.  A new rule goes here, with a test in ``tests/core/test_scene.py``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from qkv_studio.core.multihead import MAX_HEADS, MIN_HEADS, valid_heads

if TYPE_CHECKING:
    from qkv_studio.core.scene import Scene

MAX_TOKENS = 1024
MAX_WIDTH = 1024
MAX_TOKEN_CHARS = 64
# C0/C1 controls and the Unicode line/paragraph separators break labels; lone surrogates are not text
# at all (a file may spell one as "\\ud800") and could never be saved as UTF-8.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")

Mask = Literal["none", "causal"] | np.ndarray


class SceneError(ValueError):
    """A scene that cannot be: ``field`` names the part at fault, the message says what is wrong."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


MAX_NUMBERS = MAX_TOKENS * MAX_WIDTH  # the most numbers one array of a scene can hold (8 MB as float64)


def check_size(a: object, name: str) -> None:
    """Refuse an array-like whose shape (read without copying: a broadcast view of 10⁶ × 10⁶ costs
    nothing until copied) holds more numbers than any scene can, before anything is allocated."""
    shape = getattr(a, "shape", None)
    if shape is None:
        return  # (a nested list: already in memory, and no larger than what made it)
    try:
        dims = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        return
    count = 1
    for d in dims:
        count *= d
    if count > MAX_NUMBERS:
        raise SceneError(name, f"{name} has shape ({', '.join(map(str, dims))}): {count:,} numbers, but a scene "
                               f"holds at most {MAX_TOKENS} tokens × {MAX_WIDTH} numbers ({MAX_NUMBERS:,}) per "
                               f"array")


def frozen(a: ArrayLike | None, name: str) -> np.ndarray | None:
    if a is None:
        return None
    check_size(a, name)
    try:
        arr = np.array(a, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise SceneError(name, f"{name} must be a table of numbers with rows of equal length") from None
    if arr.ndim != 2:
        raise SceneError(name, f"{name} must be a table of rows")
    arr.flags.writeable = False
    return arr


def frozen_mask(mask: object) -> Mask:
    """``"none"``/``"causal"`` as given (None means "none"); anything else as a read-only boolean array."""
    if mask is None:
        return "none"
    if isinstance(mask, str):
        if mask == "causal":
            return "causal"
        if mask == "none":
            return "none"
        raise SceneError("mask", f"unknown mask {mask!r}: use 'none', 'causal' or a boolean matrix")
    check_size(mask, "mask")
    try:
        m = np.array(mask, dtype=bool, copy=True)
    except (TypeError, ValueError):
        raise SceneError("mask", "a custom mask must be a matrix of true (blocked) / false values") from None
    m.flags.writeable = False
    return m


def validate_scene(scene: Scene, *, tokens_checked: bool = False) -> None:
    """Raise :class:`SceneError` naming the field and the problem if ``scene`` is not valid.

    ``tokens_checked`` skips the per-token checks (for tokens taken over from a valid scene).  The
    projection (Q = X·W^Q … finite) is checked by the scene itself, which caches it.
    """
    n = len(scene.tokens)
    if not 1 <= n <= MAX_TOKENS:
        raise SceneError("tokens", f"a scene needs 1–{MAX_TOKENS} tokens, this one has {n}")
    for i, t in enumerate(() if tokens_checked else scene.tokens):
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
        if not isinstance(getattr(scene, name), str):
            raise SceneError(name, f"the {name} must be text")
        if _SURROGATE.search(getattr(scene, name)):
            raise SceneError(name, f"the {name} contains an invalid character (a lone surrogate)")
    q, k, v, x, wq, wk, wv = scene.q, scene.k, scene.v, scene.x, scene.wq, scene.wk, scene.wv
    if x is not None:
        if wq is None or wk is None or wv is None:
            raise SceneError("X", "projection mode needs X, Wq, Wk and Wv together")
        check_rows("X", x, n)
        d_model = x.shape[1]
        check_width("X", d_model)
        for name, w in (("Wq", wq), ("Wk", wk), ("Wv", wv)):
            if w.shape[0] != d_model:
                raise SceneError(name, f"{name} has {w.shape[0]} rows but X rows have {d_model} numbers "
                                       f"(d_model): {name} must be d_model×d")
            check_width(name, w.shape[1])
            check_finite(name, w)
        if wq.shape[1] != wk.shape[1]:
            raise SceneError("Wk", f"Wq makes queries of width {wq.shape[1]} but Wk makes keys of width "
                                   f"{wk.shape[1]}: they must share d_k")
    else:
        if q is None or k is None or v is None:
            missing = [nm for nm, m in zip("QKV", (q, k, v), strict=False) if m is None]
            raise SceneError(missing[0], f"missing {', '.join(missing)} (or X with Wq, Wk, Wv)")
        for name, m in zip("QKV", (q, k, v), strict=False):
            check_rows(name, m, n)
            check_width(name, m.shape[1])
        if q.shape[1] != k.shape[1]:
            raise SceneError("K", f"Q rows have {q.shape[1]} numbers but K rows have {k.shape[1]}: "
                                  f"queries and keys must share d_k")
    if isinstance(scene.mask, str):
        if scene.mask not in ("none", "causal"):
            raise SceneError("mask", f"unknown mask {scene.mask!r}: use 'none', 'causal' or a boolean matrix")
    else:
        if scene.mask.shape != (n, n):
            raise SceneError("mask", f"the mask must be {n}×{n} (one row and column per token), "
                                     f"it is {'×'.join(map(str, scene.mask.shape))}")
    check_heads(scene)


def present(a: np.ndarray | None, name: str) -> np.ndarray:
    """``a``, a matrix the scene's mode must have; SceneError naming it when it is missing."""
    if a is None:
        raise SceneError(name, f"missing {name}")
    return a


def scene_widths(scene: Scene) -> tuple[int, int]:
    """(d_k, d_v) without projecting (for validation)."""
    if scene.x is not None:
        return int(present(scene.wq, "Wq").shape[1]), int(present(scene.wv, "Wv").shape[1])
    return int(present(scene.q, "Q").shape[1]), int(present(scene.v, "V").shape[1])


def check_heads(scene: Scene) -> None:
    """``heads`` 1–16 dividing d_k and d_v; W^O d_v × d_out with finite numbers."""
    h = scene.heads
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)):
        raise SceneError("heads", f"heads must be a whole number, not {h!r}")
    if not MIN_HEADS <= h <= MAX_HEADS:
        raise SceneError("heads", f"heads must be {MIN_HEADS}–{MAX_HEADS}, not {h}")
    d_k, d_v = scene_widths(scene)
    for name, width in (("d_k", d_k), ("d_v", d_v)):
        if width % h:
            ok = ", ".join(map(str, valid_heads(d_k, d_v)))
            raise SceneError("heads", f"heads = {h} cannot split {name} = {width} into equal parts: heads must "
                                      f"divide both d_k = {d_k} and d_v = {d_v} (possible: {ok})")
    if scene.wo is not None:
        if scene.wo.shape[0] != d_v:
            raise SceneError("Wo", f"Wo has {scene.wo.shape[0]} rows but the heads' concatenation has d_v = {d_v} "
                                   f"columns: Wo must be d_v×d_out ({d_v}×…)")
        check_width("Wo", scene.wo.shape[1])
        check_finite("Wo", scene.wo)


def check_rows(name: str, m: np.ndarray, n: int) -> None:
    if m.shape[0] != n:
        raise SceneError(name, f"{name} has {m.shape[0]} rows but there are {n} tokens: one row per token")
    check_finite(name, m)


def check_finite(name: str, m: np.ndarray) -> None:
    bad = np.argwhere(~np.isfinite(m))
    if bad.size:
        r, c = bad[0]
        raise SceneError(name, f"{name} row {r + 1}, column {c + 1} is not a finite number")


def check_width(name: str, w: int) -> None:
    if not 1 <= w <= MAX_WIDTH:
        raise SceneError(name, f"{name} rows must have 1–{MAX_WIDTH} numbers, they have {w}")
