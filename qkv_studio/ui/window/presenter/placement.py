"""Which screen shows the audience's slide and which the presenter console.

The audience (projector) screen is the one the lecturer chose in View → Presentation screen when it is
attached, else the first screen that is not the primary one (a laptop's own panel is its primary
screen); the console goes on the primary screen (or, if the chosen one is the primary, on another).
One screen: no console, the slide takes it (F5 as always).  Swapping exchanges the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class ScreenLike(Protocol):
    def name(self) -> str: ...


@dataclass(frozen=True)
class Placement:
    """The audience's screen and the console's (None: one screen, no console)."""

    audience: object
    console: object | None


def place(screens: Sequence[ScreenLike], primary: ScreenLike | None, chosen: str = "",
          swapped: bool = False) -> Placement | None:
    """The placement for ``screens`` (None when there are none); ``chosen`` is a screen's name
    ("" for none) and ``swapped`` exchanges audience and console."""
    screens = list(screens)
    if not screens:
        return None
    if primary not in screens:
        primary = screens[0]
    if len(screens) == 1:
        return Placement(primary, None)
    audience = next((s for s in screens if chosen and s.name() == chosen), None)
    if audience is None:
        audience = next(s for s in screens if s is not primary)
    console = primary if audience is not primary else next(s for s in screens if s is not audience)
    if swapped:
        audience, console = console, audience
    return Placement(audience, console)
