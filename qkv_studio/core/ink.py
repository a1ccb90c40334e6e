"""A lecture's annotations, Qt-free: ink drawn on the slide (per stage) and the presenter's notes.

Ink is a list of :class:`Stroke` per stage; a point is ``(x, y, pressure)`` with x and y as fractions
of the slide (0–1, so a stroke drawn on the laptop's copy of the slide lands on the same cell of the
projector's) and pressure 0–1 (1 without a tablet).  :class:`Ink` is immutable: every change makes a
new one, so an undo step is the Ink before and after.

Notes are text for the presenter console: one text for every stage of a scene, or one per stage
(:class:`Notes`); a stage without a note shows its caption.

In a session file (both fields optional; a file without them reads as before)::

    "notes": "Ask who has seen a softmax before."            # every stage
    "notes": {"scores": "Dot products…", "weights": "Rows sum to 1"}   # per stage
    "ink": {"weights": [{"colour": 1, "width": 0.004, "points": [[0.1, 0.2, 1], [0.3, 0.25, 0.8]]}]}

A deck entry may carry notes too (``{"scene": "preset:lesson", "notes": …}``, :mod:`qkv_studio.core.deck`);
they take the place of the scene file's.  :func:`notes_from_json` and :func:`ink_from_json` check a
parsed value and raise ``ValueError`` with a one-line problem.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from qkv_studio.core.stages import STAGES

#: Ink colours 1–4 (the keys 1–4 pick one while drawing); the names the console shows.
INK_COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue")
DEFAULT_WIDTH = 0.004  # (a fraction of the slide's width: ~8 px on a 1920-px projector)
MAX_POINTS = 5000  # per stroke (a long scribble at 60 Hz is ~1000)
MAX_STROKES = 500  # per stage
MAX_NOTE = 20000  # characters


@dataclass(frozen=True)
class Stroke:
    """One pen stroke: ``points`` as (x, y, pressure) fractions of the slide, colour 1–4, ``width`` a
    fraction of the slide's width."""

    points: tuple[tuple[float, float, float], ...]
    colour: int = 1
    width: float = DEFAULT_WIDTH

    def near(self, x: float, y: float, radius: float) -> bool:
        """True if the stroke passes within ``radius`` (a fraction of the slide) of (x, y): the eraser."""
        r2 = radius * radius
        pts = self.points
        if len(pts) == 1:
            return (pts[0][0] - x) ** 2 + (pts[0][1] - y) ** 2 <= r2
        for (ax, ay, _), (bx, by, _) in zip(pts, pts[1:], strict=False):
            dx, dy = bx - ax, by - ay
            length2 = dx * dx + dy * dy
            t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / length2))
            px, py = ax + t * dx - x, ay + t * dy - y
            if px * px + py * py <= r2:
                return True
        return False


@dataclass(frozen=True)
class Ink:
    """The strokes of one scene, per stage (immutable: changes return a new Ink)."""

    stages: Mapping[str, tuple[Stroke, ...]] = field(default_factory=dict)

    def strokes(self, stage: str) -> tuple[Stroke, ...]:
        return tuple(self.stages.get(stage, ()))

    def __bool__(self) -> bool:
        return any(self.stages.values())

    def _with(self, stage: str, strokes: tuple[Stroke, ...]) -> Ink:
        stages = dict(self.stages)
        if strokes:
            stages[stage] = strokes
        else:
            stages.pop(stage, None)
        return replace(self, stages=stages)

    def with_stroke(self, stage: str, stroke: Stroke) -> Ink:
        if len(self.strokes(stage)) >= MAX_STROKES:
            return self
        return self._with(stage, self.strokes(stage) + (stroke,))

    def erased_at(self, stage: str, x: float, y: float, radius: float = 0.015) -> Ink:
        """The strokes of ``stage`` that pass near (x, y) removed (this Ink itself if none does)."""
        kept = tuple(s for s in self.strokes(stage) if not s.near(x, y, radius))
        return self if len(kept) == len(self.strokes(stage)) else self._with(stage, kept)

    def cleared(self, stage: str) -> Ink:
        return self._with(stage, ())


EMPTY_INK = Ink()


@dataclass(frozen=True)
class Notes:
    """The presenter's notes of a scene: ``text`` for every stage, ``stages`` per stage (which wins)."""

    text: str = ""
    stages: Mapping[str, str] = field(default_factory=dict)

    def for_stage(self, stage: str) -> str:
        """The note for ``stage`` ("" when there is none: the console shows the caption)."""
        return self.stages.get(stage) or self.text

    def __bool__(self) -> bool:
        return bool(self.text) or any(self.stages.values())


NO_NOTES = Notes()


# ---- JSON -------------------------------------------------------------------------------------------------
def _stage_key(key: Any, what: str) -> str:
    if key not in STAGES:
        raise ValueError(f"'{what}' has an unknown stage {str(key)[:30]!r}: use {', '.join(STAGES)}")
    return str(key)


def notes_from_json(value: Any) -> Notes:
    """A ``notes`` value (text, or an object of stage → text) as Notes; ValueError names the problem."""
    if value is None:
        return NO_NOTES
    if isinstance(value, str):
        if len(value) > MAX_NOTE:
            raise ValueError(f"'notes' is longer than {MAX_NOTE} characters")
        return Notes(text=value)
    if not isinstance(value, dict):
        raise ValueError("'notes' must be text, or an object of stage names and text")
    stages = {}
    for key, text in value.items():
        stage = _stage_key(key, "notes")
        if not isinstance(text, str):
            raise ValueError(f"the note of stage {stage!r} must be text")
        if len(text) > MAX_NOTE:
            raise ValueError(f"the note of stage {stage!r} is longer than {MAX_NOTE} characters")
        stages[stage] = text
    return Notes(stages=stages)


