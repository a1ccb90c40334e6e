"""One rotary pair of a query and a key, before and after RoPE turned them: what the vector plane's RoPE
view draws and says (NumPy only, never Qt).

A head of a model that uses RoPE (SmolLM2) gives q and k *after* the rotation (the vectors whose dot
products are the scores; an "Edit this head" copy keeps them so).  :func:`rotary_of` says whether a scene
is such a head — and why not, when it is not — as a :class:`Rotary` (the model's RoPE base and each
row's position); :func:`pair_view` turns the query's and the key's pair back by their positions
(:func:`qkv_studio.core.rope.pair_before_after`) and gives both 2-D vectors before and after, the angles
(position × the pair's frequency), their difference and the pair's share of the score;
:func:`arc_points` is the arc that marks a turn; :func:`caption` the sentence that reads it out.

A model says it uses RoPE with a ``rope_base`` attribute on its registry entry (radians: pair i turns
position·base^(−2i/d)); its runs' rows are at positions 0, 1, … (no offset), as SmolLM2's are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qkv_studio.core import rope

if TYPE_CHECKING:
    from qkv_studio.core.models.registry import AttentionModel
    from qkv_studio.core.models.run import ModelRun
    from qkv_studio.core.scene import Scene

ARC_STEPS = 48  # points on an arc (a smooth quarter turn at projector size, ~1 µs each)


@dataclass(frozen=True, eq=False)
class Rotary:
    """A scene whose q and k RoPE has turned: ``base`` (the model's), ``positions`` (one per row, read-only)
    and ``source`` (what it is, for the caption: "SmolLM2 layer 3 head 5")."""

    base: float
    positions: np.ndarray
    source: str = ""

    @property
    def n(self) -> int:
        return int(self.positions.size)


def model_base(model: object) -> float | None:
    """The RoPE base a registry entry declares (``rope_base``), or None for a model without RoPE."""
    base = getattr(model, "rope_base", None)
    try:
        base = None if base is None else float(base)
    except (TypeError, ValueError):
        return None
    return base if base is not None and math.isfinite(base) and base > 1 else None


def rotary_of(scene: Scene, model: AttentionModel | None, run: ModelRun | None) -> tuple[Rotary | None, str]:
    """Whether ``scene`` is a head of ``run`` (the model's last run, or None) whose q and k RoPE turned —
    the head itself or the user's copy of it, tokens unchanged — as (its :class:`Rotary`, "") or (None,
    why not, one sentence for a tooltip)."""
    if model is None or run is None:
        return None, ("RoPE turns the q and k of a model that uses it: run SmolLM2 in Real model "
                      "(Ctrl+Shift+M) to see a rotation pair")
    base = model_base(model)
    title = getattr(model, "title", "this model")
    if base is None:
        return None, f"{title} has no RoPE (its positions are added to the embeddings): run SmolLM2 to see one"
    if scene.mode != "direct" or scene.heads != 1:
        return None, "RoPE pairs are shown for a model's head in direct mode (its q and k as the model turned them)"
    label = getattr(model, "label", title)
    if scene.tokens != run.scene_tokens():
        return None, (f"this scene is not a head of the {label} run (its tokens differ): show one of the "
                      "run's heads to see its rotation pairs")
    if scene.d_k != run.head_dim or scene.d_k % 2:
        return None, (f"this scene's dₖ = {scene.d_k} is not the {label} head's {run.head_dim}: RoPE's pairs "
                      "are those of the head's own dimensions")
    positions = np.arange(scene.n, dtype=np.float64)
    positions.flags.writeable = False
    return Rotary(base, positions, scene.title), ""


@dataclass(frozen=True)
class PairView:
    """One rotary pair of the query (row ``query``, at position ``m``) and of a key (row ``key``, at ``n``).

    ``q_before``/``k_before`` are the pair's 2-D components before RoPE (turned back), ``q_after``/
    ``k_after`` as the model has them (dimensions ``pair`` and ``pair + d/2``); ``theta`` the pair's
    frequency (radians per position); ``q_angle = m·θ`` and ``k_angle = n·θ`` (not wrapped);
    ``relative = (m − n)·θ`` the angle RoPE adds between them; ``dot_after``/``dot_before`` the pair's
    share of q·k after and before the turn.
    """

    pair: int
    d: int
    theta: float
    query: int
    key: int
    m: float
    n: float
    q_before: np.ndarray
    q_after: np.ndarray
    k_before: np.ndarray
    k_after: np.ndarray
    q_angle: float
    k_angle: float

    @property
    def relative(self) -> float:
        return self.q_angle - self.k_angle

    @property
    def dims(self) -> tuple[int, int]:
        """The two dimensions of the pair (0-based: ``pair`` and ``pair + d/2``)."""
        return self.pair, self.pair + self.d // 2

    @property
    def dot_after(self) -> float:
        return float(self.q_after @ self.k_after)

    @property
    def dot_before(self) -> float:
        return float(self.q_before @ self.k_before)

    def heads(self) -> np.ndarray:
        """The four drawn heads (q before, q after, k before, k after) and the origin, 5 × 2."""
        return np.vstack([self.q_before, self.q_after, self.k_before, self.k_after, np.zeros(2)])


def pair_count(d: int) -> int:
    """How many rotary pairs a head of ``d`` dimensions has (d/2)."""
    return int(d) // 2


def pair_view(q: np.ndarray, k: np.ndarray, rotary: Rotary, query: int, key: int, pair: int) -> PairView:
    """Pair ``pair`` of the query row ``query`` of ``q`` and the key row ``key`` of ``k`` (both after RoPE,
    n × d), before and after the turn by their positions."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    n, d = q.shape
    if k.shape != (n, d) or rotary.n != n:
        raise ValueError(f"q {q.shape} and k {k.shape} must have one row per position ({rotary.n})")
    for what, i in (("query", query), ("key", key)):
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise ValueError(f"the {what} must be a row 0–{n - 1}, not {i!r}")
    m, p = float(rotary.positions[query]), float(rotary.positions[key])
    before, after, angles = rope.pair_before_after(np.stack([q[query], k[key]]), [m, p], pair, rotary.base)
    theta = float(rope.pair_frequencies(d, rotary.base)[pair])
    return PairView(pair=int(pair), d=d, theta=theta, query=int(query), key=int(key), m=m, n=p,
                    q_before=before[0], q_after=after[0], k_before=before[1], k_after=after[1],
                    q_angle=float(angles[0]), k_angle=float(angles[1]))


def arc_points(start: np.ndarray, angle: float, radius: float, steps: int = ARC_STEPS) -> np.ndarray:
    """An arc of ``radius`` around the origin from the direction of ``start`` turning by ``angle`` (counter-
    clockwise for a positive angle; past a whole turn only the last part, ``angle`` mod 2π, is drawn —
    the caption says how many whole turns), steps + 1 points; no points for a zero vector or turn."""
    start = np.asarray(start, dtype=np.float64)
    if not (radius > 0 and np.isfinite(radius) and np.hypot(*start) > 0 and np.isfinite(angle)):
        return np.zeros((0, 2))
    sweep = math.copysign(math.fmod(abs(angle), 2 * math.pi), angle)
    if abs(sweep) < 1e-9:
        return np.zeros((0, 2))
    t = math.atan2(start[1], start[0]) + np.linspace(0.0, sweep, steps + 1)
    return np.column_stack([radius * np.cos(t), radius * np.sin(t)])


def turns(angle: float) -> str:
    """An angle in radians, with its whole turns when it has any: "1.26 rad", "20 rad (3 turns + 1.15)"."""
    text = f"{angle:.3g} rad" if abs(angle) < 10 else f"{angle:.1f} rad"
    whole = int(abs(angle) // (2 * math.pi))
    if whole:
        rest = abs(angle) - whole * 2 * math.pi
        text += f" ({whole} turn{'s' if whole > 1 else ''} + {rest:.2f})"
    return text


def caption(v: PairView) -> str:
    """The sentence the plane's header reads out: "pair 3: θ = 0.316 rad/token; q at position 4 turned 1.26
    rad, k at 1 turned 0.316 rad; relative angle 0.949 rad"."""
    return (f"pair {v.pair}: θ = {v.theta:.3g} rad/token; q at position {v.m:g} turned {turns(v.q_angle)}, "
            f"k at {v.n:g} turned {turns(v.k_angle)}; relative angle {turns(v.relative)}")


def score_note(v: PairView) -> str:
    """The pair's share of the score after and before the turn: "this pair adds 0.53 to q·k (0.71 unturned)"."""
    return f"this pair adds {v.dot_after:.3g} to q·k ({v.dot_before:.3g} unturned)"
