"""How far a long job is, and stopping it: one mechanism for the window, the command line and the API.

Code that can take more than about a second (painting a slide's ink, the pages of a deck, …) calls
:func:`report` now and then with how far it is (0–1) and what it does; it knows nothing of who listens.
Whoever starts the job decides, with :func:`reporting`, what a report does: the window's progress dialog
(``qkv_studio/ui/widgets/job_progress.py``) shows it and raises :class:`Cancelled` from the report once
Cancel is pressed; the command line (:func:`terminal`) prints it on a terminal.  Without a listener a
report costs one context-variable lookup.

A job made of parts maps each part's own 0–1 into its share with :func:`part`, so a slide's ink painter
reports 0–1 whichever page of a deck it paints.  To extend: call :func:`report` in the new long loop
(every few milliseconds of work is often enough), inside a :func:`part` of its caller if it is one step
of a bigger job.

Pure Python (no Qt), so the core, the exporters and the CLI share it.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from typing import TextIO

__all__ = ["Cancelled", "Listener", "part", "report", "reporting", "terminal"]

Listener = Callable[[float, str], None]


class Cancelled(Exception):
    """The user stopped the job (raised from :func:`report`); nothing it was making is written."""


_listener: contextvars.ContextVar[Listener | None] = contextvars.ContextVar("qkv_progress_listener", default=None)
_span: contextvars.ContextVar[tuple[float, float, str]] = contextvars.ContextVar("qkv_progress_span",
                                                                                 default=(0.0, 1.0, ""))


@contextlib.contextmanager
def reporting(listener: Listener | None) -> Iterator[None]:
    """Within the block, reports go to ``listener(fraction, what)`` (None: nobody listens)."""
    token = _listener.set(listener)
    span = _span.set((0.0, 1.0, ""))
    try:
        yield
    finally:
        _span.reset(span)
        _listener.reset(token)


@contextlib.contextmanager
def part(start: float, end: float, what: str = "") -> Iterator[None]:
    """Within the block, a report's 0–1 is mapped into ``start``–``end`` of the enclosing job, and its text
    follows ``what`` ("slide 2 of 6: ink 120 of 500")."""
    lo, hi, prefix = _span.get()
    span = (lo + (hi - lo) * start, lo + (hi - lo) * end, f"{prefix}{what}: " if what else prefix)
    token = _span.set(span)
    try:
        yield
    finally:
        _span.reset(token)


def report(fraction: float, what: str) -> None:
    """Tell the listener (if any) how far the job is; raises :class:`Cancelled` if the user stopped it."""
    listener = _listener.get()
    if listener is None:
        return
    lo, hi, prefix = _span.get()
    listener(lo + (hi - lo) * min(max(float(fraction), 0.0), 1.0), prefix + what)


@contextlib.contextmanager
def terminal(stream: TextIO, *, after_s: float = 1.0, every_s: float = 0.25) -> Iterator[None]:
    """Within the block, reports are printed as "  42.0 %  what" on one line of ``stream`` when it is a
    terminal, once the job has run for ``after_s`` seconds and then at most every ``every_s`` seconds; the
    line is cleared when the block ends (whatever ends it)."""
    isatty = getattr(stream, "isatty", None)
    if not (callable(isatty) and isatty()):
        yield
        return
    start = time.monotonic()
    state = {"last": 0.0, "shown": False}

    def listen(fraction: float, what: str) -> None:
        now = time.monotonic()
        if now - start < after_s or now - state["last"] < every_s:
            return
        state["last"], state["shown"] = now, True
        stream.write(f"\r\x1b[K{fraction * 100:5.1f} %  {what[:100]}")
        stream.flush()

    try:
        with reporting(listen):
            yield
    finally:
        if state["shown"]:
            stream.write("\r\x1b[K")
            stream.flush()
