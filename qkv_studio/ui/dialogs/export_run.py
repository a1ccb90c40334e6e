"""Running the export the dialog describes: which files it writes, asking before one is replaced, writing.

:func:`targets` are the files an export would write (one, or one per stage); :func:`confirm_overwrite`
asks with Qt's standard question before any of them that exists is replaced (not again for a name the
save dialog already asked about); :func:`do_export` writes through :mod:`qkv_studio.export` (atomically:
nothing partial is left on failure).  Each reads only what :class:`ExportRequest` declares of the dialog.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QMessageBox, QWidget

from qkv_studio.core import Scene
from qkv_studio.core.ink import Ink
from qkv_studio.export.deck import deck_paths, export_all_stages
from qkv_studio.export.files import export_file
from qkv_studio.export.formats import ExportFormat
from qkv_studio.export.timeline import MotionOptions
from qkv_studio.render.figure import FigureOptions

if TYPE_CHECKING:
    from qkv_studio.export.slide import SlidePainter


class ExportRequest(Protocol):
    """What running an export reads of the dialog (:class:`~.export_dialog.ExportDialog` is one)."""

    @property
    def confirmed_path(self) -> Path | None:
        """A name the save dialog already asked to replace (None: none)."""

    @property
    def scene(self) -> Scene: ...

    @property
    def whole_scene(self) -> Scene:
        """The window's whole scene (every head of it), not only the head the views show."""

    @property
    def head(self) -> int:
        """The head the window's views show."""

    @property
    def format(self) -> ExportFormat: ...

    @property
    def all_stages(self) -> bool: ...

    @property
    def picture(self) -> str: ...

    @property
    def is_animated(self) -> bool: ...

    def path(self) -> Path | None: ...

    def path_problem(self) -> str: ...

    def options(self) -> FigureOptions: ...

    def pixel_width(self) -> int: ...

    def motion(self) -> MotionOptions: ...

    def composed_slide(self, stage: str | None = None) -> SlidePainter: ...

    def export_ink(self) -> Ink | None: ...


def export_options_from_dialog(dlg: ExportRequest) -> tuple[FigureOptions, int]:
    """(figure options, PNG width in pixels) that the dialog's widgets describe."""
    return dlg.options(), dlg.pixel_width()


def _base_path(dialog: ExportRequest) -> Path:
    """The file the dialog names; ValueError when there is none or its ending is not a format's."""
    problem = dialog.path_problem()
    if problem:
        raise ValueError(problem)
    path = dialog.path()
    if path is None:
        raise ValueError("choose a file to export to")
    return path


def targets(dialog: ExportRequest) -> list[Path]:
    """The files the export writes; ValueError when there is no file or its ending is not a format's."""
    path = _base_path(dialog)
    return deck_paths(path) if dialog.all_stages else [path]


def confirm_overwrite(dialog: ExportRequest, parent: QWidget, title: str) -> bool:
    """True to go on: no target exists, the save dialog already asked, or the user said Replace (asked in a
    message box over ``parent``)."""
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
    yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
    return QMessageBox.question(parent, title, text, yes | no, no) == yes


def do_export(dialog: ExportRequest) -> list[Path]:
    """Write what the dialog describes; returns the paths written.

    Raises ValueError (no path, an ending that is no format's, bad option) or OSError ("cannot write
    PATH: reason"); the exporters leave nothing partial behind.
    """
    paths = targets(dialog)
    if dialog.format.kind == "page":  # the scene itself, every head of it, opening as the window shows it
        from qkv_studio.core.view import View
        from qkv_studio.export.page import export_page

        opened = dialog.options()  # (the dialog's stage and query: where the page opens)
        export_page([(dialog.whole_scene, View(opened.query, opened.stage, dialog.head))], paths[0])
        return paths
    options, width = export_options_from_dialog(dialog)
    scene = dialog.scene
    if dialog.all_stages:
        return export_all_stages(scene, _base_path(dialog), width=width, options=options)
    picture = dialog.picture
    motion = dialog.motion() if dialog.is_animated else None
    slide = dialog.composed_slide() if picture == "slide" else None
    ink = dialog.export_ink()  # (on the slide, or on each page: the stage's slide)
    compose = dialog.composed_slide if ink is not None and picture == "slides" else None
    export_file(scene, paths[0], width=width, options=options, picture=picture, motion=motion, slide=slide,
                ink=ink, compose=compose)
    return paths
