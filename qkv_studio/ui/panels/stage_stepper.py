"""The stage stepper: Vectors → Q·Kᵀ → ÷√dₖ → softmax → blend, with a caption and the formula.

The caption says in plain words what the stage does *for the selected query, with its numbers*; the
formula is typeset (rich text: italics, sub- and superscripts, real symbols), with the part of
softmax(QKᵀ/√dₖ)V that this stage computes highlighted.  What each stage says and shows comes from the
stage registry (:mod:`qkv_studio.core.stages`); this widget only lays it out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QButtonGroup, QGridLayout, QPushButton, QSizePolicy, QStyle, QVBoxLayout, QWidget

from qkv_studio.core import STAGE_TITLES, STAGES
from qkv_studio.core.captions import head_note
from qkv_studio.core.cellwise import cell_text
from qkv_studio.core.presets import description_note
from qkv_studio.core.stages import formula_html, stage_spec
from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.frame_throttle import FrameThrottle
from qkv_studio.ui.widgets.layout_barrier import LayoutBarrier
from qkv_studio.ui.widgets.rich_label import RichLabel

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult


def full_formula_html(stage: str, accent: str) -> str:
    """Attention(Q,K,V) = softmax(QKᵀ/√dₖ)V with the current stage's piece in the accent colour."""
    return formula_html(stage, lambda text: f"<span style='color:{accent}; font-weight:bold'>{text}</span>")


def _accent_of(theme: Theme) -> str:
    """The colour the formula marks the current stage with: the light theme's is its query pink (its
    blue accent is the key's colour); the dark ones have an accent of their own."""
    return theme.highlight if theme.name == "light" else theme.accent


