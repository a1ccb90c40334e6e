"""Model work off the GUI thread: one job at a time, with progress and cancel.

:class:`ModelWorker` runs ``work(progress)`` on a thread of its own :class:`QThreadPool` and reports on
the GUI thread through its signals (queued: the window keeps turning while a model computes).  The core
knows nothing of Qt: it calls ``progress(fraction, what)`` now and then
(:data:`qkv_studio.core.models.run.Progress`); the worker's ``progress`` forwards it as a signal and,
after :meth:`ModelWorker.cancel`, raises :class:`~qkv_studio.core.models.run.Cancelled` to stop the work
at its next report.  A job that ends after Cancel was pressed is reported as cancelled, its result
dropped, so cancel always leaves what was shown before.  Errors become one-line messages
(``failed(text)``), never tracebacks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from qkv_studio.core.models import ModelInputError, ModelUnavailable
from qkv_studio.core.models.run import Cancelled, Progress


class _Job(QRunnable):
    def __init__(self, worker: ModelWorker, serial: int, work: Callable[[Progress], Any]) -> None:
        super().__init__()
        self._worker, self._serial, self._work = worker, serial, work

    def run(self) -> None:  # (on the pool's thread)
        self._worker._run(self._serial, self._work)


class ModelWorker(QObject):
    """Runs one model job at a time on a worker thread.

    Signals (all delivered on the GUI thread): ``progress(fraction, what)`` while it works;
    ``done(result)`` when it finished; ``failed(message)`` for a model error or a crash, in one line;
    ``cancelled()`` when it stopped (or ended) after :meth:`cancel`.  Exactly one of the last three ends
    each job, after which :attr:`busy` is False.
    """

    progress = Signal(float, str)
    done = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    _finished = Signal(int, str, object)  # (serial, outcome, payload), from the worker thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._serial = 0
        self._busy = False
        self._stop = threading.Event()
        self._finished.connect(self._on_finished)

    @property
    def busy(self) -> bool:
        """True from :meth:`start` until the job's last signal."""
        return self._busy

    def start(self, work: Callable[[Progress], Any]) -> bool:
        """Run ``work(progress)`` on the worker thread; False (nothing started) while a job is running."""
        if self._busy:
            return False
        self._busy = True
        self._serial += 1
        self._stop = threading.Event()
        self._pool.start(_Job(self, self._serial, work))
        return True

    def cancel(self) -> None:
        """Stop the running job at its next progress report (its result, if it ends anyway, is dropped)."""
        if self._busy:
            self._stop.set()

    def cancelled_requested(self) -> bool:
        """True after :meth:`cancel`, until the job ends."""
        return self._busy and self._stop.is_set()

    def wait(self, msecs: int = -1) -> bool:
        """Block until the worker thread is idle (tests, closing); the last signals still need the loop."""
        return self._pool.waitForDone(msecs)

    def _run(self, serial: int, work: Callable[[Progress], Any]) -> None:
        stop = self._stop

        def progress(fraction: float, what: str) -> None:
            if stop.is_set():
                raise Cancelled(what)
            try:
                self.progress.emit(float(fraction), str(what))
            except RuntimeError:  # (deleted meanwhile: stop)
                raise Cancelled(what) from None

        try:
            result = work(progress)
        except Cancelled:
            outcome, payload = "cancelled", None
        except (ModelInputError, ModelUnavailable) as exc:
            outcome, payload = "failed", str(exc)
        except MemoryError:
            outcome, payload = "failed", "not enough memory for this run: try a shorter text"
        except Exception as exc:  # noqa: BLE001 - a model's bug must not kill the window: say it in one line
            outcome, payload = "failed", f"the model failed: {type(exc).__name__}: {exc}".splitlines()[0]
        else:
            outcome, payload = ("cancelled" if stop.is_set() else "done"), result
        try:
            self._finished.emit(serial, outcome, payload)
        except RuntimeError:  # the panel (and this worker) was deleted meanwhile: nobody to tell
            pass

    def _on_finished(self, serial: int, outcome: str, payload: object) -> None:
        if serial != self._serial:
            return
        self._busy = False
        if outcome == "done":
            self.done.emit(payload)
        elif outcome == "failed":
            self.failed.emit(str(payload))
        else:
            self.cancelled.emit()
