"""The lecture's ink and notes are autosaved with the scene (issue 23): ink drawn on the slide is no scene
edit, but a crash must not lose it — drawn, autosaved, the process killed, recovered: the same strokes on
the same stages."""

from __future__ import annotations

import signal

from qkv_studio import reliability
from qkv_studio.core import preset_document, read_session, write_session
from qkv_studio.core.ink import EMPTY_INK, Notes, stroke
from qkv_studio.reliability.autosave import Autosave, pending_recovery
from tests.reliability.child_app import INK
from tests.reliability.test_recovery import _child, _files


def _expected():
    ink = EMPTY_INK
    for stage, points, colour in INK:
        ink = ink.with_stroke(stage, stroke(points, colour))
    return ink


def _same_strokes(a, b) -> bool:
    """Stroke by stage, colour, width and points (to the 4 decimals a file keeps)."""
    def key(ink):
        return {stage: [(s.colour, round(s.width, 4), [tuple(round(v, 4) for v in p) for p in s.points])
                        for s in ink.strokes(stage)] for stage in ("vectors", "scores", "scaled", "weights", "output")}
    return key(a) == key(b)


def test_ink_alone_is_autosaved_and_comes_back_per_stage_after_a_kill_9(qtbot, window, folder, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    proc = _child(folder, "ink")  # (it edits nothing: only the ink is unsaved)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    monkeypatch.setattr(QMessageBox, "exec", lambda box: QMessageBox.Yes)
    recovered = reliability.offer_recovery(None, folder)
    assert recovered is not None and _same_strokes(recovered.ink, _expected())
    auto = reliability.attach(window, folder=folder)
    reliability.restore(window, recovered)
    book = window.presenter.book
    assert _same_strokes(book.ink(), _expected())
    s = window.session
    for stage in ("weights", "scores", "vectors"):
        s.set_stage(stage)
        assert len(book.strokes()) == {"weights": 2, "scores": 1, "vectors": 0}[stage]
    assert book.unsaved() and s.modified  # (closing asks to save: the ink is unsaved work)
    auto.wait()
    # this window's own autosave holds the ink now; the crashed entry is gone
    names = [n for n in _files(folder) if n.endswith(".qkv.json")]
    assert names == [auto.file().name] and _same_strokes(read_session(auto.file()).ink, _expected())
    assert pending_recovery(folder) is None


def test_drawing_autosaves_with_the_notes_and_saving_the_ink_removes_it(qtbot, window, folder, tmp_path):
    path = tmp_path / "talk.qkv.json"
    doc = preset_document("lesson")
    write_session(path, doc.scene, doc.view, notes=Notes("Ask about softmax"),
                  ink=EMPTY_INK.with_stroke("weights", stroke([(0.5, 0.5, 1)], 2)))
    assert window.open_path(str(path), ask=False)
    book = window.presenter.book
    auto = Autosave(window.session, folder=folder, delay_ms=50, annotations=book)
    assert not book.unsaved() and auto.file() is None  # (the file's ink: nothing to keep)
    window.session.set_stage("scores")
    book.add_stroke(stroke([(0.1, 0.1, 1), (0.2, 0.3, 1)], 4))
    assert not window.session.modified  # (ink is no scene edit) …
    qtbot.waitUntil(lambda: auto.file() is not None and auto.file().exists(), timeout=3000)  # … but is kept
    assert auto.wait()
    kept = read_session(auto.file())
    assert kept.notes.for_stage("weights") == "Ask about softmax"
    assert [len(kept.ink.strokes(s)) for s in ("weights", "scores")] == [1, 1]
    book.undo()  # back to the file's ink: nothing unsaved, nothing kept
    assert not book.unsaved()
    auto.wait()
    assert auto.file() is None and _files(folder) == []
    book.add_stroke(stroke([(0.6, 0.6, 1)], 1))
    assert auto.save_now() and auto.file().exists()
    assert window._write(str(path))  # saved with its ink: the autosave goes
    auto.wait()
    assert not book.unsaved() and auto.file() is None and _files(folder) == []
    assert len(read_session(path).ink.strokes("scores")) == 1


def test_restore_on_top_of_the_file_puts_the_ink_back_as_one_ink_undo_step(qtbot, window, tmp_path):
    path = tmp_path / "talk.qkv.json"
    doc = preset_document("lesson")
    on_file = EMPTY_INK.with_stroke("weights", stroke([(0.5, 0.5, 1)], 2))
    write_session(path, doc.scene, doc.view, ink=on_file)
    recovered_ink = on_file.with_stroke("output", stroke([(0.4, 0.4, 1), (0.6, 0.6, 1)], 3))

    class Rec(tuple):  # (what pending_recovery gives: a tuple with the annotations beside it)
        pass

    rec = Rec((doc.scene, str(path), doc.view))
    rec.ink, rec.notes = recovered_ink, Notes()
    reliability.restore(window, rec)
    book = window.presenter.book
    assert _same_strokes(book.ink(), recovered_ink) and book.unsaved()
    assert book.undo_stack.undoText() == "Restore unsaved ink"
    book.undo()
    assert _same_strokes(book.ink(), on_file) and not book.unsaved()
    # a plain (scene, path) carries no ink: the file's stays
    reliability.restore(window, (doc.scene, str(path)))
    assert _same_strokes(window.presenter.book.ink(), on_file)
