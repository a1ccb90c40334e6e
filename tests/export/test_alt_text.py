"""Every exported figure carries its alt text: SVG <title>/<desc>, the PDF's title and XMP description,
PNG iTXt chunks, and the export dialog shows it with a Copy button (issue 22, item 4)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PIL import Image
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from qkv_studio.core.describe import describe
from qkv_studio.export.files import export_file
from qkv_studio.export.png import itxt
from qkv_studio.render.figure import FigureOptions
from tests.pdf_facts import pdf_facts
from tests.views import LESSON_VIEW

SVG = "{http://www.w3.org/2000/svg}"
LESSON_WEIGHTS = ("Softmax weights for 4 tokens (the, cat, sat, mat); each row sums to 1; the query 'sat' puts "
                  "0.54 on 'cat', 0.27 on 'mat', 0.13 on 'sat', 0.06 on 'the'")


def test_the_png_holds_title_and_description_in_itxt_chunks(lesson_scene, tmp_path):
    export_file(lesson_scene, tmp_path / "w.png", width=400, options=FigureOptions(query=2))
    with Image.open(tmp_path / "w.png") as im:
        im.load()
        assert im.text["Description"].startswith(LESSON_WEIGHTS)
        assert im.text["Description"] == describe(lesson_scene, "weights", 2).text
        assert im.text["Title"] == "softmax weights · query “sat” · dₖ = 2"  # the figure's own title
        assert im.text["Software"] == "QKV Studio"
        assert im.size[0] == 400
    raw = (tmp_path / "w.png").read_bytes()
    assert raw.count(b"iTXt") == 3 and raw.index(b"iTXt") < raw.index(b"IDAT")


def test_a_png_text_chunk_is_utf8_and_its_keyword_is_checked():
    assert itxt("Description", "dₖ → ∞") == b"Description\0\0\0\0\0" + "dₖ → ∞".encode()
    with pytest.raises(ValueError, match="keyword"):
        itxt("", "x")


def test_the_svg_holds_the_title_and_the_description(lesson_scene, tmp_path):
    scene = lesson_scene
    export_file(scene, tmp_path / "s.svg", options=FigureOptions(stage="scores", query=2))
    root = ET.parse(tmp_path / "s.svg").getroot()
    assert root.find(f"{SVG}title").text == "raw scores Q·Kᵀ · query “sat” · dₖ = 2"
    desc = root.find(f"{SVG}desc").text
    assert desc == describe(scene, "scores", 2).text
    assert "the query 'sat' scores 4 with 'cat', 3 with 'mat', 2 with 'sat', 1 with 'the'" in desc


def test_the_pdf_has_the_title_and_the_description_in_its_metadata(lesson_scene, tmp_path):
    export_file(lesson_scene, tmp_path / "w.pdf", options=FigureOptions(stage="output", query=2))
    pdf = pdf_facts(tmp_path / "w.pdf")
    assert pdf.title == "softmax weights → blend · query “sat” · dₖ = 2"
    assert pdf.creator == "QKV Studio"
    meta = pdf.xmp
    root = ET.fromstring(meta[meta.index("<x:xmpmeta"):meta.index("</x:xmpmeta>") + len("</x:xmpmeta>")])
    ns = {"dc": "http://purl.org/dc/elements/1.1/", "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#"}
    desc = root.find(".//dc:description/rdf:Alt/rdf:li", ns).text
    assert desc == describe(lesson_scene, "output", 2).text and "0.54·v(cat)" in desc
    assert root.find(".//dc:title/rdf:Alt/rdf:li", ns).text == "softmax weights → blend · query “sat” · dₖ = 2"


def test_markup_in_token_names_is_escaped_in_svg_and_pdf(lesson_scene, tmp_path):
    scene = lesson_scene.rename_token(1, "<b>&c")
    export_file(scene, tmp_path / "m.svg")
    export_file(scene, tmp_path / "m.pdf")
    assert "'<b>&c'" in ET.parse(tmp_path / "m.svg").getroot().find(f"{SVG}desc").text
    assert "&lt;b&gt;&amp;c" in pdf_facts(tmp_path / "m.pdf").xmp  # the raw XMP: escaped, still XML


def test_the_dialog_shows_the_description_and_copies_it(qtbot, lesson_scene):
    from qkv_studio.ui.dialogs.export_dialog import ExportDialog
    from qkv_studio.ui.window.main_window import MainWindow

    QSettings().clear()
    w = MainWindow(lesson_scene, use_settings=False, view=LESSON_VIEW)
    qtbot.addWidget(w)
    dlg = ExportDialog(w, use_settings=False)
    qtbot.addWidget(dlg)
    assert dlg.alt_text_edit.isReadOnly()
    assert dlg.alt_text_edit.toPlainText().startswith(LESSON_WEIGHTS)
    dlg.stage_combo.setCurrentIndex(dlg.stage_combo.findData("scores"))
    dlg.refresh_preview()
    assert dlg.alt_text_edit.toPlainText() == describe(lesson_scene, "scores", 2).text
    QApplication.clipboard().clear()
    dlg.copy_alt_button.click()
    assert QApplication.clipboard().text() == describe(lesson_scene, "scores", 2).text


def test_the_dialog_offers_the_animations_and_the_deck_and_writes_them(qtbot, lesson_scene, tmp_path):
    from PIL import ImageSequence
    from pptx import Presentation

    from qkv_studio.ui.dialogs.export_dialog import ExportDialog
    from qkv_studio.ui.window.main_window import MainWindow

    QSettings().clear()
    w = MainWindow(lesson_scene, use_settings=False, view=LESSON_VIEW)
    qtbot.addWidget(w)
    dlg = ExportDialog(w, use_settings=False)
    qtbot.addWidget(dlg)
    combo = dlg.format_combo
    assert [combo.itemData(i) for i in range(combo.count())][3:] == [".gif", ".apng", ".mp4", ".pptx", ".html"]
    assert not dlg.fps_spin.isVisibleTo(dlg)  # a PNG does not move
    combo.setCurrentIndex(combo.findData(".gif"))
    assert dlg.fps_spin.isVisibleTo(dlg) and dlg.hold_spin.isVisibleTo(dlg)
    assert not dlg.all_stages_check.isEnabled()
    dlg.width_radio.setChecked(True)
    dlg.width_spin.setValue(400)
    assert dlg.size_label.text() == "400 × 224 px"
    dlg.fps_spin.setValue(10)
    dlg.hold_spin.setValue(0.5)
    assert dlg.export_to(tmp_path / "anim") == [tmp_path / "anim.gif"]
    with Image.open(tmp_path / "anim.gif") as im:
        assert im.size == (400, 224)
        assert sum(f.info["duration"] for f in ImageSequence.Iterator(im)) == 5 * 500 + 2 * 500
    combo.setCurrentIndex(combo.findData(".pptx"))
    assert not dlg.fps_spin.isVisibleTo(dlg)
    assert dlg.export_to(tmp_path / "deck") == [tmp_path / "deck.pptx"]
    assert len(Presentation(str(tmp_path / "deck.pptx")).slides) == 5
