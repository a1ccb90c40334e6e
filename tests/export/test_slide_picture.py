"""The slide as the audience sees it (issue 22, item 2): ``qkv-studio export --slide`` writes the window's
presentation composition (stage bar, formula, caption, the stage's view and the table) as PNG, SVG or PDF,
each carrying the figure's alt text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from qkv_studio.cli import main
from qkv_studio.core import load_preset
from qkv_studio.core.describe import describe
from qkv_studio.export.slide import check_size, slide_bytes
from qkv_studio.render.figure import FigureOptions
from tests.pdf_facts import pdf_facts


@pytest.fixture(autouse=True)
def _app(qapp):
    return qapp


def _export(tmp_path, capsys, name, *extra):
    out = tmp_path / name
    code = main(["export", "--preset", "lesson", "--query", "sat", "--slide", *extra, "-o", str(out)])
    err = capsys.readouterr().err
    assert (code, err) == (0, "")
    return out


def test_the_slide_png_is_the_composed_slide_at_the_width_asked(tmp_path, capsys):
    small = _export(tmp_path, capsys, "s.png", "--width", "1280")
    with Image.open(small) as im:
        assert im.size == (1280, 720)
        text = im.info
        pixels = np.asarray(im.convert("RGB"))
    lesson = load_preset("lesson")
    assert text["Description"] == describe(lesson, "weights", 2).text and text["Title"].startswith("Slide: ")
    assert len({tuple(p) for p in pixels[::8, ::8].reshape(-1, 3)}) > 20  # a picture, not an empty page
    big = _export(tmp_path, capsys, "big.png")
    with Image.open(big) as im:
        assert im.size == (1920, 1080)  # the default: a 1920 × 1080 screen


def test_the_slide_svg_and_pdf_are_vector_with_the_slides_text(tmp_path, capsys):
    svg = _export(tmp_path, capsys, "s.svg", "--width", "1280", "--stage", "scores")
    root = ET.parse(svg).getroot()
    texts = " ".join("".join(t.itertext()) for t in root.iter() if t.tag.endswith("text"))
    assert "Q·K" in texts and "cat" in texts  # the stage bar and the tokens are text
    assert root.get("viewBox") == "0 0 1280 720"
    title = next(t for t in root.iter() if t.tag.endswith("title")).text
    assert title.startswith("Slide: ") and "scores" in title.lower()
    pdf = _export(tmp_path, capsys, "s.pdf", "--width", "1280", "--theme", "dark")
    facts = pdf_facts(pdf)
    assert facts.page_sizes == ((960, 540),)  # one page, in points
    [words] = facts.texts
    assert "softmax" in words and "sat" in words


def test_slide_options_are_refused_clearly(tmp_path, capsys):
    cases = ((["-o", str(tmp_path / "s.gif")], "--slide writes a picture of the slide: the output must end in "
                                                  ".png, .svg or .pdf, not .gif"),
             (["--slides", "-o", str(tmp_path / "s.pdf")], "not both"),
             (["--stages", "scores,weights", "-o", str(tmp_path / "s.png")], "the slide shows one stage"),
             (["--width", "100", "-o", str(tmp_path / "s.png")], "160–7680 pixels"))
    for args, fragment in cases:
        assert main(["export", "--preset", "lesson", "--slide", *args]) == 2
        err = capsys.readouterr().err
        assert fragment in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_slide_bytes_checks_its_size_and_suffix():
    class Blank:
        size = (320, 180)

        def paint(self, painter):
            pass

    opts = FigureOptions().validated()
    scene = load_preset("lesson")
    assert slide_bytes(".png", Blank(), scene, opts).startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="not '.gif'"):
        slide_bytes(".gif", Blank(), scene, opts)
    for bad in ((10, 10), (320, 99999), ("a", 3)):
        with pytest.raises(ValueError, match="slide"):
            check_size(bad)
