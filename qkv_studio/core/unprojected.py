"""Why three projections: the scene without them (Q = K = V = X) and the facts that tell the two apart.

The lesson's "Ask your teacher" asks why attention needs learned W^Q, W^K, W^V instead of dotting the
embeddings directly.  :func:`without_projections` builds that other scene from the same tokens and
embeddings; :func:`compare` measures, with the scene's own numbers, what the projections change:

* X·Xᵀ is symmetric (the score of a→b is the score of b→a: x_a·x_b), Q·Kᵀ need not be;
* x·x = |x|² makes the diagonal strong, so without projections a token's best match is usually itself,
  and it cannot look for something other than what it is (a verb looking for its subject);

and :func:`caption` says it in words that are true for the numbers shown (rounded as the cells are).
NumPy only; the window's "Without projections" panel, the command line's ``--without-projections`` and
the quiz use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from qkv_studio.core.scene import Scene, SceneError
from qkv_studio.core.scene_checks import Mask
from qkv_studio.core.text import fmt_fixed

#: what the two figures side by side are of (their headings, before each figure's title)
WITHOUT_HEADING = "Without projections (Q = K = V = X)"
WITH_HEADING = "With learned projections"
NEEDS_PROJECTION = ("needs the embeddings X and the learned W^Q, W^K, W^V: switch to projection mode "
                    "(Attention → Projection mode, or --preset projection) or use a real model's layer")


def without_projections(scene: Scene) -> Scene:
    """The same tokens, mask and ÷√d with Q = K = V = X (one head: X is not split).

    Raises :class:`SceneError` for a direct-mode scene, which has no X to dot."""
    if scene.mode != "projection" or scene.x is None:
        raise SceneError("x", f"“Without projections” {NEEDS_PROJECTION}")
    x = scene.x
    title = f"{scene.title} — without projections" if scene.title else "Without projections"
    return Scene.create(scene.tokens, q=x, k=x, v=x, mask=scene.mask, scale=scene.scale, title=title,
                        description="Q = K = V = X: the embeddings dotted directly, no learned projections.")


def from_embeddings(tokens: Iterable[str], x: np.ndarray, *, mask: Mask = "none", scale: bool = True,
                    title: str = "") -> Scene:
    """A real model's layer input X as the scene without projections (Q = K = V = X)."""
    return Scene.create(tokens, q=x, k=x, v=x, mask=mask, scale=scale,
                        title=f"{title} — without projections" if title else "Without projections",
                        description="Q = K = V = X: the layer's input dotted directly, no learned projections.")


def is_symmetric(scores: np.ndarray) -> bool:
    """Whether a score grid is symmetric, to the rounding of the matrix product (X·Xᵀ is, exactly in
    exact arithmetic; BLAS may differ in the last bits)."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        return False
    finite = np.isfinite(s)
    if not np.array_equal(finite, finite.T):
        return False
    a, b = s[finite], s.T[finite]
    scale = float(np.max(np.abs(a))) if a.size else 0.0
    return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12 * max(scale, 1.0)))


def _self_best(weights: np.ndarray, blocked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query: whether its own key has the largest weight (ties count), and whether that largest weight
    is shared with another key (as the cells show it, two decimals)."""
    shown = np.round(np.asarray(weights, dtype=float), 2)
    n = shown.shape[0]
    diag = shown[np.arange(n), np.arange(n)]
    top = shown.max(axis=1)
    own = (diag >= top) & ~np.asarray(blocked)[np.arange(n), np.arange(n)]
    others = shown.copy()
    others[np.arange(n), np.arange(n)] = -np.inf
    tied = own & (others.max(axis=1) >= top) if n > 1 else np.zeros(n, dtype=bool)
    return own, tied


def _best(row: np.ndarray) -> tuple[int, ...]:
    shown = np.round(np.asarray(row, dtype=float), 2)
    return tuple(int(j) for j in np.flatnonzero(shown == shown.max()))


