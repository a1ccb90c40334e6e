"""Animated stages (issue 22, item 1): GIF and APNG through Pillow, MP4/H.264 through imageio-ffmpeg, read back
with the libraries that write them; each stage's last frame is that stage's still export."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageSequence
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from qkv_studio.cli import main
from qkv_studio.core import STAGES
from qkv_studio.core.morph import blend_colours, blend_values, ease
from qkv_studio.export import motion
from qkv_studio.export.files import export_file
from qkv_studio.export.timeline import Frame, MotionOptions, frame_durations_ms, parse_stages, timeline
from qkv_studio.render.figure import FigureOptions, Morph, figure_layout, paint_figure, stage_scale

WIDTH = 640  # frames 640 × 360
#: When each stage's hold ends (ms) with the defaults: 1 s holds, 0.5 s morphs where the matrix changes
#: (scores → scaled and scaled → weights; vectors → scores and weights → output show the same matrix).
HOLD_ENDS = {"vectors": 1000, "scores": 2000, "scaled": 3500, "weights": 5000, "output": 6000}


def _rgb(img: QImage) -> np.ndarray:
    return motion._rgb_array(img).astype(int)


def _frame_at(path, ms: int) -> tuple[np.ndarray, int]:
    """The frame shown at ``ms`` (as RGB) and the number of frames, read by Pillow."""
    with Image.open(path) as im:
        t = 0
        for _k, frame in enumerate(ImageSequence.Iterator(im)):
            t += frame.info.get("duration", 10 ** 9)  # (a one-picture file is a still PNG: no duration)
            if t > ms:
                return np.asarray(frame.convert("RGB")).astype(int), im.n_frames
    raise AssertionError(f"no frame at {ms} ms")


def _still(scene, stage: str, tmp_path) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """The stage's still PNG export at the width its figure has in a frame, and where it sits."""
    opts = FigureOptions(stage=stage, query=2).validated()  # (the lesson's query, "sat")
    rect = motion.figure_rect(scene, opts, motion.frame_size(WIDTH))
    path = tmp_path / f"still-{stage}.png"
    export_file(scene, path, width=rect[2], options=opts)
    with Image.open(path) as im:
        still = np.asarray(im.convert("RGB")).astype(int)
    assert still.shape[:2] == (rect[3], rect[2])  # the figure in the frame is the still's size
    return still, rect


# ---- the plan -------------------------------------------------------------------------------------------
def test_the_timeline_holds_each_stage_and_morphs_where_the_matrix_changes():
    frames = timeline(MotionOptions(fps=30, hold=1.0, morph=0.5))
    stills = [f for f in frames if f.still]
    assert [f.stage for f in stills] == list(STAGES) and all(f.count == 30 for f in stills)
    morphs = [f for f in frames if not f.still]
    assert [(f.source, f.stage) for f in morphs] == [("scores", "scaled")] * 15 + [("scaled", "weights")] * 15
    assert [f.t for f in morphs[:15]] == [ease(k / 15) for k in range(15)]  # the window's curve, from t = 0
    assert sum(f.count for f in frames) == 6 * 30
    # 30 fps in a GIF's 10 ms ticks: 30, 30, 40 … keeping the whole length
    durations = frame_durations_ms([Frame("weights")] * 30, 30, 10)
    assert set(durations) == {30, 40} and sum(durations) == 1000
    assert frame_durations_ms(frames, 30, 10)[0] == 1000 and sum(frame_durations_ms(frames, 30, 10)) == 6000


def test_motion_options_are_checked():
    for bad, word in ((dict(fps=0), "frames per second"), (dict(fps=2.5), "frames per second"),
                      (dict(hold=0), "hold"), (dict(hold=float("inf")), "hold"), (dict(morph=-1), "morph"),
                      (dict(stages=()), "at least one"), (dict(stages=("scores", "nope")), "unknown stage"),
                      (dict(stages=("scores", "scores")), "each stage once")):
        with pytest.raises(ValueError, match=word):
            MotionOptions(**bad).validated()
    assert parse_stages(" scores , weights") == ("scores", "weights")
    with pytest.raises(ValueError, match="commas"):
        parse_stages("scores,,weights")
    assert motion.frame_size(1281) == (1280, 720) and motion.frame_size(1920) == (1920, 1080)
    with pytest.raises(ValueError, match="160–1920"):
        motion.frame_size(4000, ".gif")


