"""The window's matrix editors by name; the projection mode's (X, W^Q, W^K, W^V) built when first needed.

The projection editors live on a tab that only projection mode shows.  Building and polishing their
four tables (~100 widgets) cost start-up ~25 ms for a page most sessions never open, so they are made
the first time anything asks for one of them — the window, when projection mode turns on, or a test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from PySide6.QtWidgets import QSplitter

from qkv_studio.state.appearance import Appearance
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.matrix_editor import MatrixEditor

DIRECT = ("Q", "K", "V")
PROJECTION = ("X", "Wq", "Wk", "Wv")


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
