"""The Export dialog's animation of a causal model's generation (issue 22, item 1, in the dialog as on the
command line's ``--animate generation``): offered while the window shows a generating model's head after
Next token, written as GIF/APNG/MP4 through the same export code.  The fake generating model of
``tests/toy_model.py`` stands in for SmolLM2 (no weights)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageSequence
from PySide6.QtCore import QSettings

from qkv_studio.ui.dialogs.export_dialog import ExportDialog
from qkv_studio.ui.window.main_window import MainWindow
from tests.toy_model import register_toy_generating
from tests.views import LESSON_VIEW

WIDTH = 640


@pytest.fixture(autouse=True)
def _fresh_settings():
    QSettings().clear()
    yield
    QSettings().clear()


@pytest.fixture
def window(qtbot, lesson_scene, monkeypatch):
    register_toy_generating(monkeypatch)
    w = MainWindow(lesson_scene, use_settings=False, view=LESSON_VIEW)
    qtbot.addWidget(w)
    yield w
    w.session.undo_stack.setClean()


def _generate(window, steps: int):
    panel = window.panels.model
    assert panel.set_model("toygen") and panel.run_text("the cat sat") and panel.select(1, 2)
    for _ in range(steps):
        assert panel.next_token()
    return panel


def _dialog(qtbot, window, suffix: str) -> ExportDialog:
    d = ExportDialog(window, use_settings=False)
    qtbot.addWidget(d)
    d.format_combo.setCurrentIndex(d.format_combo.findData(suffix))
    d.width_radio.setChecked(True)
    d.width_spin.setValue(WIDTH)
    d.fps_spin.setValue(10)
    d.hold_spin.setValue(0.5)
    return d


def _offered(d) -> list[str]:
    return [d.animate_combo.itemData(i) for i in range(d.animate_combo.count())]


def _frames(path) -> tuple[list[np.ndarray], list[int]]:
    with Image.open(path) as im:
        frames = [np.asarray(f.convert("RGB")).astype(int) for f in ImageSequence.Iterator(im)]
        im.seek(0)
        durations = [f.info["duration"] for f in ImageSequence.Iterator(im)]
    return frames, durations


def test_the_generation_is_offered_only_for_a_generated_causal_head(qtbot, window):
    d = _dialog(qtbot, window, ".gif")
    assert _offered(d) == ["stages"] and not d.animate_combo.isEnabled()  # the lesson: no model
    d.close()
    panel = _generate(window, 0)
    d = _dialog(qtbot, window, ".gif")
    assert _offered(d) == ["stages"]  # a prompt, nothing generated yet
    assert panel.next_token()  # (the dialog follows the window: the scene changed)
    assert _offered(d) == ["stages", "generation"] and d.animate_combo.isEnabled()
    assert d.animate_combo.itemText(1) == "the generation, token by token"
    assert d.motion_row.isVisibleTo(d)
    d.animate_combo.setCurrentIndex(1)
    assert d.animates_generation and d.motion().generated == 1 and d.hold_spin.suffix() == " s per token"
    assert "generation" in d.path_edit.text()
    assert d.alt_text().startswith("Generation, one token at a time (1 generated after 3 of the prompt)")
    d.animate_combo.setCurrentIndex(0)
    assert not d.animates_generation and d.motion().generated == 0 and d.hold_spin.suffix() == " s per stage"
    d.animate_combo.setCurrentIndex(1)
    panel.edit_head()  # an editable copy is no longer the model's head: only the stages
    assert _offered(d) == ["stages"] and not d.animates_generation and d.motion().generated == 0


@pytest.mark.parametrize("suffix", [".gif", ".apng"])
def test_the_dialog_writes_the_generation_a_picture_per_token(qtbot, window, tmp_path, suffix):
    _generate(window, 2)
    d = _dialog(qtbot, window, suffix)
    d.animate_combo.setCurrentIndex(d.animate_combo.findData("generation"))
    out = tmp_path / f"gen{suffix}"
    assert d.export_to(out) == [out]
    frames, durations = _frames(out)
    assert len(frames) == 3 and durations == [500] * 3  # the prompt, then one picture per generated token
    assert all(f.shape == (360, WIDTH, 3) for f in frames)
    assert all(not np.array_equal(a, b) for a, b in zip(frames, frames[1:], strict=False))
    with Image.open(out) as im:
        description = im.info.get("Description") or im.info.get("comment", b"").decode("utf-8")
    assert description.startswith("Generation, one token at a time (2 generated after 3 of the prompt)")
    # the stages, from the same dialog: a picture per stage instead
    d.animate_combo.setCurrentIndex(d.animate_combo.findData("stages"))
    stages = tmp_path / f"stages{suffix}"
    assert d.export_to(stages) == [stages]
    assert len(_frames(stages)[0]) > 3


def test_the_dialog_writes_the_generation_as_mp4(qtbot, window, tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    _generate(window, 2)
    d = _dialog(qtbot, window, ".mp4")
    d.hold_spin.setValue(1.0)
    d.animate_combo.setCurrentIndex(d.animate_combo.findData("generation"))
    out = tmp_path / "gen.mp4"
    assert d.export_to(out) == [out]
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    assert meta["size"] == (WIDTH, 360) and sum(1 for _ in reader) == 3 * 10  # 3 pictures, 1 s each at 10 fps
