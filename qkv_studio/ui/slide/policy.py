"""The slide's one layout rule: the stage's main view gets the slide; a side view stands beside or under
it only where both stay legible, else it is left out (P brings it in).

Everything the rule is given is a legible size measured with the fonts (:mod:`.measure`): the main
view's cells and labels at the caption's text size, the side view's whole content (every column and
row of the calculation table) in that text.  There are no pixel thresholds, shares or lists of screens:

1. no side view wanted — the main view takes the room;
2. the side view beside the main view when their widths add up within the room and each of their
   heights fits (a slide is wider than tall: beside is tried first);
3. else under it, when their heights add up within the room and each width fits;
4. else, if the lecturer asked for it (P), beside at the width it needs but never more than half the
   room (it scrolls inside);
5. else it is left out: :attr:`Placement.left_out` says so, and the slide shows the P hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Rect = tuple[int, int, int, int]  # x, y, width, height


@dataclass(frozen=True)
class Need:
    """A view's legible size (logical pixels) at the slide's text size."""

    width: int
    height: int


@dataclass(frozen=True)
class Placement:
    """Where the main view and the side view go in the room (``side`` None: not shown)."""

    main: Rect
    side: Rect | None = None
    where: Literal["beside", "under", "asked", "none"] = "none"
    left_out: bool = False  # the side view was wanted but would not be legible: the P hint shows


def place(width: int, height: int, main: Need, side: Need | None, *, wanted: bool, asked: bool,
          gap: int) -> Placement:
    """The placement in a room ``width`` × ``height`` (see the module's docstring).

    ``wanted``: the stage's slide shows the side view when it is legible; ``asked``: the lecturer
    pressed P for it (shown even where it must scroll)."""
    whole: Rect = (0, 0, max(0, width), max(0, height))
    if side is None or not (wanted or asked):
        return Placement(whole)
    if side.width + gap + main.width <= width and max(side.height, main.height) <= height:
        w = side.width
        return Placement((0, 0, width - w - gap, height), (width - w, 0, w, min(height, side.height)), "beside")
    if side.height + gap + main.height <= height and max(side.width, main.width) <= width:
        h = side.height
        return Placement((0, 0, width, height - h - gap), (0, height - h, min(width, side.width), h), "under")
    if asked:
        w = min(side.width, width // 2)
        return Placement((0, 0, width - w - gap, height), (width - w, 0, w, min(height, side.height)), "asked")
    return Placement(whole, left_out=True)
