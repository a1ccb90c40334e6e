"""Slide decks (issue 22, item 3): a PowerPoint deck read back with python-pptx and a multi-page vector PDF
read back with pypdf (tests/pdf_facts.py), one slide per stage."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.util import Emu

from qkv_studio.cli import main
from qkv_studio.core import STAGES
from qkv_studio.core.describe import describe
from qkv_studio.core.stages import stage_spec
from qkv_studio.export.files import export_file
from qkv_studio.export.pptx_alt import picture_descriptions
from qkv_studio.export.slides import export_slides_pdf, slide_notes
from qkv_studio.render.figure import FigureOptions
from tests.pdf_facts import pdf_facts


def _descr(path, slide, pic) -> str:
    """A picture's description as the file holds it (the slide's XML, read with the standard library)."""
    return picture_descriptions(path.read_bytes())[(str(slide.part.partname), pic.name)]


def _pictures(slide):
    return [sh for sh in slide.shapes if sh.shape_type == MSO_SHAPE_TYPE.PICTURE]


def test_the_pptx_has_a_slide_per_stage_with_picture_title_notes_and_description(lesson_scene, tmp_path):
    out = tmp_path / "lecture.pptx"
    export_file(lesson_scene, out, width=1200, query=2)
    prs = Presentation(str(out))
    assert (prs.slide_width, prs.slide_height) == (Emu(12192000), Emu(6858000))  # 16:9
    assert len(prs.slides) == len(STAGES)
    for k, (slide, stage) in enumerate(zip(prs.slides, STAGES, strict=False), 1):
        pics = _pictures(slide)
        assert len(pics) == 1
        pic = pics[0]
        # the picture fills the slide below the title: nearly full height or full width, centred
        assert pic.height > 0.75 * prs.slide_height or pic.width > 0.9 * prs.slide_width
        assert abs((pic.left + pic.width / 2) - prs.slide_width / 2) < Emu(20000)
        with Image.open(__import__("io").BytesIO(pic.image.blob)) as im:
            assert im.size[0] == 1200 and im.format == "PNG"
        assert _descr(out, slide, pic) == describe(lesson_scene, stage, 2).text
        texts = [sh.text_frame.text for sh in slide.shapes if sh.has_text_frame]
        assert texts[0].startswith(f"{k} / {len(STAGES)} · ")
        notes = slide.notes_slide.notes_text_frame.text
        assert stage_spec(stage).spoken in notes and "Formula: " in notes
    notes = [s.notes_slide.notes_text_frame.text for s in prs.slides]
    assert "0.54 on “cat”, 0.27 on “mat”, 0.13 on “sat”, 0.06 on “the”" in notes[STAGES.index("weights")]
    assert "q·k = 4" in notes[STAGES.index("scores")] and "√dₖ = 1.414" in notes[STAGES.index("scaled")]
    assert "= [0.33, 0.40]" in notes[STAGES.index("output")]  # (rounded as the cells show them)
    assert "<b>" not in "".join(notes) and "<sub>" not in "".join(notes)  # plain text, not rich text
    assert prs.core_properties.title.endswith("the stages of attention")


def test_the_pptx_takes_the_stages_and_the_query_it_is_given(lesson_scene, tmp_path):
    out = tmp_path / "two.pptx"
    export_file(lesson_scene, out, width=800, stages=("weights", "scores"), query=1)
    prs = Presentation(str(out))
    assert len(prs.slides) == 2
    assert "of “cat” into weights" in prs.slides[0].notes_slide.notes_text_frame.text
    assert "the query 'cat' scores" in _descr(out, prs.slides[1], _pictures(prs.slides[1])[0])
    assert slide_notes(lesson_scene, "weights", 1) == prs.slides[0].notes_slide.notes_text_frame.text


def _pages(path) -> int:
    return pdf_facts(path).pages


def test_the_slides_pdf_has_one_vector_page_per_stage(lesson_scene, tmp_path):
    out = export_slides_pdf(lesson_scene, tmp_path / "slides.pdf", options=FigureOptions(theme="dark", query=2))
    pdf = pdf_facts(out)
    assert pdf.pages == len(STAGES)
    assert set(pdf.page_sizes) == {(960, 540)}  # points: 16:9, every page
    pages = pdf.texts
    assert "4 / 5 · Weights (softmax)" in pages[3] and "0.54" in pages[3]  # vector: the numbers are text
    assert "softmax weights · query “sat”" in pages[3]
    assert "Slide 4: Softmax weights for 4 tokens" in pdf.xmp


def test_the_command_line_writes_decks_and_refuses_bad_combinations(tmp_path, capsys):
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "l.pptx"), "--width", "640",
                 "--stages", "scores,weights"]) == 0
    assert len(Presentation(str(tmp_path / "l.pptx")).slides) == 2
    assert main(["export", "--preset", "causal", "-o", str(tmp_path / "s.pdf"), "--slides"]) == 0
    assert _pages(tmp_path / "s.pdf") == len(STAGES)
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "s3.pdf"), "--slides", "--stages",
                 "scaled,weights,output"]) == 0
    assert _pages(tmp_path / "s3.pdf") == 3
    capsys.readouterr()
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "x.png"), "--slides"]) == 2
    assert "--slides writes a multi-page PDF: the output must end in .pdf" in capsys.readouterr().err
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "x.pptx"), "--fps", "5"]) == 2
    assert "--fps is for animations" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.pptx", "s.pdf", "s3.pdf"]


def test_a_failing_deck_leaves_no_partial_file(lesson_scene, tmp_path, monkeypatch, capsys):
    from qkv_studio.export import slides

    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(slides, "slides_pdf_bytes", broken)
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "s.pdf"), "--slides"]) == 2
    assert "disk on fire" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_pptx_descriptions_are_written_into_the_slide_xml_and_a_missing_picture_is_refused(lesson_scene, tmp_path):
    import io
    import zipfile

    import pytest as _pytest

    from qkv_studio.export.pptx_alt import set_descriptions

    out = tmp_path / "deck.pptx"
    export_file(lesson_scene, out, width=400, stages=("weights",), query=2)
    data = out.read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        xml = z.read("ppt/slides/slide1.xml").decode("utf-8")
    assert 'descr="Softmax weights' in xml and 'name="weights heatmap"' in xml
    assert xml.count("<p:pic>") == 1  # the slide keeps its own prefixes (PowerPoint reads p:, a:, r:)
    assert picture_descriptions(data) == {("/ppt/slides/slide1.xml", "weights heatmap"):
                                          describe(lesson_scene, "weights", 2).text}
    again = set_descriptions(data, {("/ppt/slides/slide1.xml", "weights heatmap"): "new words"})
    assert Presentation(io.BytesIO(again)).slides[0].notes_slide.notes_text_frame.text  # still a deck
    assert picture_descriptions(again)[("/ppt/slides/slide1.xml", "weights heatmap")] == "new words"
    with _pytest.raises(ValueError, match="no picture 'nope'"):
        set_descriptions(data, {("/ppt/slides/slide1.xml", "nope"): "x"})
    with _pytest.raises(ValueError, match="no slide"):
        set_descriptions(data, {("/ppt/slides/slide9.xml", "weights heatmap"): "x"})
    import qkv_studio.export.slides as slides_module

    assert "._element" not in Path(slides_module.__file__).read_text(encoding="utf-8")  # public API only
