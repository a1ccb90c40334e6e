"""RichLabel: one layout per text, and texts shown lately are kept laid out."""

from PySide6.QtGui import QFont

from qkv_studio.ui.widgets.rich_label import RichLabel


def _shown(qtbot, text: str) -> RichLabel:
    label = RichLabel(text)
    qtbot.addWidget(label)
    label.resize(300, 60)
    label.show()
    qtbot.waitExposed(label)
    return label


def test_a_text_shown_again_reuses_its_laid_out_document(qtbot):
    label = _shown(qtbot, "softmax <b>weights</b> w<sub>ij</sub>")
    first = label._doc
    height = label.heightForWidth(300)
    label.setText("scores q·k<sub>j</sub>")
    assert label._doc is not first and label.text() == "scores q·k<sub>j</sub>"
    label.setText("softmax <b>weights</b> w<sub>ij</sub>")
    assert label._doc is first  # kept, not parsed and laid out again
    assert label.heightForWidth(300) == height
    assert first.toPlainText() == "softmax weights wij"


def test_kept_texts_are_bounded_and_a_font_change_forgets_them(qtbot):
    label = RichLabel("start")
    qtbot.addWidget(label)
    for i in range(3 * RichLabel.KEEP):
        label.setText(f"text {i}")
    assert len(label._kept) <= RichLabel.KEEP
    assert label._doc.toPlainText() == f"text {3 * RichLabel.KEEP - 1}"
    kept = label._kept["text 3"] if "text 3" in label._kept else None
    font = QFont(label.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    label.setFont(font)
    assert not label._kept
    label.setText("text 3")
    assert label._doc is not kept and label._doc.defaultFont().pointSizeF() == font.pointSizeF()


def test_a_painted_text_is_kept_as_a_picture_until_its_colour_or_size_changes(qtbot):
    from PySide6.QtGui import QColor, QPalette

    label = _shown(qtbot, "scores q·k<sub>j</sub>")
    label.grab()  # (paints the label)
    assert len(label._pixmaps) == 1
    picture = next(iter(label._pixmaps.values()))
    label.grab()
    assert next(iter(label._pixmaps.values())) is picture  # painted again from the same picture
    palette = label.palette()
    palette.setColor(QPalette.ColorRole.WindowText, QColor("#d6246e"))
    label.setPalette(palette)
    label.grab()
    assert len(label._pixmaps) == 2  # the new colour is a new picture
    image = label.grab().toImage()
    assert any(image.pixelColor(x, y).red() > 2 * image.pixelColor(x, y).green() + 40
               for x in range(0, 300) for y in range(0, 30))  # the text, in its new colour


def test_a_text_shown_again_answers_its_heights_as_a_fresh_label_does(qtbot):
    """The heights a text was measured at are kept with it (a stage step back measures nothing again),
    and are what a new label with that text answers — also after the font or the margins changed."""
    long = "the weights of <b>sat</b> over every key: " + "cat mat sat the " * 8
    label = _shown(qtbot, long)
    widths = (120, 200, 300, 640)
    before = [label.heightForWidth(w) for w in widths]
    label.setText("short")
    assert label.heightForWidth(200) < before[1]
    label.setText(long)
    assert [label.heightForWidth(w) for w in widths] == before == [_shown(qtbot, long).heightForWidth(w)
                                                                    for w in widths]
    label.setText("short")
    font = QFont(label.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    label.setFont(font)
    label.setContentsMargins(3, 5, 3, 5)
    label.setText(long)
    fresh = _shown(qtbot, long)
    fresh.setFont(font)
    fresh.setContentsMargins(3, 5, 3, 5)
    assert [label.heightForWidth(w) for w in widths] == [fresh.heightForWidth(w) for w in widths]
    assert label.heightForWidth(200) > before[1]
    label.setText("short")
    label.setContentsMargins(0, 20, 0, 20)  # (margins alone: no change event)
    label.setText(long)
    fresh = RichLabel(long)
    qtbot.addWidget(fresh)
    fresh.setFont(font)
    fresh.setContentsMargins(0, 20, 0, 20)
    assert [label.heightForWidth(w) for w in widths] == [fresh.heightForWidth(w) for w in widths]
