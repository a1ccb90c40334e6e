"""File → Export heatmap…, Copy heatmap and Export numbers…, driven without exec()."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QSize
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QMessageBox

from qkv_studio.core.numbers import json_text, stage_csv
from qkv_studio.render.figure import FigureOptions, figure_size
from qkv_studio.ui.dialogs import export_dialog as ed
from qkv_studio.ui.dialogs.export_dialog import (
    ExportDialog,
    copy_heatmap,
    do_export,
    export_heatmap,
    export_numbers,
    export_options_from_dialog,
)
from qkv_studio.ui.window.main_window import MainWindow
from tests.views import LESSON_VIEW


@pytest.fixture(autouse=True)
def _fresh_settings():
    """Qt reads the settings folder once per process, so conftest's per-test XDG folders do not
    separate QSettings between tests: start and end every test here with empty settings."""
    QSettings().clear()
    yield
    QSettings().clear()


@pytest.fixture
def window(qtbot, lesson_scene):
    # use_settings=True: conftest points QSettings at a fresh folder for every test.
    w = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(w)
    return w


@pytest.fixture
def dialog(qtbot, window):
    d = ExportDialog(window)
    qtbot.addWidget(d)
    return d


def _natural(window, **changes):
    opts = FigureOptions(stage=window.session.stage, query=window.session.query, theme=window.appearance.theme.name,
                         colormap=window.appearance.colormap, **changes)
    s = figure_size(window.session.scene, opts)
    return round(s.width()), round(s.height())


# ---- defaults -----------------------------------------------------------------------------------
def test_defaults_follow_the_windows_stage_theme_and_colormap(qtbot, window):
    window.session.set_stage("scores")
    window.apply_theme("dark")
    window.apply_colormap("magma")
    d = ExportDialog(window)
    qtbot.addWidget(d)
    opts, width = export_options_from_dialog(d)
    assert (opts.stage, opts.theme, opts.colormap) == ("scores", "dark", "magma")
    assert d.stage_combo.currentData() == "scores" and d.theme_combo.currentData() == "dark"
    assert width == 1600 and opts.title and opts.values and opts.background == "theme"

    window.session.set_stage("output")
    window.apply_theme("projector")
    window.apply_colormap("cividis")
    d2 = ExportDialog(window)
    qtbot.addWidget(d2)
    opts2, _ = export_options_from_dialog(d2)
    assert (opts2.stage, opts2.theme, opts2.colormap) == ("output", "projector", "cividis")


def test_the_dialog_offers_every_stage_format_theme_colormap_and_background(dialog):
    items = lambda combo: [combo.itemData(i) for i in range(combo.count())]  # noqa: E731
    assert items(dialog.stage_combo) == ["vectors", "scores", "scaled", "weights", "output"]
    assert items(dialog.format_combo) == [".png", ".svg", ".pdf", ".gif", ".apng", ".mp4", ".pptx", ".html"]
    assert items(dialog.theme_combo) == ["light", "dark", "projector"]
    assert items(dialog.colormap_combo) == ["viridis", "cividis", "magma", "grayscale"]
    assert items(dialog.background_combo) == ["theme", "white", "transparent"]
    assert (dialog.width_spin.minimum(), dialog.width_spin.maximum()) == (100, 7680)
    assert (dialog.scale_spin.minimum(), dialog.scale_spin.maximum()) == (1.0, 8.0)


def test_default_file_name_comes_from_the_scene_title_or_file_and_the_stage(qtbot, window, tmp_path):
    d = ExportDialog(window)
    qtbot.addWidget(d)
    assert Path(d.path_edit.text()).name == "the-lessons-example-weights.png"
    d.stage_combo.setCurrentIndex(d.stage_combo.findData("scaled"))
    d.format_combo.setCurrentIndex(d.format_combo.findData(".svg"))
    assert Path(d.path_edit.text()).name == "the-lessons-example-scaled.svg"
    d.all_stages_check.setChecked(True)
    assert Path(d.path_edit.text()).name == "the-lessons-example.svg"
    assert "the-lessons-example-1-scores.svg" in d.deck_label.text()

    window.session.mark_saved(str(tmp_path / "my talk.qkv.json"))
    d2 = ExportDialog(window)
    qtbot.addWidget(d2)
    assert Path(d2.path_edit.text()).name == "my talk-weights.png"


# ---- size ---------------------------------------------------------------------------------------
def test_width_and_scale_update_the_pixel_size_label(dialog, window):
    nat_w, nat_h = _natural(window)
    dialog.width_spin.setValue(1200)
    assert dialog.size_label.text() == f"1200 × {round(1200 * nat_h / nat_w)} px"
    dialog.width_spin.setValue(800)
    assert dialog.size_label.text().startswith("800 × ")

    dialog.scale_radio.setChecked(True)
    dialog.scale_spin.setValue(3.0)
    assert dialog.pixel_width() == 3 * nat_w
    assert dialog.size_label.text() == f"{3 * nat_w} × {3 * nat_h} px"
    assert not dialog.width_spin.isEnabled() and dialog.scale_spin.isEnabled()

    # Dropping the colour bar shrinks the natural size, and with it the scaled width.
    dialog.include_checks["colorbar"].setChecked(False)
    assert dialog.pixel_width() == 3 * _natural(window, colorbar=False)[0] < 3 * nat_w

    dialog.scale_spin.setValue(8.0)
    assert dialog.pixel_width() == min(7680, 8 * _natural(window, colorbar=False)[0])


def test_scale_is_capped_at_7680_pixels(qtbot, window):
    from qkv_studio.core import load_preset

    window.session.load(load_preset("long"))
    d = ExportDialog(window)
    qtbot.addWidget(d)
    d.scale_radio.setChecked(True)
    d.scale_spin.setValue(8.0)
    assert 8 * d.natural_size().width() > 7680
    assert d.pixel_width() == 7680 and "7680 ×" in d.size_label.text()


def test_vector_formats_have_no_pixel_size_and_pdf_has_no_transparent_background(dialog):
    dialog.background_combo.setCurrentIndex(dialog.background_combo.findData("transparent"))
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".pdf"))
    assert not dialog.width_spin.isEnabled() and not dialog.scale_radio.isEnabled()
    assert "pt page" in dialog.size_label.text()
    transparent = dialog.background_combo.model().item(dialog.background_combo.findData("transparent"))
    assert not transparent.isEnabled()
    assert dialog.background_combo.currentData() == "white"
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".svg"))
    assert transparent.isEnabled()
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".png"))
    assert dialog.width_spin.isEnabled() and dialog.size_label.text().endswith(" px")


# ---- exporting ----------------------------------------------------------------------------------
def test_png_at_width_1200_is_1200_pixels_wide(dialog, tmp_path):
    dialog.width_spin.setValue(1200)
    out = tmp_path / "fig.png"
    assert dialog.export_to(out) == [out]
    img = QImage(str(out))
    assert not img.isNull() and img.width() == 1200
    assert img.height() == dialog.pixel_size().height()


def test_the_png_has_the_chosen_background(dialog, tmp_path):
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    dialog.background_combo.setCurrentIndex(dialog.background_combo.findData("transparent"))
    dialog.width_spin.setValue(400)
    out = tmp_path / "clear.png"
    dialog.export_to(out)
    assert QImage(str(out)).pixelColor(1, 1).alpha() == 0
    dialog.background_combo.setCurrentIndex(dialog.background_combo.findData("theme"))
    dialog.export_to(out)
    assert QImage(str(out)).pixelColor(1, 1).name() == "#1d1f23"  # the dark theme's background


def test_svg_holds_the_token_labels_as_text(dialog, window, tmp_path):
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".svg"))
    out = tmp_path / "fig.svg"
    assert dialog.export_to(str(out)) == [out]
    root = ET.parse(out).getroot()
    texts = {"".join(t.itertext()).strip() for t in root.iter() if t.tag.endswith("text")}
    assert set(window.session.scene.tokens) <= texts
    assert "0.54" in texts  # values in cells

    dialog.include_checks["token_labels"].setChecked(False)
    dialog.include_checks["values"].setChecked(False)
    dialog.export_to(out)
    root = ET.parse(out).getroot()
    texts = {"".join(t.itertext()).strip() for t in root.iter() if t.tag.endswith("text")}
    assert not set(window.session.scene.tokens) & texts and "0.54" not in texts


def test_pdf_is_a_pdf(dialog, tmp_path):
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".pdf"))
    out = tmp_path / "fig"  # the format adds the ending
    assert dialog.export_to(out) == [tmp_path / "fig.pdf"]
    assert (tmp_path / "fig.pdf").read_bytes().startswith(b"%PDF")


def test_all_stages_writes_one_numbered_png_per_stage(dialog, tmp_path):
    dialog.all_stages_check.setChecked(True)
    dialog.width_spin.setValue(640)
    written = dialog.export_to(tmp_path / "name.png")
    expected = [tmp_path / f"name-{i}-{s}.png" for i, s in enumerate(("scores", "scaled", "weights", "output"), 1)]
    assert written == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in expected)
    assert all(QImage(str(p)).width() == 640 for p in expected)


def test_do_export_exports_the_dialogs_stage(dialog, tmp_path):
    dialog.stage_combo.setCurrentIndex(dialog.stage_combo.findData("scaled"))
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".svg"))
    dialog.path_edit.setText(str(tmp_path / "s.svg"))
    assert do_export(dialog) == [tmp_path / "s.svg"]
    assert "scaled scores" in (tmp_path / "s.svg").read_text(encoding="utf-8")


def test_a_missing_folder_warns_in_one_line_keeps_the_options_and_writes_nothing(qtbot, dialog, tmp_path, warnings):
    dialog.width_spin.setValue(1234)
    dialog.include_checks["values"].setChecked(False)
    bad = tmp_path / "missing" / "fig.png"
    assert dialog.export_to(bad) == []
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert "cannot write" in warnings[0].lower() and "fig.png" in warnings[0]
    assert not bad.parent.exists() and list(tmp_path.iterdir()) == []
    assert dialog.width_spin.value() == 1234 and not dialog.include_checks["values"].isChecked()
    assert dialog.path_edit.text() == str(bad)

    # Through the Export button: the dialog stays open.
    dialog.show()
    dialog.export_button.click()
    assert len(warnings) == 2 and dialog.isVisible() and dialog.result() != QDialog.Accepted
    # Fix the path and it goes through and closes.
    dialog.path_edit.setText(str(tmp_path / "fig.png"))
    dialog.export_button.click()
    assert (tmp_path / "fig.png").exists() and not dialog.isVisible() and dialog.result() == QDialog.Accepted


def test_options_and_folder_are_remembered_for_the_next_dialog(qtbot, window, tmp_path):
    first = ExportDialog(window)
    qtbot.addWidget(first)
    assert first.width_spin.value() == 1600 and first.include_checks["values"].isChecked()
    folder = tmp_path / "slides"
    folder.mkdir()
    first.width_spin.setValue(1234)
    first.include_checks["values"].setChecked(False)
    first.include_checks["title"].setChecked(False)
    first.background_combo.setCurrentIndex(first.background_combo.findData("white"))
    first.format_combo.setCurrentIndex(first.format_combo.findData(".svg"))
    first.scale_radio.setChecked(True)
    first.scale_spin.setValue(2.5)
    assert first.export_to(folder / "fig.svg")

    second = ExportDialog(window)
    qtbot.addWidget(second)
    assert second.width_spin.value() == 1234 and second.scale_spin.value() == 2.5
    assert second.scale_radio.isChecked()
    assert not second.include_checks["values"].isChecked() and not second.include_checks["title"].isChecked()
    assert second.include_checks["colorbar"].isChecked()
    assert second.background_combo.currentData() == "white" and second.suffix == ".svg"
    assert Path(second.path_edit.text()).parent == folder
    assert ed.last_folder(second.settings) == str(folder)


def test_choose_file_starts_in_the_last_folder_and_sets_the_format(qtbot, window, tmp_path, monkeypatch):
    window.settings().setValue("export/folder", str(tmp_path))
    asked = []

    def fake(parent, caption, start, filters, selected=""):
        asked.append(start)
        return str(tmp_path / "picked"), "PDF (vector) (*.pdf)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    d = ExportDialog(window)
    qtbot.addWidget(d)
    assert d.choose_file() == tmp_path / "picked.pdf"
    assert Path(asked[0]).parent == tmp_path
    assert d.suffix == ".pdf" and d.path_edit.text() == str(tmp_path / "picked.pdf")
    # A chosen name is kept when the stage changes; only its ending follows the format.
    d.stage_combo.setCurrentIndex(d.stage_combo.findData("scores"))
    d.format_combo.setCurrentIndex(d.format_combo.findData(".png"))
    assert d.path_edit.text() == str(tmp_path / "picked.png")


def test_the_preview_follows_the_options_after_a_short_pause(qtbot, dialog):
    def corner():
        return dialog.preview_label.pixmap().toImage().pixelColor(2, 2).name()

    assert corner() == "#ffffff"
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    assert corner() == "#ffffff"  # debounced: not yet
    qtbot.waitUntil(lambda: corner() == "#1d1f23", timeout=5000)
    assert dialog.preview_label.pixmap().width() <= ed.PREVIEW_SIZE.width() * dialog.devicePixelRatioF()


def test_export_heatmap_opens_one_dialog_for_the_window(qtbot, window, tmp_path):
    window.session.set_stage("scaled")
    d = export_heatmap(window)
    qtbot.waitUntil(d.isVisible, timeout=5000)
    assert d.stage_combo.currentData() == "scaled" and d.parent() is window
    assert export_heatmap(window) is d
    d.width_spin.setValue(300)
    assert d.export_to(tmp_path / "a.png") == [tmp_path / "a.png"]
    d.reject()


# ---- clipboard and numbers ------------------------------------------------------------------------
def test_copy_heatmap_puts_the_current_figure_on_the_clipboard(window):
    window.apply_theme("dark")
    QApplication.clipboard().clear()
    assert QApplication.clipboard().image().isNull()
    img = copy_heatmap(window)
    clip = QApplication.clipboard().image()
    assert not img.isNull() and img.width() == 1600
    assert not clip.isNull() and clip.width() == 1600 and clip.height() == img.height()
    assert clip.pixelColor(1, 1).name() == "#1d1f23"  # the window's theme
    assert copy_heatmap(window, width=900).width() == 900


def test_export_numbers_writes_the_current_stage_as_csv_and_all_as_json(window, tmp_path):
    window.session.set_stage("scaled")
    scene = window.session.scene
    assert export_numbers(window, tmp_path / "n.csv") == tmp_path / "n.csv"
    text = (tmp_path / "n.csv").read_text(encoding="utf-8")
    assert text == stage_csv(scene, "scaled") and text != stage_csv(scene, "weights")
    assert export_numbers(window, tmp_path / "all.json") == tmp_path / "all.json"
    want = json_text(scene, query=window.session.query, stage="scaled")
    assert (tmp_path / "all.json").read_text(encoding="utf-8") == want
    assert json.loads(want)["query"]["index"] == window.session.query == 2


def test_export_numbers_asks_for_a_file_and_adds_the_ending(window, tmp_path, monkeypatch):
    window.settings().setValue("export/folder", str(tmp_path))
    asked = []

    def fake(parent, caption, start, filters, selected=""):
        asked.append(start)
        return str(tmp_path / "numbers"), "JSON — all stages (*.json)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    assert export_numbers(window) == tmp_path / "numbers.json"
    assert Path(asked[0]) == tmp_path / "the-lessons-example-weights.csv"
    s = window.session
    assert (tmp_path / "numbers.json").read_text(encoding="utf-8") == json_text(s.scene, query=s.query, stage=s.stage)

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    assert export_numbers(window) is None


def test_export_numbers_failures_warn_in_one_line_and_leave_nothing(window, tmp_path, warnings):
    assert export_numbers(window, tmp_path / "missing" / "n.csv") is None
    assert export_numbers(window, tmp_path / "n.txt") is None
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)
    assert "n.csv" in warnings[0] and ".csv" in warnings[1]
    assert list(tmp_path.iterdir()) == []


# ---- the file name and the format agree; replacing a file is confirmed (issue 19, item 10) -----------
def _type(qtbot, edit, text):
    """Type ``text`` into a line edit as a user does (textEdited fires for each key)."""
    edit.clear()
    qtbot.keyClicks(edit, text)


def test_a_typed_ending_picks_the_format_and_the_format_changes_only_the_ending(qtbot, dialog, tmp_path):
    assert dialog.suffix == ".png"
    _type(qtbot, dialog.path_edit, str(tmp_path / "fig.svg"))
    assert dialog.suffix == ".svg" and dialog.format_combo.currentData() == ".svg"
    assert dialog.path() == tmp_path / "fig.svg" and dialog.path_note.isHidden()
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".pdf"))
    assert dialog.path_edit.text() == str(tmp_path / "fig.pdf")  # the typed name kept, its ending the format's
    _type(qtbot, dialog.path_edit, str(tmp_path / "talk.gif"))
    assert dialog.suffix == ".gif" and dialog.is_animated and dialog.motion_row.isVisibleTo(dialog)
    # The command line's rule through export_to too: fig.svg with PNG chosen is an SVG, not fig.png.
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData(".png"))
    assert dialog.export_to(tmp_path / "typed.svg") == [tmp_path / "typed.svg"]
    assert (tmp_path / "typed.svg").read_bytes().lstrip().startswith(b"<?xml") and dialog.suffix == ".svg"
    assert not (tmp_path / "typed.png").exists()


def test_an_ending_no_format_has_gets_a_clear_message_and_writes_nothing(qtbot, dialog, tmp_path, warnings):
    _type(qtbot, dialog.path_edit, str(tmp_path / "fig.txt"))
    assert dialog.suffix == ".png"  # unchanged
    note = dialog.path_note.text()
    assert dialog.path_note.isVisibleTo(dialog) and "'.txt'" in note and ".png, .svg" in note
    assert dialog.export_to() == []
    assert len(warnings) == 1 and "not a format the export writes" in warnings[0] and "\n" not in warnings[0]
    assert list(tmp_path.iterdir()) == []
    # A dot inside a name is no file type: the format's ending is added.
    _type(qtbot, dialog.path_edit, str(tmp_path / "fig.v2"))
    assert dialog.path_note.isHidden() and dialog.path() == tmp_path / "fig.v2.png"


def _answer(monkeypatch, answer):
    asked = []

    def question(parent, title, text, buttons=None, default=None):
        asked.append(text)
        return answer

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked


def test_export_asks_before_replacing_a_file_and_no_keeps_it(qtbot, dialog, tmp_path, monkeypatch):
    target = tmp_path / "fig.png"
    target.write_bytes(b"the lecturer's own figure")
    asked = _answer(monkeypatch, QMessageBox.No)
    dialog.show()
    _type(qtbot, dialog.path_edit, str(target))
    dialog.export_button.click()
    assert len(asked) == 1 and "fig.png already exists" in asked[0] and "Replace it?" in asked[0]
    assert target.read_bytes() == b"the lecturer's own figure" and dialog.isVisible()

    asked = _answer(monkeypatch, QMessageBox.Yes)
    dialog.export_button.click()
    assert len(asked) == 1 and target.read_bytes().startswith(b"\x89PNG") and not dialog.isVisible()


def test_a_new_file_and_a_name_the_save_dialog_confirmed_are_not_asked_again(qtbot, window, tmp_path, monkeypatch):
    asked = _answer(monkeypatch, QMessageBox.No)
    d = ExportDialog(window)
    qtbot.addWidget(d)
    d.show()
    _type(qtbot, d.path_edit, str(tmp_path / "new.png"))
    d.export_button.click()
    assert asked == [] and (tmp_path / "new.png").exists()

    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(tmp_path / "new.png"), "PNG image (*.png)")))
    d2 = ExportDialog(window)
    qtbot.addWidget(d2)
    d2.show()
    d2.choose_file()  # (Qt's save dialog asks before a file is replaced)
    d2.export_button.click()
    assert asked == [] and not d2.isVisible()


def test_all_stages_asks_once_for_the_files_that_exist(qtbot, dialog, tmp_path, monkeypatch):
    (tmp_path / "name-2-scaled.png").write_bytes(b"old")
    (tmp_path / "name-3-weights.png").write_bytes(b"old")
    asked = _answer(monkeypatch, QMessageBox.No)
    dialog.all_stages_check.setChecked(True)
    dialog.width_spin.setValue(300)
    dialog.show()
    _type(qtbot, dialog.path_edit, str(tmp_path / "name.png"))
    dialog.export_button.click()
    assert len(asked) == 1 and "2 of the 4 files already exist" in asked[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["name-2-scaled.png", "name-3-weights.png"]


# ---- the slide and the decks from the dialog (issue 22) ----------------------------------------------
def _slide_dialog(qtbot, window):
    from qkv_studio.ui.window.slide_picture import SlideComposer

    d = ExportDialog(window, slide_composer=SlideComposer)
    qtbot.addWidget(d)
    return d


def _pictures(d):
    return [d.picture_combo.itemData(i) for i in range(d.picture_combo.count())]


def test_the_picture_box_offers_what_each_format_writes(qtbot, window, dialog):
    d = _slide_dialog(qtbot, window)
    assert _pictures(d) == ["figure", "slide"]
    d.format_combo.setCurrentIndex(d.format_combo.findData(".pdf"))
    assert _pictures(d) == ["figure", "slide", "slides"]
    d.format_combo.setCurrentIndex(d.format_combo.findData(".pptx"))
    assert _pictures(d) == ["slides"] and not d.picture_combo.isEnabled()
    d.format_combo.setCurrentIndex(d.format_combo.findData(".gif"))
    assert _pictures(d) == ["figure"]
    assert _pictures(dialog) == ["figure"]  # (a dialog with no slide composer offers no slide)
    d.reject()


def test_the_slide_as_the_audience_sees_it_is_exported_from_the_dialog(qtbot, window, tmp_path):
    window.session.set_stage("scores")
    d = _slide_dialog(qtbot, window)
    d.picture_combo.setCurrentIndex(d.picture_combo.findData("slide"))
    d.width_spin.setValue(1280)
    assert d.pixel_size() == QSize(1280, 720) and d.size_label.text() == "1280 × 720 px slide"
    assert not d.include_box.isEnabled() and not d.scale_radio.isEnabled()
    assert Path(d.path_edit.text()).name == "the-lessons-example-slide-scores.png"
    d.refresh_preview()
    shown = d.preview_label.pixmap()
    assert not shown.isNull() and abs(shown.width() / shown.height() - 16 / 9) < 0.02
    assert d.export_to(tmp_path / "slide.png") == [tmp_path / "slide.png"]
    img = QImage(str(tmp_path / "slide.png"))
    assert (img.width(), img.height()) == (1280, 720)
    assert img.pixelColor(640, 5) != img.pixelColor(640, 400)  # the stage bar above, the heatmap below
    d.format_combo.setCurrentIndex(d.format_combo.findData(".svg"))
    assert d.picture == "slide" and d.width_spin.isEnabled()
    assert d.export_to(tmp_path / "slide.svg") == [tmp_path / "slide.svg"]
    svg = (tmp_path / "slide.svg").read_text(encoding="utf-8")
    assert "<title>Slide: " in svg and "Q·K" in svg  # the stage bar and formula are text
    d.reject()


def test_the_slides_pdf_and_the_pptx_deck_are_exported_from_the_dialog(qtbot, window, tmp_path):
    from pptx import Presentation

    from tests.pdf_facts import pdf_facts

    d = _slide_dialog(qtbot, window)
    d.format_combo.setCurrentIndex(d.format_combo.findData(".pdf"))
    d.picture_combo.setCurrentIndex(d.picture_combo.findData("slides"))
    assert d.size_label.text() == "vector, a 960 × 540 pt page per stage"
    assert Path(d.path_edit.text()).name == "the-lessons-example-slides.pdf"
    assert d.stage_caption.text() == "Preview stage:" and not d.all_stages_check.isEnabled()
    out = tmp_path / "slides.pdf"
    assert d.export_to(out) == [out]
    assert pdf_facts(out).page_sizes == ((960, 540),) * 5
    d.format_combo.setCurrentIndex(d.format_combo.findData(".pptx"))
    d.width_spin.setValue(640)
    assert d.export_to(tmp_path / "deck.pptx") == [tmp_path / "deck.pptx"]
    assert len(Presentation(str(tmp_path / "deck.pptx")).slides) == 5
    d.reject()


def test_file_export_in_the_window_offers_the_slide_and_writes_it(qtbot, window, tmp_path, monkeypatch):
    asked = _answer(monkeypatch, QMessageBox.Yes)
    window.acts.export.trigger()
    d = window._export_dialog
    qtbot.waitUntil(d.isVisible, timeout=5000)
    assert d.can_compose_slides and "slide" in _pictures(d)
    d.picture_combo.setCurrentIndex(d.picture_combo.findData("slide"))
    d.width_spin.setValue(960)
    (tmp_path / "slide.png").write_bytes(b"old")
    _type(qtbot, d.path_edit, str(tmp_path / "slide.png"))
    d.export_button.click()
    assert len(asked) == 1  # replacing the old file was confirmed
    assert QImage(str(tmp_path / "slide.png")).size() == QSize(960, 540)
    assert window.session.stage == "weights" and not window.presentation.on  # the lecturer's window is untouched


# ---- the lecture's ink on the exported slide (issue 23) ------------------------------------------------
def _ink_row(img: QImage, y: float, x0: float = 0.12, x1: float = 0.88) -> float:
    """The share of the row at fraction ``y`` (± a pixel) that is ink 1's red (#ff1f4b)."""
    def red(c) -> bool:
        return c.red() > 235 and c.green() < 80 and 40 < c.blue() < 120

    row = round(y * img.height())
    xs = range(round(x0 * img.width()), round(x1 * img.width()))
    return sum(any(red(img.pixelColor(x, r)) for r in (row - 1, row, row + 1)) for x in xs) / len(xs)


