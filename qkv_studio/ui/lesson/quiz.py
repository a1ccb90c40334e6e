"""Check yourself: the lesson's three questions as a quiz with feedback, and the "recall the pipeline" card.

The questions are the lesson's own (Lesson 26, "Check yourself"): what the softmax weights multiply,
why the scores are divided by √d_k, and the full pipeline.  Every answer says why it is right or why
not, in the lesson's terms.  The score counts first answers (a student may then click the other
answers to read why they are wrong without changing it).  The recall card hides the formula and its
four stages until the student has tried to state them.

Public API: ``QuizDialog(parent)``, ``score()``, ``answered()``, ``choose(question, option)``,
``reset()``, ``reveal_recall()``; drawn in the look of the Appearance it is bound to (``appearance=`` or
``bind_appearance``).
Test hooks: ``questions`` (each with ``options`` radio buttons and a ``feedback`` label),
``score_label``, ``recall_button``, ``recall_answer``, ``restart_button``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.rich_label import keep_together
from qkv_studio.ui.widgets.size_classes import fit_dialog, text_size


@dataclass(frozen=True)
class Option:
    text: str
    correct: bool
    why: str  # shown after choosing: why it is right, or why not


@dataclass(frozen=True)
class Question:
    prompt: str
    options: tuple[Option, ...]


QUESTIONS: tuple[Question, ...] = (
    Question(
        "In scaled dot-product attention, the softmax weights are multiplied by which vectors?",
        (
            Option("The key vectors K", False,
                   "Keys are used before the softmax: every query is dotted with every key (Q·Kᵀ) to score how "
                   "relevant each token is. A key is the label a token advertises so others can find it: it "
                   "decides the weights, but it is not what gets blended."),
            Option("The query vectors Q", False,
                   "The query is what a token is looking for. It is dotted with the keys to make the scores; "
                   "after the softmax the weights blend the values, not the queries."),
            Option("The value vectors V", True,
                   "The weights say how much of each token to take, and what is taken is its value, the content "
                   "it hands back once attended to: output = Σⱼ wⱼ vⱼ, that is softmax(QKᵀ/√dₖ)·V. A blend, "
                   "never a pick."),
            Option("The token embeddings X themselves", False,
                   "Not directly. Each embedding is first projected into three learned views; the weights blend "
                   "the values V = X·W<sup>V</sup>, a learned view of X, not X itself."),
        ),
    ),
    Question(
        "Why are the raw scores divided by √dₖ before the softmax?",
        (
            Option("So that each row of weights sums to 1, as probabilities must", False,
                   "The softmax already makes every row sum to 1, whatever the scores. Dividing by √dₖ changes "
                   "how peaked the weights are, not what they add up to."),
            Option("To bring the scores back to unit size: a sum of dₖ unit-variance products grows like √dₖ", True,
                   "It is a variance fix, not a cosmetic one. At dₖ = 64 raw scores swing by ±8 or more; fed "
                   "into the softmax, one weight goes to nearly 1, the rest to nearly 0, and the gradient there "
                   "is almost flat, so learning stalls. Dividing by √dₖ keeps the softmax in its responsive, "
                   "trainable region. (See it in View → √dₖ explorer.)"),
            Option("To keep exp() from overflowing when the scores get large", False,
                   "Overflow is handled separately: the stable softmax subtracts each row's maximum before exp. "
                   "The division fixes the scores' spread, which saturates the softmax long before anything "
                   "overflows."),
            Option("It is cosmetic: it makes the numbers smaller without changing the weights", False,
                   "The lesson is explicit: it is a variance fix, not a cosmetic one. It does change the weights: "
                   "without it a large dₖ makes the softmax saturate (one weight near 1) and learning stall."),
        ),
    ),
    Question(
        "Recall the full pipeline: in which order do the four stages come?",
        (
            Option("Scores Q·Kᵀ → divide by √dₖ → softmax each row → multiply by V", True,
                   "Attention(Q, K, V) = softmax(QKᵀ/√dₖ)·V, read inside-out: score every query against every "
                   "key, scale the scores back to unit size, turn each row into weights that sum to 1, then "
                   "take each token's weighted average of the values."),
            Option("Scores Q·Kᵀ → softmax each row → divide by √dₖ → multiply by V", False,
                   "The scaling has to come before the softmax. Dividing the weights afterwards would only "
                   "shrink them (rows would no longer sum to 1) and could not stop the softmax saturating."),
            Option("Softmax the queries → dot them with the keys → divide by √dₖ → multiply by V", False,
                   "The softmax is applied to the scores, one row of query-against-every-key scores at a time, "
                   "not to the query vectors themselves."),
            Option("Scores Q·Vᵀ → divide by √dₖ → softmax each row → multiply by K", False,
                   "Queries are compared with keys, and the weights blend the values: keys are for finding, "
                   "values are what gets handed over."),
        ),
    ),
    # The lesson's first "Ask your teacher" question (Attention → Without projections shows the answer).
    Question(
        "Ask your teacher: why three separate projections, instead of dotting the embeddings directly (Q = K = V = X)?",
        (
            Option("To make the computation faster", False,
                   "The projections add work (three matrix products); they are there for what they let attention "
                   "express, not for speed. Attention → Without projections shows what is lost without them."),
            Option("With X·Xᵀ each token matches itself best and a→b scores the same as b→a", True,
                   "x·x = |x|² makes the diagonal strong and x<sub>a</sub>·x<sub>b</sub> = x<sub>b</sub>·x<sub>a</sub> "
                   "makes the grid symmetric, so a token can only look for what it is itself. Separate W<sup>Q</sup> "
                   "and W<sup>K</sup> let what a token looks for differ from how it advertises itself (a verb "
                   "looking for its subject), and W<sup>V</sup> what it hands over. See it with the scene's own "
                   "numbers: Attention → Without projections (Ctrl+Shift+W)."),
            Option("Because the softmax needs three inputs", False,
                   "The softmax takes one row of scores at a time. The three projections give each token three "
                   "different roles: what it looks for (Q), how it is found (K) and what it hands over (V)."),
            Option("It makes no difference: the weights come out the same", False,
                   "They do not: without projections the scores are X·Xᵀ, symmetric with a strong diagonal. "
                   "Compare both side by side: Attention → Without projections."),
        ),
    ),
)

RECALL_PROMPT = ("Recall the full scaled dot-product attention pipeline: the formula and what each of the four "
                 "stages does. Try to state it, then check.")
RECALL_FORMULA = "Attention(Q, K, V) = softmax(QKᵀ / √dₖ) · V"
RECALL_STAGES = (
    ("Scores, Q·Kᵀ", "each query dotted with every key: entry (i, j) is how much token i should attend to "
                     "token j."),
    ("Scale, ÷ √dₖ", "keeps the scores at unit size so the softmax does not saturate (a variance fix)."),
    ("Softmax", "turns each row of scores into weights that sum to 1."),
    ("Blend, · V", "each token's output is the weighted average of all the value vectors: a blend, never a "
                   "pick."),
)
RECALL_SOURCE = ("Where Q, K and V come from: three learned views of the same embeddings, "
                 "q<sub>i</sub> = x<sub>i</sub>W<sup>Q</sup>, k<sub>i</sub> = x<sub>i</sub>W<sup>K</sup>, "
                 "v<sub>i</sub> = x<sub>i</sub>W<sup>V</sup>.")


class _ClickLabel(QLabel):
    """An answer's text: wraps (a radio button's own text cannot) and a click on it picks the answer."""

    clicked = Signal()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mouseReleaseEvent(event)


class QuestionBox(QGroupBox):
    """One question: its answers as radio buttons and a feedback line under them."""

    answered = Signal(int, bool)  # option index, whether it is right

    def __init__(self, number: int, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        self.first_choice: int | None = None
        # (broken into lines by the captions' rule: no short word alone on a line, no "√dₖ" on its own)
        self.prompt = QLabel(keep_together(f"<b>{number}. {question.prompt}</b>"))
        self.prompt.setWordWrap(True)
        self.prompt.setTextFormat(Qt.TextFormat.RichText)
        self.group = QButtonGroup(self)
        self.options: list[QRadioButton] = []
        self.option_labels: list[QLabel] = []
        lay = QVBoxLayout(self)
        lay.addWidget(self.prompt)
        for i, opt in enumerate(question.options):
            rb = QRadioButton()
            rb.setAccessibleName(opt.text)
            label = _ClickLabel(keep_together(f"{chr(ord('a') + i)}) {opt.text}"))
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.RichText)
            label.clicked.connect(rb.click)
            self.group.addButton(rb, i)
            self.options.append(rb)
            self.option_labels.append(label)
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(rb, 0, Qt.AlignmentFlag.AlignTop)
            row.addWidget(label, 1)
            lay.addLayout(row)
        self.feedback = QLabel()
        self.feedback.setWordWrap(True)
        self.feedback.setTextFormat(Qt.TextFormat.RichText)
        self.feedback.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.feedback.hide()
        lay.addWidget(self.feedback)
        self.group.idClicked.connect(self._on_choice)
        default = get_theme(DEFAULT_THEME)
        self._colours = (default.good, default.bad)

    def set_colours(self, right: str, wrong: str) -> None:
        self._colours = (right, wrong)
        checked = self.group.checkedId()
        if checked >= 0:
            self._show(checked)

    def _on_choice(self, i: int) -> None:
        first = self.first_choice is None
        if first:
            self.first_choice = i
        self._show(i)
        if first:
            self.answered.emit(i, self.question.options[i].correct)

    def _show(self, i: int) -> None:
        opt = self.question.options[i]
        right, wrong = self._colours
        if opt.correct:
            head = f"<span style='color:{right}'><b>✓ Right.</b></span>"
        else:
            head = f"<span style='color:{wrong}'><b>✗ Not quite.</b></span>"
        self.feedback.setText(f"{head} {opt.why}")
        self.feedback.show()

    def is_right(self) -> bool:
        """Whether the first answer was the right one."""
        return self.first_choice is not None and self.question.options[self.first_choice].correct

    def reset(self) -> None:
        self.first_choice = None
        self.group.setExclusive(False)
        for rb in self.options:
            rb.setChecked(False)
        self.group.setExclusive(True)
        self.feedback.clear()
        self.feedback.hide()


class QuizDialog(FollowsAppearance, QDialog):
    """Help → Check yourself…: three questions with feedback, a score and the recall card."""

    def __init__(self, parent: QWidget | None = None, *, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Check yourself — self-attention: query, key, value")
        self.setAttribute(Qt.WidgetAttribute.WA_WindowPropagation, True)  # the window's font and palette
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._font_scale = 1.0

        intro = QLabel("Three questions from the lesson. Pick an answer to see why it is right or why not; "
                       "the score counts your first answers.")
        intro.setWordWrap(True)
        self.questions: list[QuestionBox] = []
        body = QWidget()
        body_lay = QVBoxLayout(body)
        body_lay.addWidget(intro)
        for n, q in enumerate(QUESTIONS, start=1):
            box = QuestionBox(n, q)
            box.answered.connect(self._update_score)
            self.questions.append(box)
            body_lay.addWidget(box)

        # ---- the recall card ------------------------------------------------------------------------------
        self.recall_box = QGroupBox()
        recall_lay = QVBoxLayout(self.recall_box)
        self.recall_prompt = QLabel(f"<b>Recall the pipeline.</b> {RECALL_PROMPT}")
        self.recall_prompt.setWordWrap(True)
        self.recall_prompt.setTextFormat(Qt.TextFormat.RichText)
        self.recall_button = QPushButton("Show the answer")
        self.recall_button.setCheckable(True)
        self.recall_answer = QLabel()
        self.recall_answer.setWordWrap(True)
        self.recall_answer.setTextFormat(Qt.TextFormat.RichText)
        self.recall_answer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.recall_answer.hide()
        recall_lay.addWidget(self.recall_prompt)
        recall_lay.addWidget(self.recall_button, 0, Qt.AlignmentFlag.AlignLeft)
        recall_lay.addWidget(self.recall_answer)
        body_lay.addWidget(self.recall_box)
        body_lay.addStretch(1)
        self.recall_button.toggled.connect(self._toggle_recall)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)

        self.score_label = QLabel()
        self.restart_button = QPushButton("Start again")
        self.restart_button.clicked.connect(self.reset)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.restart_button, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(scroll, 1)
        lay.addWidget(self.score_label)
        lay.addWidget(buttons)
        self._write_recall()
        self._update_score()
        self._fitted = False  # (sized once, as it first shows: fit_dialog)
        # (styled as built, like the panels: its feedback colours and its fonts, at scale 1)
        self._restyle_theme(self._theme)
        self._restyle_scale(self._font_scale)
        self.bind_appearance(appearance)

    #: The room the quiz asks for, in its text: a question's answers on a line each, the three questions
    #: and the recall card with little scrolling (its screen may give it less: it scrolls inside).
    ROOM_CHARS, ROOM_LINES = 95, 42

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Sized once, as it first shows, inside its screen's available geometry (Close and Start again in
        view); it keeps that size while in use."""
        if not self._fitted:
            self._fitted = True
            fit_dialog(self, text_size(self.font(), self.ROOM_CHARS, self.ROOM_LINES))
        super().showEvent(event)

    # ---- public API -------------------------------------------------------------------------------
    def score(self) -> int:
        """How many questions were answered right at the first try."""
        return sum(q.is_right() for q in self.questions)

    def answered(self) -> int:
        """How many questions have been answered."""
        return sum(q.first_choice is not None for q in self.questions)

    def choose(self, question: int, option: int) -> None:
        """Answer question ``question`` (0-based) with option ``option``, as a click would."""
        self.questions[question].options[option].click()

    def reset(self) -> None:
        for q in self.questions:
            q.reset()
        self.recall_button.setChecked(False)
        self._update_score()

    def reveal_recall(self) -> None:
        self.recall_button.setChecked(True)

    # ---- look (see FollowsAppearance) ---------------------------------------------------------------
    def _restyle_theme(self, theme: Theme) -> None:
        """Colours of the right/wrong feedback and the formula (the rest follows the window)."""
        self._theme = theme
        for q in self.questions:
            q.set_colours(theme.good, theme.bad)
        self._style_indicators()
        self._write_recall()
        self._update_score()

    def _restyle_scale(self, f: float) -> None:
        self._font_scale = f
        font = QFont(self.font())
        font.setPointSizeF(10.0 * f)
        self.setFont(font)
        # Set on every child too: under a window style sheet Qt stops propagating fonts to children.
        for w in self.findChildren(QWidget):
            w.setFont(font)
        big = QFont(font)
        big.setPointSizeF(12.0 * f)
        self.recall_answer.setFont(big)
        self._style_indicators()

    # ---- internals ----------------------------------------------------------------------------------
    def _style_indicators(self) -> None:
        """Radio buttons that stay visible on every theme (a dark window style sheet hides the native ones)
        and grow with the font scale."""
        t = self._theme
        f = self._font_scale
        if t.name == "light" and f == 1.0:
            self.setStyleSheet("")
            return
        size = max(12, round(14 * f))
        border = max(1, round(1.5 * f * t.line_scale))
        self.setStyleSheet(
            f"QRadioButton::indicator {{ width: {size}px; height: {size}px; border-radius: {size // 2 + border}px; "
            f"border: {border}px solid {t.text}; background: {t.background}; }}"
            f"QRadioButton::indicator:checked {{ background: {t.accent}; }}")

    def _update_score(self, *_: object) -> None:
        n = len(self.questions)
        done = self.answered()
        text = f"Score: {self.score()} of {n}"
        if done < n:
            text += f" ({done} of {n} answered)"
        elif self.score() == n:
            text += ": all right at the first try."
        else:
            text += ": read the feedback, then Start again."
        self.score_label.setText(text)

    def _toggle_recall(self, on: bool) -> None:
        self.recall_answer.setVisible(on)
        self.recall_button.setText("Hide the answer" if on else "Show the answer")

    def _write_recall(self) -> None:
        t = self._theme
        stages = "".join(f"<li><b>{name}</b>: {what}</li>" for name, what in RECALL_STAGES)
        self.recall_answer.setText(
            f"<p style='font-size:130%'><b><span style='color:{t.accent}'>{RECALL_FORMULA}</span></b></p>"
            f"<ol>{stages}</ol><p>{RECALL_SOURCE}</p>")
