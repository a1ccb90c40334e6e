"""The window's matrix editors by name; the projection mode's (X, W^Q, W^K, W^V) built when first needed.

Each page's editors share its height: when it is too short for every editor's rows under a two-line
title, their titles take one line (:meth:`MatrixEditor.set_compact`) rather than hide the last rows.

The projection editors live on a tab that only projection mode shows.  Building and polishing their
four tables (~100 widgets) cost start-up ~25 ms for a page most sessions never open, so they are made
the first time anything asks for one of them — the window, when projection mode turns on, or a test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QSplitter, QWidget

from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.matrix_editor import MatrixEditor

DIRECT = ("Q", "K", "V")
PROJECTION = ("X", "Wq", "Wk", "Wv")


class _PageFit(QObject):
    """Watches one page (a vertical splitter of editors): at each resize or new size constraint of its
    editors, one-line titles when the long ones would leave a row behind a scroll bar."""

    def __init__(self, page: QSplitter) -> None:
        super().__init__(page)
        self._page = page
        self._watched: set[int] = set()
        self._watch(page)

    def _watch(self, widget: QWidget) -> None:
        if id(widget) not in self._watched:
            self._watched.add(id(widget))
            widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest, QEvent.Type.Show):
            self.fit()
        elif event.type() == QEvent.Type.ParentChange and obj is self._page:
            self._watched = {id(obj)}
        return False

    def _slack(self) -> int:
        """The height the widgets round the page leave unused, up to the column's scroll area: the page
        is never taller than its editors need (their maximum heights), so its own height cannot say
        there is room for their long titles — the rest is unused below it, in its stack or its
        splitter.  Each of those is watched for its resizes.  (Every container on the way stacks its
        children top to bottom: a splitter's panes and handles, a tab widget's bar and pages.)"""
        slack = 0
        widget = self._page.parentWidget()
        while widget is not None and not isinstance(widget.parentWidget(), QAbstractScrollArea):
            self._watch(widget)
            children = widget.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
            used = sum(c.height() for c in children if c.isVisible() and not c.isWindow())
            slack += max(0, widget.height() - used)
            widget = widget.parentWidget()
        return slack

    def fit(self) -> None:
        page = self._page
        widgets = [page.widget(i) for i in range(page.count())]
        editors = [e for e in widgets if isinstance(e, MatrixEditor) and not e.isHidden()]
        if not editors or not page.isVisible():
            return
        needs = [e.height_needed(long_title=True) for e in editors]
        if 0 in needs:  # (a title not fitted yet: it fits as it shows, and its constraint brings us back)
            return
        room = page.height() + self._slack() - page.handleWidth() * (len(editors) - 1)
        compact = sum(needs) > room
        for e in editors:
            e.set_compact(compact)


class EditorSet(Mapping[str, MatrixEditor]):
    """Every matrix editor by name (Q, K, V, X, Wq, Wk, Wv), each in its page's splitter.

    Q, K and V are built at once; the four projection editors together on first access (then
    ``on_built``, if given, is called with them).  Every editor is bound to ``appearance`` as it is
    built.  Iterating the values builds everything: :meth:`built` gives the editors that exist.
    """

    def __init__(self, session: Session, direct_page: QSplitter, projection_page: QSplitter,
                 on_built: Callable[[tuple[MatrixEditor, ...]], None] | None = None, *,
                 appearance: Appearance | None = None) -> None:
        self._session = session
        self._projection_page = projection_page
        self._on_built = on_built
        self._appearance = appearance
        self._editors: dict[str, MatrixEditor] = {}
        for name in DIRECT:
            self._editors[name] = editor = MatrixEditor(session, name, appearance=appearance)
            direct_page.addWidget(editor)
        self._fits = (_PageFit(direct_page), _PageFit(projection_page))

    def __getitem__(self, name: str) -> MatrixEditor:
        if name in PROJECTION and name not in self._editors:
            self.build_projection()
        return self._editors[name]

    def __iter__(self) -> Iterator[str]:
        return iter(DIRECT + PROJECTION)

    def __len__(self) -> int:
        return len(DIRECT) + len(PROJECTION)

    def built(self) -> tuple[MatrixEditor, ...]:
        """The editors built so far (without building the others)."""
        return tuple(self._editors.values())

    def build_projection(self) -> None:
        """Build the projection page's editors now (nothing if they exist)."""
        if PROJECTION[0] in self._editors:
            return
        new = []
        for name in PROJECTION:
            self._editors[name] = editor = MatrixEditor(self._session, name, appearance=self._appearance)
            self._projection_page.addWidget(editor)
            new.append(editor)
        if self._on_built is not None:
            self._on_built(tuple(new))
