"""The export-format registry: the one list the command line, the export dialog and export_file read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog

from qkv_studio.cli import main
from qkv_studio.core.numbers import stage_csv
from qkv_studio.export import formats
from qkv_studio.export.files import export_file
from qkv_studio.render.figure import figure_title
from tests.views import LESSON_VIEW

REPO = Path(__file__).resolve().parents[2]


# ---- the built-in entries ------------------------------------------------------------------------
def test_the_built_in_formats_in_the_order_they_are_offered():
    assert formats.suffixes() == (".png", ".svg", ".pdf", ".csv", ".json", ".gif", ".apng", ".mp4", ".pptx", ".html")
    assert formats.suffixes("figure") == (".png", ".svg", ".pdf")
    assert formats.suffixes("numbers") == (".csv", ".json")
    assert formats.suffixes("animation") == (".gif", ".apng", ".mp4") and formats.suffixes("deck") == (".pptx",)
    assert not any(f.transparent for f in formats.formats("animation") + formats.formats("deck"))
    assert [f.size for f in formats.formats("figure")] == ["pixels", "scalable", "page"]
    assert [f.transparent for f in formats.formats("figure")] == [True, True, False]
    assert [f.every_stage for f in formats.formats("numbers")] == [False, True]
    assert all(not f.needs_qt for f in formats.formats("numbers"))
    assert all(f.needs_qt for f in formats.formats("figure"))
    assert formats.get(".PNG") is formats.get(".png") and formats.get(".txt") is None
    assert formats.get(".pdf").file_filter == "PDF (vector) (*.pdf)"


def test_a_bad_entry_or_a_taken_suffix_is_refused(monkeypatch):
    monkeypatch.setattr(formats, "REGISTRY", dict(formats.REGISTRY))
    write = lambda job: b""  # noqa: E731
    for suffix in ("png", ".PNG", ".", ".tar.gz"):
        with pytest.raises(ValueError, match="suffix"):
            formats.ExportFormat(suffix, "x", "figure", write, needs_qt=True)
    with pytest.raises(ValueError, match="kind"):
        formats.ExportFormat(".x", "x", "movie", write, needs_qt=True)
    with pytest.raises(ValueError, match="size"):
        formats.ExportFormat(".x", "x", "figure", write, needs_qt=True, size="huge")
    with pytest.raises(ValueError, match="already registered"):
        formats.register(formats.ExportFormat(".png", "again", "figure", write, needs_qt=True))
    assert formats.get(".png").label == "PNG image"


def test_the_registry_and_the_numbers_writers_load_no_qt(tmp_path):
    code = ("import sys\n"
            "from qkv_studio.core import load_preset\n"
            "from qkv_studio.export import formats\n"
            "scene = load_preset('lesson')\n"
            "for f in formats.formats():\n"
            "    if not f.needs_qt:\n"
            "        assert f.write(formats.ExportJob(scene=scene, stage='weights'))\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'PySide6', 'pyqtgraph', 'superqt'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ---- a format added at run time is one entry -----------------------------------------------------
def _caption(job: formats.ExportJob) -> bytes:
    """A figure "format" that writes the figure's title and width as text (needs Qt for the title)."""
    title, meaning = figure_title(job.scene, job.options)
    return f"{title}\n{meaning}\n{job.width}\n".encode()


def _tsv(job: formats.ExportJob) -> bytes:
    return stage_csv(job.scene, job.stage).replace(",", "\t").encode("utf-8")


@pytest.fixture
def extra_formats(monkeypatch):
    monkeypatch.setattr(formats, "REGISTRY", dict(formats.REGISTRY))
    formats.register(formats.ExportFormat(".txt", "Caption text", "figure", _caption, needs_qt=True, size="scalable"))
    formats.register(formats.ExportFormat(".tsv", "TSV — current stage", "numbers", _tsv, needs_qt=False))
    QSettings().clear()
    yield
    QSettings().clear()


def test_a_new_format_is_written_by_export_file(extra_formats, lesson_scene, tmp_path, qapp):
    export_file(lesson_scene, tmp_path / "fig.txt", width=900, options=_options("scores"))
    title, meaning = figure_title(lesson_scene, _options("scores"))
    assert "“sat”" in title  # (the options' query: the lesson's)
    assert (tmp_path / "fig.txt").read_text(encoding="utf-8") == f"{title}\n{meaning}\n900\n"
    export_file(lesson_scene, tmp_path / "n.tsv")
    assert (tmp_path / "n.tsv").read_text(encoding="utf-8") == stage_csv(lesson_scene, "weights").replace(",", "\t")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.txt", "n.tsv"]