class StageStepper(FollowsAppearance, QWidget):
    """Back / Next buttons, the five stages as a segmented control, the caption and the formula; the
    formula marks the current stage's piece in the accent of the Appearance it is bound to."""

    def __init__(self, session: Session, parent=None, *, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._hold = False  # (a slide's: at least as tall as the text needs, see hold_height)
        self._accent = _accent_of(self._drawn_theme)
        self.back_button = QPushButton("◀ Back")
        self.next_button = QPushButton("Next ▶")
        self.back_button.setToolTip("Previous stage (←, PageUp)")
        self.next_button.setToolTip("Next stage (→, PageDown, Space)")
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self.stage_buttons: dict[str, QPushButton] = {}
        for i, stage in enumerate(STAGES):
            b = QPushButton(stage_spec(stage).button)
            b.setCheckable(True)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self.group.addButton(b, i)
            self.stage_buttons[stage] = b
        # The stage bar: one row of whole labels; where they have no room, the short ones (◀ ▶ and
        # each stage's short label), then two rows (see fit_bar) — never a cut label.
        self._bar = QGridLayout()
        self._bar.setContentsMargins(0, 0, 0, 0)
        self.bar_form: tuple[bool, int] = (False, 0)  # (short labels, rows); 0 rows: not placed yet
        self._next_long = "Next ▶"
        for b in (self.back_button, self.next_button, *self.stage_buttons.values()):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.setMinimumWidth(30)
            b.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.caption = RichLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.caption.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.formula = RichLabel()
        self.formula.setTextFormat(Qt.TextFormat.RichText)
        self.stage_formula = RichLabel()
        self.stage_formula.setTextFormat(Qt.TextFormat.RichText)
        self.caption.setObjectName("caption")
        for label in (self.formula, self.stage_formula):
            label.setObjectName("formula")
            label.setWordWrap(True)
            label.setMinimumWidth(40)
        formulas = QVBoxLayout()
        formulas.setSpacing(2)
        # Text that changes with every edit or step re-lays out only itself (see LayoutBarrier).
        formulas.addWidget(LayoutBarrier(self.formula, grow_only=True))
        formulas.addWidget(LayoutBarrier(self.stage_formula, grow_only=True))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addLayout(self._bar)
        self._place_bar(False, 1)
        lay.addLayout(formulas)
        lay.addWidget(LayoutBarrier(self.caption, grow_only=True))
        self._next = lambda: session.step_stage(+1)
        self._back = lambda: session.step_stage(-1)
        self._can_step = lambda delta: 0 <= STAGES.index(session.stage) + delta < len(STAGES)
        self._deck = (0, 0)
        self.back_button.clicked.connect(lambda: self._back())
        self.next_button.clicked.connect(lambda: self._next())
        self.group.idClicked.connect(lambda i: session.set_stage(STAGES[i]))
        # A stage step shows at once; the caption's numbers after an edit or a new query follow at the
        # next frame (see frame_throttle).
        self._next_frame = FrameThrottle(self._sync, self)
        session.stage_changed.connect(self._on_stage)
        session.query_changed.connect(self._next_frame.request)
        session.result_changed.connect(self._next_frame.request)
        session.tokens_changed.connect(self._next_frame.request)
        session.cell_changed.connect(self._next_frame.request)
        self._sync()
        self.bind_appearance(appearance)

    def set_navigator(self, next_step, back_step, can_step) -> None:
        """Let the window decide what Next/Back do (a lecture deck goes on to the next scene)."""
        self._next, self._back, self._can_step = next_step, back_step, can_step
        self._sync()

    def set_deck_position(self, index: int, count: int) -> None:
        """Show "scene i of n" while a deck is open (count 0: no deck)."""
        self._deck = (index, count)
        self._sync()

    def _restyle_theme(self, theme: Theme) -> None:
        self._accent = _accent_of(theme)
        self._sync()

    def _on_stage(self, *_: object) -> None:
        # The buttons and the formula's highlight show the step at once; the caption's paragraph
        # (laid out anew for each stage and query) follows at the next frame.
        self._sync_controls()
        self._next_frame.request()

    def _sync(self, *_: object) -> None:
        self._next_frame.cancel()
        self._sync_controls()
        self._sync_caption()

    def _sync_controls(self) -> None:
        stage = self._session.stage
        self.stage_buttons[stage].setChecked(True)
        self.back_button.setEnabled(self._can_step(-1))
        self.next_button.setEnabled(self._can_step(+1))
        index, count = self._deck
        at_end = STAGES.index(stage) == len(STAGES) - 1
        self._next_long = "Next scene ▶" if count and at_end and index + 1 < count else "Next ▶"
        self.next_button.setText(self._label(self.next_button, self.bar_form[0]))
        self.formula.setText(full_formula_html(stage, self._accent))
        self.stage_formula.setText(stage_spec(stage).formula)

    # ---- the stage bar ---------------------------------------------------------------------------------
    def _label(self, button: QPushButton, short: bool) -> str:
        if button is self.back_button:
            return "◀" if short else "◀ Back"
        if button is self.next_button:
            return ("▶▶" if self._next_long != "Next ▶" else "▶") if short else self._next_long
        stage = next(s for s, b in self.stage_buttons.items() if b is button)
        return stage_spec(stage).short_button if short else stage_spec(stage).button

    def _buttons(self) -> list[QPushButton]:
        return [self.back_button, *self.stage_buttons.values(), self.next_button]

    def _needed(self, button: QPushButton, text: str) -> int:
        """The width ``text`` needs on ``button``: its advance plus the style's and the sheet's padding."""
        button.ensurePolished()  # (the sheet's font size is the button's font once polished)
        fm = QFontMetrics(button.font())
        pad = 2 * button.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, None, button) + fm.height() // 2 + 8
        return fm.horizontalAdvance(text) + pad

    def _fits(self, short: bool, rows: int, width: int) -> bool:
        spacing = max(0, self._bar.horizontalSpacing())
        stages = list(self.stage_buttons.values())
        if rows == 1:
            groups = [self._buttons()]
        else:
            groups = [stages, [self.back_button, self.next_button]]
        for group in groups:
            cols = len(stages) if rows == 2 else len(group)
            span = 1 if (rows == 1 or group is stages) else len(stages) // 2
            room = (width - spacing * (cols - 1)) / cols * span + spacing * (span - 1)
            if any(self._needed(b, self._label(b, short)) > room for b in group):
                return False
        return True

    def fit_bar(self) -> None:
        """The bar's form for the stepper's width and font: whole labels in one row, else the short
        ones, else two rows (the stages above, Back and Next below)."""
        lay = self.layout()
        if lay is None:  # (a font set while the stepper is still being built)
            return
        m = lay.contentsMargins()
        width = self.width() - m.left() - m.right()
        if width <= 0:
            return
        for short, rows in ((False, 1), (True, 1), (False, 2), (True, 2)):
            if self._fits(short, rows, width):
                break
        self._place_bar(short, rows)

    def _place_bar(self, short: bool, rows: int) -> None:
        if (short, rows) == self.bar_form:
            return
        self.bar_form = (short, rows)
        for b in self._buttons():
            b.setText(self._label(b, short))
            self._bar.removeWidget(b)
        n = len(self.stage_buttons)
        for col in range(n + 2):
            self._bar.setColumnStretch(col, 0)
        if rows == 1:
            for col, b in enumerate(self._buttons()):
                self._bar.addWidget(b, 0, col)
                self._bar.setColumnStretch(col, 1)
        else:
            for col, b in enumerate(self.stage_buttons.values()):
                self._bar.addWidget(b, 0, col)
                self._bar.setColumnStretch(col, 1)
            half = n // 2
            self._bar.addWidget(self.back_button, 1, 0, 1, half)
            self._bar.addWidget(self.next_button, 1, n - half, 1, half)

    # ---- a slide's stage bar: as tall as its text ------------------------------------------------------
    def hold_height(self) -> None:
        """Keep the stepper at least as tall as its bar, formulas and caption need at its width, and follow
        them when they need more or less (a slide: the main view below takes the rest, so the stepper's
        layout alone cannot make room for a caption that gained a line — a step's caption comes a frame
        after the slide is composed, and was cut by its last line)."""
        self._hold = True
        self._fit_height()

    def release_height(self) -> None:
        """No minimum height of its own any more (the normal window: the layout shares the room)."""
        self._hold = False
        self.setMinimumHeight(0)

    def _fit_height(self) -> None:
        if self._hold and self.hasHeightForWidth():
            need = max(0, self.heightForWidth(self.width()))
            if need != self.minimumHeight():
                self.setMinimumHeight(need)

    def event(self, event) -> bool:
        # (posted when a caption or formula needs another height: rare, see LayoutBarrier)
        if event.type() == QEvent.Type.LayoutRequest:
            self._fit_height()
        return super().event(event)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.isVisible():  # (a hidden stepper's width is not yet the one it will show at)
            self.fit_bar()
        self._fit_height()  # (a new width: the text's lines anew)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange) and self.isVisible():
            self.fit_bar()

    def _sync_caption(self) -> None:
        index, count = self._deck
        caption = self.caption_text()
        if count:
            caption = f"<span style='color:#888'>[{index + 1}/{count}]</span> " + caption
        self.caption.setText(caption)
        # The scene's description, labelled as whose it is, only while it is true (see description_note).
        note = description_note(self._session.scene)
        if self.caption.toolTip() != note:
            self.caption.setToolTip(note)

    def caption_text(self) -> str:
        """Plain words for the current stage, with the selected query's own numbers (of the selected head,
        for a scene split into heads)."""
        session = self._session
        # the Session's LiveResult reads as an AttentionResult (state/session.py); core's
        # functions are typed for the dataclass
        result = cast("AttentionResult", session.result)
        text = head_note(session.scene, session.head) + stage_spec(session.stage).caption(
            session.shown, result, session.query)
        if session.cell_key is not None:  # Q·Kᵀ cell by cell: the selected cell's row · column
            cell = cell_text(session.shown, result, session.query, session.cell_key, session.stage)
            if cell:
                text += "<br>" + cell
        return text


__all__ = ["StageStepper", "STAGE_TITLES", "full_formula_html"]
