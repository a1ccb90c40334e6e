"""The update policy: every deferral between an edit and a settled screen, in one place.

An edit, a drag step or a stage step is on screen within one 60 Hz frame.  What shows the edit repaints
at once; a few things deliberately follow later.  This is the complete list — a new deferral is added
here (with its reason) and implements ``settle_pending()`` so that :func:`settle` can finish it:

========================  ============================================  ====================================
deferral                  where                                         why
========================  ============================================  ====================================
next frame (16 ms)        :class:`~qkv_studio.ui.widgets.frame_throttle.FrameThrottle`
                          (blend, plane, stepper caption, editors)      the panels that *follow* an edit are
                                                                        redrawn once a frame, however fast
                                                                        the edits come (a drag keeps 60 Hz)
the morph's frame wait    ``HeatmapView._anim_wait`` then its           a stage step's own frame shows the
and its 250 ms morph      ``QVariantAnimation``                         step; the cross-fade runs after it
the table's refit         ``CalcTable._fit_timer`` (250 ms after the    measuring every row's text is ~10 ms:
                          last edit; at once when its columns change)   not on each edit of a drag
0 ms timers               the legend's alignment, the editors' column   merge a burst of geometry changes
                          fit, the heads' re-layout, a deferred dock    into one pass after the event loop
                                                                        turns
the console's copy        ``Presenter`` grabs the slide 80 ms after a   one grab for a burst of changes; the
                          change, and once after a morph                ink and the laser never need a grab
========================  ============================================  ====================================

Held, not deferred: the slide's stage bar keeps the tallest height its captions have needed at its width
and text size (``StageStepper.hold_height(keep_tallest=True)``), so the views below do not move between
steps; a new size or text size measures it anew — no timer gives the room back.

What is *not* deferred any more: presentation mode shows a slide of its own
(:mod:`qkv_studio.ui.slide`), so the main window is never re-docked and nothing is restored on a
timer; a :class:`~qkv_studio.ui.widgets.layout_barrier.LayoutBarrier` keeps the room its text needed
only while a mouse button is held (a drag) and gives it back on the release — never on a timer.

:func:`settle` is the one way code that must see the finished screen *now* (tests, screenshots,
exports) gets there: deterministically, without sleeping.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractAnimation, QCoreApplication, QObject
from PySide6.QtWidgets import QApplication, QWidget

from qkv_studio.ui.widgets.frame_throttle import any_pending, flush_pending

#: How many passes :func:`settle` makes at most: a finished deferral may start another (a morph's end
#: asks for the next frame's caption, whose new height asks for a layout).
MAX_PASSES = 8


def _roots(widget: QWidget | None) -> list[QObject]:
    if widget is not None:
        return [widget.window()]
    return list(QApplication.topLevelWidgets())


def _finish(root: QObject) -> bool:
    """Finish every deferral under ``root``; True if any was pending."""
    pending = False
    for obj in [root, *root.findChildren(QObject)]:
        settle_now = getattr(obj, "settle_pending", None)
        if callable(settle_now) and settle_now():
            pending = True
        if isinstance(obj, QAbstractAnimation) and obj.state() == QAbstractAnimation.State.Running:
            total = obj.totalDuration()
            if total >= 0:  # (a looping animation, -1, is left to run: nothing settles it)
                obj.setCurrentTime(total)
                pending = True
    return pending


def settle(widget: QWidget | None = None) -> None:
    """Bring ``widget``'s window (default: every window) to the screen an edit settles on, now.

    Processes the posted events (layouts included), runs the next-frame updates, finishes the
    heatmap's morph and the table's refit and every other deferral of the table above (each object
    with a ``settle_pending()`` method that returns True when it had something pending), and repeats
    until nothing is pending — no sleeping, no waiting on the clock.
    """
    app = QApplication.instance()
    if app is None:
        return
    for _ in range(MAX_PASSES):
        QCoreApplication.sendPostedEvents()
        app.processEvents()
        flush_pending()
        pending = any(_finish(root) for root in _roots(widget))
        QCoreApplication.sendPostedEvents()
        app.processEvents()
        if not pending and not any_pending():
            break

