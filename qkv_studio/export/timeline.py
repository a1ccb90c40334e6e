"""The frames of an animated stage sequence, before anything is drawn (no Qt).

An animation shows the chosen stages in order: each stage held still for ``hold`` seconds, and
between two stages that show different matrices the window's morph (colours and numbers mixed over
``morph`` seconds, eased as the window eases it; :mod:`qkv_studio.core.morph`).  Between two stages
that show the same matrix (vectors → scores, weights → blend) the window does not morph and neither
does the animation: the title changes at once.

Public API::

    MotionOptions(fps=30, hold=1.0, morph=0.5, loop=True, stages=STAGES, generated=0).validated()
    timeline(motion) -> list[Frame]          # one entry per distinct picture, with its length in frames
    generation_timeline(motion, stage, n) -> list[Frame]
    frame_durations_ms(frames, fps, tick_ms) -> list[int]

A causal model's generation (``generated`` > 0: the last ``generated`` tokens of the scene were generated
one at a time) animates differently: one stage, first for the prompt alone, then with each generated
token's row (and column) added, each step held (:func:`generation_timeline`).  A causal head's earlier
rows do not change when a token is appended (that is why a KV cache works), so step k is exactly the
first tokens of the final scene.

A held stage is one :class:`Frame` lasting ``round(hold · fps)`` video frames: a GIF or APNG stores it
once with that duration, an MP4 repeats it (a constant frame rate is what players expect).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from qkv_studio.core.morph import ease
from qkv_studio.core.stages import STAGES, shown_matrix, stage_spec

FPS_RANGE = (1, 60)
HOLD_RANGE = (0.1, 60.0)
MORPH_RANGE = (0.0, 10.0)


@dataclass(frozen=True)
class MotionOptions:
    """How an animated export moves: frames per second, seconds each stage is held, seconds of each
    morph, whether it loops (GIF/APNG; an MP4's player decides) and which stages, in order; or, with
    ``generated`` > 0, the generation of the scene's last ``generated`` tokens, a step each."""

    fps: int = 30
    hold: float = 1.0
    morph: float = 0.5
    loop: bool = True
    stages: tuple[str, ...] = STAGES
    generated: int = 0

    def validated(self) -> MotionOptions:
        """Self (stages as a tuple), or ValueError naming the bad option."""
        lo, hi = FPS_RANGE
        if isinstance(self.fps, bool) or not isinstance(self.fps, int) or not lo <= self.fps <= hi:
            raise ValueError(f"frames per second must be a whole number {lo}–{hi}, not {self.fps!r}")
        for name, value, (lo_, hi_) in (("hold", self.hold, HOLD_RANGE), ("morph", self.morph, MORPH_RANGE)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or not lo_ <= value <= hi_:
                raise ValueError(f"{name} must be {lo_:g}–{hi_:g} seconds, not {value!r}")
        if isinstance(self.generated, bool) or not isinstance(self.generated, int) or self.generated < 0:
            raise ValueError(f"the generated tokens are a whole number ≥ 0, not {self.generated!r}")
        stages = tuple(self.stages)
        if not stages:
            raise ValueError(f"give at least one stage (of {', '.join(STAGES)})")
        for stage in stages:
            stage_spec(stage)  # ValueError naming the stages
        if len(set(stages)) != len(stages):
            raise ValueError(f"each stage once: {', '.join(stages)}")
        return self if stages == self.stages else replace(self, stages=stages)


@dataclass(frozen=True)
class Frame:
    """One picture of the animation: ``stage``'s figure, or (``source`` set) a morph frame from
    ``source`` at mix ``t`` (eased); it lasts ``count`` video frames.  ``tokens`` (a generation's step)
    shows only the scene's first ``tokens`` tokens."""

    stage: str
    count: int = 1
    source: str | None = None
    t: float = 1.0
    tokens: int | None = None  # a generation step: the first ``tokens`` tokens of the scene (None: all)

    @property
    def still(self) -> bool:
        return self.source is None


def parse_stages(text: str) -> tuple[str, ...]:
    """``scores,weights`` → ("scores", "weights"); ValueError naming an unknown one."""
    names = tuple(part.strip() for part in text.split(","))
    if not text.strip() or any(not n for n in names):
        raise ValueError(f"list stages separated by commas, e.g. {','.join(STAGES[1:4])}")
    for n in names:
        stage_spec(n)
    return names


def timeline(motion: MotionOptions) -> list[Frame]:
    """The pictures of the animation in order (see the module's docstring)."""
    motion = motion.validated()
    hold = max(1, round(motion.hold * motion.fps))
    steps = round(motion.morph * motion.fps)
    frames: list[Frame] = []
    previous = None
    for stage in motion.stages:
        if previous is not None and steps > 0 and shown_matrix(previous) != shown_matrix(stage):
            # the step's first frame shows the old colours under the new title (t = 0), as the window does
            frames += [Frame(stage, 1, previous, ease(k / steps)) for k in range(steps)]
        frames.append(Frame(stage, hold))
        previous = stage
    return frames


def generation_timeline(motion: MotionOptions, stage: str, n: int) -> list[Frame]:
    """The pictures of a generation: ``stage`` of the prompt (the first ``n - generated`` tokens), then one
    more token at each step, each held ``hold`` seconds; ValueError when nothing is left as the prompt."""
    motion = motion.validated()
    stage_spec(stage)
    if not 1 <= motion.generated < n:
        raise ValueError(f"a generation of {motion.generated} token(s) needs a prompt before them: the scene "
                         f"has {n} token(s)")
    hold = max(1, round(motion.hold * motion.fps))
    return [Frame(stage, hold, tokens=m) for m in range(n - motion.generated, n + 1)]


def frame_durations_ms(frames: list[Frame], fps: int, tick_ms: int = 1) -> list[int]:
    """Each picture's duration in ms, in whole ``tick_ms`` (a GIF counts in 10 ms), rounded on the running
    total so the whole animation keeps its length (30 fps in a GIF: 30, 30, 40 ms …)."""
    out, start = [], 0
    elapsed = 0
    for f in frames:
        elapsed += f.count
        end = round(elapsed * 1000 / fps / tick_ms) * tick_ms
        out.append(max(tick_ms, end - start))
        start = end
    return out