def test_include_ink_is_on_for_a_scene_with_ink_and_only_for_the_slides_pictures(qtbot, window, tmp_path):
    from qkv_studio.core.ink import stroke

    d = _slide_dialog(qtbot, window)
    assert not d.ink_check.isChecked()  # (no ink on the scene: off)
    d.reject()
    window.session.set_stage("weights")
    window.presenter.book.add_stroke(stroke([(0.1, 0.5, 1), (0.9, 0.5, 1)], 1, 0.008))
    d = _slide_dialog(qtbot, window)
    assert d.ink_check.isChecked() and d.picture == "figure"
    # the bare figure is laid out differently: the box is disabled and says why
    assert not d.ink_check.isEnabled() and not d.include_ink
    assert "Ink belongs to the slide" in d.ink_check.toolTip()
    d.picture_combo.setCurrentIndex(d.picture_combo.findData("slide"))
    assert d.ink_check.isEnabled() and d.include_ink
    d.width_spin.setValue(1280)
    d.refresh_preview()
    assert "with ink" in d.preview_caption.text()
    assert d.export_to(tmp_path / "inked.png") == [tmp_path / "inked.png"]
    assert _ink_row(QImage(str(tmp_path / "inked.png")), 0.5) > 0.95  # where the stroke was drawn
    d.ink_check.setChecked(False)
    assert d.export_to(tmp_path / "plain.png") == [tmp_path / "plain.png"]
    assert _ink_row(QImage(str(tmp_path / "plain.png")), 0.5) < 0.02
    d.reject()
    dialog = ExportDialog(window)  # (no composer: no slide, so no ink)
    qtbot.addWidget(dialog)
    assert not dialog.ink_check.isEnabled()
    dialog.reject()


