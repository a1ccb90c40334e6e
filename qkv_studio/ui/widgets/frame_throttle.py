"""Next-frame updates for the panels that follow an edit rather than show it.

An edit, a drag step or a stage step must be on screen within one 60 Hz frame.  What shows the edit —
the heatmap, the calculation table, the editors, the plane under the hand while it is dragged — repaints
at once; the panels that *follow* from it (the blend view, the plane when something else changed, the
captions with the query's numbers) are redrawn one frame later and then at most once a frame, however
fast the edits come.  Painting everything in the same turn took ~20 ms on a small VM, so a drag ran at
~40 Hz everywhere; this way the hand's own feedback keeps up and the rest follows at 60 Hz.

:class:`FrameThrottle` is that delay: ``request()`` schedules the callback for the next frame (requests
before then merge into one call).  :func:`flush_pending` runs every pending call at once — for code that
must see a finished window *now*: screenshots, exports of the window, tests (through
:func:`qkv_studio.ui.update_policy.settle`, which lists every deferral of the app).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from shiboken6 import isValid

FRAME_MS = 16  # one 60 Hz frame

_waiting: weakref.WeakSet[FrameThrottle] = weakref.WeakSet()


class FrameThrottle(QObject):
    """Runs ``callback`` one frame after a ``request()``, then at most once a frame (requests in
    between merge into one call), and knows whether a call is still waiting.

    (superqt's ``QSignalThrottler`` does the same, but importing superqt imports all its widgets and
    qtpy: 0.18 s of start-up for a timer.)
    """

    def __init__(self, callback: Callable[[], None], parent: QObject | None = None,
                 interval_ms: int = FRAME_MS) -> None:
        super().__init__(parent)
        self._callback = callback
        self._waiting = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)  # (a coarse timer may wait 5 % longer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)

    @property
    def pending(self) -> bool:
        """Whether a call is waiting for the next frame."""
        return self._waiting

    def request(self) -> None:
        """Ask for a call at the next frame (a call already waiting covers this one)."""
        if not self._waiting:
            self._waiting = True
            _waiting.add(self)
        if not self._timer.isActive():
            self._timer.start()

    def cancel(self) -> None:
        """Drop a waiting call (the caller has just done the work itself)."""
        if self._waiting:
            self._waiting = False
            _waiting.discard(self)

    def flush(self) -> None:
        """Run a waiting call now; the next request waits a whole frame again."""
        self._timer.stop()
        if self._waiting:
            self._run()

    def _on_timeout(self) -> None:
        if self._waiting:
            self._run()
            self._timer.start()  # the frame after this call: at most one call a frame

    def _run(self) -> None:
        self._waiting = False
        _waiting.discard(self)
        self._callback()


def any_pending() -> bool:
    """Whether a next-frame update is waiting anywhere."""
    return any(t.pending for t in list(_waiting) if isValid(t))


def flush_pending() -> None:
    """Run every waiting next-frame update now (screenshots, window exports and tests need them drawn)."""
    for _ in range(4):  # (an update may ask for another)
        waiting = [t for t in list(_waiting) if t.pending]
        if not waiting:
            return
        for throttle in waiting:
            if isValid(throttle):
                throttle.flush()
            else:  # (its panel was deleted while the call waited)
                _waiting.discard(throttle)
