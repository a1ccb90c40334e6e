"""File → Export heatmap…, Copy heatmap and Export numbers… for the main window.

The window calls three functions:

* :func:`export_heatmap` opens :class:`ExportDialog` (window-modal, without blocking in ``exec()``),
* :func:`copy_heatmap` puts the current stage's figure on the clipboard,
* :func:`export_numbers` writes the current stage as CSV or every stage as JSON.

The dialog only gathers options; the drawing and the atomic writing are :mod:`qkv_studio.export`'s, and
the formats it offers (the format box, the file filters) are the registry :mod:`qkv_studio.export.formats`.
A failed export shows one line in a warning and leaves the dialog open with its options (nothing is
lost, nothing partial is left on disk).  The last folder and the options are remembered in
``QSettings`` under ``export/…``; the stage, theme and colormap always start from the window's, so
the figure first offered is the one on screen.

Tests drive the dialog without ``exec()``: build it, set its widgets, call
:meth:`ExportDialog.export_to` (or :func:`do_export`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPixmap
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from qkv_studio.core import STAGES, Scene
from qkv_studio.core.stages import REGISTRY as STAGE_REGISTRY
from qkv_studio.export import formats
from qkv_studio.export.deck import DECK_STAGES, deck_paths, export_all_stages
from qkv_studio.export.figures import DEFAULT_WIDTH, PT_PER_PX, alt_text, figure_image
from qkv_studio.export.files import export_file
from qkv_studio.export.timeline import FPS_RANGE, HOLD_RANGE, MotionOptions
from qkv_studio.render.colormaps import DEFAULT_SEQUENTIAL, SEQUENTIAL
from qkv_studio.render.figure import FigureOptions, figure_size
from qkv_studio.render.theme import THEMES

TITLE = "Export heatmap"
MIN_WIDTH = 100
MAX_WIDTH = 7680
MIN_SCALE = 1.0
MAX_SCALE = 8.0
PREVIEW_SIZE = QSize(400, 320)
PREVIEW_DELAY_MS = 120

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

# QSettings keys (all under export/)
K_FOLDER = "export/folder"
K_FORMAT = "export/format"
K_SIZE_MODE = "export/size_mode"
K_WIDTH = "export/width"
K_SCALE = "export/scale"
K_BACKGROUND = "export/background"
K_ALL_STAGES = "export/all_stages"


# ---- small helpers ------------------------------------------------------------------------------
#: The registry's kinds *Export heatmap…* offers: one stage's figure, the stages animated, a deck of them.
PICTURE_KINDS = ("figure", "animation", "deck")


def _figure_formats() -> tuple[formats.ExportFormat, ...]:
    return tuple(f for f in formats.formats() if f.kind in PICTURE_KINDS)


def _figure_suffixes() -> tuple[str, ...]:
    return tuple(f.suffix for f in _figure_formats())


def _number_formats() -> tuple[formats.ExportFormat, ...]:
    return formats.formats("numbers")


def _settings(window) -> QSettings | None:
    """The app's settings, or None for a window told not to use them (offscreen screenshots)."""
    if window is not None and not getattr(window, "_use_settings", True):
        return None
    return QSettings()


def _as_bool(value, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _as_int(value, default: int, lo: int, hi: int) -> int:
    try:
        return min(hi, max(lo, int(value)))
    except (TypeError, ValueError):
        return default


def _as_float(value, default: float, lo: float, hi: float) -> float:
    try:
        return min(hi, max(lo, float(value)))
    except (TypeError, ValueError):
        return default


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:1].upper() + text[1:]


def last_folder(settings: QSettings | None) -> str:
    """The folder of the last export (if it still exists), else the home folder."""
    if settings is not None:
        folder = settings.value(K_FOLDER)
        if folder and os.path.isdir(str(folder)):
            return str(folder)
    return os.path.expanduser("~")


def _remember_folder(settings: QSettings | None, path: Path) -> None:
    if settings is not None:
        settings.setValue(K_FOLDER, str(Path(path).resolve().parent))


