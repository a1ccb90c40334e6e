"""The lecture's elapsed time: a stopwatch that can be paused and reset, on an injectable clock (Qt-free).

    watch = Stopwatch(clock=time.monotonic)   # tests pass a fake clock and never sleep
    watch.start(); …; watch.pause(); watch.elapsed(); watch.reset()
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Stopwatch:
    """Elapsed seconds while running; ``pause``/``resume`` keep the count, ``reset`` sets it to 0."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._banked = 0.0  # seconds counted before the current run
        self._since: float | None = None  # the clock when the current run began (None: paused)

    @property
    def running(self) -> bool:
        return self._since is not None

    def start(self) -> None:
        """Run (from where it stands); already running: nothing changes."""
        if self._since is None:
            self._since = self._clock()

    def pause(self) -> None:
        if self._since is not None:
            self._banked += max(0.0, self._clock() - self._since)
            self._since = None

    def toggle(self) -> bool:
        """Pause if running, else run; returns True when now running."""
        if self.running:
            self.pause()
        else:
            self.start()
        return self.running

    def reset(self) -> None:
        """Back to 0:00 (a running stopwatch goes on running from 0)."""
        self._banked = 0.0
        if self._since is not None:
            self._since = self._clock()

    def elapsed(self) -> float:
        run = 0.0 if self._since is None else max(0.0, self._clock() - self._since)
        return self._banked + run


def clock_text(seconds: float) -> str:
    """Elapsed time as the console shows it: ``4:07``, ``1:02:09``."""
    s = int(max(0.0, seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
