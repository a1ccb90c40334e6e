"""The export dialog's option form: the File, Size, Figure and Include boxes, filled from and saved to
``QSettings`` (``export/…``).

:func:`build_form` makes the widgets as public attributes of the dialog (tests and the dialog's own
reactions set and read them directly) and returns the boxes; :func:`load_defaults` and
:func:`save_settings` fill them in and remember them.  What the widgets mean is the dialog's
(:mod:`.export_dialog`); the formats, stages, themes and colour maps offered are their registries'.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
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


def select(combo: QComboBox, data) -> None:
    """Choose the entry of ``combo`` holding ``data`` (nothing changes when there is none)."""
    i = combo.findData(data)
    if i >= 0:
        combo.setCurrentIndex(i)


def build_form(d) -> list[QGroupBox]:
    """The File, Size, Figure and Include boxes, their widgets set on the dialog ``d``."""
    return [_file_box(d), _size_box(d), _figure_box(d), _include_box(d)]


def _file_box(d) -> QGroupBox:
    d.format_combo = QComboBox()
    for fmt in names.figure_formats():
        d.format_combo.addItem(fmt.label, fmt.suffix)
    # What the file shows (the registry's pictures of the chosen format: figure, slide, slides)
    d.picture_combo = QComboBox()
    d.picture_combo.setToolTip("The heatmap figure, the slide as the audience sees it in presentation mode, "
                               "or a slide per stage (PDF pages, a PowerPoint deck)")
    # The lecture's ink on the slide (the dialog enables it for the slide's pictures only)
    d.ink_check = QCheckBox("Include ink")
    picture_row = QHBoxLayout()
    picture_row.setContentsMargins(0, 0, 0, 0)
    picture_row.addWidget(d.picture_combo, 1)
    picture_row.addWidget(d.ink_check)
    d.path_edit = QLineEdit()
    d.path_edit.setMinimumWidth(300)
    d.path_edit.setToolTip("Where the file is written; its ending picks the format, the format sets its ending")
    d.choose_button = QPushButton("Choose file…")
    path_row = QHBoxLayout()
    path_row.setContentsMargins(0, 0, 0, 0)
    path_row.addWidget(d.path_edit, 1)
    path_row.addWidget(d.choose_button)
    d.path_note = QLabel()  # a typed ending no format has: why, and what to type instead
    d.path_note.setWordWrap(True)
    d.path_note.setStyleSheet("QLabel { font-weight: bold; }")
    d.path_note.hide()
    d.all_stages_check = QCheckBox("All stages, one file each (for slides)")
    # An animation's frame rate and hold (shown for the animated formats only)
    d.fps_spin = QSpinBox()
    d.fps_spin.setRange(*FPS_RANGE)
    d.fps_spin.setValue(MotionOptions().fps)
    d.fps_spin.setSuffix(" fps")
    d.hold_spin = QDoubleSpinBox()
    d.hold_spin.setRange(*HOLD_RANGE)
    d.hold_spin.setDecimals(1)
    d.hold_spin.setSingleStep(0.5)
    d.hold_spin.setValue(MotionOptions().hold)
    d.hold_spin.setSuffix(" s per stage")
    # What moves: the stages, or (a causal model's head with generated tokens) the generation, a step a token
    d.animate_combo = QComboBox()
    d.animate_combo.setToolTip("The stages one after another, or — for a causal model's head after Next "
                               "token — the generation: each generated token's row appearing, one step each")
    d.motion_row = QWidget()
    motion_lay = QHBoxLayout(d.motion_row)
    motion_lay.setContentsMargins(0, 0, 0, 0)
    motion_lay.addWidget(d.animate_combo)
    motion_lay.addWidget(d.fps_spin)
    motion_lay.addWidget(d.hold_spin)
    motion_lay.addStretch(1)
    d.deck_label = QLabel()
    d.deck_label.setWordWrap(True)
    box = QGroupBox("File")
    form = QFormLayout(box)
    form.addRow("Format:", d.format_combo)
    form.addRow("Picture:", picture_row)
    form.addRow("Save to:", path_row)
    form.addRow("", d.path_note)
    form.addRow("", d.all_stages_check)
    d.motion_caption = QLabel("Motion:")
    form.addRow(d.motion_caption, d.motion_row)
    form.addRow("", d.deck_label)
    return box


def _size_box(d) -> QGroupBox:
    d.width_radio = QRadioButton("Width:")
    d.scale_radio = QRadioButton("Scale:")
    d.size_group = QButtonGroup(d)
    d.size_group.addButton(d.width_radio)
    d.size_group.addButton(d.scale_radio)
    d.width_spin = QSpinBox()
    d.width_spin.setRange(MIN_WIDTH, MAX_WIDTH)
    d.width_spin.setSingleStep(100)
    d.width_spin.setSuffix(" px")
    d.width_spin.setAccelerated(True)
    d.scale_spin = QDoubleSpinBox()
    d.scale_spin.setRange(MIN_SCALE, MAX_SCALE)
    d.scale_spin.setSingleStep(0.5)
    d.scale_spin.setDecimals(1)
    d.scale_spin.setSuffix(" ×")
    d.scale_spin.setToolTip("Times the figure's natural size")
    d.size_label = QLabel()
    font = d.size_label.font()
    font.setBold(True)
    d.size_label.setFont(font)
    d.size_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    box = QGroupBox("Size")
    grid = QGridLayout(box)
    grid.addWidget(d.width_radio, 0, 0)
    grid.addWidget(d.width_spin, 0, 1)
    grid.addWidget(d.scale_radio, 1, 0)
    grid.addWidget(d.scale_spin, 1, 1)
    grid.addWidget(QLabel("Result:"), 2, 0)
    grid.addWidget(d.size_label, 2, 1)
    grid.setColumnStretch(1, 1)
    return box


def _figure_box(d) -> QGroupBox:
    d.stage_combo = QComboBox()
    for stage in STAGES:
        d.stage_combo.addItem(STAGE_LABELS.get(stage, stage), stage)
    d.theme_combo = QComboBox()
    for name in THEMES:
        d.theme_combo.addItem(name.capitalize(), name)
    d.colormap_combo = QComboBox()
    for name in SEQUENTIAL:
        d.colormap_combo.addItem(name, name)
    d.colormap_combo.setToolTip("For the weights; signed scores always use the diverging map centred at 0")
    d.background_combo = QComboBox()
    for key, label in BACKGROUND_LABELS.items():
        d.background_combo.addItem(label, key)
    box = QGroupBox("Figure")
    form = QFormLayout(box)
    d.stage_caption = QLabel("Stage:")
    form.addRow(d.stage_caption, d.stage_combo)
    form.addRow("Theme:", d.theme_combo)
    form.addRow("Colormap:", d.colormap_combo)
    form.addRow("Background:", d.background_combo)
    return box


def _include_box(d) -> QGroupBox:
    d.include_checks = {}
    d.include_box = QGroupBox("Include")
    grid = QGridLayout(d.include_box)
    for i, (key, label) in enumerate(INCLUDES):
        box = QCheckBox(label)
        d.include_checks[key] = box
        grid.addWidget(box, i // 2, i % 2)
    return d.include_box


def load_defaults(d, stage: str, theme: str, colormap: str) -> None:
    """The window's ``stage``/``theme``/``colormap``; everything else as remembered (or the defaults)."""
    st = d.settings

    def get(key: str, default=None):
        return default if st is None else st.value(key, default)

    select(d.stage_combo, stage)
    select(d.theme_combo, theme)
    select(d.colormap_combo, colormap)
    offered = names.figure_suffixes()
    fmt = str(get(names.K_FORMAT, offered[0]))
    select(d.format_combo, fmt if fmt in offered else offered[0])
    scale_mode = str(get(names.K_SIZE_MODE, "width")) == "scale"
    (d.scale_radio if scale_mode else d.width_radio).setChecked(True)
    d.width_spin.setValue(names.as_int(get(names.K_WIDTH), DEFAULT_WIDTH, MIN_WIDTH, MAX_WIDTH))
    d.scale_spin.setValue(names.as_float(get(names.K_SCALE), 2.0, MIN_SCALE, MAX_SCALE))
    defaults = FigureOptions()
    for key, box in d.include_checks.items():
        box.setChecked(names.as_bool(get(f"export/{key}"), getattr(defaults, key)))
    background = str(get(names.K_BACKGROUND, "theme"))
    select(d.background_combo, background if background in BACKGROUND_LABELS else "theme")
    d.all_stages_check.setChecked(names.as_bool(get(names.K_ALL_STAGES), False))
    fill_pictures(d, str(get(names.K_PICTURE, "figure")))


