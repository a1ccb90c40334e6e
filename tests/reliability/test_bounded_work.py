"""Every job is bounded (issue 32 item 3): an array's size is checked from its shape before it is copied
(``show()`` of a broadcast 10⁶ × 10⁶ view is the app's refusal, not NumPy's MemoryError); the ink at the
documented limits (500 strokes × 5 000 points) is simplified to what a slide can show, painted with
progress reports, and can be cancelled — in the window (the export dialog's progress dialog) as in code —
leaving nothing written; a terminal sees the progress."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

import qkv_studio
from qkv_studio.core import SceneError, progress
from qkv_studio.core.ink import MAX_POINTS, MAX_STROKES, Stroke, stroke
from qkv_studio.render.ink import SEGMENT_BUDGET, paint_strokes, simplify


@pytest.fixture(scope="module")
def ink_at_the_limits() -> tuple[Stroke, ...]:
    """500 pen strokes of 5 000 points each: scribbles (a random walk of 2–3 px steps), pressure varying."""
    rng = np.random.default_rng(7)
    pressure = 0.5 + 0.5 * np.sin(np.arange(MAX_POINTS) / 40)
    strokes = []
    for i in range(MAX_STROKES):
        xy = np.clip(rng.uniform(0.1, 0.9, 2) + np.cumsum(rng.normal(0, 0.002, (MAX_POINTS, 2)), axis=0), 0, 1)
        pts = np.column_stack([xy, pressure]).tolist()
        strokes.append(Stroke(tuple(map(tuple, pts)), 1 + i % 4, 0.004))
    return tuple(strokes)


# ---- sizes from shapes, before any copy -------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda big: dict(q=big, k=big, v=big),
    lambda big: dict(weights=big),
    lambda big: dict(x=big, wq=np.eye(2), wk=np.eye(2), wv=np.eye(2)),
    lambda big: dict(q=np.broadcast_to(np.int8(1), (4, 10**6, 10**6)), k=big, v=big),
], ids=["qkv", "weights", "x", "heads-int"])
def test_show_of_a_huge_broadcast_view_is_the_apps_size_refusal(qtbot, make):
    big = np.broadcast_to(np.float64(0.5), (10**6, 10**6))  # 7 TiB if copied; nothing allocated yet
    with pytest.raises(SceneError, match=r"has shape \(.*1000000, 1000000\): .* numbers, but a scene holds at most"):
        qkv_studio.show(block=False, **make(big))


def test_a_huge_mask_view_is_refused_before_it_is_copied():
    from qkv_studio.core import Scene

    with pytest.raises(SceneError, match="mask has shape"):
        Scene.create(["a", "b"], q=np.eye(2), k=np.eye(2), v=np.eye(2),
                     mask=np.broadcast_to(True, (10**6, 10**6)))


# ---- ink at the documented limits ----------------------------------------------------------------------------
def test_ink_at_the_limits_is_simplified_to_what_the_slide_can_show(ink_at_the_limits):
    rect = QRectF(0, 0, 1920, 1080)
    shapes = simplify(ink_at_the_limits, rect)
    assert sum(len(px) - 1 for _, px, _ in shapes) <= SEGMENT_BUDGET  # not 2.5 million
    for (s, px, pressure), original in zip(shapes, ink_at_the_limits, strict=True):
        pts = np.asarray(original.points)
        # the ends stay where they were, and every kept point is one of the stroke's own
        assert np.allclose(px[0], pts[0, :2] * (1920, 1080)) and np.allclose(px[-1], pts[-1, :2] * (1920, 1080))
        assert len(px) == len(pressure) and s is original


def test_a_lectures_ordinary_ink_is_drawn_point_for_point():
    s = stroke([(0.1 + 0.002 * i, 0.5 + 0.1 * np.sin(i / 10), 1.0) for i in range(300)], 1, 0.004)
    (_, px, _), = simplify([s], QRectF(0, 0, 1920, 1080))
    assert len(px) == 300  # every point ≥ half a pixel from the last: none dropped


def _paint(strokes, size=(1280, 720)) -> QImage:
    img = QImage(*size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QColor("white"))
    painter = QPainter(img)
    try:
        paint_strokes(painter, strokes, QRectF(0, 0, *size), reports=True)
    finally:
        painter.end()
    return img


def test_painting_the_limits_reports_its_progress_to_the_end(qapp, ink_at_the_limits):
    heard: list[tuple[float, str]] = []
    with progress.reporting(lambda f, what: heard.append((f, what))):
        img = _paint(ink_at_the_limits)
    fractions = [f for f, _ in heard]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(heard) > 50
    assert "stroke 1 of 500" in heard[0][1]
    assert img.pixelColor(640, 360) != QColor("white") or img.pixelColor(300, 300) != QColor("white")


def test_a_widgets_paint_never_reports(qapp):
    heard = []
    with progress.reporting(lambda f, what: heard.append(f)):
        img = QImage(200, 100, QImage.Format.Format_ARGB32_Premultiplied)
        painter = QPainter(img)
        paint_strokes(painter, [stroke([(0.1, 0.1, 1.0), (0.9, 0.9, 1.0)])], QRectF(0, 0, 200, 100))
        painter.end()
    assert heard == []  # (the live overlay paints without reporting: a report could re-enter its paint event)


def test_painting_stops_when_cancelled(qapp, ink_at_the_limits):
    heard = []

    def cancel_at_the_third(fraction, what):
        heard.append(fraction)
        if len(heard) == 3:
            raise progress.Cancelled()
    with progress.reporting(cancel_at_the_third), pytest.raises(progress.Cancelled):
        _paint(ink_at_the_limits)
    assert len(heard) == 3


def test_a_deck_of_slides_reports_each_page_within_its_share(qapp):
    from qkv_studio.core import load_preset
    from qkv_studio.core.ink import EMPTY_INK
    from qkv_studio.export.slides import pptx_bytes
    from qkv_studio.render.figure import FigureOptions

    class Slide:  # (a slide picture: what the window's composer gives)
        size = (320, 180)

        def paint(self, painter):
            painter.fillRect(QRectF(0, 0, 320, 180), QColor("white"))

    ink = EMPTY_INK
    for stage in ("scores", "weights"):
        ink = ink.with_stroke(stage, stroke([(0.1, 0.1, 1.0), (0.9, 0.9, 0.5)]))
    heard = []
    with progress.reporting(lambda f, what: heard.append((f, what))):
        data = pptx_bytes(load_preset("lesson"), FigureOptions(), ("scores", "weights"), 320, query=0, ink=ink,
                          compose=lambda stage: Slide())
    assert data[:2] == b"PK"
    firsts = [(f, w) for f, w in heard if "stroke 1 of 1" in w]
    assert [round(f, 3) for f, _ in firsts] == [0.0, 0.5]
    assert firsts[0][1].startswith("slide 1 of 2: ") and firsts[1][1].startswith("slide 2 of 2: ")


def test_the_terminal_sees_the_progress_and_the_line_is_cleared():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    out = Tty()
    with progress.terminal(out, after_s=0, every_s=0):
        progress.report(0.25, "slide 1 of 4")
        with progress.part(0.5, 1.0, "slide 3 of 4"):
            progress.report(0.5, "ink: stroke 9 of 10")
    text = out.getvalue()
    assert " 25.0 %  slide 1 of 4" in text and " 75.0 %  slide 3 of 4: ink: stroke 9 of 10" in text
    assert text.endswith("\r\x1b[K")
    quiet = io.StringIO()  # (not a terminal: nothing printed, the output stays clean)
    with progress.terminal(quiet, after_s=0, every_s=0):
        progress.report(0.5, "x")
    assert quiet.getvalue() == ""


def test_cancelling_the_window_export_of_inked_slides_writes_nothing(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QProgressDialog

    from qkv_studio.ui.dialogs.export_dialog import ExportDialog
    from qkv_studio.ui.window.slide_picture import SlideComposer

    window.session.set_stage("weights")
    window.presenter.book.add_stroke(stroke([(0.1, 0.5, 1), (0.5, 0.6, 0.4), (0.9, 0.5, 1)], 1, 0.008))
    d = ExportDialog(window, slide_composer=SlideComposer)
    qtbot.addWidget(d)
    d.format_combo.setCurrentIndex(d.format_combo.findData(".pptx"))
    d.width_spin.setValue(640)
    assert d.include_ink
    shown = []
    monkeypatch.setattr(QProgressDialog, "wasCanceled", lambda self: shown.append(self.labelText()) or True)
    out = tmp_path / "deck.pptx"
    assert d.export_to(out) == []  # Cancel pressed: nothing written …
    assert not out.exists() and not list(tmp_path.iterdir())
    assert "Export cancelled" in window.statusBar().currentMessage()
    assert shown and shown[0].startswith("Exporting")
    monkeypatch.undo()
    assert d.export_to(out) == [out] and out.exists()  # … and the same export, not cancelled, is written
    d.reject()
