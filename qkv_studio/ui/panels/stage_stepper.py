"""The stage stepper: Vectors → Q·Kᵀ → ÷√dₖ → softmax → blend, with a caption and the formula.

The caption says in plain words what the stage does *for the selected query, with its numbers*; the
formula is typeset (rich text: italics, sub- and superscripts, real symbols), with the part of
softmax(QKᵀ/√dₖ)V that this stage computes highlighted.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from qkv_studio.core import STAGE_TITLES, STAGES
from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.formatting import fmt, fmt_fixed, fmt_vector
from qkv_studio.ui.widgets.frame_throttle import FrameThrottle
from qkv_studio.ui.widgets.layout_barrier import LayoutBarrier
from qkv_studio.ui.widgets.rich_label import RichLabel

STEP_NAMES = {
    "vectors": "Vectors",
    "scores": "Q·Kᵀ",
    "scaled": "÷ √dₖ",
    "weights": "softmax",
    "output": "blend",
}

# The whole formula in typeset pieces; each stage highlights its own piece.
_PIECES = {
    "vectors": ("<i>Q</i>, <i>K</i>, <i>V</i>",),
    "scores": ("<i>Q</i><i>K</i><sup>⊤</sup>",),
    "scaled": ("/ √<i>d</i><sub>k</sub>",),
    "weights": ("softmax(", ")"),
    "output": ("<i>V</i>",),
}

_STAGE_FORMULA = {
    "vectors": "<i>q</i><sub>i</sub> = <i>x</i><sub>i</sub><i>W</i><sup>Q</sup>,&nbsp; "
               "<i>k</i><sub>j</sub> = <i>x</i><sub>j</sub><i>W</i><sup>K</sup>,&nbsp; "
               "<i>v</i><sub>j</sub> = <i>x</i><sub>j</sub><i>W</i><sup>V</sup>",
    "scores": "<i>s</i><sub>ij</sub> = <i>q</i><sub>i</sub> · <i>k</i><sub>j</sub> = "
              "Σ<sub>t</sub> <i>q</i><sub>it</sub> <i>k</i><sub>jt</sub>",
    "scaled": "<i>s̃</i><sub>ij</sub> = <i>s</i><sub>ij</sub> / √<i>d</i><sub>k</sub>",
    "weights": "<i>w</i><sub>ij</sub> = exp(<i>s̃</i><sub>ij</sub>) / Σ<sub>j′</sub> exp(<i>s̃</i><sub>ij′</sub>)",
    "output": "<i>o</i><sub>i</sub> = Σ<sub>j</sub> <i>w</i><sub>ij</sub> <i>v</i><sub>j</sub>",
}


def full_formula_html(stage: str, accent: str) -> str:
    """Attention(Q,K,V) = softmax(QKᵀ/√dₖ)V with the current stage's piece in the accent colour."""
    def piece(name: str, i: int = 0) -> str:
        text = _PIECES[name][i]
        return f"<span style='color:{accent}; font-weight:bold'>{text}</span>" if name == stage else text

    return (f"Attention(<i>Q</i>, <i>K</i>, <i>V</i>) = {piece('weights', 0)}{piece('scores')}&thinsp;"
            f"{piece('scaled')}{piece('weights', 1)}&thinsp;{piece('output')}")


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
        self._accent = _accent_of(self._drawn_theme)
        self.back_button = QPushButton("◀ Back")
        self.next_button = QPushButton("Next ▶")
        self.back_button.setToolTip("Previous stage (←, PageUp)")
        self.next_button.setToolTip("Next stage (→, PageDown, Space)")
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        row = QHBoxLayout()
        row.addWidget(self.back_button)
        self.stage_buttons: dict[str, QPushButton] = {}
        for i, stage in enumerate(STAGES):
            b = QPushButton(STEP_NAMES[stage])
            b.setCheckable(True)
            b.setFocusPolicy(Qt.NoFocus)
            self.group.addButton(b, i)
            self.stage_buttons[stage] = b
            row.addWidget(b)
        row.addWidget(self.next_button)
        for b in (self.back_button, self.next_button, *self.stage_buttons.values()):
            b.setFocusPolicy(Qt.NoFocus)
            b.setMinimumWidth(30)
            b.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.caption = RichLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.RichText)
        self.caption.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self.formula = RichLabel()
        self.formula.setTextFormat(Qt.RichText)
        self.stage_formula = RichLabel()
        self.stage_formula.setTextFormat(Qt.RichText)
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
        lay.addLayout(row)
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
        self.next_button.setText("Next scene ▶" if count and at_end and index + 1 < count else "Next ▶")
        self.formula.setText(full_formula_html(stage, self._accent))
        self.stage_formula.setText(_STAGE_FORMULA[stage])

    def _sync_caption(self) -> None:
        index, count = self._deck
        caption = self.caption_text()
        if count:
            caption = f"<span style='color:#888'>[{index + 1}/{count}]</span> " + caption
        self.caption.setText(caption)

    def caption_text(self) -> str:
        """Plain words for the current stage, with the selected query's own numbers."""
        s = self._session.scene
        r = self._session.result
        qi = s.query
        name = f"“{s.token_label(qi)}”"
        stage = s.stage
        q, k, v = s.qkv()
        # (NumPy, not a Python sort of n keys: this runs on every edit, n up to 1024)
        order = [int(j) for j in np.argsort(-r.weights[qi], kind="stable")[:4]]
        if stage == "vectors":
            return (f"Every token carries three vectors: a <b>query</b> (what it looks for), a <b>key</b> (how it "
                    f"advertises itself) and a <b>value</b> (what it hands over). The query for {name} is "
                    f"{fmt_vector(q[qi])}; dₖ = {s.d_k}.")
        if stage == "scores":
            best = int(np.argmax(r.scores[qi]))
            return (f"Dot the query of {name} with every key: one relevance score per token. "
                    f"{name} matches “{s.token_label(best)}” best (q·k = {fmt(float(r.scores[qi, best]))})."
                    + self._mask_note())
        if stage == "scaled":
            if not s.scale:
                return ("Scaling is switched off: the raw scores go straight into the softmax, so with a large "
                        "dₖ it saturates.")
            return (f"Divide by √dₖ = {fmt(s.d_k ** 0.5)} so the scores keep unit size: without it, large dₖ "
                    f"makes them swing widely and the softmax saturates.")
        if stage == "weights":
            if r.fully_masked[qi]:
                return f"Every key is masked for {name}: there is nothing to attend to, so all weights are 0."
            top = ", ".join(f"{fmt_fixed(float(r.weights[qi, j]))} on “{s.token_label(j)}”" for j in order[:4])
            return (f"softmax turns the scores of {name} into weights that sum to 1: {top}"
                    f"{', …' if s.n > 4 else ''}. A blend, not a pick.")
        top = " + ".join(f"{fmt_fixed(float(r.weights[qi, j]))}·v<sub>{s.token_label(j)}</sub>" for j in order[:4])
        return (f"The output for {name} is the weighted blend of the values: {top}{' + …' if s.n > 4 else ''} = "
                f"{fmt_vector(r.output[qi])}. Every token contributes a little.")

    def _mask_note(self) -> str:
        s = self._session.scene
        if isinstance(s.mask, str) and s.mask == "causal":
            return (" Causal mask: a token may not look at tokens after it (−∞), because a language model "
                    "must not peek at the future it is predicting.")
        if not isinstance(s.mask, str):
            return " Masked keys (−∞) get weight 0 after the softmax."
        return ""


__all__ = ["StageStepper", "STEP_NAMES", "STAGE_TITLES", "full_formula_html"]
