"""The layout barrier: a changing word-wrapped text re-lays out only itself; a grow-only barrier keeps
its room while a drag lasts and gives it back on the release — never on a timer."""

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from qkv_studio.ui.update_policy import settle
from qkv_studio.ui.widgets.layout_barrier import LayoutBarrier

LONG = " ".join(["a caption that wraps onto several lines"] * 6)
SHORT = "one line"


class LayoutRequests(QObject):
    """Counts the layout requests a widget receives."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _column(qtbot):
    page = QWidget()
    qtbot.addWidget(page)
    label = QLabel(SHORT)
    label.setWordWrap(True)
    below = QLabel("below")
    lay = QVBoxLayout(page)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(0)
    barrier = LayoutBarrier(label, grow_only=True)
    lay.addWidget(barrier)
    lay.addWidget(below)
    lay.addStretch(1)
    page.resize(300, 600)
    page.show()
    qtbot.waitExposed(page)
    return page, label, barrier, below


def _settle(qtbot):
    settle()


def test_a_grow_only_barrier_keeps_its_room_while_a_drag_lasts_and_gives_it_back_on_the_release(qtbot):
    page, label, barrier, below = _column(qtbot)
    label.setText(LONG)
    _settle(qtbot)
    tall = barrier.height()
    assert tall >= label.heightForWidth(barrier.width()) > 2 * label.fontMetrics().height()
    assert below.y() >= tall
    # Shorter text while a drag goes on: the barrier keeps its height (the panel below does not jump) ...
    qtbot.mousePress(below, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))
    label.setText(SHORT)
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    assert barrier.height() == tall and barrier.shrink_pending()
    # ... and gives it back at the release: no gap is left under the one line, no timer waited on
    qtbot.mouseRelease(below, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))
    assert not barrier.shrink_pending()
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    QApplication.processEvents()
    need = label.heightForWidth(barrier.width())
    assert barrier.height() == need < tall
    assert below.y() == need
    assert label.geometry().height() == need


def test_without_a_drag_the_barrier_is_as_tall_as_its_text_at_once(qtbot):
    page, label, barrier, below = _column(qtbot)
    label.setText(LONG)
    _settle(qtbot)
    tall = barrier.height()
    label.setText(SHORT)  # (a typed edit, a key, a stage step)
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    QApplication.processEvents()
    need = label.heightForWidth(barrier.width())
    assert barrier.height() == need < tall and not barrier.shrink_pending() and below.y() == need


def test_edits_that_fit_the_kept_height_do_not_re_lay_out_the_parent(qtbot):
    page, label, barrier, _ = _column(qtbot)
    label.setText(LONG)
    _settle(qtbot)
    requests = LayoutRequests()
    page.installEventFilter(requests)
    qtbot.mousePress(page, Qt.MouseButton.LeftButton, pos=QPoint(2, 590))  # (a value dragged)
    for i in range(6):  # (shorter and longer again, as a caption's numbers do while a value is dragged)
        label.setText(SHORT if i % 2 == 0 else LONG)
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()
    assert requests.count == 0
    assert barrier.shrink_pending() is False  # (the last text is the long one: nothing to give back)
    qtbot.mouseRelease(page, Qt.MouseButton.LeftButton, pos=QPoint(2, 590))
