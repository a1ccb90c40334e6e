"""The Real model panel's run controls: Run, Next token, the worker's progress and Cancel, sampling.

:class:`PanelJobs` is composed into :class:`~.panel.ModelPanel`.  It is given the
:class:`~.run_state.ModelRunState` it runs (``state``), the widgets it drives (:class:`RunControls`), the
:class:`~.worker.ModelWorker`, the panel's :class:`~.panel_texts.PanelTexts` (the status line) and the
few things it asks of the panel, as callables (whether it is short; show the model or the next token's
choices again; a job ended).  A run or a step is computed on the worker thread
(``start_run``, ``start_next_token``) or at once (``run_text``, ``next_token``), and its end is shown
through the state (``finished(ok)`` says whether it was).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QWidget,
)
from superqt.utils import signals_blocked

from qkv_studio.core.models import ModelInputError, ModelUnavailable
from qkv_studio.core.models.run import Progress
from qkv_studio.ui.lesson.model.next_token import NextTokenBars
from qkv_studio.ui.lesson.model.panel_texts import PanelTexts
from qkv_studio.ui.lesson.model.run_state import ModelRunState, Prepared, PreparedToken
from qkv_studio.ui.lesson.model.worker import ModelWorker


@dataclass(frozen=True)
class RunControls:
    """The panel's widgets that start, follow and tune a run (the panel makes and lays them out)."""

    model_box: QComboBox
    sentence: QLineEdit
    run_button: QPushButton
    next_button: QPushButton
    next_bars: NextTokenBars
    busy_row: QWidget  # the progress bar and Cancel, shown while a job runs
    progress_bar: QProgressBar
    cancel_button: QPushButton
    sampling_row: QWidget  # temperature and top-k
    temperature_box: QDoubleSpinBox
    top_k_box: QSpinBox