def base_name(scene: Scene, session_path: str = "") -> str:
    """A file name stem for a scene: its file's name, else its title, else ``attention``."""
    if session_path:
        name = Path(session_path).name
        for ending in (".qkv.json", ".json"):
            if name.lower().endswith(ending):
                name = name[: -len(ending)]
                break
        if name:
            return name
    slug = re.sub(r"[^\w]+", "-", re.sub(r"['’]", "", scene.title or "").lower()).strip("-_")
    return slug[:60] or "attention"


def default_file_name(scene: Scene, session_path: str, stage: str, suffix: str, *, all_stages: bool = False) -> str:
    """``lesson-weights.png``; for all stages just ``lesson.png`` (the stages are numbered onto it)."""
    stem = base_name(scene, session_path)
    return f"{stem}{suffix}" if all_stages else f"{stem}-{stage}{suffix}"


def _window_scene(window) -> Scene:
    return window.session.shown  # (of a scene split into heads, the head the views show)


def _window_query(window) -> int:
    """The window's selected query (the row the figure names and outlines)."""
    return window.session.query


def _window_theme(window) -> str:
    """The theme of the window's Appearance (the light one for a window without one)."""
    theme = getattr(getattr(getattr(window, "appearance", None), "theme", None), "name", "light")
    return theme if theme in THEMES else "light"


def _window_colormap(window) -> str:
    """The weights' colour map of the window's Appearance (the default for a window without one)."""
    cmap = getattr(getattr(window, "appearance", None), "colormap", DEFAULT_SEQUENTIAL)
    return cmap if cmap in SEQUENTIAL else DEFAULT_SEQUENTIAL


def _status(window, text: str) -> None:
    bar = getattr(window, "statusBar", None)
    if callable(bar):
        bar().showMessage(text, 8000)


