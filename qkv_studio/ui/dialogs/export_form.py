"""The export dialog's option form: the File, Size, Figure and Include boxes, filled from and saved to
``QSettings`` (``export/…``).

:class:`ExportForm` is a part the dialog is composed of: it makes the widgets (its public attributes; the
dialog shows them under the same names, for tests and its own reactions) and the boxes that hold them,
says which format and picture they choose, and fills them in from and remembers them in ``QSettings``
(:meth:`~ExportForm.load_defaults`, :meth:`~ExportForm.save_settings`).  What the rest of the widgets mean
is the dialog's (:mod:`.export_dialog`); the formats, stages, themes and colour maps offered are their
registries'.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QWidget,
)

from qkv_studio.core import STAGES
from qkv_studio.core.stages import REGISTRY as STAGE_REGISTRY
from qkv_studio.export import formats
from qkv_studio.export.figures import DEFAULT_WIDTH
from qkv_studio.export.timeline import FPS_RANGE, HOLD_RANGE, MotionOptions
from qkv_studio.render.colormaps import SEQUENTIAL
from qkv_studio.render.figure import FigureOptions
from qkv_studio.render.theme import THEMES
from qkv_studio.ui.dialogs import export_names as names

MIN_WIDTH = 100
MAX_WIDTH = 7680
MIN_SCALE = 1.0
MAX_SCALE = 8.0

STAGE_LABELS = {spec.name: spec.export_label for spec in STAGE_REGISTRY}
BACKGROUND_LABELS = {"theme": "Theme's own", "white": "White", "transparent": "Transparent"}
#: (FigureOptions field, check box label)
INCLUDES = (
    ("title", "Title"),
    ("token_labels", "Token labels"),
    ("values", "Values in cells"),
    ("colorbar", "Colour bar"),
    ("highlight_query", "Highlighted query row"),
)


def select(combo: QComboBox, data: object) -> None:
    """Choose the entry of ``combo`` holding ``data`` (nothing changes when there is none)."""
    i = combo.findData(data)
    if i >= 0:
        combo.setCurrentIndex(i)


#: what an animation shows (the Export dialog's animation box), in the order offered
ANIMATIONS = {"stages": "the stages", "generation": "the generation, token by token"}


class ExportForm:
    """The File, Size, Figure and Include boxes and their widgets (public attributes).

    ``owner`` holds the size radio buttons' group; ``can_compose_slides`` says whether the Picture box may
    offer the presentation slide (the dialog was given a composer for it).
    """

    def __init__(self, owner: QObject, *, can_compose_slides: bool) -> None:
        self.can_compose_slides = can_compose_slides
        self.boxes: list[QGroupBox] = [self._file_box(), self._size_box(owner), self._figure_box(),
                                       self._include_box()]

    # ---- construction ---------------------------------------------------------------------------
    def _file_box(self) -> QGroupBox:
        self.format_combo = QComboBox()
        for fmt in names.figure_formats():
            self.format_combo.addItem(fmt.label, fmt.suffix)
        # What the file shows (the registry's pictures of the chosen format: figure, slide, slides)
        self.picture_combo = QComboBox()
        self.picture_combo.setToolTip("The heatmap figure, the slide as the audience sees it in presentation "
                                      "mode, or a slide per stage (PDF pages, a PowerPoint deck)")
        # The lecture's ink on the slide (the dialog enables it for the slide's pictures only)
        self.ink_check = QCheckBox("Include ink")
        picture_row = QHBoxLayout()
        picture_row.setContentsMargins(0, 0, 0, 0)
        picture_row.addWidget(self.picture_combo, 1)
        picture_row.addWidget(self.ink_check)
        self.path_edit = QLineEdit()
        self.path_edit.setMinimumWidth(300)
        self.path_edit.setToolTip("Where the file is written; its ending picks the format, the format sets its "
                                  "ending")
        self.choose_button = QPushButton("Choose file…")
        path_row = QHBoxLayout()
        path_row.setContentsMargins(0, 0, 0, 0)
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(self.choose_button)
        self.path_note = QLabel()  # a typed ending no format has: why, and what to type instead
        self.path_note.setWordWrap(True)
        self.path_note.setStyleSheet("QLabel { font-weight: bold; }")
        self.path_note.hide()
        self.all_stages_check = QCheckBox("All stages, one file each (for slides)")
        # An animation's frame rate and hold (shown for the animated formats only)
        self.fps_spin = QSpinBox()
        self.fps_spin.setRange(*FPS_RANGE)
        self.fps_spin.setValue(MotionOptions().fps)
        self.fps_spin.setSuffix(" fps")
        self.hold_spin = QDoubleSpinBox()
        self.hold_spin.setRange(*HOLD_RANGE)
        self.hold_spin.setDecimals(1)
        self.hold_spin.setSingleStep(0.5)
        self.hold_spin.setValue(MotionOptions().hold)
        self.hold_spin.setSuffix(" s per stage")
        # What moves: the stages, or (a causal model's head with generated tokens) the generation, a step a token
        self.animate_combo = QComboBox()
        self.animate_combo.setToolTip("The stages one after another, or — for a causal model's head after Next "
                                      "token — the generation: each generated token's row appearing, one step "
                                      "each")
        self.motion_row = QWidget()
        motion_lay = QHBoxLayout(self.motion_row)
        motion_lay.setContentsMargins(0, 0, 0, 0)
        motion_lay.addWidget(self.animate_combo)
        motion_lay.addWidget(self.fps_spin)
        motion_lay.addWidget(self.hold_spin)
        motion_lay.addStretch(1)
        self.deck_label = QLabel()
        self.deck_label.setWordWrap(True)
        box = QGroupBox("File")
        form = QFormLayout(box)
        form.addRow("Format:", self.format_combo)
        form.addRow("Picture:", picture_row)
        form.addRow("Save to:", path_row)
        form.addRow("", self.path_note)
        form.addRow("", self.all_stages_check)
        self.motion_caption = QLabel("Motion:")
        form.addRow(self.motion_caption, self.motion_row)
        form.addRow("", self.deck_label)
        return box

    def _size_box(self, owner: QObject) -> QGroupBox:
        self.width_radio = QRadioButton("Width:")
        self.scale_radio = QRadioButton("Scale:")
        self.size_group = QButtonGroup(owner)
        self.size_group.addButton(self.width_radio)
        self.size_group.addButton(self.scale_radio)
        self.width_spin = QSpinBox()
        self.width_spin.setRange(MIN_WIDTH, MAX_WIDTH)
        self.width_spin.setSingleStep(100)
        self.width_spin.setSuffix(" px")
        self.width_spin.setAccelerated(True)
        self.scale_spin = QDoubleSpinBox()
        self.scale_spin.setRange(MIN_SCALE, MAX_SCALE)
        self.scale_spin.setSingleStep(0.5)
        self.scale_spin.setDecimals(1)
        self.scale_spin.setSuffix(" ×")
        self.scale_spin.setToolTip("Times the figure's natural size")
        self.size_label = QLabel()
        font = self.size_label.font()
        font.setBold(True)
        self.size_label.setFont(font)
        self.size_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box = QGroupBox("Size")
        grid = QGridLayout(box)
        grid.addWidget(self.width_radio, 0, 0)
        grid.addWidget(self.width_spin, 0, 1)
        grid.addWidget(self.scale_radio, 1, 0)
        grid.addWidget(self.scale_spin, 1, 1)
        grid.addWidget(QLabel("Result:"), 2, 0)
        grid.addWidget(self.size_label, 2, 1)
        grid.setColumnStretch(1, 1)
        return box

    def _figure_box(self) -> QGroupBox:
        self.stage_combo = QComboBox()
        for stage in STAGES:
            self.stage_combo.addItem(STAGE_LABELS.get(stage, stage), stage)
        self.theme_combo = QComboBox()
        for name in THEMES:
            self.theme_combo.addItem(name.capitalize(), name)
        self.colormap_combo = QComboBox()
        for name in SEQUENTIAL:
            self.colormap_combo.addItem(name, name)
        self.colormap_combo.setToolTip("For the weights; signed scores always use the diverging map centred at 0")
        self.background_combo = QComboBox()
        for key, label in BACKGROUND_LABELS.items():
            self.background_combo.addItem(label, key)
        box = QGroupBox("Figure")
        form = QFormLayout(box)
        self.stage_caption = QLabel("Stage:")
        form.addRow(self.stage_caption, self.stage_combo)
        form.addRow("Theme:", self.theme_combo)
        form.addRow("Colormap:", self.colormap_combo)
        form.addRow("Background:", self.background_combo)
        return box

    def _include_box(self) -> QGroupBox:
        self.include_checks: dict[str, QCheckBox] = {}
        self.include_box = QGroupBox("Include")
        grid = QGridLayout(self.include_box)
        for i, (key, label) in enumerate(INCLUDES):
            box = QCheckBox(label)
            self.include_checks[key] = box
            grid.addWidget(box, i // 2, i % 2)
        return self.include_box

    # ---- what the widgets choose ----------------------------------------------------------------
    @property
    def suffix(self) -> str:
        """The chosen format's ending (``.png``)."""
        return str(self.format_combo.currentData())

    @property
    def format(self) -> formats.ExportFormat:
        """The registry's entry for the chosen format (the format box offers the registry's entries only)."""
        fmt = formats.get(self.suffix)
        if fmt is None:
            raise LookupError(f"the format box holds {self.suffix!r}, no format's ending")
        return fmt

    @property
    def picture(self) -> str:
        """What the file shows: ``figure``, ``slide`` or ``slides`` (:data:`formats.PICTURES`)."""
        return self.picture_combo.currentData() or formats.pictures(self.format)[0]

    @property
    def all_stages(self) -> bool:
        """One numbered file per stage (figures only: an animation or a deck holds every stage itself)."""
        return self.all_stages_check.isChecked() and self.format.kind == "figure" and self.picture == "figure"

    # ---- filling in -----------------------------------------------------------------------------
    def load_defaults(self, settings: QSettings | None, stage: str, theme: str, colormap: str) -> None:
        """The window's ``stage``/``theme``/``colormap``; everything else as remembered in ``settings`` (or
        the defaults)."""

        def get(key: str, default: object = None) -> object:
            return default if settings is None else settings.value(key, default)

        select(self.stage_combo, stage)
        select(self.theme_combo, theme)
        select(self.colormap_combo, colormap)
        offered = names.figure_suffixes()
        fmt = str(get(names.K_FORMAT, offered[0]))
        select(self.format_combo, fmt if fmt in offered else offered[0])
        scale_mode = str(get(names.K_SIZE_MODE, "width")) == "scale"
        (self.scale_radio if scale_mode else self.width_radio).setChecked(True)
        self.width_spin.setValue(names.as_int(get(names.K_WIDTH), DEFAULT_WIDTH, MIN_WIDTH, MAX_WIDTH))
        self.scale_spin.setValue(names.as_float(get(names.K_SCALE), 2.0, MIN_SCALE, MAX_SCALE))
        defaults = FigureOptions()
        for key, box in self.include_checks.items():
            box.setChecked(names.as_bool(get(f"export/{key}"), getattr(defaults, key)))
        background = str(get(names.K_BACKGROUND, "theme"))
        select(self.background_combo, background if background in BACKGROUND_LABELS else "theme")
        self.all_stages_check.setChecked(names.as_bool(get(names.K_ALL_STAGES), False))
        self.fill_pictures(str(get(names.K_PICTURE, "figure")))

    def fill_pictures(self, wanted: str | None = None) -> None:
        """The Picture box: the pictures the chosen format writes (keeping ``wanted`` or the current one when
        it writes that too), each only when the dialog can make it (a slide needs the window's composer)."""
        keep = wanted or self.picture_combo.currentData()
        offered = [p for p in formats.pictures(self.format) if p != "slide" or self.can_compose_slides]
        self.picture_combo.blockSignals(True)
        try:
            self.picture_combo.clear()
            for key in offered:
                self.picture_combo.addItem(formats.PICTURES[key], key)
            select(self.picture_combo, keep)
        finally:
            self.picture_combo.blockSignals(False)
        self.picture_combo.setEnabled(len(offered) > 1)

    def fill_animations(self, generated: int) -> None:
        """The animation box: the stages, and the generation when the window shows ``generated`` (> 0) tokens
        of a causal model's generation; the current choice is kept while it is offered."""
        combo = self.animate_combo
        keep = combo.currentData()
        offered = [key for key in ANIMATIONS if key != "generation" or generated > 0]
        if [combo.itemData(i) for i in range(combo.count())] != offered:
            combo.blockSignals(True)
            try:
                combo.clear()
                for key in offered:
                    combo.addItem(ANIMATIONS[key], key)
                select(combo, keep)
            finally:
                combo.blockSignals(False)
        combo.setEnabled(len(offered) > 1)
        self.hold_spin.setSuffix(" s per token" if combo.currentData() == "generation" else " s per stage")

    def save_settings(self, settings: QSettings | None) -> None:
        """Remember the options in ``settings`` (None: nothing is remembered) for next time."""
        if settings is None:
            return
        settings.setValue(names.K_FORMAT, self.suffix)
        settings.setValue(names.K_PICTURE, self.picture)
        settings.setValue(names.K_SIZE_MODE, "scale" if self.scale_radio.isChecked() else "width")
        settings.setValue(names.K_WIDTH, int(self.width_spin.value()))
        settings.setValue(names.K_SCALE, float(self.scale_spin.value()))
        settings.setValue(names.K_BACKGROUND, self.background_combo.currentData())
        settings.setValue(names.K_ALL_STAGES, self.all_stages)
        for key, box in self.include_checks.items():
            settings.setValue(f"export/{key}", box.isChecked())
        settings.sync()