def fill_pictures(d, wanted: str | None = None) -> None:
    """The Picture box: the pictures the chosen format writes (keeping ``wanted`` or the current one when it
    writes that too), each only when the dialog can make it (a slide needs the window's composer)."""
    keep = wanted or d.picture_combo.currentData()
    fmt = formats.get(d.format_combo.currentData())
    offered = [p for p in formats.pictures(fmt) if p != "slide" or d.can_compose_slides]
    d.picture_combo.blockSignals(True)
    try:
        d.picture_combo.clear()
        for key in offered:
            d.picture_combo.addItem(formats.PICTURES[key], key)
        select(d.picture_combo, keep)
    finally:
        d.picture_combo.blockSignals(False)
    d.picture_combo.setEnabled(len(offered) > 1)


#: what an animation shows (the Export dialog's animation box), in the order offered
ANIMATIONS = {"stages": "the stages", "generation": "the generation, token by token"}


def fill_animations(d, generated: int) -> None:
    """The animation box: the stages, and the generation when the window shows ``generated`` (> 0) tokens of
    a causal model's generation; the current choice is kept while it is offered."""
    keep = d.animate_combo.currentData()
    offered = [key for key in ANIMATIONS if key != "generation" or generated > 0]
    if [d.animate_combo.itemData(i) for i in range(d.animate_combo.count())] != offered:
        d.animate_combo.blockSignals(True)
        try:
            d.animate_combo.clear()
            for key in offered:
                d.animate_combo.addItem(ANIMATIONS[key], key)
            select(d.animate_combo, keep)
        finally:
            d.animate_combo.blockSignals(False)
    d.animate_combo.setEnabled(len(offered) > 1)
    d.hold_spin.setSuffix(" s per token" if d.animate_combo.currentData() == "generation" else " s per stage")


def save_settings(d) -> None:
    """Remember the options (and, once something was written, the folder) for next time."""
    st = d.settings
    if st is None:
        return
    st.setValue(names.K_FORMAT, d.suffix)
    st.setValue(names.K_PICTURE, d.picture)
    st.setValue(names.K_SIZE_MODE, "scale" if d.scale_radio.isChecked() else "width")
    st.setValue(names.K_WIDTH, int(d.width_spin.value()))
    st.setValue(names.K_SCALE, float(d.scale_spin.value()))
    st.setValue(names.K_BACKGROUND, d.background_combo.currentData())
    st.setValue(names.K_ALL_STAGES, d.all_stages)
    for key, box in d.include_checks.items():
        st.setValue(f"export/{key}", box.isChecked())
    st.sync()
