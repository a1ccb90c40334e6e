"""The Real model panel's run controls: Run, Next token, the worker's progress and Cancel, sampling.

:class:`PanelJobs` is mixed into :class:`~.panel.ModelPanel` and works on its widgets (``sentence``,
``run_button``, ``next_button``, ``progress_bar``, ``cancel_button``, ``temperature_box``, ``top_k_box``,
``worker``) and its :class:`~.run_state.ModelRunState` (``state``): a run or a step is computed on the
worker thread (``start_run``, ``start_next_token``) or at once (``run_text``, ``next_token``), and its
end is shown through the state (``job_finished`` says whether it was).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication
from superqt.utils import signals_blocked

from qkv_studio.core.models import ModelInputError, ModelUnavailable


class PanelJobs:
    """Running the model from the panel: on the worker thread with progress and Cancel, or at once."""

    @property
    def busy(self) -> bool:
        """True while the worker thread computes a run or a token."""
        return self.worker.busy

    def run_text(self, text: str | None = None) -> bool:
        """Run the model on ``text`` (default: the sentence box) and show the chosen head, at once (the
        GUI waits: scripts and the command line; Run and Enter use :meth:`start_run`)."""
        if not self.available or self.busy:
            return False
        if text is not None and text != self.sentence.text():
            self.sentence.setText(text)
            self.sentence.setCursorPosition(0)  # (read from its start)
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            if self.state.run is None:
                self._set_status("Loading the model…")
                self.status.repaint()
            if self.state.run_text(self.sentence.text()):
                return True
        except ModelInputError as exc:
            self._set_status(str(exc), error=True)
            return False
        except ModelUnavailable:
            self._show_model()
            self._set_status(self.state.failure(), error=True)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self._update_status()  # cancelled
        return False

    def start_run(self, text: str | None = None) -> bool:
        """Run the model on ``text`` (default: the sentence box) on the worker thread: True when it started
        (``job_finished`` and, once shown, ``run_changed`` follow).  Asks first if the user's edits would
        be replaced."""
        if not self.available or self.busy:
            return False
        if text is not None and text != self.sentence.text():
            self.sentence.setText(text)
        text = self.sentence.text()
        if not text.strip():
            self._set_status("Type a sentence first: the text is empty.", error=True)
            return False
        model = self.state.model
        if not self.state.may_replace(f"{model.label} on “{' '.join(text.split())[:60]}”"):
            self._update_status()
            return False
        state = self.state
        return self._start("run", lambda progress: state.prepare_run(text, progress),
                           "Loading the model…" if state.run is None else f"Running {model.label}…")

    def start_next_token(self) -> bool:
        """Compute the next token on the worker thread (a generating model, after a run): True when it
        started."""
        if not self.available or not self.state.can_generate or self.state.run is None or self.busy:
            return False
        if not self.state.may_replace(f"{self.state.model.label} with one more token"):
            self._update_status()
            return False
        state = self.state
        return self._start("next", state.prepare_next, "Computing the next token…")

    def can_step_token(self) -> bool:
        """True when Next token would append a token now (a generating model's head is shown, not busy) —
        the lecture's PageDown at the last stage uses it."""
        return (self.available and self.state.can_generate and self.state.run is not None and not self.busy
                and self.showing_model_head())

    def cancel(self) -> None:
        """Stop the run or step in progress; the scene shown before stays."""
        if self.busy:
            self.worker.cancel()
            self.progress_bar.setFormat("Cancelling…")

    def set_sampling(self, temperature: float, top_k: int) -> bool:
        """How Next token chooses: temperature 0 = greedy; top-k 0 = all tokens.  False (and the reason in
        the status line) for bad values."""
        try:
            self.state.set_sampling(temperature, top_k)
        except ModelInputError as exc:
            self._set_status(str(exc), error=True)
            return False
        for box, value in ((self.temperature_box, self.state.temperature), (self.top_k_box, self.state.top_k)):
            if box.value() != value:
                with signals_blocked(box):
                    box.setValue(value)
        self._show_sampling()
        self._show_next_tokens()
        return True

    def _sampling_edited(self) -> None:
        self.set_sampling(round(self.temperature_box.value(), 3), self.top_k_box.value())

    def _start(self, job: str, work, message: str) -> bool:
        if not self.worker.start(work):
            return False
        self._job = job
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat(message)
        self._show_busy(True)
        self._set_status(f"{message} The window stays usable; Cancel stops it.")
        return True

    def _show_busy(self, busy: bool) -> None:
        self.busy_row.setVisible(busy)
        self.cancel_button.setEnabled(busy)
        for w in (self.run_button, self.sentence, self.model_box):
            w.setEnabled(not busy and (w is self.model_box or self.available))
        self.next_button.setEnabled(not busy and bool(self.next_bars.choices()))
        if busy:  # (over this panel only: the rest of the window stays usable)
            self.setCursor(Qt.CursorShape.BusyCursor)
        else:
            self.unsetCursor()

    def _on_progress(self, fraction: float, what: str) -> None:
        if not self.busy or self.worker.cancelled_requested():
            return
        value = int(round(1000 * min(max(fraction, 0.0), 1.0)))
        self.progress_bar.setValue(value)
        self.progress_bar.setFormat(self._progress_format(what, value // 10))

    def _progress_format(self, what: str, percent: int) -> str:
        """The longest of "Running: block 3 of 30 — 10%", "block 3 of 30 — 10%", "10%" that fits the bar
        on one line (a projector's large type would wrap it)."""
        fm = QFontMetricsF(self.progress_bar.font())
        room = self.progress_bar.width() - fm.averageCharWidth() * 2
        tail = what.rsplit(": ", 1)[-1]
        for text in (f"{what[:1].upper()}{what[1:]} — %p%", f"{tail} — %p%"):
            if fm.horizontalAdvance(text.replace("%p", str(percent))) <= room:
                return text
        return "%p%"

    def _end_job(self) -> str:
        job, self._job = self._job, ""
        self._show_busy(False)
        return job

    def _on_job_done(self, result) -> None:
        job = self._end_job()
        try:
            ok = (self.state.finish_run(result, ask=False) if job == "run" else
                  self.state.finish_next(result, ask=False))
        except (ModelInputError, ModelUnavailable) as exc:
            self._set_status(str(exc), error=True)
            ok = False
        else:
            if not ok:
                self._set_status("The model changed while it computed; nothing was replaced.", error=True)
        self.job_finished.emit(ok)

    def _on_job_failed(self, message: str) -> None:
        self._end_job()
        if self.state.failure():
            self._show_model()
            self._set_status(self.state.failure(), error=True)
        else:
            self._set_status(message, error=True)
        self.job_finished.emit(False)

    def _on_job_cancelled(self) -> None:
        self._end_job()
        self._set_status("Cancelled: the scene shown before stays.")
        self.job_finished.emit(False)

    def _stop_for_quit(self) -> None:
        try:
            self.worker.cancel()
            self.worker.wait(10_000)
        except RuntimeError:  # (the panel was deleted before the application quit)
            pass

    def next_token(self) -> bool:
        """Append the next token (a generating model, after a run) and show the longer run, at once."""
        if not self.available or not self.state.can_generate or self.state.run is None or self.busy:
            return False
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            if self.state.next_token():
                return True
        except (ModelInputError, ModelUnavailable) as exc:
            self._set_status(str(exc), error=True)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self._update_status()  # cancelled
        return False

    def _show_sampling(self) -> None:
        """Temperature and top-k for a generating model; a short panel (the projector) gives their row to the
        views, and Next token's tooltip says the settings."""
        self.sampling_row.setVisible(self.state.can_generate and not self._compact)
        t, k = self.state.temperature, self.state.top_k
        how = "the most likely token (greedy)" if t == 0 else (
            f"a token drawn at temperature {t:g} from {'all tokens' if k == 0 else f'the top {k}'} (seeded)")
        self.next_button.setToolTip(f"Append {how}: only its row is computed, the earlier keys and values "
                                    "come from the KV cache (Ctrl+Enter; PageDown at the last stage of a "
                                    "presentation)")
