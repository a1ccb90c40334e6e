"""The layout barrier: a changing word-wrapped text re-lays out only itself, and a grow-only barrier
leaves no gap once its text is shorter again."""

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from qkv_studio.ui.widgets.layout_barrier import SHRINK_DELAY_MS, LayoutBarrier

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
    qtbot.wait(1)
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    QApplication.processEvents()


def test_a_grow_only_barrier_gives_back_the_height_once_the_text_stays_short(qtbot):
    page, label, barrier, below = _column(qtbot)
    label.setText(LONG)
    _settle(qtbot)
    tall = barrier.height()
    assert tall >= label.heightForWidth(barrier.width()) > 2 * label.fontMetrics().height()
    assert below.y() >= tall
    # Shorter text while edits go on: the barrier keeps its height (the panel below does not jump) ...
    label.setText(SHORT)
    _settle(qtbot)
    assert barrier.height() == tall and barrier.shrink_pending()
    # ... and gives it back once they pause: no gap is left under the one line
    qtbot.waitUntil(lambda: not barrier.shrink_pending(), timeout=SHRINK_DELAY_MS * 10)
    _settle(qtbot)
    need = label.heightForWidth(barrier.width())
    assert barrier.height() == need < tall
    assert below.y() == need
    assert label.geometry().height() == need


def test_edits_that_fit_the_kept_height_do_not_re_lay_out_the_parent(qtbot):
    page, label, barrier, _ = _column(qtbot)
    label.setText(LONG)
    _settle(qtbot)
    requests = LayoutRequests()
    page.installEventFilter(requests)
    for i in range(6):  # (shorter and longer again, as a caption's numbers do while a value is dragged)
        label.setText(SHORT if i % 2 == 0 else LONG)
        _settle(qtbot)
    assert requests.count == 0
    assert barrier.shrink_pending() is False  # (the last text is the long one: nothing to give back)
