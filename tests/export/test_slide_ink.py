"""Ink in exported slides (issue 23, item 3): ``export --ink`` draws a session file's ink on the slide
where it was drawn (points are fractions of the slide) — the slide PNG, SVG and PDF, each page of
``--slides`` and each picture of a ``.pptx`` (then the stage's presentation slide, not the bare figure);
without ``--ink`` none, and never on the bare figure."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE

from qkv_studio.cli import main
from qkv_studio.core import STAGES, preset_document, write_session
from qkv_studio.core.ink import EMPTY_INK, stroke
from qkv_studio.export.files import export_file
from qkv_studio.export.slide import slide_bytes, with_ink
from qkv_studio.render.figure import FigureOptions
from tests.pdf_facts import pdf_page_pixels

Y = 0.5  # the red stroke on "weights": across the slide at half its height
X0, X1 = 0.1, 0.9
BLUE_X = 0.5  # the blue stroke on "scores": down the slide at half its width


def _inked_file(tmp_path):
    doc = preset_document("lesson")
    ink = EMPTY_INK.with_stroke("weights", stroke([(X0, Y, 1), (X1, Y, 1)], 1, 0.008))
    ink = ink.with_stroke("scores", stroke([(BLUE_X, 0.1, 1), (BLUE_X, 0.9, 1)], 4, 0.008))
    path = tmp_path / "inked.qkv.json"
    write_session(path, doc.scene, doc.view, ink=ink)
    return path


def _red(px) -> bool:  # ink 1 (#ff1f4b), not the pink of the highlighted row (#d81b60)
    r, g, b = (int(v) for v in px[:3])
    return r > 235 and g < 80 and 40 < b < 120


def _blue(px) -> bool:  # ink 4 (#2f7bff)
    r, g, b = (int(v) for v in px[:3])
    return b > 220 and r < 90 and 90 < g < 160


def _share_along_row(pixels: np.ndarray, y: float, test, x0: float = X0 + 0.02, x1: float = X1 - 0.02) -> float:
    """The share of pixels that pass ``test`` on the row at fraction ``y``, between x0 and x1."""
    h, w = pixels.shape[:2]
    row = round(y * h)
    xs = range(round(x0 * w), round(x1 * w))
    hits = sum(any(test(pixels[r, x]) for r in (row - 1, row, row + 1)) for x in xs)
    return hits / len(xs)


def _share_along_column(pixels: np.ndarray, x: float, test) -> float:
    h, w = pixels.shape[:2]
    col = round(x * w)
    ys = range(round(0.12 * h), round(0.88 * h))
    return sum(any(test(pixels[y, c]) for c in (col - 1, col, col + 1)) for y in ys) / len(ys)


def _png(path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def _export(capsys, *args) -> None:
    code = main(["export", *args])
    assert (code, capsys.readouterr().err) == (0, "")


def test_the_slide_png_has_the_stages_ink_where_its_fractions_map(tmp_path, capsys):
    session = _inked_file(tmp_path)
    for width, height in ((1280, 720), (1920, 1080)):
        out = tmp_path / f"inked-{width}.png"
        _export(capsys, str(session), "--slide", "--ink", "--width", str(width), "-o", str(out))
        pixels = _png(out)
        assert pixels.shape[:2] == (height, width)
        assert _share_along_row(pixels, Y, _red) > 0.95  # the stroke, end to end, at half the height
        assert _share_along_row(pixels, 0.3, _red) < 0.02  # and nowhere else
        assert _share_along_column(pixels, BLUE_X, _blue) < 0.02  # (the scores' stroke is not this stage's)
        # the stroke's ends: red inside, the slide's own colours a little beyond
        assert _red(pixels[round(Y * height), round(0.12 * width)]) and \
            not _red(pixels[round(Y * height), round(0.05 * width)])
    plain = tmp_path / "plain.png"
    _export(capsys, str(session), "--slide", "--width", "1280", "-o", str(plain))
    assert _share_along_row(_png(plain), Y, _red) < 0.02  # without --ink: no ink


def test_the_slide_is_the_live_slide_with_its_ink(tmp_path, capsys):
    session = _inked_file(tmp_path)
    out, shot = tmp_path / "slide.png", tmp_path / "shot.png"
    _export(capsys, str(session), "--slide", "--ink", "--width", "1280", "-o", str(out))
    assert main(["screenshot", str(session), "--presentation", "--ink", "--size", "1280x720", "-o", str(shot)]) == 0
    differ = np.abs(_png(out).astype(int) - _png(shot).astype(int)).sum(axis=2) > 40
    assert differ.mean() < 0.002  # the strokes land on the same cells as on the projector


def test_the_slide_pdf_and_the_slides_pdf_have_the_ink_on_their_pages(tmp_path, capsys):
    session = _inked_file(tmp_path)
    one = tmp_path / "slide.pdf"
    _export(capsys, str(session), "--slide", "--ink", "--width", "1280", "-o", str(one))
    [page] = pdf_page_pixels(one)
    assert page.shape[:2] == (720, 1280) and _share_along_row(page, Y, _red) > 0.95
    deck = tmp_path / "slides.pdf"
    _export(capsys, str(session), "--slides", "--ink", "--width", "1280", "-o", str(deck))
    pages = pdf_page_pixels(deck)
    assert len(pages) == len(STAGES)
    weights, scores = pages[STAGES.index("weights")], pages[STAGES.index("scores")]
    assert _share_along_row(weights, Y, _red) > 0.95 and _share_along_column(weights, BLUE_X, _blue) < 0.02
    assert _share_along_column(scores, BLUE_X, _blue) > 0.95 and _share_along_row(scores, Y, _red) < 0.02
    for stage in ("vectors", "scaled", "output"):  # (no ink drawn there)
        p = pages[STAGES.index(stage)]
        assert _share_along_row(p, Y, _red) < 0.02 and _share_along_column(p, BLUE_X, _blue) < 0.02
    plain = tmp_path / "plain.pdf"
    _export(capsys, str(session), "--slides", "-o", str(plain))
    assert _share_along_row(pdf_page_pixels(plain)[STAGES.index("weights")], Y, _red) < 0.02


def test_the_pptx_pictures_are_the_stages_slides_with_their_ink(tmp_path, capsys):
    session = _inked_file(tmp_path)
    out = tmp_path / "lecture.pptx"
    _export(capsys, str(session), "--ink", "--width", "1280", "-o", str(out))
    prs = Presentation(str(out))
    assert len(prs.slides) == len(STAGES)
    for k, (slide, stage) in enumerate(zip(prs.slides, STAGES, strict=False), 1):
        shapes = list(slide.shapes)
        [pic] = [sh for sh in shapes if sh.shape_type == MSO_SHAPE_TYPE.PICTURE]
        # the slide as the audience saw it fills the PowerPoint slide; its title is kept, behind it
        assert (pic.left, pic.top, pic.width, pic.height) == (0, 0, prs.slide_width, prs.slide_height)
        [title] = [sh for sh in shapes if sh.has_text_frame]
        assert title.text_frame.text.startswith(f"{k} / {len(STAGES)} · ") and shapes.index(title) < shapes.index(pic)
        assert "Formula: " in slide.notes_slide.notes_text_frame.text  # (the notes as before)
        pixels = np.asarray(Image.open(io.BytesIO(pic.image.blob)).convert("RGB"))
        assert pixels.shape[:2] == (720, 1280)
        red, blue = _share_along_row(pixels, Y, _red), _share_along_column(pixels, BLUE_X, _blue)
        assert (red > 0.95, blue > 0.95) == (stage == "weights", stage == "scores"), stage
    plain = tmp_path / "plain.pptx"
    _export(capsys, str(session), "-o", str(plain))
    prs = Presentation(str(plain))
    [pic] = [sh for sh in prs.slides[STAGES.index("weights")].shapes if sh.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert pic.top > 0  # the bare figure below the title, as before
    assert _share_along_row(np.asarray(Image.open(io.BytesIO(pic.image.blob)).convert("RGB")), Y, _red) < 0.02


def test_ink_is_refused_for_the_bare_figure_and_without_a_slide(tmp_path, capsys):
    session = _inked_file(tmp_path)
    for name in ("fig.png", "fig.svg", "anim.gif", "w.csv"):
        assert main(["export", str(session), "--ink", "-o", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert "--ink draws the ink on the slide" in err and err.count("\n") == 1, err
    assert not [p for p in tmp_path.iterdir() if p.name != session.name]
    scene = preset_document("lesson").scene
    with pytest.raises(ValueError, match="ink belongs to the slide"):
        export_file(scene, tmp_path / "f.png", ink=EMPTY_INK)
    with pytest.raises(ValueError, match="only the window composes"):
        export_file(scene, tmp_path / "d.pptx", ink=EMPTY_INK)  # (no slide to draw it on)


def test_with_ink_draws_the_strokes_scaled_to_the_slide():
    class Grey:
        def __init__(self, size):
            self.size = size

        def paint(self, painter):
            from PySide6.QtGui import QColor

            painter.fillRect(0, 0, *self.size, QColor("#808080"))

    ink = stroke([(0.25, 0.75, 1), (0.75, 0.75, 1)], 1, 0.01)
    scene, opts = preset_document("lesson").scene, FigureOptions().validated()
    assert with_ink(Grey((320, 180)), ()).size == (320, 180)
    for size in ((320, 180), (1600, 900)):
        pixels = np.asarray(Image.open(io.BytesIO(slide_bytes(".png", with_ink(Grey(size), [ink]), scene, opts)))
                            .convert("RGB"))
        w, h = size
        assert _red(pixels[round(0.75 * h), w // 2]) and not _red(pixels[h // 4, w // 2])
        assert not _red(pixels[round(0.75 * h), w // 8])
