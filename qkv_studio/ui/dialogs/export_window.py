"""What the window's export actions read from it, and the two that need no dialog of their own:
*Copy heatmap* (the current stage's figure on the clipboard) and *Export numbers…* (CSV or JSON)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from qkv_studio.export import formats
from qkv_studio.export.figures import DEFAULT_WIDTH, figure_image
from qkv_studio.export.files import export_file
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, SEQUENTIAL
from qkv_studio.render.figure import FigureOptions
from qkv_studio.render.theme import THEMES
from qkv_studio.ui.dialogs import export_names as names


def window_theme(window) -> str:
    """The theme of the window's Appearance (the light one for a window without one)."""
    theme = getattr(getattr(getattr(window, "appearance", None), "theme", None), "name", "light")
    return theme if theme in THEMES else "light"


def window_colormap(window) -> str:
    """The weights' colour map of the window's Appearance (the default for a window without one)."""
    cmap = getattr(getattr(window, "appearance", None), "colormap", DEFAULT_SEQUENTIAL)
    return cmap if cmap in SEQUENTIAL else DEFAULT_SEQUENTIAL


def status(window, text: str) -> None:
    """A message in the window's status bar (for a while), when it has one."""
    bar = getattr(window, "statusBar", None)
    if callable(bar):
        bar().showMessage(text, 8000)


def shown_generation(window) -> int:
    """How many of the shown scene's last tokens a causal model generated (the Real model panel's Next
    token), while the window shows that model's head as computed; 0 otherwise (no panel built yet, an
    encoder, an edited copy, no token generated)."""
    built = getattr(window, "built_panel", None)
    panel = built("model") if callable(built) else None
    if panel is None or not getattr(panel.model, "causal", False) or not panel.showing_model_head():
        return 0
    generated = int(panel.state.generated)
    return generated if 0 < generated < window.session.shown.n else 0


def current_figure_options(window) -> FigureOptions:
    """The figure of what the window shows: its stage, theme and colormap."""
    return FigureOptions(stage=window.session.stage, query=window.session.query, theme=window_theme(window),
                         colormap=window_colormap(window)).validated()


def copy_heatmap(window, width: int = DEFAULT_WIDTH) -> QImage:
    """Copy heatmap (Ctrl+Shift+C): the current stage's figure, ``width`` px wide, on the clipboard."""
    image = figure_image(window.session.shown, current_figure_options(window), width)
    QApplication.clipboard().setImage(image)
    status(window, f"Copied the {window.session.stage} heatmap ({image.width()} × {image.height()} px)")
    return image


def export_numbers(window, path: str | os.PathLike | None = None) -> Path | None:
    """Export numbers…: the current stage as CSV or every stage as JSON, by the file's ending.

    Asks for the file when ``path`` is None.  Returns the path written, or None (cancelled, or a
    one-line warning was shown and nothing was written).
    """
    settings = names.settings_of(window)
    scene, stage = window.session.shown, window.session.stage
    if path is None:
        first = names.number_formats()[0].suffix
        name = names.default_file_name(scene, window.session.path, stage, first)
        chosen, chosen_filter = QFileDialog.getSaveFileName(
            window, "Export numbers", str(Path(names.last_folder(settings)) / name), names.number_filter())
        if not chosen:
            return None
        p = Path(chosen)
        if p.suffix.lower() not in formats.suffixes("numbers"):
            p = p.with_name(p.name + names.filter_suffix(chosen_filter, names.number_formats(), first))
    else:
        p = Path(path)
    fmt = formats.get(p.suffix)
    try:
        if fmt is None or fmt.kind != "numbers":
            uses = [f"{f.suffix} ({'all stages' if f.every_stage else 'this stage'})" for f in names.number_formats()]
            raise ValueError(f"cannot export numbers to {p}: use {formats.spelled(uses)}")
        export_file(scene, p, options=FigureOptions(stage=stage, query=window.session.query))
    except (OSError, ValueError) as exc:
        QMessageBox.warning(window, "Export numbers", names.one_line(exc))
        return None
    names.remember_folder(settings, p)
    what = "all stages" if fmt.every_stage else f"the {stage} stage"
    status(window, f"Exported {what} to {p}")
    return p
