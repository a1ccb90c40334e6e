"""A long job's progress in the window, with Cancel: :mod:`qkv_studio.core.progress` shown in Qt's
:class:`QProgressDialog`.

``with job_progress(parent, title, "Exporting…"): do_the_job()`` — the job's reports move the bar and
name the step; the dialog appears only if the job is still running after a moment (Qt's minimum
duration), so quick jobs show nothing; pressing Cancel makes the job's next report raise
:class:`~qkv_studio.core.progress.Cancelled`, which the caller catches (the exporters write nothing then).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog, QWidget

from qkv_studio.core import progress

STEPS = 1000
SHOW_AFTER_MS = 700


@contextlib.contextmanager
def job_progress(parent: QWidget | None, title: str, label: str) -> Iterator[QProgressDialog]:
    """Within the block, the job's reports drive a window-modal progress dialog with Cancel."""
    dialog = QProgressDialog(label, "Cancel", 0, STEPS, parent)
    dialog.setWindowTitle(title)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(SHOW_AFTER_MS)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    dialog.setValue(0)

    inside = [False]

    def listen(fraction: float, what: str) -> None:
        if dialog.wasCanceled():
            raise progress.Cancelled()
        if inside[0]:  # (a report from within the events the dialog lets through: not again)
            return
        inside[0] = True
        try:
            dialog.setLabelText(f"{label}\n{what}")
            dialog.setValue(min(STEPS - 1, int(fraction * STEPS)))  # (a modal dialog processes events here)
        finally:
            inside[0] = False
        if dialog.wasCanceled():
            raise progress.Cancelled()

    try:
        with progress.reporting(listen):
            yield dialog
    finally:
        dialog.close()
        dialog.deleteLater()