def notes_to_json(notes: Notes) -> Any:
    """Notes as written in a file (None: nothing to write)."""
    if not notes:
        return None
    if not notes.stages:
        return notes.text
    out = {stage: notes.stages[stage] for stage in STAGES if notes.stages.get(stage)}
    if notes.text:  # (a text for every stage beside per-stage ones: each stage without its own gets it)
        out.update({stage: notes.text for stage in STAGES if stage not in out})
    return out


def _fraction(v: Any, where: str, lo: float = 0.0, hi: float = 1.0) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise ValueError(f"{where} must be a finite number")
    f = float(v)
    if not lo <= f <= hi:
        raise ValueError(f"{where} must be between {lo:g} and {hi:g}, found {f:g}")
    return f


def _stroke_from_json(obj: Any, where: str) -> Stroke:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be an object with 'points'")
    unknown = set(obj) - {"points", "colour", "width"}
    if unknown:
        raise ValueError(f"{where} has an unknown field {sorted(unknown)[0][:30]!r}")
    colour = obj.get("colour", 1)
    if isinstance(colour, bool) or not isinstance(colour, int) or not 1 <= colour <= len(INK_COLOURS):
        raise ValueError(f"{where}: 'colour' must be 1–{len(INK_COLOURS)}")
    width = _fraction(obj.get("width", DEFAULT_WIDTH), f"{where}: 'width'", 0.0005, 0.05)
    points = obj.get("points")
    if not isinstance(points, list) or not points:
        raise ValueError(f"{where}: 'points' must be a non-empty list of [x, y] or [x, y, pressure]")
    if len(points) > MAX_POINTS:
        raise ValueError(f"{where} has more than {MAX_POINTS} points")
    fast = _points_at_once(points)
    if fast is not None:
        return Stroke(fast, colour, width)
    out = []  # (point by point: the slow way, which names the first point at fault)
    for i, p in enumerate(points):
        if not isinstance(p, list) or len(p) not in (2, 3):
            raise ValueError(f"{where}, point {i + 1} must be [x, y] or [x, y, pressure]")
        here = f"{where}, point {i + 1}"
        out.append((_fraction(p[0], here), _fraction(p[1], here), _fraction(p[2] if len(p) == 3 else 1.0, here)))
    return Stroke(tuple(out), colour, width)


def _points_at_once(points: list[Any]) -> tuple[tuple[float, float, float], ...] | None:
    """The points of a stroke checked all at once with NumPy (5 000 points in about a millisecond, not 40),
    or None when any is not a list of 2 or 3 finite fractions — then the caller checks them one by one
    and names the first at fault."""
    if not all(type(p) is list for p in points):
        return None
    try:
        arr = np.array(points)
    except (ValueError, TypeError):
        return None  # (ragged: some [x, y], some [x, y, p], or worse)
    if arr.ndim != 2 or arr.shape[1] not in (2, 3) or arr.dtype.kind not in "if":
        return None  # (strings, bools alone, nested lists …)
    if any(v is True or v is False for p in points for v in p):
        return None  # (true/false mixed with numbers became 1.0/0.0: refused as the slow path refuses it)
    arr = arr.astype(np.float64)
    if not (np.isfinite(arr).all() and (arr >= 0).all() and (arr <= 1).all()):
        return None
    if arr.shape[1] == 2:
        arr = np.concatenate([arr, np.ones((len(arr), 1))], axis=1)
    return tuple(map(tuple, arr.tolist()))


def ink_from_json(value: Any) -> Ink:
    """An ``ink`` value (an object of stage → list of strokes) as Ink; ValueError names the problem."""
    if value is None:
        return EMPTY_INK
    if not isinstance(value, dict):
        raise ValueError("'ink' must be an object of stage names and lists of strokes")
    stages = {}
    for key, strokes in value.items():
        stage = _stage_key(key, "ink")
        if not isinstance(strokes, list):
            raise ValueError(f"the ink of stage {stage!r} must be a list of strokes")
        if len(strokes) > MAX_STROKES:
            raise ValueError(f"the ink of stage {stage!r} has more than {MAX_STROKES} strokes")
        made = tuple(_stroke_from_json(s, f"ink stroke {i + 1} of stage {stage!r}") for i, s in enumerate(strokes))
        if made:
            stages[stage] = made
    return Ink(stages)


def _short(f: float) -> float | int:
    r = round(f, 4)
    return int(r) if r.is_integer() else r


def ink_to_json(ink: Ink) -> Any:
    """Ink as written in a file (None: nothing to write); 4 decimals are ~0.2 px on a 4K projector."""
    if not ink:
        return None
    out = {}
    for stage in STAGES:
        strokes = ink.strokes(stage)
        if strokes:
            out[stage] = [{"colour": s.colour, "width": _short(s.width),
                           "points": [[_short(x), _short(y), _short(p)] for x, y, p in s.points]}
                          for s in strokes]
    return out


def stroke(points: Iterable[tuple[float, float, float]], colour: int = 1, width: float = DEFAULT_WIDTH) -> Stroke:
    """A Stroke from points, each clamped into the slide (0–1) and pressure 0–1."""
    def clamp(v: float) -> float:
        return min(1.0, max(0.0, float(v)))

    return Stroke(tuple((clamp(x), clamp(y), clamp(p)) for x, y, p in points)[:MAX_POINTS], int(colour), float(width))
