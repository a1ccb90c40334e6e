"""Plots that keep their cached pictures while hidden, and a pixmap cache large enough for the screen.

The plots draw their axes, grids, key arrows and labels from Qt's device-coordinate caches
(:mod:`~qkv_studio.ui.widgets.plot_cache`): pixmaps of the item as last drawn, blitted until the item
changes.  Two things threw them away on every presentation step into or out of the vector plane's or
the blend's slide, though nothing in them had changed:

* A ``QGraphicsView`` that is hidden tells its scene the window was deactivated, and activated again
  when it is shown; every ``QGraphicsWidget`` of the scene (each axis, the plot, its view box) then
  repaints itself in full, its cache drawn again (the plane: ~5 ms at 1920×1080, four times that at
  3840×2160).  :func:`keep_caches_while_hidden` lets the scene go on as if its view had stayed —
  the window's real activation still reaches it (only the pair a hide and the next show send is kept
  from it, so its state is what it would have been had the view never been hidden).
* ``QPixmapCache`` holds 10 MB by default.  A plot across a 1080p slide caches two or three pixmaps of
  4 MB (an axis with a grid reaches across the plot), so the slides evicted each other's caches; on a
  4K screen one such pixmap is larger than the whole cache, and was drawn anew on every paint.
  :func:`fit_pixmap_cache` makes room for :data:`SCREENS_OF_PIXMAPS` screenfuls.

A plot shown afresh paints its whole viewport, and at 3840×2160 each full-size layer costs a few
milliseconds: :func:`paint_opaquely` drops the two layers that only repeat its background colour (the
viewport's own fill under the view's, and the view's background drawn from a cached pixmap of that one
colour rather than filled).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPixmapCache, QScreen
from PySide6.QtWidgets import QGraphicsView

#: How many screenfuls of cached pixmaps the cache holds (the slides' plots together cache about
#: three: the plane's two gridded axes and its key arrows, the blend's, the heatmap's axes and legend;
#: more since a slide's stage bar is only as tall as its text and its main view larger: at 4 the
#: plane's caches were evicted by the others' after a round of the stages).
SCREENS_OF_PIXMAPS = 6


class _HiddenViewActivation(QObject):
    """Keeps from a view's scene the deactivation its view's hide sends and the activation of the next
    show.  The view sends them to the scene while it handles its viewport's Hide or Show (if its window
    is active), after the viewport's event filters: so the scene's next event after a Hide or a Show
    is that one, or none was sent.  The scene is watched only from a hide to the next show (its events
    are many; Python in their way costs, and no widget is asked anything here: this runs while widgets
    are being destroyed too)."""

    # (class defaults too: a widget torn down by the garbage collector may call the filter after its
    # attributes were cleared — it then keeps nothing)
    _viewport: QObject | None = None
    _scene: QObject | None = None
    _next: QEvent.Type | None = None
    _owed = 0
    _watching = False

    def __init__(self, view: QGraphicsView) -> None:
        super().__init__(view)
        self._viewport = view.viewport()
        self._scene = view.scene()
        self._next: QEvent.Type | None = None  # the activation event the view may be about to send
        self._owed = 0  # deactivations kept from the scene, each to be matched by a kept activation
        self._watching = False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if obj is self._viewport:
            if kind == QEvent.Type.Hide:
                self._next = QEvent.Type.WindowDeactivate
                self._watch(True)
            elif kind == QEvent.Type.Show and self._watching:
                self._next = QEvent.Type.WindowActivate if self._owed else None
            return False
        expected, self._next = self._next, None  # (the scene's next event: it, or none was sent)
        kept = expected is not None and kind == expected
        if kept:
            self._owed += 1 if kind == QEvent.Type.WindowDeactivate else -1
        if not self._owed and expected is not None:
            self._watch(False)
        return kept

    def _watch(self, on: bool) -> None:
        if on != self._watching and self._scene is not None:
            self._watching = on
            try:
                if on:
                    self._scene.installEventFilter(self)
                else:
                    self._scene.removeEventFilter(self)
            except RuntimeError:  # (the scene is gone: the view is being destroyed)
                pass


def keep_caches_while_hidden(view: QGraphicsView) -> None:
    """Keep ``view``'s scene from repainting every widget in it (dropping their caches) each time the
    view is hidden and shown again (see the module's docstring).  Call once, with the view's scene set."""
    keeper = _HiddenViewActivation(view)
    view.viewport().installEventFilter(keeper)


def fit_pixmap_cache(screen: QScreen | None) -> int:
    """Make ``QPixmapCache`` hold at least :data:`SCREENS_OF_PIXMAPS` screenfuls of ``screen``'s
    pixels (it is never made smaller); returns its limit in KiB."""
    limit = QPixmapCache.cacheLimit()
    if screen is not None:
        size, ratio = screen.size(), screen.devicePixelRatio()
        need = int(SCREENS_OF_PIXMAPS * size.width() * size.height() * ratio * ratio * 4 / 1024)
        if need > limit:
            QPixmapCache.setCacheLimit(need)
            limit = need
    return limit


def paint_opaquely(view: QGraphicsView) -> None:
    """``view`` paints every pixel of its viewport itself — its background brush, which must be opaque
    (a pyqtgraph view's ``setBackground`` colour): Qt does not fill the viewport first, and the view
    fills its background instead of copying it from a cached pixmap of the same colour."""
    view.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
    view.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
