"""Running the export the dialog describes: which files it writes, asking before one is replaced, writing.

:func:`targets` are the files an export would write (one, or one per stage); :func:`confirm_overwrite`
asks with Qt's standard question before any of them that exists is replaced (not again for a name the
save dialog already asked about); :func:`do_export` writes through :mod:`qkv_studio.export` (atomically:
nothing partial is left on failure).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from qkv_studio.export.deck import deck_paths, export_all_stages
from qkv_studio.export.files import export_file
from qkv_studio.render.figure import FigureOptions


def export_options_from_dialog(dlg) -> tuple[FigureOptions, int]:
    """(figure options, PNG width in pixels) that the dialog's widgets describe."""
    return dlg.options(), dlg.pixel_width()


def targets(dialog) -> list[Path]:
    """The files the export writes; ValueError when there is no file or its ending is not a format's."""
    problem = dialog.path_problem()
    if problem:
        raise ValueError(problem)
    path = dialog.path()
    if path is None:
        raise ValueError("choose a file to export to")
    return deck_paths(path) if dialog.all_stages else [path]


def confirm_overwrite(dialog, title: str) -> bool:
    """True to go on: no target exists, the save dialog already asked, or the user said Replace."""
    try:
        paths = targets(dialog)
    except ValueError:
        return True  # (the export itself says what is wrong)
    there = [p for p in paths if p.exists()]
    if not there or there == [dialog.confirmed_path]:
        return True
    if len(there) == 1:
        text = f"{there[0].name} already exists in {there[0].parent}.\nReplace it?"
    else:
        text = (f"{len(there)} of the {len(paths)} files already exist in {there[0].parent} "
                f"({there[0].name} …).\nReplace them?")
    answer = QMessageBox.question(dialog, title, text, QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
    return answer == QMessageBox.Yes


def do_export(dialog) -> list[Path]:
    """Write what the dialog describes; returns the paths written.

    Raises ValueError (no path, an ending that is no format's, bad option) or OSError ("cannot write
    PATH: reason"); the exporters leave nothing partial behind.
    """
    paths = targets(dialog)
    if dialog.format.kind == "page":  # the scene itself, every head of it, opening as the window shows it
        from qkv_studio.core.view import View
        from qkv_studio.export.page import export_page

        opened = dialog.options()  # (the dialog's stage and query: where the page opens)
        s = dialog.window_.session
        export_page([(s.scene, View(opened.query, opened.stage, s.head))], paths[0])
        return paths
    options, width = export_options_from_dialog(dialog)
    scene = dialog.scene
    if dialog.all_stages:
        return export_all_stages(scene, dialog.path(), width=width, options=options)
    picture = dialog.picture
    extra = {}
    if dialog.is_animated:
        extra["motion"] = dialog.motion()
    if picture == "slide":
        extra["slide"] = dialog.composed_slide()
    ink = dialog.export_ink()
    if ink is not None:  # (on the slide, or on each page: the stage's slide)
        extra["ink"] = ink
        if picture == "slides":
            extra["compose"] = dialog.composed_slide
    export_file(scene, paths[0], width=width, options=options, picture=picture, **extra)
    return paths