class PanelJobs:
    """Running the model from the panel: on the worker thread with progress and Cancel, or at once."""

    def __init__(self, state: ModelRunState, controls: RunControls, worker: ModelWorker, texts: PanelTexts, *,
                 cursor_over: QWidget, compact: Callable[[], bool], show_model: Callable[[], None],
                 show_next_tokens: Callable[[], None], finished: Callable[[bool], None]) -> None:
        self._state = state
        self._c = controls
        self._worker = worker
        self._texts = texts
        self._cursor_over = cursor_over  # the panel: the busy cursor over it only, while a job runs
        self._compact = compact  # True in a short panel (the projector): no sampling row
        self._show_model = show_model  # everything that depends on the model, again (it failed to load)
        self._show_next_tokens = show_next_tokens  # the next token's choices, again (the sampling changed)
        self._finished = finished  # a job on the worker thread ended: True when its result is shown
        controls.temperature_box.valueChanged.connect(lambda _: self._sampling_edited())
        controls.top_k_box.valueChanged.connect(lambda _: self._sampling_edited())
        worker.progress.connect(self._on_progress)
        worker.done.connect(self._on_job_done)
        worker.failed.connect(self._on_job_failed)
        worker.cancelled.connect(self._on_job_cancelled)

    @property
    def busy(self) -> bool:
        """True while the worker thread computes a run or a token."""
        return self._worker.busy

    def run_text(self, text: str | None = None) -> bool:
        """Run the model on ``text`` (default: the sentence box) and show the chosen head, at once (the
        GUI waits: scripts and the command line; Run and Enter use :meth:`start_run`)."""
        sentence = self._c.sentence
        if not self._state.available() or self.busy:
            return False
        if text is not None and text != sentence.text():
            sentence.setText(text)
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            if self._state.run is None:
                self._texts.set_status("Loading the model…")
                self._texts.repaint_status()
            if self._state.run_text(sentence.text()):
                return True
        except ModelInputError as exc:
            self._texts.set_status(str(exc), error=True)
            return False
        except ModelUnavailable:
            self._show_model()
            self._texts.set_status(self._state.failure(), error=True)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self._texts.update_status()  # cancelled
        return False

    def start_run(self, text: str | None = None) -> bool:
        """Run the model on ``text`` (default: the sentence box) on the worker thread: True when it started
        (``job_finished`` and, once shown, ``run_changed`` follow).  Asks first if the user's edits would
        be replaced."""
        sentence = self._c.sentence
        if not self._state.available() or self.busy:
            return False
        if text is not None and text != sentence.text():
            sentence.setText(text)
        text = sentence.text()
        if not text.strip():
            self._texts.set_status("Type a sentence first: the text is empty.", error=True)
            return False
        state = self._state
        model = state.model
        if not state.may_replace(f"{model.label} on “{' '.join(text.split())[:60]}”"):
            self._texts.update_status()
            return False
        return self._start(lambda progress: state.prepare_run(text, progress),
                           "Loading the model…" if state.run is None else f"Running {model.label}…")

    def start_next_token(self) -> bool:
        """Compute the next token on the worker thread (a generating model, after a run): True when it
        started."""
        state = self._state
        if not state.available() or not state.can_generate or state.run is None or self.busy:
            return False
        if not state.may_replace(f"{state.model.label} with one more token"):
            self._texts.update_status()
            return False
        return self._start(state.prepare_next, "Computing the next token…")

    def can_step_token(self) -> bool:
        """True when Next token would append a token now (a generating model's head is shown, not busy) —
        the lecture's PageDown at the last stage uses it."""
        state = self._state
        return (state.available() and state.can_generate and state.run is not None and not self.busy
                and state.showing_model_head())

    def cancel(self) -> None:
        """Stop the run or step in progress; the scene shown before stays."""
        if self.busy:
            self._worker.cancel()
            self._c.progress_bar.setFormat("Cancelling…")

    def set_sampling(self, temperature: float, top_k: int) -> bool:
        """How Next token chooses: temperature 0 = greedy; top-k 0 = all tokens.  False (and the reason in
        the status line) for bad values."""
        state = self._state
        try:
            state.set_sampling(temperature, top_k)
        except ModelInputError as exc:
            self._texts.set_status(str(exc), error=True)
            return False
        with signals_blocked(self._c.temperature_box):
            if self._c.temperature_box.value() != state.temperature:
                self._c.temperature_box.setValue(state.temperature)
        with signals_blocked(self._c.top_k_box):
            if self._c.top_k_box.value() != state.top_k:
                self._c.top_k_box.setValue(state.top_k)
        self.show_sampling()
        self._show_next_tokens()
        return True

    def next_token(self) -> bool:
        """Append the next token (a generating model, after a run) and show the longer run, at once."""
        state = self._state
        if not state.available() or not state.can_generate or state.run is None or self.busy:
            return False
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            if state.next_token():
                return True
        except (ModelInputError, ModelUnavailable) as exc:
            self._texts.set_status(str(exc), error=True)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self._texts.update_status()  # cancelled
        return False

    def show_sampling(self) -> None:
        """Temperature and top-k for a generating model; a short panel (the projector) gives their row to the
        views, and Next token's tooltip says the settings."""
        state = self._state
        self._c.sampling_row.setVisible(state.can_generate and not self._compact())
        t, k = state.temperature, state.top_k
        how = "the most likely token (greedy)" if t == 0 else (
            f"a token drawn at temperature {t:g} from {'all tokens' if k == 0 else f'the top {k}'} (seeded)")
        self._c.next_button.setToolTip(f"Append {how}: only its row is computed, the earlier keys and values "
                                       "come from the KV cache (Ctrl+Enter; PageDown at the last stage of a "
                                       "presentation)")

    def stop_for_quit(self) -> None:
        """Stop a run still going when the application quits (it ends at its next block)."""
        try:
            self._worker.cancel()
            self._worker.wait(10_000)
        except RuntimeError:  # (the panel was deleted before the application quit)
            pass

    # ---- internals -------------------------------------------------------------------------------
    def _sampling_edited(self) -> None:
        self.set_sampling(round(self._c.temperature_box.value(), 3), self._c.top_k_box.value())

    def _start(self, work: Callable[[Progress], Prepared | PreparedToken], message: str) -> bool:
        if not self._worker.start(work):
            return False
        self._c.progress_bar.setValue(0)
        self._c.progress_bar.setFormat(message)
        self._show_busy(True)
        self._texts.set_status(f"{message} The window stays usable; Cancel stops it.")
        return True

    def _show_busy(self, busy: bool) -> None:
        c = self._c
        c.busy_row.setVisible(busy)
        c.cancel_button.setEnabled(busy)
        available = self._state.available()
        c.run_button.setEnabled(not busy and available)
        c.sentence.setEnabled(not busy and available)
        c.model_box.setEnabled(not busy)
        c.next_button.setEnabled(not busy and bool(c.next_bars.choices()))
        if busy:  # (over this panel only: the rest of the window stays usable)
            self._cursor_over.setCursor(Qt.CursorShape.BusyCursor)
        else:
            self._cursor_over.unsetCursor()

    def _on_progress(self, fraction: float, what: str) -> None:
        if not self.busy or self._worker.cancelled_requested():
            return
        value = int(round(1000 * min(max(fraction, 0.0), 1.0)))
        self._c.progress_bar.setValue(value)
        self._c.progress_bar.setFormat(self._progress_format(what, value // 10))

    def _progress_format(self, what: str, percent: int) -> str:
        """The longest of "Running: block 3 of 30 — 10%", "block 3 of 30 — 10%", "10%" that fits the bar
        on one line (a projector's large type would wrap it)."""
        bar = self._c.progress_bar
        fm = QFontMetricsF(bar.font())
        room = bar.width() - fm.averageCharWidth() * 2
        tail = what.rsplit(": ", 1)[-1]
        for text in (f"{what[:1].upper()}{what[1:]} — %p%", f"{tail} — %p%"):
            if fm.horizontalAdvance(text.replace("%p", str(percent))) <= room:
                return text
        return "%p%"

    def _on_job_done(self, result: object) -> None:
        self._show_busy(False)
        try:
            # (the worker hands back what the job's work returned: a run for Run, a token for Next token)
            if isinstance(result, Prepared):
                ok = self._state.finish_run(result, ask=False)
            elif isinstance(result, PreparedToken):
                ok = self._state.finish_next(result, ask=False)
            else:
                raise TypeError(f"a model job returned {type(result).__name__}")
        except (ModelInputError, ModelUnavailable) as exc:
            self._texts.set_status(str(exc), error=True)
            ok = False
        else:
            if not ok:
                self._texts.set_status("The model changed while it computed; nothing was replaced.", error=True)
        self._finished(ok)

    def _on_job_failed(self, message: str) -> None:
        self._show_busy(False)
        if self._state.failure():
            self._show_model()
            self._texts.set_status(self._state.failure(), error=True)
        else:
            self._texts.set_status(message, error=True)
        self._finished(False)

    def _on_job_cancelled(self) -> None:
        self._show_busy(False)
        self._texts.set_status("Cancelled: the scene shown before stays.")
        self._finished(False)