def test_a_morph_frame_mixes_the_two_stages_colours_and_numbers_as_the_window_does(lesson_scene):
    opts = FigureOptions(stage="weights").validated()
    t = ease(0.5)
    img = QImage(800, 600, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(0xFFFFFFFF)
    p = QPainter(img)
    lay = paint_figure(p, QRectF(0, 0, 800, 600), lesson_scene, opts, Morph("scaled", t))
    p.end()
    r = lesson_scene.result()
    old = stage_scale(lesson_scene, FigureOptions(stage="scaled")).rgba(r.scaled)
    new = stage_scale(lesson_scene, opts).rgba(r.weights)
    want = blend_colours(old, new, t)
    for i, j in ((0, 0), (2, 1), (3, 3)):
        cell = lay.cell_rect(i, j)
        c = img.pixelColor(int(cell.left() + 3), int(cell.top() + 3))
        assert abs(c.red() - int(want[i, j, 0])) <= 1 and abs(c.green() - int(want[i, j, 1])) <= 1
        assert not np.array_equal(want[i, j], new[i, j])  # really between the two
    assert np.allclose(lay.text_matrix, blend_values(r.scaled, r.weights, t))
    assert figure_layout(lesson_scene, opts).text_matrix is None  # a still shows its own numbers


# ---- GIF -------------------------------------------------------------------------------------------------
def test_the_gif_has_every_stage_for_its_hold_and_its_last_frame_is_the_still(lesson_scene, tmp_path):
    out = tmp_path / "stages.gif"
    export_file(lesson_scene, out, width=WIDTH, query=2)
    with Image.open(out) as im:
        assert im.format == "GIF" and im.size == (640, 360) and im.is_animated
        assert im.info["loop"] == 0
        durations = [f.info["duration"] for f in ImageSequence.Iterator(im)]
        assert "puts 0.54 on 'cat'" in im.info["comment"].decode("utf-8")
    assert sum(durations) == 6000
    # vectors and scores draw the same picture: one frame held for both; morph frames of 30–40 ms
    assert durations[0] == 2000 and 20 <= len(durations) <= 34 and set(durations[1:]) - {30, 40, 70, 1000, 1030,
                                                                                         1040} == set()
    for stage, end in HOLD_ENDS.items():
        frame, _ = _frame_at(out, end - 1)
        still, (x, y, w, h) = _still(lesson_scene, stage, tmp_path)
        diff = np.abs(frame[y:y + h, x:x + w] - still)
        assert diff.mean() < 1.5 and np.percentile(diff, 99) < 40, stage  # within a 256-colour palette
        assert np.abs(frame[:, :x] - 255).max() <= 2  # the theme's white around it


def test_a_chosen_set_of_stages_at_a_chosen_rate_and_hold(lesson_scene, tmp_path):
    out = tmp_path / "two.gif"
    m = MotionOptions(fps=20, hold=0.5, morph=0.25, loop=False)
    export_file(lesson_scene, out, width=WIDTH, stages=("scaled", "weights"), motion=m)
    with Image.open(out) as im:
        durations = [f.info["duration"] for f in ImageSequence.Iterator(im)]
        assert "loop" not in im.info  # plays once
    assert sum(durations) == 1250 and durations[0] == 500 and durations[-1] == 500
    assert len(durations) <= 2 + 5 and all(d == 50 for d in durations[1:-1][:-1])


def test_a_query_given_explicitly_is_the_one_drawn_and_described(lesson_scene, tmp_path):
    export_file(lesson_scene, tmp_path / "q.apng", width=WIDTH, query=0, stages=("weights",))
    with Image.open(tmp_path / "q.apng") as im:
        assert "the query 'the' puts" in im.text["Description"]
    frame, _ = _frame_at(tmp_path / "q.apng", 10)
    opts = FigureOptions(stage="weights", query=0).validated()
    scene0 = lesson_scene
    x, y, w, h = motion.figure_rect(scene0, opts, motion.frame_size(WIDTH))
    export_file(scene0, tmp_path / "s.png", width=w, options=opts)
    with Image.open(tmp_path / "s.png") as im:
        assert np.array_equal(frame[y:y + h, x:x + w], np.asarray(im.convert("RGB")).astype(int))


# ---- APNG (lossless: the held frames are the stills exactly) ---------------------------------------------
def test_the_apng_frames_are_the_stills_exactly(lesson_scene, tmp_path):
    out = tmp_path / "stages.apng"
    export_file(lesson_scene, out, width=WIDTH, options=FigureOptions(theme="dark"))
    with Image.open(out) as im:
        assert im.format == "PNG" and im.is_animated and im.size == (640, 360)
        assert im.info["loop"] == 0
        durations = [f.info["duration"] for f in ImageSequence.Iterator(im)]
        n = im.n_frames
        assert im.text["Description"].startswith("Query and key vectors")
    assert sum(durations) == 6000 and durations[0] == 2000 and n == len(durations)
    assert set(durations[1:]) <= {33, 34, 67, 1000, 1033, 1034}
    for stage, end in HOLD_ENDS.items():
        frame, _ = _frame_at(out, end - 1)
        opts = FigureOptions(stage=stage, theme="dark").validated()
        x, y, w, h = motion.figure_rect(lesson_scene, opts, motion.frame_size(WIDTH))
        export_file(lesson_scene, tmp_path / "s.png", width=w, options=opts)
        with Image.open(tmp_path / "s.png") as im:
            assert np.array_equal(frame[y:y + h, x:x + w], np.asarray(im.convert("RGB")).astype(int)), stage


# ---- MP4 -------------------------------------------------------------------------------------------------
def test_the_mp4_has_one_frame_per_tick_at_the_chosen_size(lesson_scene, tmp_path):
    import imageio_ffmpeg

    out = tmp_path / "stages.mp4"
    export_file(lesson_scene, out, width=WIDTH, motion=MotionOptions(fps=10))
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    assert meta["size"] == (640, 360) and meta["fps"] == 10 and meta["codec"] == "h264"
    assert meta["pix_fmt"].startswith("yuv420p")
    frames = [np.frombuffer(f, np.uint8).reshape(360, 640, 3) for f in reader]
    assert len(frames) == 60  # 6 s at 10 fps
    # the last frame of the weights hold is the weights still, within H.264's loss
    still, (x, y, w, h) = _still(lesson_scene, "weights", tmp_path)
    diff = np.abs(frames[HOLD_ENDS["weights"] // 100 - 1][y:y + h, x:x + w].astype(int) - still)
    assert diff.mean() < 4


# ---- the command line ------------------------------------------------------------------------------------
def test_the_command_line_writes_an_animation(tmp_path, capsys):
    out = tmp_path / "s.gif"
    assert main(["export", "--preset", "lesson", "-o", str(out), "--fps", "10", "--hold", "0.5", "--stages",
                 "scores,weights", "--width", "320", "--no-loop"]) == 0
    with Image.open(out) as im:
        durations = [f.info["duration"] for f in ImageSequence.Iterator(im)]
        assert im.size == (320, 180) and "loop" not in im.info
    assert durations[0] == 500 and durations[-1] == 500 and sum(durations) == 1500


@pytest.mark.parametrize("args, message", [
    (["--fps", "0"], "argument --fps: must be 1–60 frames per second, not 0"),
    (["--fps", "ten"], "argument --fps: must be a whole number of frames per second"),
    (["--fps", "55"], "a GIF plays at most 50 frames per second"),
    (["--hold", "nan"], "argument --hold: must be 0.1–60 seconds, not 'nan'"),
    (["--stages", "scores,nope"], "unknown stage 'nope'"),
    (["--stages", "weights,weights"], "name each stage once"),
    (["--width", "4000"], "an animated GIF is 160–1920 pixels wide, not 4000"),
])
def test_bad_animation_options_are_one_line_exit_2_and_no_file(tmp_path, capsys, args, message):
    out = tmp_path / "s.gif"
    assert main(["export", "--preset", "lesson", "-o", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_animation_options_are_refused_for_other_formats(tmp_path, capsys):
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "w.csv"), "--fps", "10"]) == 2
    assert "--fps is for animations (.gif, .apng or .mp4), not .csv" in capsys.readouterr().err
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "w.png"), "--stages", "scores"]) == 2
    assert "--stages is for animations and decks" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_failing_encoder_leaves_no_file_and_keeps_an_old_one(lesson_scene, tmp_path, monkeypatch, capsys):
    out = tmp_path / "s.mp4"
    out.write_bytes(b"old")

    def broken(*args, **kwargs):
        raise OSError("ffmpeg died")

    monkeypatch.setattr(motion, "mp4_bytes", broken)
    assert main(["export", "--preset", "lesson", "-o", str(out), "--width", "320"]) == 2
    assert "ffmpeg died" in capsys.readouterr().err
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["s.mp4"]
