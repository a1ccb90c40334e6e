"""File → Export heatmap…, Copy heatmap and Export numbers… for the main window.

The window calls three functions:

* :func:`export_heatmap` opens :class:`ExportDialog` (window-modal, without blocking in ``exec()``),
* :func:`copy_heatmap` puts the current stage's figure on the clipboard,
* :func:`export_numbers` writes the current stage as CSV or every stage as JSON.

The dialog only gathers options; the drawing and the atomic writing are :mod:`qkv_studio.export`'s, and
the formats it offers (the format box, the *Picture* box, the file filters) are the registry
:mod:`qkv_studio.export.formats`.  It is composed of parts, each given what it uses: the option form
(:class:`.export_form.ExportForm`) and the preview with its alt text
(:class:`.export_preview.PreviewBox`); file names and settings are :mod:`.export_names`'s, running the
export and asking before a file is replaced :mod:`.export_run`'s (it reads the dialog through
:class:`.export_run.ExportRequest`), the window's own actions :mod:`.export_window`'s.  The file name
and the format agree: a typed ending picks the format, a changed format changes only the name's ending,
an ending no format has gets a message.  A failed export
shows one line in a warning and leaves the dialog open with its options (nothing is lost, nothing
partial is left on disk).  The last folder and the options are remembered in ``QSettings`` under
``export/…``; the stage, theme and colormap always start from the window's, so the figure first
offered is the one on screen.

The presentation slide (*The slide as the audience sees it*) is composed by the window's side
(:mod:`qkv_studio.ui.window.slide_picture`), handed in as ``slide_composer``; without one that picture
is not offered.  *Include ink* (beside the Picture box; on when the scene has ink) draws the lecture's
ink (the window's ``presenter.book``) on the slide, or makes each page of *Slides, a page per stage*
the stage's slide with its ink; for the heatmap figure it is disabled and says why (ink belongs to the
slide: the figure is laid out differently).

Tests drive the dialog without ``exec()``: build it, set its widgets, call
:meth:`ExportDialog.export_to` (or :func:`do_export`), or click Export with a patched QMessageBox.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QImage, QPixmap, QShowEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from qkv_studio.core import STAGES, Scene, View, progress
from qkv_studio.core.ink import EMPTY_INK, Ink
from qkv_studio.core.stages import DECK_STAGES
from qkv_studio.export import formats
from qkv_studio.export.deck import deck_paths
from qkv_studio.export.figures import PT_PER_PX, alt_text
from qkv_studio.export.slides import SLIDE_PT
from qkv_studio.export.timeline import MotionOptions
from qkv_studio.render.figure import FigureOptions, figure_size
from qkv_studio.render.theme import get_theme
from qkv_studio.ui.dialogs import export_form as form
from qkv_studio.ui.dialogs import export_names as names
from qkv_studio.ui.dialogs import export_preview as preview
from qkv_studio.ui.dialogs import export_run as run
from qkv_studio.ui.dialogs.export_form import (  # noqa: F401 - (the dialog's constants, as before the split)
    BACKGROUND_LABELS,
    INCLUDES,
    MAX_SCALE,
    MAX_WIDTH,
    MIN_SCALE,
    MIN_WIDTH,
    STAGE_LABELS,
    ExportForm,
)
from qkv_studio.ui.dialogs.export_names import (  # noqa: F401
    K_ALL_STAGES,
    K_BACKGROUND,
    K_FOLDER,
    K_FORMAT,
    K_SCALE,
    K_SIZE_MODE,
    K_WIDTH,
    PICTURE_KINDS,
    base_name,
    default_file_name,
    figure_filter,
    last_folder,
    number_filter,
)
from qkv_studio.ui.dialogs.export_preview import PREVIEW_DELAY_MS, PREVIEW_SIZE, PreviewBox  # noqa: F401
from qkv_studio.ui.dialogs.export_run import do_export, export_options_from_dialog  # noqa: F401
from qkv_studio.ui.dialogs.export_window import (  # noqa: F401 - (what the window's actions call)
    copy_heatmap,
    current_figure_options,
    export_numbers,
    shown_generation,
    status,
    window_colormap,
    window_theme,
)
from qkv_studio.ui.widgets.indicators import indicator_sheet
from qkv_studio.ui.widgets.job_progress import job_progress
from qkv_studio.ui.widgets.scroll_column import ScrollColumn
from qkv_studio.ui.widgets.size_classes import fit_dialog

if TYPE_CHECKING:
    from qkv_studio.export.slide import SlidePainter

TITLE = "Export heatmap"


class SlideComposing(Protocol):
    """What the dialog uses of its slide composer (:class:`qkv_studio.ui.window.slide_picture.SlideComposer`):
    the presentation slide of a scene and view for a screen of ``size``, and closing it."""

    def compose(self, scene: Scene, view: View, *, size: tuple[int, int], theme: str = "light",
                colormap: str | None = None) -> SlidePainter: ...

    def close(self) -> None: ...


class ExportDialog(QDialog):
    """Options for exporting the heatmap figure (or the slide, or a deck), with a live preview.

    ``window`` is the main window (for its session, theme and colormap) and the dialog's parent.
    ``slide_composer`` makes the object that composes the presentation slide
    (:class:`qkv_studio.ui.window.slide_picture.SlideComposer`); made when first needed, closed with the
    dialog.  The widgets are public attributes so tests (and the window) can set them directly: those of
    its parts, :attr:`form` (:class:`ExportForm`) and :attr:`preview` (:class:`PreviewBox`), under the
    same names.
    """

    def __init__(self, window, parent: QWidget | None = None, *, settings: QSettings | None = None,
                 use_settings: bool = True, slide_composer: Callable[[], SlideComposing] | None = None) -> None:
        super().__init__(parent if parent is not None else window)
        self.window_ = window
        self.settings = settings if settings is not None else (names.settings_of(window) if use_settings else None)
        self._path_chosen = False  # the user picked or typed a path: stop proposing names
        self.confirmed_path: Path | None = None  # a name the save dialog already asked to replace
        self._natural_cache: tuple[Scene, FigureOptions, QSize] | None = None
        self._composer_factory = slide_composer
        self._composer: SlideComposing | None = None
        self._composing = False  # (an export composes slide after slide: the preview waits meanwhile)
        self._fitted = False  # (sized once, as it first shows: fit_dialog)
        self.setWindowTitle(TITLE)
        self._build()
        # (its check boxes and radio buttons visible in the window's theme: a dark palette hides Fusion's)
        self.setStyleSheet(indicator_sheet(get_theme(window_theme(window))))
        self.form.load_defaults(self.settings, window.session.stage, window_theme(window), window_colormap(window))
        self.ink_check.setChecked(bool(self.scene_ink()))  # (on when the scene has ink)
        self._fix_background()
        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(PREVIEW_DELAY_MS)
        self._preview_timer.timeout.connect(self.refresh_preview)
        self._connect()
        self._sync_enabled()
        self._update_size_label()
        self._propose_path()
        self.refresh_preview()

    # ---- construction ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.form = f = ExportForm(self, can_compose_slides=self.can_compose_slides)
        self.preview = p = PreviewBox()
        boxes, preview_box = f.boxes, p.box
        # (the parts' widgets under their own names: the tests and the reactions below set and read them)
        self.format_combo, self.picture_combo, self.ink_check = f.format_combo, f.picture_combo, f.ink_check
        self.path_edit, self.choose_button, self.path_note = f.path_edit, f.choose_button, f.path_note
        self.all_stages_check, self.deck_label = f.all_stages_check, f.deck_label
        self.animate_combo, self.fps_spin, self.hold_spin = f.animate_combo, f.fps_spin, f.hold_spin
        self.motion_caption, self.motion_row = f.motion_caption, f.motion_row
        self.width_radio, self.scale_radio, self.size_group = f.width_radio, f.scale_radio, f.size_group
        self.width_spin, self.scale_spin, self.size_label = f.width_spin, f.scale_spin, f.size_label
        self.stage_caption, self.stage_combo, self.theme_combo = f.stage_caption, f.stage_combo, f.theme_combo
        self.colormap_combo, self.background_combo = f.colormap_combo, f.background_combo
        self.include_box, self.include_checks = f.include_box, f.include_checks
        self.preview_label, self.preview_caption = p.preview_label, p.preview_caption
        self.alt_text_edit, self.copy_alt_button = p.alt_text_edit, p.copy_alt_button
        self.choose_button.clicked.connect(self.choose_file)
        self.copy_alt_button.clicked.connect(self.copy_alt_text)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        left = QVBoxLayout()
        for box in boxes:
            left.addWidget(box)
        left.addStretch(1)
        # (the options and the preview scroll inside a dialog their screen cannot hold; Export and
        # Cancel stay in view under them)
        self.body = QWidget()
        columns = QHBoxLayout(self.body)
        columns.setContentsMargins(0, 0, 0, 0)
        columns.addLayout(left, 1)
        columns.addWidget(preview_box, 0)
        self.options_area = ScrollColumn(self.body)
        outer = QVBoxLayout(self)
        outer.addWidget(self.options_area, 1)
        outer.addWidget(self.buttons)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        """Sized once, as it first shows: its options and preview whole where its screen holds them, else
        as large as the screen's available geometry, scrolling inside (it never grows while in use)."""
        if not self._fitted:
            self._fitted = True
            fit_dialog(self)
        super().showEvent(event)

    def _connect(self) -> None:
        for combo in (self.stage_combo, self.theme_combo, self.colormap_combo, self.background_combo):
            combo.currentIndexChanged.connect(self._options_changed)
        self.format_combo.currentIndexChanged.connect(self._format_changed)
        self.animate_combo.currentIndexChanged.connect(self._picture_changed)
        self.picture_combo.currentIndexChanged.connect(self._picture_changed)
        self.ink_check.toggled.connect(self._picture_changed)
        for box in self.include_checks.values():
            box.toggled.connect(self._options_changed)
        self.all_stages_check.toggled.connect(self._all_stages_changed)
        self.width_spin.valueChanged.connect(self._size_changed)
        self.scale_spin.valueChanged.connect(self._size_changed)
        self.width_radio.toggled.connect(self._size_changed)
        self.path_edit.textEdited.connect(self._path_edited)
        session = getattr(self.window_, "session", None)
        if session is not None and hasattr(session, "scene_changed"):
            session.scene_changed.connect(self._options_changed)
            session.head_changed.connect(self._options_changed)
        built = getattr(self.window_, "built_panel", None)
        model_panel = built("model") if callable(built) else None
        if model_panel is not None:  # (a token generated: the panel's count follows the scene's change)
            model_panel.run_changed.connect(self._options_changed)

    # ---- state ----------------------------------------------------------------------------------
    @property
    def scene(self) -> Scene:
        return self.window_.session.shown  # (of a scene split into heads, the head the views show)

    @property
    def whole_scene(self) -> Scene:
        """The window's whole scene (every head of it), not only the head the views show."""
        return self.window_.session.scene

    @property
    def head(self) -> int:
        """The head the window's views show."""
        return self.window_.session.head

    @property
    def suffix(self) -> str:
        return self.form.suffix

    @property
    def format(self) -> formats.ExportFormat:
        """The registry's entry for the chosen format."""
        return self.form.format

    @property
    def picture(self) -> str:
        """What the file shows: ``figure``, ``slide`` or ``slides`` (:data:`formats.PICTURES`)."""
        return self.form.picture

    @property
    def is_vector(self) -> bool:
        return self.format.is_vector

    @property
    def all_stages(self) -> bool:
        """One numbered file per stage (figures only: an animation or a deck holds every stage itself)."""
        return self.form.all_stages

    @property
    def is_animated(self) -> bool:
        fmt = formats.get(self.suffix)  # (None: no format of the registry has it, e.g. one unregistered since)
        return fmt is not None and fmt.kind == "animation"

    @property
    def can_compose_slides(self) -> bool:
        """Whether the dialog can make the presentation slide (it was given a composer)."""
        return self._composer_factory is not None

    @property
    def animates_generation(self) -> bool:
        """True when the animation is the generation, token by token (offered while the window shows a causal
        model's head with generated tokens)."""
        return self.is_animated and self.animate_combo.currentData() == "generation" and self.generated > 0

    @property
    def generated(self) -> int:
        """How many of the shown scene's last tokens the model generated (0: not a generation)."""
        return shown_generation(self.window_)

    def scene_ink(self) -> Ink | None:
        """The ink drawn on the scene's slides (the window's presenter's), or None for a window without."""
        book = getattr(getattr(self.window_, "presenter", None), "book", None)
        return None if book is None else book.ink()

    @property
    def include_ink(self) -> bool:
        """The ink goes on the slide (ticked, and the picture is the slide's)."""
        return self.ink_check.isChecked() and self.ink_check.isEnabled()

    @property
    def composes_slide(self) -> bool:
        """The picture is the composed presentation slide: the slide, or a page per stage with its ink."""
        return self.picture == "slide" or (self.picture == "slides" and self.include_ink)

    def motion(self) -> MotionOptions:
        """The animation's options the widgets describe."""
        return MotionOptions(fps=int(self.fps_spin.value()), hold=float(self.hold_spin.value()),
                             generated=self.generated if self.animates_generation else 0).validated()

    def options(self) -> FigureOptions:
        """The figure options the widgets describe (validated)."""
        # (INCLUDES names FigureOptions' bool fields; typed Any: mypy cannot match a dict's keys to fields)
        includes: dict[str, Any] = {key: box.isChecked() for key, box in self.include_checks.items()}
        return FigureOptions(
            stage=self.stage_combo.currentData(),
            query=self.window_.session.query,
            theme=self.theme_combo.currentData(),
            colormap=self.colormap_combo.currentData(),
            background=self.background_combo.currentData(),
            **includes,
        ).validated()

    def natural_size(self) -> QSize:
        """The figure's size at scale 1 (logical px) for the current options (laid out once per change)."""
        scene, opts = self.scene, self.options()
        cached = self._natural_cache
        if cached is None or cached[0] is not scene or cached[1] != opts:
            s = figure_size(scene, opts)
            cached = self._natural_cache = (scene, opts, QSize(round(s.width()), round(s.height())))
        return QSize(cached[2])

    def pixel_width(self) -> int:
        """Width of a PNG in pixels: the width box, or scale × natural width (at most 7680)."""
        if self.width_radio.isChecked() or self.composes_slide:
            return int(self.width_spin.value())
        natural = self.natural_size().width()
        return max(MIN_WIDTH, min(MAX_WIDTH, round(self.scale_spin.value() * natural)))

    def pixel_size(self) -> QSize:
        natural = self.natural_size()
        w = self.pixel_width()
        if self.composes_slide:  # a 16:9 screen, as the slide is composed for
            return QSize(w, max(1, round(w * 9 / 16)))
        if self.is_animated:  # a 16:9 frame of even sides (export/motion.py's frame_size)
            from qkv_studio.export.motion import ASPECT

            w -= w % 2
            h = round(w * ASPECT[1] / ASPECT[0])
            return QSize(w, h - h % 2)
        return QSize(w, max(1, round(w * natural.height() / max(1, natural.width()))))

    def path(self) -> Path | None:
        """The target path with the format's ending (added or swapped in), or None when empty; an ending
        no format has is kept (:meth:`path_problem` says so)."""
        return names.target_path(self.path_edit.text(), last_folder(self.settings), self.suffix,
                                 names.figure_suffixes())

    def path_problem(self) -> str:
        """Why the typed name cannot be exported ("" when it can): its ending is no format's."""
        return names.suffix_problem(self.path_edit.text(), names.figure_suffixes())

    def composed_slide(self, stage: str | None = None) -> SlidePainter:
        """The presentation slide of the options (a :class:`qkv_studio.export.slide.SlidePainter`), or of
        ``stage`` (a page per stage)."""
        if self._composer_factory is None:
            raise ValueError("the slide cannot be composed here: export it from the window's File menu")
        composer = self._composer
        if composer is None:
            composer = self._composer = self._composer_factory()
        opts = self.options()
        size = self.pixel_size()
        return composer.compose(self.scene, View(opts.query, stage or opts.stage),
                                      size=(size.width(), size.height()), theme=opts.theme, colormap=opts.colormap)

    def export_ink(self) -> Ink | None:
        """The ink the export draws (None: none asked for)."""
        return (self.scene_ink() or EMPTY_INK) if self.include_ink else None

    # ---- reactions ------------------------------------------------------------------------------
    def _options_changed(self, *_: object) -> None:
        self.form.fill_animations(self.generated)  # (a generated token, or another scene, changes the offer)
        self._update_size_label()
        self._propose_path()
        self.schedule_preview()

    def _format_changed(self, *_: object) -> None:
        self._fix_background()
        self.form.fill_pictures()
        self._sync_enabled()
        text = self.path_edit.text().strip()
        if self._path_chosen and text and names.typed_suffix(text) != self.suffix:
            p = self.path()
            if p is not None and names.typed_suffix(text) in ("",) + names.figure_suffixes():
                self.path_edit.setText(str(p))  # (only the ending changes)
        self._update_path_note()
        self._options_changed()

    def _picture_changed(self, *_: object) -> None:
        self._sync_enabled()
        self._options_changed()

    def _all_stages_changed(self, *_: object) -> None:
        self._sync_enabled()
        self._options_changed()

    def _size_changed(self, *_: object) -> None:
        self._sync_enabled()
        self._update_size_label()
        if self.composes_slide:
            self.schedule_preview()

    def _path_edited(self, text: str) -> None:
        self._path_chosen = bool(text.strip())
        self.confirmed_path = None
        self._follow_typed_suffix()
        self._update_path_note()
        self._update_deck_label()

    def _follow_typed_suffix(self) -> None:
        """A typed ending that is a format's picks that format (the command line's rule)."""
        suffix = names.typed_suffix(self.path_edit.text())
        if suffix in names.figure_suffixes() and suffix != self.suffix:
            form.select(self.format_combo, suffix)

    def _update_path_note(self) -> None:
        problem = self.path_problem()
        if problem == self.path_note.text():
            return
        self.path_note.setText(problem)
        self.path_note.setVisible(bool(problem))  # (in the room kept for it: nothing under it moves)

    def _fix_background(self) -> None:
        """Transparent only for formats that keep it (PNG, SVG; a PDF page is opaque): else disabled."""
        opaque = not self.format.transparent
        model = self.background_combo.model()  # (a combo box's own model: a QStandardItemModel)
        item = model.item(self.background_combo.findData("transparent")) \
            if isinstance(model, QStandardItemModel) else None
        if item is not None:
            item.setEnabled(not opaque)
            item.setToolTip(f"{self.format.label} has no transparent background" if opaque else "")
        if opaque and self.background_combo.currentData() == "transparent":
            form.select(self.background_combo, "white")

    def _sync_ink(self) -> None:
        """*Include ink*: for the slide's pictures only (the figure is laid out differently), and says why."""
        ink = self.scene_ink()
        on_slide = self.picture in ("slide", "slides") and self.can_compose_slides
        self.ink_check.setEnabled(ink is not None and on_slide)
        if ink is None:
            tip = "This window draws no ink"
        elif not on_slide:
            tip = ("Ink belongs to the slide: it is drawn where it was drawn on the slide as the audience sees it. "
                   "Choose that picture, or slides a page per stage, to include it; the heatmap figure is laid "
                   "out differently.")
        elif self.picture == "slides":
            tip = "Each page the stage's slide as the audience sees it, with the ink drawn on that stage"
        else:
            tip = "The ink drawn on this stage of the slide, where it was drawn"
        if ink is not None and not ink:
            tip += " (this scene has no ink yet: draw with I or D in presentation mode)"
        self.ink_check.setToolTip(tip)

    def _sync_enabled(self) -> None:
        slide = self.picture == "slide"
        self.form.fill_animations(self.generated)

        self._sync_ink()
        slide = self.composes_slide
        self.motion_caption.setVisible(self.is_animated)
        self.motion_row.setVisible(self.is_animated)
        self.all_stages_check.setEnabled(self.format.kind == "figure" and self.picture == "figure")
        raster = not self.is_vector or slide  # (a slide is laid out for a screen of the width given)
        self.width_radio.setEnabled(raster)
        self.scale_radio.setEnabled(raster and not slide)
        self.width_spin.setEnabled(raster and (self.width_radio.isChecked() or slide))
        self.scale_spin.setEnabled(raster and not slide and self.scale_radio.isChecked())
        # (the slide is the window's own look: its parts and background are the presentation's)
        self.include_box.setEnabled(not slide)
        self.background_combo.setEnabled(not slide)
        # With all stages the stage box only chooses which one the preview (and scale) follows.
        several = self.all_stages or self.picture == "slides" or self.format.kind == "deck"
        self.stage_caption.setText("Preview stage:" if several else "Stage:")
        self.stage_combo.setToolTip("All stages are exported; this one is previewed" if several else "")

    def _update_size_label(self) -> None:
        natural = self.natural_size()
        size = self.pixel_size()
        if self.picture == "slides" and self.composes_slide:
            text = (f"a {size.width()} × {size.height()} px slide per stage" if not self.is_vector else
                    f"vector, a {SLIDE_PT[0]:.0f} × {SLIDE_PT[1]:.0f} pt page per stage "
                    f"({size.width()} × {size.height()} screen)")
        elif self.picture == "slide" and self.is_vector:
            text = f"vector, laid out for a {size.width()} × {size.height()} screen"
            if self.format.size == "page":
                text = (f"vector, one {round(size.width() * PT_PER_PX)} × {round(size.height() * PT_PER_PX)} pt "
                        f"page ({size.width()} × {size.height()} screen)")
        elif self.picture == "slide":
            text = f"{size.width()} × {size.height()} px slide"
        elif self.picture == "slides" and self.is_vector:
            text = f"vector, a {SLIDE_PT[0]:.0f} × {SLIDE_PT[1]:.0f} pt page per stage"
        elif self.is_vector:
            pt_w, pt_h = round(natural.width() * PT_PER_PX), round(natural.height() * PT_PER_PX)
            text = (f"vector, one {pt_w} × {pt_h} pt page" if self.format.size == "page"
                    else "vector — sharp at any size")
        else:
            text = f"{size.width()} × {size.height()} px"
            if self.scale_radio.isChecked() and size.width() == MAX_WIDTH:
                text += f" (largest: {MAX_WIDTH} px)"
        self.size_label.setText(text)
        self.size_label.setToolTip(f"Natural size {natural.width()} × {natural.height()} px")
        self._update_deck_label()

    def _update_deck_label(self) -> None:
        if not self.all_stages:
            self.deck_label.setText("")
            self.deck_label.hide()
            return
        p = self.path()
        if p is None or self.path_problem():
            names_ = f"name-1-{DECK_STAGES[0]}{self.suffix} … name-{len(DECK_STAGES)}-{DECK_STAGES[-1]}{self.suffix}"
        else:
            paths = deck_paths(p)
            names_ = f"{paths[0].name} … {paths[-1].name}"
        self.deck_label.setText(f"Writes {len(DECK_STAGES)} files: {names_}")
        self.deck_label.show()

    def _propose_path(self) -> None:
        """Until the user picks a file: last folder / scene name (+ stage) + the format's ending."""
        if not self._path_chosen:
            stage = self.stage_combo.currentData()
            what = {"slide": f"slide-{stage}", "slides": "slides"}.get(self.picture, stage)  # lesson-slides.pdf
            if self.animates_generation:
                what = f"generation-{stage}"
            name = default_file_name(self.scene, getattr(getattr(self.window_, "session", None), "path", ""),
                                     what, self.suffix, all_stages=self.all_stages)
            self.path_edit.setText(str(Path(last_folder(self.settings)) / name))
        self._update_path_note()
        self._update_deck_label()

    def choose_file(self) -> Path | None:
        """Ask for the file with a save dialog (starts in the last export folder); None if cancelled."""
        start = self.path() or Path(last_folder(self.settings))
        path, chosen_filter = QFileDialog.getSaveFileName(self, TITLE, str(start), figure_filter(),
                                                          self.format.file_filter)
        if not path:
            return None
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix not in names.figure_suffixes():
            suffix = names.filter_suffix(chosen_filter, names.figure_formats(), self.suffix)
            p = p.with_name(p.name + suffix)
        form.select(self.format_combo, suffix)
        self._path_chosen = True
        self.path_edit.setText(str(p))
        self.confirmed_path = p  # (the save dialog asked before an existing file is replaced)
        self._update_path_note()
        self._update_deck_label()
        return p

    # ---- preview --------------------------------------------------------------------------------
    def schedule_preview(self) -> None:
        """Redraw the preview shortly (typing in the width box or ticking boxes settles first)."""
        self._preview_timer.start()

    def preview_image(self) -> QImage:
        """The picture as the preview shows it, fitted into the preview box (device pixels)."""
        if self.composes_slide:
            from qkv_studio.export.slide import with_ink

            ink = self.export_ink()
            slide = self.composed_slide()
            if ink is not None:
                slide = with_ink(slide, ink.strokes(self.options().stage))
            return self.preview.fit_slide(slide, self.devicePixelRatioF() or 1.0)
        return self.preview.fit_figure(self.scene, self.options(), self.natural_size(),
                                         self.devicePixelRatioF() or 1.0)

    def refresh_preview(self) -> None:
        self._preview_timer.stop()
        if self._composing:  # (its timer fired while a slide was being composed: the one composer is busy)
            self.schedule_preview()
            return
        try:
            img = self.preview_image()
        except (ValueError, OSError) as exc:
            self.preview_label.setPixmap(QPixmap())
            self.preview_label.setText(names.one_line(exc))
            return
        dpr = self.devicePixelRatioF() or 1.0
        opts = self.options()
        if opts.background == "transparent" and not self.composes_slide:
            img = preview.on_checkerboard(img)
        pix = QPixmap.fromImage(img)
        pix.setDevicePixelRatio(dpr)
        self.preview_label.setPixmap(pix)
        caption = f"{STAGE_LABELS[opts.stage]} · {opts.theme} · {opts.colormap}"
        if self.composes_slide:
            caption = f"The slide: {caption}" + (" · with ink" if self.include_ink else "")
        if self.all_stages or self.picture == "slides":
            count = len(DECK_STAGES) if self.all_stages else len(STAGES)  # (a slide per stage: every stage)
            caption += f"\n(all {count} stages are exported; this one is previewed)"
        elif self.animates_generation:
            caption += (f"\n(the generation: the prompt, then {self.generated} step(s), a token each; "
                        "the last is previewed)")
        self.preview_caption.setText(caption)
        self.alt_text_edit.setPlainText(self.alt_text())

    def alt_text(self) -> str:
        """The description of the figure the options describe (as the exported file carries it)."""
        if self.animates_generation:
            from qkv_studio.export import motion

            opts = self.options()
            return motion.description(self.scene, opts, self.motion(), query=opts.query)
        return alt_text(self.scene, self.options()).text

    def copy_alt_text(self) -> str:
        """Copy the figure's description to the clipboard; returns it."""
        text = self.alt_text()
        QApplication.clipboard().setText(text)
        status(self.window_, "Copied the figure's description")
        return text

    # ---- exporting ------------------------------------------------------------------------------
    def save_settings(self) -> None:
        """Remember the options (and, once something was written, the folder) for next time."""
        self.form.save_settings(self.settings)

    def export_to(self, path: str | os.PathLike[str] | None = None) -> list[Path]:
        """Export to ``path`` (default: the path box; its ending picks the format); returns the files
        written.  It does not ask before replacing a file (the Export button does: :meth:`accept`).

        On failure: a warning with the one-line reason, the dialog keeps every option, nothing is
        written, and ``[]`` is returned.
        """
        if path is not None:
            self._path_chosen = True
            self.path_edit.setText(str(path))
            self._follow_typed_suffix()
            self._update_path_note()
        self._composing = True
        try:
            with job_progress(self, TITLE, "Exporting…"):  # (a long job: progress, and Cancel)
                written = do_export(self)
        except progress.Cancelled:
            status(self.window_, "Export cancelled: nothing was written")
            return []
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, TITLE, names.one_line(exc))
            return []
        finally:
            self._composing = False
        self.save_settings()
        names.remember_folder(self.settings, written[0])
        if self.settings is not None:
            self.settings.sync()
        where = written[0].parent
        status(self.window_, f"Exported {written[0].name} to {where}" if len(written) == 1
               else f"Exported {len(written)} figures ({written[0].name} …) to {where}")
        return written

    def accept(self) -> None:
        """Export: after asking (Qt's standard question) before an existing file is replaced."""
        if not run.confirm_overwrite(self, self, TITLE):
            return
        if self.export_to():
            super().accept()

    def done(self, result: int) -> None:
        composer, self._composer = self._composer, None
        if composer is not None:
            composer.close()
        super().done(result)


# ---- what the window calls ----------------------------------------------------------------------
def export_heatmap(window, *, slide_composer: Callable[[], SlideComposing] | None = None) -> ExportDialog:
    """File → Export heatmap…: open the dialog (window-modal, not blocking) and return it."""
    existing = getattr(window, "_export_dialog", None)
    try:
        if existing is not None and existing.isVisible():
            if QGuiApplication.platformName() != "offscreen":  # nothing to raise without a screen
                existing.raise_()
                existing.activateWindow()
            return existing
    except RuntimeError:  # the C++ side was deleted
        pass
    dlg = ExportDialog(window, slide_composer=slide_composer)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    window._export_dialog = dlg
    dlg.open()
    return dlg
