"""Export: PNG at any width, vector SVG/PDF with text and shapes, numbers at full precision, atomic writes."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from qkv_studio.export import figures, png
from qkv_studio.export.deck import DECK_STAGES, export_all_stages
from qkv_studio.export.figures import PT_PER_PX, ensure_app, figure_image
from qkv_studio.export.files import export_file
from qkv_studio.render.figure import FigureOptions, figure_size
from tests.pdf_facts import pdf_facts, pdf_page_pixels

LESSON_VALUES = ("0.54", "0.27", "0.13", "0.06")
SVG = "{http://www.w3.org/2000/svg}"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ---- PNG ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("width", [800, 3840])
def test_png_has_exactly_the_requested_width(lesson_scene, tmp_path, width):
    out = tmp_path / "fig.png"
    export_file(lesson_scene, out, width=width)
    img = QImage(str(out))
    assert not img.isNull()
    size = figure_size(lesson_scene, FigureOptions(stage="weights"))
    assert img.width() == width
    assert img.height() == round(width * size.height() / size.width())
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert leftovers(tmp_path) == ["fig.png"]


def test_png_defaults_to_1600_px_and_the_weights_of_the_first_query(lesson_scene, tmp_path):
    export_file(lesson_scene, tmp_path / "a.png")
    assert QImage(str(tmp_path / "a.png")).width() == 1600
    export_file(lesson_scene, tmp_path / "d.png", options=FigureOptions(stage="weights", query=0))
    assert QImage(str(tmp_path / "a.png")) == QImage(str(tmp_path / "d.png"))
    # the options' stage and query decide the figure: scores, or another query, give a different image
    export_file(lesson_scene, tmp_path / "b.png", options=FigureOptions(stage="scores"))
    assert (tmp_path / "a.png").read_bytes() != (tmp_path / "b.png").read_bytes()
    export_file(lesson_scene, tmp_path / "c.png", options=FigureOptions(query=2))
    assert QImage(str(tmp_path / "a.png")) != QImage(str(tmp_path / "c.png"))


@pytest.mark.parametrize("background", ["theme", "transparent"])
def test_png_file_holds_exactly_the_rendered_pixels(lesson_scene, background):
    from qkv_studio.render.figure import render_image

    options = FigureOptions(background=background, theme="dark")
    want = render_image(lesson_scene, options, 700).convertToFormat(QImage.Format.Format_ARGB32)
    got = QImage.fromData(figures.png_bytes(lesson_scene, options, 700), "PNG")
    assert got.hasAlphaChannel() == (background == "transparent")
    got = got.convertToFormat(QImage.Format.Format_ARGB32)
    assert (got.width(), got.height()) == (want.width(), want.height())
    a = np.frombuffer(want.constBits(), np.uint8, count=want.sizeInBytes())
    b = np.frombuffer(got.constBits(), np.uint8, count=got.sizeInBytes())
    assert np.array_equal(a, b)


def test_transparent_png_keeps_alpha_0_in_the_file(lesson_scene, tmp_path):
    out = tmp_path / "t.png"
    export_file(lesson_scene, out, width=600, options=FigureOptions(background="transparent"))
    img = QImage(str(out))
    assert img.hasAlphaChannel()
    assert img.pixelColor(0, 0).alpha() == 0


@pytest.mark.parametrize("theme", ["light", "dark", "projector"])
def test_theme_argument_sets_the_background(lesson_scene, tmp_path, theme):
    from qkv_studio.render.theme import THEMES

    out = tmp_path / f"{theme}.png"
    export_file(lesson_scene, out, width=500, theme=theme)
    assert QImage(str(out)).pixelColor(1, 1).name() == THEMES[theme].background


def test_colormap_argument_overrides_the_options(lesson_scene, tmp_path):
    export_file(lesson_scene, tmp_path / "v.png", width=500, options=FigureOptions(colormap="viridis"))
    export_file(lesson_scene, tmp_path / "m.png", width=500, options=FigureOptions(colormap="viridis"),
                colormap="magma")
    a, b = QImage(str(tmp_path / "v.png")), QImage(str(tmp_path / "m.png"))
    assert a.size() == b.size() and a != b


def test_figure_image_for_the_clipboard(lesson_scene):
    img = figure_image(lesson_scene, FigureOptions(stage="scores"), 1000)
    assert isinstance(img, QImage) and img.width() == 1000 and not img.isNull()
    assert figure_image(lesson_scene).width() == 1600


# ---- SVG ----------------------------------------------------------------------------------------
def svg_tree(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def svg_texts(root: ET.Element) -> list[str]:
    return ["".join(el.itertext()).strip() for el in root.iter(f"{SVG}text")]


def test_svg_is_xml_with_labels_and_values_as_text_and_cells_as_shapes(lesson_scene, tmp_path):
    out = tmp_path / "fig.svg"
    export_file(lesson_scene, out, options=FigureOptions(query=2))  # the lesson's view: query "sat"
    root = svg_tree(out)
    assert root.tag == f"{SVG}svg"
    texts = svg_texts(root)
    for token in ("the", "cat", "sat", "mat"):
        assert texts.count(token) == 2, token  # row and column label
    for value in LESSON_VALUES:
        assert value in texts, value
    assert "softmax weights · query “sat” · dₖ = 2" in texts
    assert "attending from (query)" in texts and "attending to (key)" in texts
    assert texts.count("Σ = 1.00") == 4
    shapes = [el for el in root.iter() if el.tag in (f"{SVG}rect", f"{SVG}path", f"{SVG}polygon")]
    assert len(shapes) >= 16  # one per cell at least, plus the outline and the bar
    assert root.find(f"{SVG}title").text.startswith("softmax weights")
    assert not list(root.iter(f"{SVG}image"))  # no bitmap anywhere: all vector
    assert leftovers(tmp_path) == ["fig.svg"]


def test_svg_viewbox_is_the_figure_size(lesson_scene, tmp_path):
    out = tmp_path / "fig.svg"
    export_file(lesson_scene, out)
    vb = [float(x) for x in svg_tree(out).get("viewBox").split()]
    size = figure_size(lesson_scene, FigureOptions())
    assert vb[:2] == [0, 0]
    assert vb[2] == pytest.approx(size.width(), abs=1) and vb[3] == pytest.approx(size.height(), abs=1)


def test_svg_of_a_masked_scores_stage_writes_minus_infinity(lesson_scene, tmp_path):
    out = tmp_path / "causal.svg"
    export_file(lesson_scene.with_mask("causal"), out, options=FigureOptions(stage="scores"))
    texts = svg_texts(svg_tree(out))
    assert texts.count("−∞") == 6
    assert "4" in texts and "−4" in texts  # the cell and the legend's end


# ---- PDF ----------------------------------------------------------------------------------------
def pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


def test_pdf_is_one_page_sized_to_the_figure(lesson_scene, tmp_path):
    out = tmp_path / "fig.pdf"
    export_file(lesson_scene, out)
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    assert pdf_pages(data) == 1
    boxes = re.findall(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    assert len(boxes) == 1
    x0, y0, x1, y1 = (float(v) for v in boxes[0])
    size = figure_size(lesson_scene, FigureOptions())
    assert (x1 - x0) == pytest.approx(size.width() * PT_PER_PX, abs=1)
    assert (y1 - y0) == pytest.approx(size.height() * PT_PER_PX, abs=1)
    assert (x1 - x0) / (y1 - y0) == pytest.approx(size.width() / size.height(), rel=0.01)
    assert leftovers(tmp_path) == ["fig.pdf"]


def test_pdf_text_is_selectable(lesson_scene, tmp_path):
    out = tmp_path / "fig.pdf"
    export_file(lesson_scene, out)
    [text] = pdf_facts(out).texts
    for word in ("softmax weights", "attending to (key)", "cat", "mat", *LESSON_VALUES):
        assert word in text, word


def test_pdf_renders_to_one_page_of_the_figures_aspect(lesson_scene, tmp_path):
    out = tmp_path / "fig.pdf"
    export_file(lesson_scene, out)
    [page] = pdf_page_pixels(out, dpi=60)
    size = figure_size(lesson_scene, FigureOptions())
    assert page.shape[1] / page.shape[0] == pytest.approx(size.width() / size.height(), rel=0.02)


# ---- numbers ------------------------------------------------------------------------------------
@pytest.fixture
def numbers():
    return pytest.importorskip("qkv_studio.core.numbers")


@pytest.mark.parametrize("stage", ["scores", "scaled", "weights"])
def test_csv_numbers_equal_the_core_to_full_precision(lesson_scene, tmp_path, stage, numbers):
    out = tmp_path / "w.csv"
    scene = lesson_scene
    export_file(scene, out, options=FigureOptions(stage=stage))
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0] == ["", "the", "cat", "sat", "mat"]
    assert [r[0] for r in rows[1:]] == ["the", "cat", "sat", "mat"]
    got = np.array([[float(x) for x in r[1:]] for r in rows[1:]])
    assert np.array_equal(got, getattr(scene.result(), stage))  # bit for bit


def test_csv_follows_the_options_stage(lesson_scene, tmp_path, numbers):
    out = tmp_path / "s.csv"
    export_file(lesson_scene, out, options=FigureOptions(stage="scores"))
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert np.array_equal(np.array([[float(x) for x in r[1:]] for r in rows[1:]]), lesson_scene.result().scores)


def test_json_numbers_equal_the_core_to_full_precision(lesson_scene, tmp_path, numbers):
    out = tmp_path / "all.json"
    scene = lesson_scene.with_mask("causal")
    export_file(scene, out, options=FigureOptions(stage="scaled", query=2))  # the view exported from
    obj = json.loads(out.read_text(encoding="utf-8"))
    r = scene.result()
    assert obj["tokens"] == ["the", "cat", "sat", "mat"]
    assert np.array_equal(np.array(obj["weights"]), r.weights)
    assert np.array_equal(np.array(obj["output"]), r.output)
    scores = np.array([[(-np.inf if x is None else x) for x in row] for row in obj["scores"]])
    assert np.array_equal(scores, r.scores)
    assert obj["query"] == {"index": 2, "token": "sat"} and obj["stage"] == "scaled"
    assert "Infinity" not in out.read_text(encoding="utf-8") and "NaN" not in out.read_text(encoding="utf-8")


# ---- failures leave nothing behind ---------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ".csv", ".json"])
def test_missing_folder_gives_one_clear_line_and_no_file(lesson_scene, tmp_path, suffix):
    out = tmp_path / "missing" / f"fig{suffix}"
    with pytest.raises(OSError) as info:
        export_file(lesson_scene, out)
    msg = str(info.value)
    assert msg == f"cannot write {out}: No such file or directory"
    assert "\n" not in msg
    assert leftovers(tmp_path) == []


def test_a_failing_png_encoder_leaves_nothing(lesson_scene, tmp_path, monkeypatch):
    def fail(*args):
        raise MemoryError("out of memory")

    monkeypatch.setattr(png, "_encode_png", fail)
    out = tmp_path / "fig.png"
    with pytest.raises(OSError, match=re.escape(f"cannot write {out}: ")):
        export_file(lesson_scene, out, width=400)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ".csv", ".json"])
def test_a_full_disk_leaves_no_partial_or_temporary_file(lesson_scene, tmp_path, monkeypatch, suffix):
    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    out = tmp_path / f"fig{suffix}"
    with pytest.raises(OSError) as info:
        export_file(lesson_scene, out, width=400)
    assert str(info.value) == f"cannot write {out}: No space left on device"
    assert leftovers(tmp_path) == []


def test_a_failing_write_keeps_the_previous_file_intact(lesson_scene, tmp_path, monkeypatch):
    out = tmp_path / "fig.png"
    out.write_bytes(b"old figure")

    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="Input/output error"):
        export_file(lesson_scene, out, width=400)
    assert out.read_bytes() == b"old figure"
    assert leftovers(tmp_path) == ["fig.png"]


def test_a_folder_as_target_is_refused(lesson_scene, tmp_path):
    (tmp_path / "fig.png").mkdir()
    with pytest.raises(OSError, match="cannot write .*fig.png"):
        export_file(lesson_scene, tmp_path / "fig.png")
    assert leftovers(tmp_path) == ["fig.png"] and (tmp_path / "fig.png").is_dir()
    assert list((tmp_path / "fig.png").iterdir()) == []


def test_unknown_suffix_and_bad_options_are_value_errors_naming_them(lesson_scene, tmp_path):
    with pytest.raises(ValueError, match=r"fig\.txt.*unknown format '\.txt'"):
        export_file(lesson_scene, tmp_path / "fig.txt")
    with pytest.raises(ValueError, match="theme"):
        export_file(lesson_scene, tmp_path / "fig.png", theme="neon")
    with pytest.raises(ValueError, match="colormap"):
        export_file(lesson_scene, tmp_path / "fig.png", colormap="jet")
    with pytest.raises(ValueError, match="width"):
        export_file(lesson_scene, tmp_path / "fig.png", width=0)
    assert leftovers(tmp_path) == []


# ---- all stages ---------------------------------------------------------------------------------
def test_export_all_stages_writes_numbered_images_in_stage_order(lesson_scene, tmp_path):
    paths = export_all_stages(lesson_scene, tmp_path / "lesson.png", width=500)
    names = ["lesson-1-scores.png", "lesson-2-scaled.png", "lesson-3-weights.png", "lesson-4-output.png"]
    assert [p.name for p in paths] == names
    assert leftovers(tmp_path) == sorted(names)
    assert DECK_STAGES == ("scores", "scaled", "weights", "output")
    images = [QImage(str(p)) for p in paths]
    assert all(img.width() == 500 for img in images)
    assert len({p.read_bytes() for p in paths}) == 4  # four different figures
    # the weights one is the same figure as a single weights export
    export_file(lesson_scene, tmp_path / "single.png", width=500, options=FigureOptions(stage="weights"))
    assert QImage(str(tmp_path / "single.png")) == images[2]


def test_export_all_stages_without_suffix_gives_png_and_svg_stays_svg(lesson_scene, tmp_path):
    assert export_all_stages(lesson_scene, tmp_path / "deck", width=300)[0].name == "deck-1-scores.png"
    svgs = export_all_stages(lesson_scene, tmp_path / "v.svg")
    assert [p.suffix for p in svgs] == [".svg"] * 4
    for p in svgs:
        ET.parse(p)
    with pytest.raises(ValueError):
        export_all_stages(lesson_scene, tmp_path / "x.csv")


def test_export_all_stages_failing_midway_leaves_nothing(lesson_scene, tmp_path, monkeypatch):
    real = os.replace
    calls = []

    def third_fails(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", third_fails)
    with pytest.raises(OSError, match=r"cannot write .*lesson-3-weights\.png: No space left on device"):
        export_all_stages(lesson_scene, tmp_path / "lesson.png", width=300)
    assert leftovers(tmp_path) == []


# ---- no display needed ----------------------------------------------------------------------------
def test_ensure_app_returns_the_running_application(qapp):
    assert ensure_app() is qapp


def test_export_works_in_a_fresh_process_without_a_display(tmp_path):
    """What the command line does: no QApplication, no DISPLAY, no QT_QPA_PLATFORM."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    code = (
        "from qkv_studio.core import load_preset\n"
        "from qkv_studio.export.files import export_file\n"
        "import os, sys\n"
        "s = load_preset('lesson')\n"
        f"export_file(s, {str(tmp_path / 'f.png')!r}, width=640)\n"
        f"export_file(s, {str(tmp_path / 'f.svg')!r})\n"
        "print(os.environ['QT_QPA_PLATFORM'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(figures.__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "offscreen"
    assert QImage(str(tmp_path / "f.png")).width() == 640
    assert "0.54" in (tmp_path / "f.svg").read_text(encoding="utf-8")
