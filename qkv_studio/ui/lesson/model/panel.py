"""The Real model panel: a registered model's attention heads on any sentence (all-MiniLM-L6-v2 first).

Pick a model (the picker lists :mod:`qkv_studio.core.models.registry`), type a sentence and press Run
(or Enter): the model (NumPy only) splits it into its own tokens and computes every layer.  The panel
then shows

* the chosen layer's heads as small multiples (:class:`HeadGrid`); click one, or use the layer and head
  boxes (their ranges are the model's), to choose a head;
* that head's queries and keys in 2-D (:class:`QKProjection`), with the selected query's arrow and the
  keys it attends to drawn larger;

and puts the chosen head into the Session, so the heatmap, stepper, calculation table and blend view
all work on the real head (with the model's mask: a causal model's head is a causal scene).  A causal
model that generates (SmolLM2) also shows its most likely next tokens as bars, and "Next token" appends
the most likely one: only the new token's row is computed (earlier keys and values come from the KV
cache), and the heatmap gains a row.  Heads that share a K/V head are marked in the small multiples.  Which
model, run, layer and head are chosen lives in a :class:`ModelRunState`; the panel binds to it.

Runs happen on a worker thread (:class:`~.worker.ModelWorker`): Run, Enter and Next token start one,
a progress bar says how far it is (the first SmolLM2 run converts the weights once, 10–25 s) and Cancel
stops it, leaving the scene shown before; the window keeps working meanwhile.  Temperature and top-k set
how Next token chooses (greedy at temperature 0; sampling is seeded, so a lecture is repeatable).  A head
that replaces the user's unsaved edits asks first, and Undo brings the edits back.

Without a model's optional package the panel says how to install it and everything else works.

The panel is in three parts: this module builds and lays out the widgets and follows the state; it
composes a :class:`~.panel_jobs.PanelJobs` (``jobs``), which runs the model (Run, Next token, progress,
Cancel, sampling), and a :class:`~.panel_texts.PanelTexts` (``texts``), which writes the title, captions
and status line — each given only the widgets and the state it uses.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetricsF, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

from qkv_studio.core.models import AttentionModel, ModelInputError, ModelRun
from qkv_studio.core.scene import Scene
from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.lesson.model.head_grid import HeadGrid
from qkv_studio.ui.lesson.model.next_token import NextTokenBars
from qkv_studio.ui.lesson.model.panel_jobs import PanelJobs, RunControls
from qkv_studio.ui.lesson.model.panel_texts import PanelTexts, _install_text
from qkv_studio.ui.lesson.model.qk_projection import QKProjection
from qkv_studio.ui.lesson.model.run_state import NEXT_TOKENS_SHOWN, Change, ModelRunState
from qkv_studio.ui.lesson.model.worker import ModelWorker
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.qapp import running_app

DEFAULT_TEXT = "The cat sat on the mat because it was tired."


class ModelPanel(FollowsAppearance, QWidget):
    """Pick a registered model, type a sentence, choose a layer and head, and study or edit that head.

    Signals: ``run_changed()`` after a new sentence was run; ``head_changed(layer, head)`` when the
    chosen head changes (0-based); ``model_changed(name)`` when another model was picked;
    ``edit_requested()`` after "Edit this head" put an editable copy in the Session (the window may show
    the Q/K/V editors).

    ``confirm`` (optional) is called before a head replaces a modified scene; return False to cancel
    (:meth:`ask_replace` is the question a window passes: it says what replaces what, and that Undo
    brings the edits back).  ``model`` names the registry entry to start with (default: the first).

    Public API: ``set_model(name)``, ``run_text(text=None)`` and ``next_token()`` (computing at once),
    ``start_run(text=None)`` and ``start_next_token()`` (on the worker thread: ``run_changed`` when done),
    ``cancel()``, ``busy``, ``set_sampling(temperature, top_k)``, ``select(layer, head)``, ``edit_head()``,
    ``state`` (the :class:`ModelRunState`), ``model``, ``run``, ``layer``, ``head``, ``head_scene()``,
    ``projection_2d()`` (q2, k2, explained as drawn), ``showing_model_head()``;
    drawn in the look of the Appearance it is bound to (``appearance=`` or ``bind_appearance``); ``available`` is
    False when the chosen model's package
    is missing.  Test hooks: ``model_box``, ``sentence``, ``run_button``, ``layer_box``, ``head_box``,
    ``edit_button``, ``next_button``, ``next_bars`` (``choices()``), ``grid`` (``head_rect(h)``,
    ``selected()``, ``shares_kv(h)``), ``projection``, ``status``, ``progress_bar``, ``cancel_button``,
    ``temperature_box``, ``top_k_box``, ``worker``,
    ``install_label``, ``grid_caption``, ``proj_caption``; its parts ``jobs`` (:class:`PanelJobs`) and
    ``texts`` (:class:`PanelTexts`).
    """

    run_changed = Signal()
    head_changed = Signal(int, int)
    model_changed = Signal(str)
    edit_requested = Signal()
    #: a run or step started on the worker thread ended: True when it was shown, False when it was
    #: cancelled, refused or failed (the status line says why)
    job_finished = Signal(bool)

    def __init__(self, session: Session, parent: QWidget | None = None, *,
                 confirm: Callable[[], bool] | None = None, text: str = DEFAULT_TEXT,
                 model: str | None = None, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self.state = ModelRunState(session, confirm=confirm, model=model)
        self._font_scale = 1.0
        self._grid_shows: tuple[ModelRun, int] | None = None  # the run and layer the small multiples show
        self._compact = False  # a short panel (the projector): one-line title and captions, views first

        self.title = QLabel()
        self.title.setWordWrap(True)
        self.model_box = QComboBox()
        self.model_box.setToolTip("The model whose attention heads you see")
        # as wide as its names, never wider: the panel keeps its narrowest width (24 average characters
        # were 260 px, wider than any registered name: the panel's minimum in a 1024-px window)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for entry in self.state.models:
            self.model_box.addItem(entry.title, entry.name)
        self.model_box.setCurrentIndex(self.model_box.findData(self.state.model.name))
        self.sentence = QLineEdit(text)
        self._typed = text  # the sentence typed, kept while a model with fixed tokens is chosen
        self.sentence.setPlaceholderText("Type a sentence and press Enter")
        self.sentence.setClearButtonEnabled(True)
        self.sentence.setMaxLength(4000)
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Split the sentence into the model's tokens and compute all layers (Enter)")
        self.next_button = QPushButton("Next token")
        self.next_button.setToolTip("Append the most likely next token (greedy): only its row is computed, the "
                                    "earlier keys and values come from the KV cache")
        self.next_bars = NextTokenBars()
        self.next_bars.setToolTip("The most likely next tokens and their probabilities")
        self.temperature_box = QDoubleSpinBox()
        self.temperature_box.setRange(0.0, 5.0)
        self.temperature_box.setSingleStep(0.1)
        self.temperature_box.setDecimals(1)
        self.temperature_box.setPrefix("temperature ")
        self.temperature_box.setSpecialValueText("greedy")
        self.temperature_box.setToolTip("0 (greedy): always the most likely token; above 0: drawn at random "
                                        "from softmax(logits / temperature), seeded, so the same settings give "
                                        "the same tokens")
        self.top_k_box = QSpinBox()
        self.top_k_box.setRange(0, 1000)
        self.top_k_box.setPrefix("top-k ")
        self.top_k_box.setSpecialValueText("top-k all")
        self.top_k_box.setToolTip("Draw only among the k most likely tokens (all: every token)")
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run: the scene shown before stays")
        self.worker = ModelWorker(self)
        self.layer_box = QSpinBox()
        self.layer_box.setPrefix("layer ")
        self.head_box = QSpinBox()
        self.head_box.setPrefix("head ")
        self.edit_button = QPushButton("Edit this head")
        self.edit_button.setToolTip("Copy this head's Q, K and V into an editable scene (one undo step)")
        self.grid = HeadGrid()
        self.projection = QKProjection()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.install_label = QLabel()
        self.install_label.setWordWrap(True)
        self.install_label.setTextFormat(Qt.TextFormat.RichText)
        self.install_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._lay_out()
        self.texts = PanelTexts(self.state, title=self.title, grid_caption=self.grid_caption,
                                proj_caption=self.proj_caption, status=self.status, projection=self.projection,
                                query=self._query_for_projection, compact=self.is_compact)
        self.jobs = PanelJobs(self.state, RunControls(
            model_box=self.model_box, sentence=self.sentence, run_button=self.run_button,
            next_button=self.next_button, next_bars=self.next_bars, busy_row=self.busy_row,
            progress_bar=self.progress_bar, cancel_button=self.cancel_button, sampling_row=self.sampling_row,
            temperature_box=self.temperature_box, top_k_box=self.top_k_box),
            self.worker, self.texts, cursor_over=self, compact=self.is_compact, show_model=self._show_model,
            show_next_tokens=self._show_next_tokens, finished=self.job_finished.emit)

        self.model_box.activated.connect(lambda i: self.set_model(self.model_box.itemData(i)))
        self.sentence.returnPressed.connect(lambda: self.start_run())
        self.run_button.clicked.connect(lambda: self.start_run())
        self.next_button.clicked.connect(lambda: self.start_next_token())
        self.cancel_button.clicked.connect(self.cancel)
        # the key of Next token, wherever the focus is in the panel (Enter alone runs the sentence)
        self.next_shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        self.next_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.next_shortcut.activated.connect(lambda: self.start_next_token())
        # (a run still going when the app quits stops at its next block)
        running_app().aboutToQuit.connect(self._stop_for_quit)
        self.layer_box.valueChanged.connect(lambda v: self.select(v, self.state.head))
        self.head_box.valueChanged.connect(lambda v: self.select(self.state.layer, v))
        self.grid.head_clicked.connect(lambda h: self.select(self.state.layer, h))
        self.edit_button.clicked.connect(self.edit_head)
        session.query_changed.connect(self._on_query)
        session.scene_changed.connect(self._update_status)
        self.state.add_listener(self._on_state)
        self._show_model()
        self.bind_appearance(appearance)

    def _lay_out(self) -> None:
        row0 = QHBoxLayout()  # the picker names the model; the title beside it says what it is
        row0.addWidget(self.model_box)
        row0.addWidget(self.title, 1)
        row1 = QHBoxLayout()
        row1.addWidget(self.sentence, 1)
        row1.addWidget(self.run_button)
        row1.addWidget(self.next_button)
        self.busy_row = QWidget()
        busy = QHBoxLayout(self.busy_row)
        busy.setContentsMargins(0, 0, 0, 0)
        busy.addWidget(self.progress_bar, 1)
        busy.addWidget(self.cancel_button)
        self.busy_row.hide()
        self.sampling_row = QWidget()
        sampling = QHBoxLayout(self.sampling_row)
        sampling.setContentsMargins(0, 0, 0, 0)
        sampling.addWidget(self.temperature_box)
        sampling.addWidget(self.top_k_box)
        sampling.addStretch(1)
        row2 = QHBoxLayout()
        row2.addWidget(self.layer_box)
        row2.addWidget(self.head_box)
        row2.addStretch(1)
        row2.addWidget(self.edit_button)
        self.grid_caption = QLabel()
        self.proj_caption = QLabel()
        self.views = QSplitter(Qt.Orientation.Vertical)
        self.views.setChildrenCollapsible(False)
        for caption, view in ((self.grid_caption, self.grid), (self.proj_caption, self.projection)):
            caption.setWordWrap(True)
            box = QWidget()
            box_lay = QVBoxLayout(box)
            box_lay.setContentsMargins(0, 2, 0, 0)
            box_lay.setSpacing(2)
            box_lay.addWidget(caption)
            box_lay.addWidget(view, 1)
            self.views.addWidget(box)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addLayout(row0)
        lay.addWidget(self.install_label)
        lay.addLayout(row1)
        lay.addWidget(self.busy_row)
        lay.addLayout(row2)
        lay.addWidget(self.sampling_row)
        lay.addWidget(self.next_bars)
        lay.addWidget(self.views, 1)
        lay.addWidget(self.status)

    # ---- state -----------------------------------------------------------------------------------
    @property
    def available(self) -> bool:
        """True when the chosen model's package is installed (and it has not failed to load)."""
        return self.state.available()

    @property
    def model(self) -> AttentionModel:
        """The chosen registry entry."""
        return self.state.model

    @property
    def run(self) -> ModelRun | None:
        """The last sentence's run (None before the first)."""
        return self.state.run

    @property
    def layer(self) -> int:
        return self.state.layer

    @property
    def head(self) -> int:
        return self.state.head

    def head_scene(self) -> Scene | None:
        """The chosen head as a Scene (None before a run)."""
        return self.state.head_scene()

    def projection_2d(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The chosen head's (q2, k2, explained) as drawn, or None before a run."""
        if self.state.run is None:
            return None
        q2, k2 = self.projection.projected()
        return q2, k2, self.projection.explained()

    def showing_model_head(self) -> bool:
        """True while the session shows the chosen head exactly as the model computed it."""
        return self.state.showing_model_head()

    # ---- running (the jobs part) --------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """True while the worker thread computes a run or a token."""
        return self.jobs.busy

    def run_text(self, text: str | None = None) -> bool:
        """Run the model on ``text`` (default: the sentence box) at once: see :meth:`PanelJobs.run_text`."""
        return self.jobs.run_text(text)

    def start_run(self, text: str | None = None) -> bool:
        """Run the model on ``text`` on the worker thread: see :meth:`PanelJobs.start_run`."""
        return self.jobs.start_run(text)

    def start_next_token(self) -> bool:
        """Compute the next token on the worker thread: see :meth:`PanelJobs.start_next_token`."""
        return self.jobs.start_next_token()

    def next_token(self) -> bool:
        """Append the next token at once: see :meth:`PanelJobs.next_token`."""
        return self.jobs.next_token()

    def can_step_token(self) -> bool:
        """True when Next token would append a token now: see :meth:`PanelJobs.can_step_token`."""
        return self.jobs.can_step_token()

    def cancel(self) -> None:
        """Stop the run or step in progress; the scene shown before stays."""
        self.jobs.cancel()

    def set_sampling(self, temperature: float, top_k: int) -> bool:
        """How Next token chooses: see :meth:`PanelJobs.set_sampling`."""
        return self.jobs.set_sampling(temperature, top_k)

    def _stop_for_quit(self) -> None:
        self.jobs.stop_for_quit()

    # ---- actions ---------------------------------------------------------------------------------
    def set_model(self, name: str) -> bool:
        """Pick the registered model ``name``; False (and a message in the status line) if unknown."""
        try:
            return self.state.set_model(name)
        except ModelInputError as exc:
            self.texts.set_status(str(exc), error=True)
            return False

    def ask_replace(self) -> bool:
        """The question before a head replaces the user's unsaved edits (a window passes it as ``confirm``):
        it says what is replaced by what, and that one Undo brings the edits back."""
        s = self._session
        box = QMessageBox(QMessageBox.Icon.Question, "Replace your edited scene?",
                          f"“{s.scene.title or 'untitled'}” has unsaved changes. "
                          f"{self.state.replacing or self.state.model.label} will replace it.", parent=self)
        box.setInformativeText("Edit → Undo (Ctrl+Z) brings your scene back, in one step.")
        replace = box.addButton("Replace", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(replace)
        box.exec()
        return box.clickedButton() is replace

    def select(self, layer: int, head: int) -> bool:
        """Choose a head (0-based); shows it in the session when a sentence has been run."""
        try:
            ok = self.state.select(layer, head)
        except ModelInputError as exc:
            self.texts.set_status(str(exc), error=True)
            self._sync_boxes()
            return False
        self._sync_boxes()  # (cancelled: the boxes go back to the head still shown)
        if not ok:
            self._update_status()
        return ok

    def edit_head(self) -> bool:
        """Copy the chosen head into an editable scene: one undo step, the document modified."""
        ok = self.state.edit_copy()
        if ok:
            self._update_status()
            self.edit_requested.emit()
        return ok

    def _on_state(self, change: Change) -> None:
        if change == "model":
            self._show_model()
            self.model_changed.emit(self.state.model.name)
        elif change == "run":
            if self.state.run is None:  # (an undo back to before the first run)
                self._show_model()
                self.run_changed.emit()
                return
            self._set_ranges()
            self.edit_button.setEnabled(True)
            self._show_next_tokens()
            self._refresh_views()
            self.run_changed.emit()
        else:
            self._sync_boxes()
            self._refresh_views()
            self.head_changed.emit(self.state.layer, self.state.head)

    # ---- look ------------------------------------------------------------------------------------
    def _appearance_parts(self) -> tuple[FollowsAppearance, ...]:
        return (self.grid, self.projection, self.next_bars)

    def _restyle_theme(self, theme: Theme) -> None:
        self.texts.theme = theme
        self.texts.update_captions()
        self._update_status()

    def _restyle_scale(self, f: float) -> None:
        """Scale pen widths (zoom, projector).  Text follows the widget's font, which the window scales."""
        self._font_scale = f

    def is_compact(self) -> bool:
        """True when the panel is short for its font and says everything in one-line captions."""
        return self._compact

    def changeEvent(self, event) -> None:  # noqa: N802 - the window's zoom changes the font
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._fit_texts()

    def _fit_texts(self) -> None:
        # (short — under 30 lines: at 1280×720 its captions were cut at 27 — or narrow for its text:
        # a slide's column, where the long title and captions took five lines each and were cut)
        fm = QFontMetricsF(self.font())
        compact = self.height() < 30 * fm.height() or self.width() < 48 * fm.averageCharWidth()
        if compact != self._compact:
            self._compact = compact
            self.jobs.show_sampling()
            self._show_next_tokens()
            self.texts.write_title()
            self.texts.update_captions()
            self._update_status()

    def resizeEvent(self, event) -> None:  # noqa: N802
        """Small multiples and projection side by side in a wide panel, stacked in a tall one; one-line
        texts in a short one."""
        super().resizeEvent(event)
        self._fit_texts()
        size = self.views.size()
        wide = size.width() > 1.25 * size.height()
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.views.orientation() != orientation:
            self.views.setOrientation(orientation)

    # ---- internals -------------------------------------------------------------------------------
    def _update_status(self) -> None:
        self.texts.update_status()

    def _show_model(self) -> None:
        """Everything that depends on the chosen model, before any run: title, ranges, install hint."""
        m, available = self.state.model, self.available
        with signals_blocked(self.model_box):
            if self.model_box.findData(m.name) < 0:  # registered after the panel was made (a file opened)
                self.model_box.addItem(m.title, m.name)
            self.model_box.setCurrentIndex(self.model_box.findData(m.name))
        self._show_fixed_text(m)
        text = _install_text(m)
        if self.state.failure():
            text += f"<br><i>{html.escape(self.state.failure())}</i>"
        self.install_label.setText(text)
        self.install_label.setVisible(not available)
        for w in (self.sentence, self.run_button, self.layer_box, self.head_box, self.grid):
            w.setEnabled(available)
        self.edit_button.setEnabled(available and self.state.run is not None)
        self.next_button.setVisible(self.state.can_generate)
        self.jobs.show_sampling()
        self.grid.set_kv_group(m.n_heads // m.n_kv_heads)
        self._show_next_tokens()
        self._set_ranges()
        if self.state.run is None:
            self._grid_shows = None
            self.grid.set_weights(None)
            self.grid.set_head_count(m.n_heads)
            self.projection.clear()
        self.texts.write_title()
        self.texts.update_captions()
        self._update_status()

    def _show_next_tokens(self) -> None:
        # (a short panel, the projector's, shows the top 3 whole rather than 5 cut)
        choices = self.state.next_tokens(3 if self._compact else NEXT_TOKENS_SHOWN) if self.available else []
        self.next_bars.set_choices(choices)
        self.next_bars.setVisible(bool(choices))
        self.next_button.setEnabled(bool(choices) and not self.busy)

    def _show_fixed_text(self, m: AttentionModel) -> None:
        """A model whose tokens are fixed (a Q/K/V file's ``text``) shows them in place of your sentence,
        read-only; your sentence comes back with the next model."""
        fixed = getattr(m, "text", None)
        if isinstance(fixed, str):
            if not self.sentence.isReadOnly():
                self._typed = self.sentence.text()
            self.sentence.setText(fixed)
            self.sentence.setReadOnly(True)
            self.sentence.setToolTip("The tokens of the file (fixed by it): press Run to show its heads")
        elif self.sentence.isReadOnly():
            self.sentence.setReadOnly(False)
            self.sentence.setText(self._typed)
            self.sentence.setToolTip("")

    def _set_ranges(self) -> None:
        for box, what, count in ((self.layer_box, "Layer", self.state.n_layers),
                                 (self.head_box, "Head", self.state.n_heads)):
            with signals_blocked(box):
                box.setRange(0, count - 1)
            box.setToolTip(f"{what}, counted from 0 as in transformers (0–{count - 1})")
        self._sync_boxes()

    def _sync_boxes(self) -> None:
        for box, value in ((self.layer_box, self.state.layer), (self.head_box, self.state.head)):
            if box.value() != value:
                with signals_blocked(box):
                    box.setValue(value)
        self.grid.set_selected(self.state.head)

    def _refresh_views(self) -> None:
        run, layer, head = self.state.run, self.state.layer, self.state.head
        if run is None:
            self.texts.update_captions()
            self._update_status()
            return
        if self._grid_shows is None or self._grid_shows[0] is not run or self._grid_shows[1] != layer:
            self.grid.set_weights(run.weights[layer])
            self._grid_shows = (run, layer)
        self.grid.set_selected(head)
        self.projection.set_head(run.q[layer, head], run.k[layer, run.kv_head(head)], run.scene_tokens(),
                                 run.weights[layer, head])
        self.projection.set_query(self._query_for_projection())
        self.texts.update_captions()
        self._update_status()

    def _query_for_projection(self) -> int:
        n = 0 if self.state.run is None else self.state.run.n
        q = self._session.query
        return q if q < n else 0

    def _on_query(self, index: int) -> None:
        if self.state.run is not None and self.showing_model_head():
            self.projection.set_query(self._query_for_projection())
            self.texts.update_captions()