def test_the_slides_with_ink_are_each_stages_slide_from_the_dialog(qtbot, window, tmp_path):
    import io

    from PIL import Image
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    from qkv_studio.core import STAGES
    from qkv_studio.core.ink import stroke

    window.session.set_stage("weights")
    window.presenter.book.add_stroke(stroke([(0.1, 0.5, 1), (0.9, 0.5, 1)], 1, 0.008))
    d = _slide_dialog(qtbot, window)
    d.format_combo.setCurrentIndex(d.format_combo.findData(".pptx"))
    assert d.picture == "slides" and d.include_ink and d.width_spin.isEnabled()
    d.width_spin.setValue(1280)
    assert d.size_label.text() == "a 1280 × 720 px slide per stage"
    out = tmp_path / "deck.pptx"
    assert d.export_to(out) == [out]
    for slide, stage in zip(Presentation(str(out)).slides, STAGES, strict=False):
        [pic] = [sh for sh in slide.shapes if sh.shape_type == MSO_SHAPE_TYPE.PICTURE]
        with Image.open(io.BytesIO(pic.image.blob)) as im:
            img = QImage(im.tobytes("raw", "RGB"), im.width, im.height, 3 * im.width, QImage.Format_RGB888).copy()
        assert (img.width(), img.height()) == (1280, 720)
        assert (_ink_row(img, 0.5) > 0.95) == (stage == "weights"), stage
    d.format_combo.setCurrentIndex(d.format_combo.findData(".pdf"))
    d.picture_combo.setCurrentIndex(d.picture_combo.findData("slides"))
    assert d.size_label.text() == "vector, a 960 × 540 pt page per stage (1280 × 720 screen)"
    d.ink_check.setChecked(False)
    assert d.size_label.text() == "vector, a 960 × 540 pt page per stage"  # (the figures, as before)
    d.reject()
