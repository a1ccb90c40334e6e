"""What the plane draws, read from the Session: each vector as the two coordinates it is plotted at.

For dₖ ≤ 2 these are the vector's components (a 1-D vector lies on the horizontal axis); for dₖ > 2
the first two components — the ones a drag edits — or, in the PCA view, the vector projected on the two
directions that keep most of q's and k's length (values on a PCA of their own).  NumPy only: the
widgets draw what :class:`PlaneVectors` holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from qkv_studio.core import row_stats
from qkv_studio.state.session import Session

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult

_ORIGIN = np.zeros((1, 2))


def pca_bases(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The 2-D PCA basis of q and k with the share of their length it keeps, and one for v (None when
    dᵥ ≤ 2: its first two components are already all of it).  Rows are scaled first, so numbers near
    1e308 give the same directions instead of overflowing."""
    from qkv_studio.core.models import pca_basis  # (NumPy only; loaded when first asked for)

    def scaled(*ms: np.ndarray) -> list[np.ndarray]:
        top = max((float(np.max(np.abs(m))) for m in ms if m.size), default=0.0)
        return [m / top if top > 0 else m for m in ms]

    qs, ks = scaled(q, k)
    basis, explained = pca_basis(qs, ks)
    v_basis = pca_basis(scaled(v)[0], np.zeros((0, v.shape[1])))[0] if v.shape[1] > 2 else None
    return basis, explained, v_basis


def finite(m: np.ndarray) -> np.ndarray:
    """Projected vectors kept finite: an overflow (numbers near 1e308) becomes ±1e300."""
    return np.nan_to_num(m, nan=0.0, posinf=1e300, neginf=-1e300)


def first2(m: np.ndarray) -> np.ndarray:
    """The first two components of each row (a 1-D vector lies on the horizontal axis)."""
    if m.shape[1] >= 2:
        return np.asarray(m[:, :2], dtype=np.float64)
    return np.column_stack([m[:, 0], np.zeros(m.shape[0])]).astype(np.float64)


def _bounds(m: np.ndarray) -> np.ndarray:
    """The two corners (min, max) of the box around the rows of ``m``, clipped to ±1e300 (a range
    pyqtgraph can still draw)."""
    if not len(m):
        return np.zeros((0, 2))
    return np.clip(np.array([m.min(axis=0), m.max(axis=0)]), -1e300, 1e300)


class PlaneVectors:
    """The plotted (x, y) of the keys, the values, the selected query and the output, and the best key.

    ``read_vectors`` after a scene change, ``read_result`` after a new result.  The keys and values
    stay the same arrays while their matrices do (a query's edit or drag leaves 1024 key arrows as they
    are: the drawing code compares arrays by identity).
    """

    def __init__(self) -> None:
        self.keys = np.zeros((0, 2))
        self.values = np.zeros((0, 2))
        self.query_vec = np.zeros((1, 2))
        self.output: np.ndarray | None = None
        self.best: int | None = None
        self.best_weight = 0.0
        self.bases: tuple | None = None  # (q·k basis, explained, v basis) while PCA is shown
        self._read_from: tuple = (None, None)  # the K and V the keys and values were read from
        self._bounds: dict[str, tuple] = {}  # set -> (array, its box): a drag of q leaves the keys' box alone

    def read_vectors(self, session: Session, pca: bool) -> None:
        """The vectors of the session's scene; through their PCA when ``pca`` (and dₖ > 2)."""
        q, k, v = session.shown.qkv()  # (a split scene: the selected head)
        row = slice(session.query, session.query + 1)
        if pca:
            self.bases = pca_bases(q, k, v)
            basis, _, v_basis = self.bases
            with np.errstate(over="ignore", invalid="ignore"):  # (finite, if off the plane, near 1e308)
                self.keys = finite(k @ basis)
                self.query_vec = finite(q[row] @ basis)
                self.values = finite(v @ v_basis) if v_basis is not None else first2(v)
        else:
            self.bases = None
            # (the same keys and values as last time, when a query was edited: the same arrays)
            if self._read_from[0] is not k:
                self.keys = first2(k)
            if self._read_from[1] is not v:
                self.values = first2(v)
            self.query_vec = first2(q[row])
        self._read_from = (k, v) if self.bases is None else (None, None)

    def read_result(self, session: Session) -> None:
        """The best key of the selected query, its weight, and the output (the blend of the values)."""
        result = session.result
        query = session.query
        if result.weights.shape[0] != session.shown.n or query >= result.weights.shape[0]:
            self.best, self.output = None, None
            return
        # the Session's LiveResult reads as an AttentionResult (state/session.py); core's
        # functions are typed for the dataclass
        stats = row_stats(cast("AttentionResult", result), query)
        self.best = None if stats.fully_masked else stats.argmax
        self.best_weight = stats.max_weight
        out = result.output[query:query + 1]
        v_basis = self.bases[2] if self.bases is not None else None
        with np.errstate(over="ignore", invalid="ignore"):  # (numbers near 1e308 draw off the plane)
            self.output = finite(out @ v_basis) if v_basis is not None else first2(out)

    def head(self, matrix: str, row: int) -> tuple[float, float]:
        """Where the head of a drawn vector is (``matrix`` "Q" is the selected query, whatever ``row``)."""
        if matrix == "Q":
            return float(self.query_vec[0, 0]), float(self.query_vec[0, 1])
        arr = self.keys if matrix == "K" else self.values
        return float(arr[row, 0]), float(arr[row, 1])

    def heads_box(self, values: bool, output: bool) -> np.ndarray:
        """Points whose bounding box is that of every drawn head and the origin (arrows start there):
        the corners of each set's box rather than 1024 keys, clipped to ±1e300."""
        parts = [self._box("keys", self.keys), np.clip(self.query_vec, -1e300, 1e300), _ORIGIN]
        if values:
            parts.append(self._box("values", self.values))
        if output and self.output is not None:
            parts.append(np.clip(self.output, -1e300, 1e300))
        return np.vstack(parts)

    def _box(self, name: str, arr: np.ndarray) -> np.ndarray:
        last = self._bounds.get(name)
        if last is not None and last[0] is arr:
            return last[1]
        box = _bounds(arr)
        self._bounds[name] = (arr, box)
        return box
