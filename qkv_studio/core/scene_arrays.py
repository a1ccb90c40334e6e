"""Arrays from outside (a notebook's NumPy, nested lists, a tensor) turned into the fields of a Scene.

This is the reading half of :meth:`Scene.from_arrays <qkv_studio.core.scene.Scene.from_arrays>`: shapes
are checked here, with messages that name both shapes, before the scene validates its content.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from qkv_studio.core.multihead import MAX_HEADS, MIN_HEADS
from qkv_studio.core.scene_checks import SceneError, check_size


def _shape(a: np.ndarray) -> str:
    return "(" + ", ".join(map(str, a.shape)) + ("," if a.ndim == 1 else "") + ")"


def _as_numbers(a: object, name: str) -> np.ndarray:
    """``numpy.asarray`` of an argument of :meth:`Scene.from_arrays`, as float64; SceneError if not numbers."""
    try:
        arr = np.asarray(a)
    except Exception as exc:  # noqa: BLE001 - any foreign object: one line, no traceback
        raise SceneError(name.upper(), f"{name} cannot be read as an array of numbers ({type(a).__name__}: "
                                       f"{exc})") from None
    check_size(arr, name.upper())  # (before astype, which may copy)
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


def fields_from_arrays(q: object, k: object, v: object, tokens: Iterable[str] | None, x: object, wq: object,
                       wk: object, wv: object, mask: object) -> dict[str, Any]:
    """The keyword arguments of :meth:`Scene.create` (tokens, the arrays, mask, heads) for
    :meth:`Scene.from_arrays`'s arguments; raises :class:`SceneError` with one line."""
    direct, projection = (q, k, v), (x, wq, wk, wv)
    if any(a is not None for a in direct) and any(a is not None for a in projection):
        raise SceneError("Q", "give q, k, v or x, wq, wk, wv, not both")
    names: tuple[str, ...]
    given: tuple[object, ...]
    if all(a is None for a in projection):
        names, given = ("q", "k", "v"), direct
    else:
        names, given = ("x", "wq", "wk", "wv"), projection
    missing = [name for name, a in zip(names, given, strict=False) if a is None]
    if missing:
        raise SceneError(missing[0].upper(), f"{', '.join(missing)} missing: give all of {', '.join(names)}")
    arrays = {name: _as_numbers(a, name) for name, a in zip(names, given, strict=False)}
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
        check_size(m, "mask")
        if m.shape != (n, n):
            raise SceneError("mask", f"the mask has shape {_shape(m)} but there are {n} tokens: it must be "
                                     f"({n}, {n})")
        if m.dtype != bool and not np.isin(m, (0, 1)).all():
            raise SceneError("mask", "a mask must hold true (blocked) / false values only")
        mask = m.astype(bool)
    return {"tokens": tokens, **arrays, "mask": mask, "heads": heads}
