"""The editors' column: it scrolls when shorter than its content, and says so with a fade at its edge."""

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from qkv_studio.ui.widgets.scroll_column import ScrollColumn


def _column(qtbot, lines: int, height: int) -> ScrollColumn:
    content = QWidget()
    lay = QVBoxLayout(content)
    for i in range(lines):
        label = QLabel(f"line {i}")
        label.setMinimumHeight(30)
        lay.addWidget(label)
    column = ScrollColumn(content)
    qtbot.addWidget(column)
    column.resize(200, height)
    column.show()
    qtbot.waitExposed(column)
    return column


def test_a_column_with_more_below_fades_its_cut_edge_until_scrolled_to_the_end(qtbot):
    column = _column(qtbot, 20, 200)
    fade, view = column.more_below, column.viewport().geometry()
    qtbot.waitUntil(fade.isVisible, timeout=2000)
    assert fade.geometry().bottom() == view.bottom() and fade.width() == view.width()
    assert 0 < fade.height() <= view.height() // 3
    # the fade's last fifth is the window's colour alone: the text the edge cuts through does not show
    from PySide6.QtGui import QPalette

    image = column.grab().toImage()
    solid = column.palette().color(QPalette.ColorRole.Window).rgb()
    rows = range(fade.geometry().bottom() - fade.height() // 5, fade.geometry().bottom() + 1)
    assert {image.pixel(x, y) for y in rows for x in range(view.width())} == {solid}
    bar = column.verticalScrollBar()
    bar.setValue(bar.maximum())
    assert not fade.isVisible()
    bar.setValue(0)
    assert fade.isVisible()


def test_a_column_that_fits_has_no_fade(qtbot):
    column = _column(qtbot, 3, 400)
    qtbot.wait(20)
    assert not column.verticalScrollBar().isVisible() and not column.more_below.isVisible()