# ---- the dialog ---------------------------------------------------------------------------------
class ExportDialog(QDialog):
    """Options for exporting the heatmap figure, with a live preview.

    ``window`` is the main window (for its session, theme and colormap) and the dialog's parent.
    The widgets are public attributes so tests (and the window) can set them directly.
    """

    def __init__(self, window, parent: QWidget | None = None, *, settings: QSettings | None = None,
                 use_settings: bool = True) -> None:
        super().__init__(parent if parent is not None else window)
        self.window_ = window
        self.settings = settings if settings is not None else (_settings(window) if use_settings else None)
        self._path_chosen = False  # the user picked or typed a path: stop proposing names
        self._natural_cache: tuple[Scene, FigureOptions, QSize] | None = None
        self.setWindowTitle(TITLE)
        self._build()
        self._load_defaults()
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
        # File
        self.format_combo = QComboBox()
        for fmt in _figure_formats():
            self.format_combo.addItem(fmt.label, fmt.suffix)
        self.path_edit = QLineEdit()
        self.path_edit.setMinimumWidth(300)
        self.path_edit.setToolTip("Where the figure is written; the format sets the file's ending")
        self.choose_button = QPushButton("Choose file…")
        self.choose_button.clicked.connect(self.choose_file)
        path_row = QHBoxLayout()
        path_row.setContentsMargins(0, 0, 0, 0)
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(self.choose_button)
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
        self.motion_row = QWidget()
        motion_lay = QHBoxLayout(self.motion_row)
        motion_lay.setContentsMargins(0, 0, 0, 0)
        motion_lay.addWidget(self.fps_spin)
        motion_lay.addWidget(self.hold_spin)
        motion_lay.addStretch(1)
        self.deck_label = QLabel()
        self.deck_label.setWordWrap(True)
        file_box = QGroupBox("File")
        form = QFormLayout(file_box)
        form.addRow("Format:", self.format_combo)
        form.addRow("Save to:", path_row)
        form.addRow("", self.all_stages_check)
        self.motion_caption = QLabel("Motion:")
        form.addRow(self.motion_caption, self.motion_row)
        form.addRow("", self.deck_label)

        # Size
        self.width_radio = QRadioButton("Width:")
        self.scale_radio = QRadioButton("Scale:")
        self.size_group = QButtonGroup(self)
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
        self.size_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        size_box = QGroupBox("Size")
        grid = QGridLayout(size_box)
        grid.addWidget(self.width_radio, 0, 0)
        grid.addWidget(self.width_spin, 0, 1)
        grid.addWidget(self.scale_radio, 1, 0)
        grid.addWidget(self.scale_spin, 1, 1)
        grid.addWidget(QLabel("Result:"), 2, 0)
        grid.addWidget(self.size_label, 2, 1)
        grid.setColumnStretch(1, 1)

        # Figure
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
        figure_box = QGroupBox("Figure")
        form = QFormLayout(figure_box)
        self.stage_caption = QLabel("Stage:")
        form.addRow(self.stage_caption, self.stage_combo)
        form.addRow("Theme:", self.theme_combo)
        form.addRow("Colormap:", self.colormap_combo)
        form.addRow("Background:", self.background_combo)

        # Include
        self.include_checks: dict[str, QCheckBox] = {}
        include_box = QGroupBox("Include")
        grid = QGridLayout(include_box)
        for i, (key, label) in enumerate(INCLUDES):
            box = QCheckBox(label)
            self.include_checks[key] = box
            grid.addWidget(box, i // 2, i % 2)

        # Preview
        self.preview_label = QLabel()
        self.preview_label.setAlignment(Qt.AlignCenter)
        self.preview_label.setFixedSize(PREVIEW_SIZE)
        self.preview_label.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        self.preview_label.setStyleSheet("QLabel { border: 1px solid palette(mid); }")
        self.preview_caption = QLabel()
        self.preview_caption.setAlignment(Qt.AlignCenter)
        self.preview_caption.setWordWrap(True)
        self.preview_caption.setMaximumWidth(PREVIEW_SIZE.width())
        # The figure's alt text (the files carry it too), to paste where the figure goes.
        self.alt_text_edit = QPlainTextEdit()
        self.alt_text_edit.setReadOnly(True)
        self.alt_text_edit.setMaximumWidth(PREVIEW_SIZE.width())
        self.alt_text_edit.setFixedHeight(110)
        self.alt_text_edit.setToolTip("The figure's description for readers who cannot see it; every exported "
                                      "file carries it")
        self.copy_alt_button = QPushButton("Copy description")
        self.copy_alt_button.clicked.connect(self.copy_alt_text)
        preview_box = QGroupBox("Preview")
        lay = QVBoxLayout(preview_box)
        lay.addWidget(self.preview_label, 0, Qt.AlignHCenter)
        lay.addWidget(self.preview_caption)
        lay.addWidget(QLabel("Description (alt text):"))
        lay.addWidget(self.alt_text_edit)
        lay.addWidget(self.copy_alt_button, 0, Qt.AlignRight)
        lay.addStretch(1)

        self.buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.AcceptRole)
        self.export_button.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        left = QVBoxLayout()
        left.addWidget(file_box)
        left.addWidget(size_box)
        left.addWidget(figure_box)
        left.addWidget(include_box)
        left.addStretch(1)
        columns = QHBoxLayout()
        columns.addLayout(left, 1)
        columns.addWidget(preview_box, 0)
        outer = QVBoxLayout(self)
        outer.addLayout(columns)
        outer.addWidget(self.buttons)

    def _load_defaults(self) -> None:
        """The window's stage/theme/colormap; everything else as remembered (or the defaults)."""
        st = self.settings

        def get(key: str, default=None):
            return default if st is None else st.value(key, default)

        self._select(self.stage_combo, self.window_.session.stage)
        self._select(self.theme_combo, _window_theme(self.window_))
        self._select(self.colormap_combo, _window_colormap(self.window_))
        first = _figure_suffixes()[0]
        fmt = str(get(K_FORMAT, first))
        self._select(self.format_combo, fmt if fmt in _figure_suffixes() else first)
        scale_mode = str(get(K_SIZE_MODE, "width")) == "scale"
        (self.scale_radio if scale_mode else self.width_radio).setChecked(True)
        self.width_spin.setValue(_as_int(get(K_WIDTH), DEFAULT_WIDTH, MIN_WIDTH, MAX_WIDTH))
        self.scale_spin.setValue(_as_float(get(K_SCALE), 2.0, MIN_SCALE, MAX_SCALE))
        defaults = FigureOptions()
        for key, box in self.include_checks.items():
            box.setChecked(_as_bool(get(f"export/{key}"), getattr(defaults, key)))
        background = str(get(K_BACKGROUND, "theme"))
        self._select(self.background_combo, background if background in BACKGROUND_LABELS else "theme")
        self.all_stages_check.setChecked(_as_bool(get(K_ALL_STAGES), False))
        self._fix_background()

    def _connect(self) -> None:
        for combo in (self.stage_combo, self.theme_combo, self.colormap_combo, self.background_combo):
            combo.currentIndexChanged.connect(self._options_changed)
        self.format_combo.currentIndexChanged.connect(self._format_changed)
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

    @staticmethod
    def _select(combo: QComboBox, data) -> None:
        i = combo.findData(data)
        if i >= 0:
            combo.setCurrentIndex(i)

    # ---- state ----------------------------------------------------------------------------------
    @property
    def scene(self) -> Scene:
        return _window_scene(self.window_)

    @property
    def suffix(self) -> str:
        return self.format_combo.currentData()

    @property
    def format(self) -> formats.ExportFormat:
        """The registry's entry for the chosen format."""
        return formats.get(self.suffix)

    @property
    def is_vector(self) -> bool:
        return self.format.is_vector

    @property
    def all_stages(self) -> bool:
        """One numbered file per stage (figures only: an animation or a deck holds every stage itself)."""
        return self.all_stages_check.isChecked() and self.format.kind == "figure"

    @property
    def is_animated(self) -> bool:
        return self.format.kind == "animation"

    def motion(self) -> MotionOptions:
        """The animation's options the widgets describe."""
        return MotionOptions(fps=int(self.fps_spin.value()), hold=float(self.hold_spin.value())).validated()

    def options(self) -> FigureOptions:
        """The figure options the widgets describe (validated)."""
        return FigureOptions(
            stage=self.stage_combo.currentData(),
            query=_window_query(self.window_),
            theme=self.theme_combo.currentData(),
            colormap=self.colormap_combo.currentData(),
            background=self.background_combo.currentData(),
            **{key: box.isChecked() for key, box in self.include_checks.items()},
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
        if self.width_radio.isChecked():
            return int(self.width_spin.value())
        natural = self.natural_size().width()
        return max(MIN_WIDTH, min(MAX_WIDTH, round(self.scale_spin.value() * natural)))

    def pixel_size(self) -> QSize:
        natural = self.natural_size()
        w = self.pixel_width()
        if self.is_animated:  # a 16:9 frame of even sides (export/motion.py's frame_size)
            from qkv_studio.export.motion import ASPECT

            w -= w % 2
            h = round(w * ASPECT[1] / ASPECT[0])
            return QSize(w, h - h % 2)
        return QSize(w, max(1, round(w * natural.height() / max(1, natural.width()))))

    def path(self) -> Path | None:
        """The target path with the format's ending (added or swapped in), or None when empty."""
        text = self.path_edit.text().strip()
        if not text:
            return None
        p = Path(os.path.expanduser(text))
        if not p.is_absolute():
            p = Path(last_folder(self.settings)) / p
        if p.suffix.lower() in _figure_suffixes():
            p = p.with_suffix(self.suffix)
        elif p.name:
            p = p.with_name(p.name + self.suffix)
        return p

    # ---- reactions ------------------------------------------------------------------------------
    def _options_changed(self, *_: object) -> None:
        self._update_size_label()
        self._propose_path()
        self.schedule_preview()

    def _format_changed(self, *_: object) -> None:
        self._fix_background()
        self._sync_enabled()
        if self._path_chosen and self.path_edit.text().strip():
            p = self.path()
            if p is not None:
                self.path_edit.setText(str(p))
        self._options_changed()

    def _all_stages_changed(self, *_: object) -> None:
        self._sync_enabled()
        self._options_changed()

    def _size_changed(self, *_: object) -> None:
        self._sync_enabled()
        self._update_size_label()

    def _path_edited(self, text: str) -> None:
        self._path_chosen = bool(text.strip())
        self._update_deck_label()

    def _fix_background(self) -> None:
        """Transparent only for formats that keep it (PNG, SVG; a PDF page is opaque): else disabled."""
        i = self.background_combo.findData("transparent")
        item = self.background_combo.model().item(i)
        opaque = not self.format.transparent
        item.setEnabled(not opaque)
        item.setToolTip(f"{self.format.label} has no transparent background" if opaque else "")
        if opaque and self.background_combo.currentData() == "transparent":
            self._select(self.background_combo, "white")

    def _sync_enabled(self) -> None:
        self.motion_caption.setVisible(self.is_animated)
        self.motion_row.setVisible(self.is_animated)
        self.all_stages_check.setEnabled(self.format.kind == "figure")
        raster = not self.is_vector
        self.width_radio.setEnabled(raster)
        self.scale_radio.setEnabled(raster)
        self.width_spin.setEnabled(raster and self.width_radio.isChecked())
        self.scale_spin.setEnabled(raster and self.scale_radio.isChecked())
        # With all stages the stage box only chooses which one the preview (and scale) follows.
        self.stage_caption.setText("Preview stage:" if self.all_stages else "Stage:")
        self.stage_combo.setToolTip("All stages are exported; this one is previewed" if self.all_stages else "")

    def _update_size_label(self) -> None:
        natural = self.natural_size()
        if self.is_vector:
            pt_w, pt_h = round(natural.width() * PT_PER_PX), round(natural.height() * PT_PER_PX)
            text = (f"vector, one {pt_w} × {pt_h} pt page" if self.format.size == "page"
                    else "vector — sharp at any size")
        else:
            size = self.pixel_size()
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
        if p is None:
            names = f"name-1-{DECK_STAGES[0]}{self.suffix} … name-{len(DECK_STAGES)}-{DECK_STAGES[-1]}{self.suffix}"
        else:
            paths = deck_paths(p)
            names = f"{paths[0].name} … {paths[-1].name}"
        self.deck_label.setText(f"Writes {len(DECK_STAGES)} files: {names}")
        self.deck_label.show()

    def _propose_path(self) -> None:
        """Until the user picks a file: last folder / scene name (+ stage) + the format's ending."""
        if not self._path_chosen:
            name = default_file_name(self.scene, getattr(getattr(self.window_, "session", None), "path", ""),
                                     self.stage_combo.currentData(), self.suffix, all_stages=self.all_stages)
            self.path_edit.setText(str(Path(last_folder(self.settings)) / name))
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
        if suffix not in _figure_suffixes():
            suffix = _filter_suffix(chosen_filter, _figure_formats(), self.suffix)
            p = p.with_name(p.name + suffix)
        self._select(self.format_combo, suffix)
        self._path_chosen = True
        self.path_edit.setText(str(p))
        self._update_deck_label()
        return p

    # ---- preview --------------------------------------------------------------------------------
    def schedule_preview(self) -> None:
        """Redraw the preview shortly (typing in the width box or ticking boxes settles first)."""
        self._preview_timer.start()

    def preview_image(self) -> QImage:
        """The figure as the preview shows it, fitted into the preview box (device pixels)."""
        box = self.preview_label.contentsRect().size()
        box = QSize(max(box.width() - 8, 60), max(box.height() - 8, 60))
        natural = self.natural_size()
        fit = min(box.width() / max(1, natural.width()), box.height() / max(1, natural.height()))
        dpr = self.devicePixelRatioF() or 1.0
        width = max(16, round(natural.width() * fit * dpr))
        return figure_image(self.scene, self.options(), width)

    def refresh_preview(self) -> None:
        self._preview_timer.stop()
        try:
            img = self.preview_image()
        except (ValueError, OSError) as exc:
            self.preview_label.setPixmap(QPixmap())
            self.preview_label.setText(_one_line(exc))
            return
        dpr = self.devicePixelRatioF() or 1.0
        if self.options().background == "transparent":
            img = _on_checkerboard(img)
        pix = QPixmap.fromImage(img)
        pix.setDevicePixelRatio(dpr)
        self.preview_label.setPixmap(pix)
        opts = self.options()
        caption = f"{STAGE_LABELS[opts.stage]} · {opts.theme} · {opts.colormap}"
        if self.all_stages:
            caption += f"\n(all {len(DECK_STAGES)} stages are exported; this one is previewed)"
        self.preview_caption.setText(caption)
        self.alt_text_edit.setPlainText(self.alt_text())

    def alt_text(self) -> str:
        """The description of the figure the options describe (as the exported file carries it)."""
        return alt_text(self.scene, self.options()).text

    def copy_alt_text(self) -> str:
        """Copy the figure's description to the clipboard; returns it."""
        text = self.alt_text()
        QApplication.clipboard().setText(text)
        _status(self.window_, "Copied the figure's description")
        return text

    # ---- exporting ------------------------------------------------------------------------------
    def save_settings(self) -> None:
        """Remember the options (and, once something was written, the folder) for next time."""
        st = self.settings
        if st is None:
            return
        st.setValue(K_FORMAT, self.suffix)
        st.setValue(K_SIZE_MODE, "scale" if self.scale_radio.isChecked() else "width")
        st.setValue(K_WIDTH, int(self.width_spin.value()))
        st.setValue(K_SCALE, float(self.scale_spin.value()))
        st.setValue(K_BACKGROUND, self.background_combo.currentData())
        st.setValue(K_ALL_STAGES, self.all_stages)
        for key, box in self.include_checks.items():
            st.setValue(f"export/{key}", box.isChecked())
        st.sync()

    def export_to(self, path: str | os.PathLike | None = None) -> list[Path]:
        """Export to ``path`` (default: the path box); returns the files written.

        On failure: a warning with the one-line reason, the dialog keeps every option, nothing is
        written, and ``[]`` is returned.
        """
        if path is not None:
            self._path_chosen = True
            self.path_edit.setText(str(path))
        try:
            written = do_export(self)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, TITLE, _one_line(exc))
            return []
        self.save_settings()
        _remember_folder(self.settings, written[0])
        if self.settings is not None:
            self.settings.sync()
        where = written[0].parent
        _status(self.window_, f"Exported {written[0].name} to {where}" if len(written) == 1
                else f"Exported {len(written)} figures ({written[0].name} …) to {where}")
        return written

    def accept(self) -> None:
        if self.export_to():
            super().accept()


