"""Arrows from the origin as ``connect="pairs"`` segments: one curve item draws a whole set."""

from __future__ import annotations

import math

import numpy as np

_HEAD_ANGLE = math.radians(24)


def arrow_segments(vecs: np.ndarray, head_px: float, px: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """x, y of ``connect="pairs"`` segments drawing arrows from the origin to each row of ``vecs``.

    Heads are ``head_px`` pixels long whatever the zoom (``px`` = data units per pixel).
    """
    if len(vecs) == 0:
        return np.zeros(0), np.zeros(0)
    sx, sy = px
    with np.errstate(over="ignore", invalid="ignore"):  # a vector near 1e308 draws off the plane, no warning
        X, Y = vecs[:, 0] / sx, vecs[:, 1] / sy
        length = np.hypot(X, Y)
        safe = np.where(length > 0, length, 1.0)
        ux, uy = X / safe, Y / safe
    h = np.minimum(head_px, 0.45 * length)
    c, s = math.cos(_HEAD_ANGLE), math.sin(_HEAD_ANGLE)
    b1x, b1y = X - h * (ux * c - uy * s), Y - h * (uy * c + ux * s)
    b2x, b2y = X - h * (ux * c + uy * s), Y - h * (uy * c - ux * s)
    zero = np.zeros_like(X)
    xs = np.stack([zero, X, X, b1x, X, b2x], axis=1).ravel() * sx
    ys = np.stack([zero, Y, Y, b1y, Y, b2y], axis=1).ravel() * sy
    return xs, ys
