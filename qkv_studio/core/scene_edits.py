"""The edits of a Scene: each returns a new, validated Scene and leaves the old one as it was.

Each edit is a function of the scene it edits; :class:`~qkv_studio.core.scene.Scene` takes the public ones
as its methods (``scene.with_value(…)`` is ``with_value(scene, …)``).  They build every new version through
``Scene._evolve`` (validated, keeping the derived values it can) or, for the hot path of a drag,
``Scene._copy``.  A new kind of edit is one function here, one line in the Scene's list of edits, and its
test in ``tests/core/test_scene.py``.
:func:`projection_of` and :func:`with_random_projections` change a scene's mode as a whole (direct ↔
projection).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from qkv_studio.core.scene_checks import MAX_TOKENS, MAX_WIDTH, Mask, SceneError, present

if TYPE_CHECKING:
    from qkv_studio.core.scene import Scene


def with_value(scene: Scene, matrix: str, row: int, col: int, value: float) -> Scene:
    """Set one number of an editable matrix."""
    return scene.with_block(matrix, row, col, np.array([[value]], dtype=np.float64))


def with_block(scene: Scene, matrix: str, row: int, col: int, block: np.ndarray) -> Scene:
    """Paste a block of numbers with its top-left corner at (row, col)."""
    block = np.asarray(block, dtype=np.float64)
    if block.ndim != 2:
        raise SceneError(matrix, "a pasted block must be a table of numbers")
    if matrix not in scene.matrix_names():
        raise SceneError(matrix, f"{matrix} is not editable in {scene.mode} mode")
    arr = scene.matrix(matrix)
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
    scene = scene._copy(**{matrix.lower(): new})
    scene._check_projection()  # (the projection is needed next anyway; it stays cached)
    return scene


def with_matrix(scene: Scene, matrix: str, values: np.ndarray) -> Scene:
    """Replace a whole editable matrix (same shape)."""
    return scene.with_block(matrix, 0, 0, values) if np.shape(values) == scene.matrix(matrix).shape else \
        _raise(matrix, f"{matrix} must stay {'×'.join(map(str, scene.matrix(matrix).shape))}")


def _raise(name: str, msg: str) -> NoReturn:
    raise SceneError(name, msg)


def with_mask(scene: Scene, mask: Mask) -> Scene:
    return scene._evolve(mask=mask)


def with_scale(scene: Scene, scale: bool) -> Scene:
    return scene._evolve(scale=bool(scale))


def with_heads(scene: Scene, heads: int) -> Scene:
    """Split into ``heads`` heads (1–16, dividing d_k and d_v); raises SceneError saying what would work."""
    return scene._evolve(heads=heads) if heads != scene.heads else scene


def with_wo(scene: Scene, wo: np.ndarray | None) -> Scene:
    """Set (or, with None, remove) the output projection W^O, d_v × d_out."""
    return scene._evolve(wo=wo)


def toggle_blocked(scene: Scene, row: int | None, col: int) -> Scene:
    """Block or unblock one cell (row given) or a whole key column (row None): a custom mask."""
    m = np.array(scene.mask_matrix())
    if row is None:
        m[:, col] = not bool(np.all(m[:, col]))
    else:
        m[row, col] = not m[row, col]
    if not m.any():
        return scene._evolve(mask="none")
    if np.array_equal(m, np.triu(np.ones_like(m), 1)):
        return scene._evolve(mask="causal")
    return scene._evolve(mask=m)


def _row_matrices(scene: Scene) -> tuple[str, ...]:
    return ("x",) if scene.mode == "projection" else ("q", "k", "v")


def rename_token(scene: Scene, index: int, name: str) -> Scene:
    tokens = list(scene.tokens)
    tokens[index] = name
    return scene._evolve(tokens=tuple(tokens))


def insert_token(scene: Scene, index: int, name: str, rows: dict[str, np.ndarray] | None = None) -> Scene:
    """Insert a token before ``index`` with zero rows (or the given ones) in every per-token matrix."""
    if scene.n >= MAX_TOKENS:
        raise SceneError("tokens", f"a scene holds at most {MAX_TOKENS} tokens")
    index = max(0, min(index, scene.n))
    changes: dict[str, Any] = {"tokens": scene.tokens[:index] + (name,) + scene.tokens[index:]}
    for key in _row_matrices(scene):
        arr = getattr(scene, key)
        row = np.zeros(arr.shape[1]) if not rows or key not in rows else np.asarray(rows[key], float)
        changes[key] = np.insert(arr, index, row, axis=0)
    if not isinstance(scene.mask, str):
        m = np.insert(scene.mask, index, False, axis=0)
        changes["mask"] = np.insert(m, index, False, axis=1)
    return scene._evolve(**changes)


def remove_token(scene: Scene, index: int) -> Scene:
    if scene.n <= 1:
        raise SceneError("tokens", "the last token cannot be removed: a scene needs at least one")
    changes: dict[str, Any] = {"tokens": scene.tokens[:index] + scene.tokens[index + 1:]}
    for key in _row_matrices(scene):
        changes[key] = np.delete(getattr(scene, key), index, axis=0)
    if not isinstance(scene.mask, str):
        changes["mask"] = np.delete(np.delete(scene.mask, index, axis=0), index, axis=1)
    return scene._evolve(**changes)


def move_token(scene: Scene, src: int, dst: int) -> Scene:
    """Move token ``src`` to position ``dst``; its rows (and mask row/column) travel with it."""
    order = list(range(scene.n))
    order.insert(dst, order.pop(src))
    return scene.permute(order)


def permute(scene: Scene, order: list[int]) -> Scene:
    """Reorder tokens: new token i is old token ``order[i]``."""
    idx = np.asarray(order)
    changes: dict[str, Any] = {"tokens": tuple(scene.tokens[i] for i in order)}
    for key in _row_matrices(scene):
        changes[key] = getattr(scene, key)[idx]
    if not isinstance(scene.mask, str):
        changes["mask"] = scene.mask[np.ix_(idx, idx)]
    return scene._evolve(**changes)


def _dim_targets(scene: Scene, group: str) -> list[tuple[str, int]]:
    """(matrix, axis) pairs that gain or lose a column for a dimension group."""
    if scene.mode == "direct":
        table = {"qk": [("q", 1), ("k", 1)], "v": [("v", 1)]}
    else:
        table = {"qk": [("wq", 1), ("wk", 1)], "v": [("wv", 1)],
                 "model": [("x", 1), ("wq", 0), ("wk", 0), ("wv", 0)]}
    if group not in table:
        raise SceneError(group, f"no dimension group {group!r} in {scene.mode} mode")
    return table[group]


def dim(scene: Scene, group: str) -> int:
    key, axis = _dim_targets(scene, group)[0]
    return int(getattr(scene, key).shape[axis])


def add_dim(scene: Scene, group: str, index: int | None = None) -> Scene:
    """Add a zero dimension to a group: ``qk`` (d_k, Q and K together), ``v`` (d_v) or ``model``."""
    size = scene.dim(group)
    if size >= MAX_WIDTH:
        raise SceneError(group, f"widths are at most {MAX_WIDTH}")
    index = size if index is None else max(0, min(index, size))
    changes = {key: np.insert(getattr(scene, key), index, 0.0, axis=axis) for key, axis in _dim_targets(scene, group)}
    if group == "v" and scene.wo is not None:  # the new (zero) value column meets a new (zero) row of W^O
        changes["wo"] = np.insert(scene.wo, index, 0.0, axis=0)
    return scene._evolve(**changes)


def remove_dim(scene: Scene, group: str, index: int | None = None) -> Scene:
    size = scene.dim(group)
    if size <= 1:
        names = {"qk": "d_k", "v": "d_v", "model": "d_model"}
        raise SceneError(group, f"the last dimension cannot be removed: {names[group]} must be at least 1")
    index = size - 1 if index is None else index
    changes = {key: np.delete(getattr(scene, key), index, axis=axis) for key, axis in _dim_targets(scene, group)}
    if group == "v" and scene.wo is not None:
        changes["wo"] = np.delete(scene.wo, index, axis=0)
    return scene._evolve(**changes)


def to_direct(scene: Scene) -> Scene:
    """Projection → direct: the derived Q, K, V become the editable ones."""
    if scene.mode == "direct":
        return scene
    q, k, v = scene.qkv()
    return scene._evolve(q=q, k=k, v=v, x=None, wq=None, wk=None, wv=None)


def to_projection(scene: Scene, x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray) -> Scene:
    """Direct → projection with the given X and W matrices (Q, K, V are then derived)."""
    return scene._evolve(q=None, k=None, v=None, x=x, wq=wq, wk=wk, wv=wv)


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
    d_model = present(s.x, "X").shape[1]
    std = 1.0 / np.sqrt(d_model)
    shapes = (present(s.wq, "Wq").shape, present(s.wk, "Wk").shape, present(s.wv, "Wv").shape)
    wq, wk, wv = (np.round(rng.normal(0.0, std, size=shape), 3) for shape in shapes)
    return s._evolve(wq=wq, wk=wk, wv=wv, description="")  # (new numbers: the old description is false)