@dataclass(frozen=True)
class ProjectionFacts:
    """What the projections change for the scene shown, measured (see :func:`compare`).

    ``*_without`` describe Q = K = V = X, ``*_with`` the learned projections (the scene itself).
    ``self_*`` is the query's weight on itself, ``best_*`` the keys it weighs most (several when tied, as
    the cells show the weights: two decimals),
    ``own_best_*`` how many queries put their largest weight on themselves (ties count), of ``n``."""

    query: int
    n: int
    symmetric_without: bool
    symmetric_with: bool
    self_without: float
    self_with: float
    best_without: tuple[int, ...]
    best_with: tuple[int, ...]
    own_best_without: int
    own_best_with: int
    tied_without: int = 0
    tied_with: int = 0


def compare(with_projections: Scene, without: Scene, query: int) -> ProjectionFacts:
    """The facts of the caption, from both scenes' results (same tokens: ``without`` is
    :func:`without_projections` of ``with_projections``, or a model layer's input)."""
    if with_projections.tokens != without.tokens:
        raise ValueError("the two scenes must have the same tokens")
    a, b = with_projections.result(), without.result()
    if not 0 <= query < a.n:
        raise ValueError(f"query {query} is out of range (0–{a.n - 1})")
    own_a, tied_a = _self_best(a.weights, a.blocked)
    own_b, tied_b = _self_best(b.weights, b.blocked)
    return ProjectionFacts(
        query=query, n=a.n,
        symmetric_without=is_symmetric(b.scores), symmetric_with=is_symmetric(a.scores),
        self_without=float(b.weights[query, query]), self_with=float(a.weights[query, query]),
        best_without=_best(b.weights[query]), best_with=_best(a.weights[query]),
        own_best_without=int(own_b.sum()), own_best_with=int(own_a.sum()),
        tied_without=int(tied_b.sum()), tied_with=int(tied_a.sum()),
    )


def _names(keys: Iterable[int], label: Callable[[int], str]) -> str:
    names = [f"“{label(j)}”" for j in keys]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _own(query: int, weight: float, best: tuple[int, ...], label: Callable[[int], str]) -> str:
    """"0.41 on itself", with "(most on “cat”)" or "(tied with “cat”)" as the cells show it."""
    text = f"{fmt_fixed(weight)} on itself"
    others = [j for j in best if j != query]
    if query in best and others:
        text += f" (tied with {_names(others, label)})"
    elif query not in best:
        text += f" (most on {_names(best, label)})"
    return text


def _ties(count: int) -> str:
    return f" ({count} tied)" if count else ""


def caption(facts: ProjectionFacts, label: Callable[[int], str]) -> str:
    """The comparison in words, true for the numbers shown; ``label(i)`` names token i.

    E.g. "Without projections “sat” puts 0.37 on itself; with them 0.25 (most on “cat”). …"."""
    q, n = facts.query, facts.n
    text = (f"Without projections “{label(q)}” puts {_own(q, facts.self_without, facts.best_without, label)}; "
            f"with them {_own(q, facts.self_with, facts.best_with, label)}.")
    if facts.symmetric_without:
        text += (" X·Xᵀ is symmetric (a→b and b→a get the same score x<sub>a</sub>·x<sub>b</sub>) and "
                 "x·x = |x|² makes its diagonal strong")
    else:
        text += " x·x = |x|² makes the diagonal strong"
    theirs = f"{facts.own_best_without} of {n} tokens weigh themselves most{_ties(facts.tied_without)}"
    if 2 * facts.own_best_without > n:
        text += f": {theirs}, so a token looks for what it is."
    else:
        text += f" ({theirs}): each query is its own key, so a token can only look for what it is."
    mine = f"{facts.own_best_with} of {n} weigh themselves most{_ties(facts.tied_with)}"
    if facts.symmetric_with:
        turn = "but" if facts.own_best_with < facts.own_best_without else "and"
        text += f" With these projections Q·Kᵀ happens to be symmetric as well, {turn} {mine}."
    else:
        text += f" The learned projections make Q·Kᵀ asymmetric and {mine}: a query can look for something else."
    return text
