"""Check yourself: the lesson's three questions and its first "Ask your teacher" answered with qtbot; feedback and
score."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from qkv_studio.render.theme import THEMES
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.lesson.quiz import QUESTIONS, RECALL_FORMULA, QuizDialog

RIGHT = [2, 1, 0, 1]  # the right option of each question


@pytest.fixture
def quiz(qtbot):
    d = QuizDialog()
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    return d


def click(qtbot, quiz, q, option):
    rb = quiz.questions[q].options[option]
    qtbot.mouseClick(rb, Qt.LeftButton, pos=QPoint(rb.width() // 2, rb.height() // 2))


def test_the_lessons_three_questions():
    prompts = [q.prompt for q in QUESTIONS]
    assert prompts[0] == "In scaled dot-product attention, the softmax weights are multiplied by which vectors?"
    assert prompts[1] == "Why are the raw scores divided by √dₖ before the softmax?"
    assert "pipeline" in prompts[2]
    for q, right in zip(QUESTIONS, RIGHT, strict=False):
        assert [o.correct for o in q.options].count(True) == 1 and q.options[right].correct
        assert all(o.why for o in q.options)
    assert QUESTIONS[0].options[RIGHT[0]].text.startswith("The value vectors")
    assert "variance fix, not a cosmetic one" in QUESTIONS[1].options[RIGHT[1]].why
    assert "three separate projections" in prompts[3]
    assert all("Without projections" in o.why for o in QUESTIONS[3].options if o.correct or "faster" in o.text)


def test_all_right_scores_four(qtbot, quiz):
    assert quiz.score() == 0 and quiz.answered() == 0
    assert "0 of 4" in quiz.score_label.text()
    for q, right in enumerate(RIGHT):
        click(qtbot, quiz, q, right)
        fb = quiz.questions[q].feedback
        assert fb.isVisible() and "✓ Right." in fb.text()
    assert quiz.score() == 4 and quiz.answered() == 4
    assert "Score: 4 of 4" in quiz.score_label.text() and "all right" in quiz.score_label.text()


def test_a_wrong_answer_says_why_not_and_counts_as_first_answer(qtbot, quiz):
    click(qtbot, quiz, 0, 0)  # keys
    fb = quiz.questions[0].feedback.text()
    assert "✗ Not quite." in fb and "decides the weights" in fb
    assert quiz.score() == 0 and quiz.answered() == 1
    click(qtbot, quiz, 0, 2)  # then the right one: feedback changes, the score does not
    assert "✓ Right." in quiz.questions[0].feedback.text() and "blend" in quiz.questions[0].feedback.text()
    assert quiz.score() == 0
    click(qtbot, quiz, 1, 3)  # "cosmetic"
    assert "not a cosmetic one" in quiz.questions[1].feedback.text()
    click(qtbot, quiz, 2, 1)  # softmax before scaling
    assert "before the softmax" in quiz.questions[2].feedback.text()
    assert quiz.score() == 0 and quiz.answered() == 3
    assert "Score: 0 of 4" in quiz.score_label.text()
    click(qtbot, quiz, 3, 3)  # "no difference"
    assert "symmetric with a strong diagonal" in quiz.questions[3].feedback.text()


def test_clicking_an_answers_text_picks_it(qtbot, quiz):
    label = quiz.questions[1].option_labels[1]
    qtbot.mouseClick(label, Qt.LeftButton, pos=QPoint(10, label.height() // 2))
    assert quiz.questions[1].options[1].isChecked() and quiz.score() == 1


def test_keyboard_choice(qtbot, quiz):
    rb = quiz.questions[2].options[0]
    rb.setFocus()
    qtbot.keyClick(rb, Qt.Key_Space)
    assert rb.isChecked()
    assert quiz.score() == 1 and "softmax(QKᵀ/√dₖ)·V" in quiz.questions[2].feedback.text()


def test_recall_card_is_hidden_until_asked(qtbot, quiz):
    assert not quiz.recall_answer.isVisible()
    qtbot.mouseClick(quiz.recall_button, Qt.LeftButton)
    assert quiz.recall_answer.isVisible()
    text = quiz.recall_answer.text()
    assert RECALL_FORMULA in text
    for stage in ("Scores", "Scale", "Softmax", "Blend"):
        assert stage in text
    assert "sum to 1" in text and "never a pick" in text
    qtbot.mouseClick(quiz.recall_button, Qt.LeftButton)
    assert not quiz.recall_answer.isVisible()


def test_start_again(qtbot, quiz):
    quiz.choose(0, 2)
    quiz.reveal_recall()
    qtbot.mouseClick(quiz.restart_button, Qt.LeftButton)
    assert quiz.score() == 0 and quiz.answered() == 0
    assert not any(rb.isChecked() for rb in quiz.questions[0].options)
    assert not quiz.questions[0].feedback.isVisible() and not quiz.recall_answer.isVisible()
    quiz.choose(0, 2)
    assert quiz.score() == 1


def test_theme_and_font_scale(quiz):
    quiz.choose(0, 1)
    look = Appearance()
    quiz.bind_appearance(look)
    for theme in THEMES.values():
        look.set_theme(theme)
    assert THEMES["projector"].bad in quiz.questions[0].feedback.text()  # (a wrong answer: the theme's "bad")
    look.set_font_scale(2.0)
    assert quiz.questions[0].prompt.font().pointSizeF() == pytest.approx(20.0)
    with pytest.raises(ValueError):
        look.set_font_scale(0)