def _options(stage: str):
    from qkv_studio.render.figure import FigureOptions

    return FigureOptions(stage=stage, query=2).validated()


def test_a_new_format_is_accepted_by_the_command_line(extra_formats, tmp_path, capsys, qapp):
    assert main(["export", "--preset", "lesson", "--stage", "scaled", "-o", str(tmp_path / "f.txt"),
                 "--width", "1200"]) == 0
    assert (tmp_path / "f.txt").read_text(encoding="utf-8").splitlines()[-1] == "1200"
    assert "scaled" in (tmp_path / "f.txt").read_text(encoding="utf-8")
    assert main(["export", "--preset", "lesson", "-o", str(tmp_path / "w.tsv")]) == 0
    assert (tmp_path / "w.tsv").read_text(encoding="utf-8").splitlines()[0] == "\tthe\tcat\tsat\tmat"
    capsys.readouterr()
    assert main(["export", "--help"]) == 0
    assert ".json .gif .apng .mp4 .pptx .html .txt .tsv" in " ".join(capsys.readouterr().out.split())
    assert main(["export", "-o", str(tmp_path / "f.xyz")]) == 2
    told = "the name must end in .png, .svg, .pdf, .csv, .json, .gif, .apng, .mp4, .pptx, .html, .txt or .tsv"
    assert told in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt", "w.tsv"]


def test_a_new_format_is_listed_in_the_dialog_and_written_by_it(extra_formats, qtbot, lesson_scene, tmp_path,
                                                                 monkeypatch):
    from qkv_studio.ui.dialogs import export_dialog as ed
    from qkv_studio.ui.window.main_window import MainWindow

    window = MainWindow(lesson_scene, view=LESSON_VIEW)
    qtbot.addWidget(window)
    dialog = ed.ExportDialog(window)
    qtbot.addWidget(dialog)
    combo = dialog.format_combo
    assert [combo.itemData(i) for i in range(combo.count())] == [".png", ".svg", ".pdf", ".gif", ".apng", ".mp4",
                                                                  ".pptx", ".html", ".txt"]
    assert combo.itemText(8) == "Caption text"
    assert ed.figure_filter().endswith(";;Caption text (*.txt)")
    assert ed.number_filter() == "CSV — current stage (*.csv);;JSON — all stages (*.json);;TSV — current stage (*.tsv)"

    combo.setCurrentIndex(combo.findData(".txt"))
    assert dialog.is_vector and not dialog.width_spin.isEnabled()
    assert dialog.path_edit.text().endswith("-weights.txt")
    assert dialog.export_to(tmp_path / "fig") == [tmp_path / "fig.txt"]
    assert (tmp_path / "fig.txt").read_text(encoding="utf-8").startswith("softmax weights")

    asked = []

    def fake(parent, caption, start, filters, selected=""):
        asked.append(filters)
        return str(tmp_path / "numbers"), "TSV — current stage (*.tsv)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    assert ed.export_numbers(window) == tmp_path / "numbers.tsv"
    assert asked == [ed.number_filter()]
    assert (tmp_path / "numbers.tsv").read_text(encoding="utf-8") == _tsv(
        formats.ExportJob(scene=window.session.scene, stage=window.session.stage)).decode("utf-8")


def test_what_each_format_can_show_is_its_registry_entrys():
    assert formats.pictures(formats.get(".png")) == ("figure", "slide")
    assert formats.pictures(formats.get(".svg")) == ("figure", "slide")
    assert formats.pictures(formats.get(".pdf")) == ("figure", "slide", "slides")
    assert formats.pictures(formats.get(".gif")) == ("figure",)
    assert formats.pictures(formats.get(".pptx")) == ("slides",)
    assert formats.pictures(formats.get(".csv")) == ()
    assert formats.writer(formats.get(".pdf"), "slides") is formats.get(".pdf").slides
    assert formats.writer(formats.get(".pptx")) is formats.writer(formats.get(".pptx"), "slides")
    with pytest.raises(ValueError, match=r"\.gif cannot hold slides, a page per stage: use \.pdf or \.pptx"):
        formats.writer(formats.get(".gif"), "slides")
    with pytest.raises(ValueError, match=r"cannot hold the slide as the audience sees it: use \.png, \.svg or \.pdf"):
        formats.writer(formats.get(".mp4"), "slide")
