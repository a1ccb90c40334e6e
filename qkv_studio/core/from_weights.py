"""A scene from attention weights alone (``qkv_studio.show(weights=…)``), when Q and K are not known.

Only the softmax output is known, so the stages before it cannot be the model's.  What can be shown
honestly: scores are defined only up to a constant per row (softmax ignores it), and log w is one set of
scores that gives exactly these weights.  :func:`scene_from_weights` builds the direct-mode scene

* K = I (n × n), Q = log w where w > 0 (so Q·Kᵀ = log w), ÷√dₖ off;
* a custom mask blocking the keys whose weight is 0 (softmax gives them −∞ → 0);
* V as given, else I (the blend of each row is then that row of weights);

whose own ``result().weights`` equal ``weights`` (to ~1e-16), with a description that says the scores
are log-weights, not the model's.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from qkv_studio.core.scene import MAX_TOKENS, MAX_WIDTH, Scene, SceneError
from qkv_studio.core.scene_arrays import _as_numbers, _shape  # (how from_arrays reads foreign arrays)

ROW_SUM_TOLERANCE = 1e-6

NOTE = ("Only the attention weights are known: the scores shown are log w (any scores giving these weights "
        "differ from them by a constant per row), Q and K are stand-ins (K = I, Q = log w), so the stages "
        "before softmax are not the model's.")


def scene_from_weights(weights: ArrayLike, tokens: Iterable[str] | None = None, *, v: ArrayLike | None = None,
                       title: str | None = None) -> Scene:
    """The scene whose softmax weights are ``weights`` (n × n, each row ≥ 0 summing to 1); see the module
    notes.  Raises :class:`SceneError` with one line for anything else."""
    w = _as_numbers(weights, "weights")
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] == 0:
        raise SceneError("weights", f"weights must be a square n×n matrix (one row per query), "
                                    f"it has shape {_shape(w)}")
    n = w.shape[0]
    if n > min(MAX_TOKENS, MAX_WIDTH):
        raise SceneError("weights", f"weights for {n} tokens: {min(MAX_TOKENS, MAX_WIDTH)} at most")
    if not np.all(np.isfinite(w)):
        raise SceneError("weights", "weights must be finite numbers")
    if np.any(w < 0):
        r, c = np.argwhere(w < 0)[0]
        raise SceneError("weights", f"weights must be ≥ 0 (row {r}, column {c} is {w[r, c]:g})")
    sums = w.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > ROW_SUM_TOLERANCE)
    if bad.size:
        raise SceneError("weights", f"each row of weights must sum to 1 (row {bad[0]} sums to {sums[bad[0]]:.6g})")
    blocked = w <= 0
    q = np.where(blocked, 0.0, np.log(np.where(blocked, 1.0, w)))
    eye = np.eye(n)
    values = eye if v is None else _as_numbers(v, "v")
    if values.ndim != 2 or values.shape[0] != n:
        raise SceneError("V", f"weights has shape {_shape(w)} but v has shape {_shape(values)}: v needs one "
                              f"row per token")
    mask = blocked if blocked.any() else None
    return Scene.from_arrays(q, eye, values, tokens, mask=mask, scale=False,
                             title=title or "Attention weights (scores unknown)", description=NOTE)