def figure_filter() -> str:
    """The save dialog's filters for figures: ``PNG image (*.png);;SVG (vector) (*.svg);;…``."""
    return ";;".join(f.file_filter for f in _figure_formats())


def number_filter() -> str:
    """The save dialog's filters for numbers: ``CSV — current stage (*.csv);;JSON — all stages (*.json)``."""
    return ";;".join(f.file_filter for f in _number_formats())


def _filter_suffix(chosen_filter: str, offered: tuple[formats.ExportFormat, ...], default: str) -> str:
    """The suffix of the format whose filter the user picked (``default`` if none matches)."""
    for fmt in offered:
        if chosen_filter == fmt.file_filter:
            return fmt.suffix
    for fmt in offered:  # a platform dialog may hand back the label alone
        if chosen_filter.startswith(fmt.label):
            return fmt.suffix
    return default


def export_options_from_dialog(dlg: ExportDialog) -> tuple[FigureOptions, int]:
    """(figure options, PNG width in pixels) that the dialog's widgets describe."""
    return dlg.options(), dlg.pixel_width()


def do_export(dialog: ExportDialog) -> list[Path]:
    """Write what the dialog describes; returns the paths written.

    Raises ValueError (no path, bad option) or OSError ("cannot write PATH: reason"); the exporters
    leave nothing partial behind.
    """
    path = dialog.path()
    if path is None:
        raise ValueError("choose a file to export to")
    options, width = export_options_from_dialog(dialog)
    scene = dialog.scene
    if dialog.all_stages:
        return export_all_stages(scene, path, width=width, options=options)
    export_file(scene, path, width=width, options=options, motion=dialog.motion() if dialog.is_animated else None)
    return [path]


# ---- what the window calls ----------------------------------------------------------------------
def export_heatmap(window) -> ExportDialog:
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
    dlg = ExportDialog(window)
    dlg.setAttribute(Qt.WA_DeleteOnClose, True)
    window._export_dialog = dlg
    dlg.open()
    return dlg


def current_figure_options(window) -> FigureOptions:
    """The figure of what the window shows: its stage, theme and colormap."""
    return FigureOptions(stage=window.session.stage, query=window.session.query, theme=_window_theme(window),
                         colormap=_window_colormap(window)).validated()


def copy_heatmap(window, width: int = DEFAULT_WIDTH) -> QImage:
    """Copy heatmap (Ctrl+Shift+C): the current stage's figure, ``width`` px wide, on the clipboard."""
    image = figure_image(window.session.shown, current_figure_options(window), width)
    QApplication.clipboard().setImage(image)
    _status(window, f"Copied the {window.session.stage} heatmap ({image.width()} × {image.height()} px)")
    return image


def export_numbers(window, path: str | os.PathLike | None = None) -> Path | None:
    """Export numbers…: the current stage as CSV or every stage as JSON, by the file's ending.

    Asks for the file when ``path`` is None.  Returns the path written, or None (cancelled, or a
    one-line warning was shown and nothing was written).
    """
    settings = _settings(window)
    scene, stage = window.session.shown, window.session.stage
    if path is None:
        first = _number_formats()[0].suffix
        name = default_file_name(scene, window.session.path, stage, first)
        chosen, chosen_filter = QFileDialog.getSaveFileName(
            window, "Export numbers", str(Path(last_folder(settings)) / name), number_filter())
        if not chosen:
            return None
        p = Path(chosen)
        if p.suffix.lower() not in formats.suffixes("numbers"):
            p = p.with_name(p.name + _filter_suffix(chosen_filter, _number_formats(), first))
    else:
        p = Path(path)
    fmt = formats.get(p.suffix)
    try:
        if fmt is None or fmt.kind != "numbers":
            uses = [f"{f.suffix} ({'all stages' if f.every_stage else 'this stage'})" for f in _number_formats()]
            raise ValueError(f"cannot export numbers to {p}: use {formats.spelled(uses)}")
        export_file(scene, p, options=FigureOptions(stage=stage, query=window.session.query))
    except (OSError, ValueError) as exc:
        QMessageBox.warning(window, "Export numbers", _one_line(exc))
        return None
    _remember_folder(settings, p)
    what = "all stages" if fmt.every_stage else f"the {stage} stage"
    _status(window, f"Exported {what} to {p}")
    return p


def _on_checkerboard(img: QImage, cell: int = 8) -> QImage:
    """``img`` over a light checkerboard, so a transparent background is visible in the preview."""
    out = QImage(img.size(), QImage.Format_ARGB32_Premultiplied)
    out.fill(QColor("#ffffff"))
    p = QPainter(out)
    grey = QColor("#e4e4e4")
    for y in range(0, img.height(), cell):
        for x in range((y // cell) % 2 * cell, img.width(), 2 * cell):
            p.fillRect(x, y, cell, cell, grey)
    p.drawImage(0, 0, img)
    p.end()
    return out
