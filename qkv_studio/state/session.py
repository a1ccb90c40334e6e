"""The Session: the one mutable state of the app, as a QObject the widgets bind to.

It owns the current :class:`~qkv_studio.core.Scene` (content), the :class:`~qkv_studio.core.View` beside
it (selected query, stage: navigation, not content, so not undoable and never a new Scene), the file
it came from and a ``QUndoStack``.
The views show :attr:`Session.shown`: the scene itself, or for a scene split into heads the selected
head's own (its columns of Q, K, V), so that every view agrees on the head the heads panel selects;
:attr:`Session.result` is the attention of that shown scene.
Every content edit is a :class:`SceneEdit` command (before/after scenes; Scene is immutable, so this
is cheap and exact).  Recomputing attention is lazy and coalesced: edits mark the result stale and
``result_changed(change)`` fires once on the next event-loop turn, however many edits came in between,
with the :class:`~qkv_studio.state.changes.ResultChange` they add up to; an edit that only touched
query rows recomputes only those rows, in place, in the Session's own :class:`LiveResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from qkv_studio.core import STAGES, AttentionResult, Scene, SceneError, View, compute
from qkv_studio.core.attention import ROW_FIELDS
from qkv_studio.core.captions import keep_description_true
from qkv_studio.core.scene_checks import Mask
from qkv_studio.core.stages import shown_matrix
from qkv_studio.core.view import head_block, query_after_insert, query_after_remove, shown_scene
from qkv_studio.state.changes import ResultChange

_DRAG_ID = 1001


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class LiveResult:
    """The Session's current attention, every stage of it: owned by the Session, read by the views.

    It starts as the scene's own (immutable) result.  An edit of a few query rows then recomputes just
    those rows and writes them into the Session's own copy of the arrays, in place (the first such
    edit makes the copy): at n = 1024 a fresh copy of three n×n arrays per edit cost ~25 MB and
    milliseconds.  The arrays views get are read-only; the rows that changed in place are named by
    the next ``result_changed(change)``, which comes before any other change of the Session (a new
    query or stage, another scene).  Read the numbers when told; copy them to keep them.

    It reads as an :class:`AttentionResult`: ``blocked``, ``d_k`` and ``scale`` as the result's, and each
    per-query field of the result type (:data:`~qkv_studio.core.attention.ROW_FIELDS`: ``scores`` …) by
    its name.
    """

    __slots__ = (*ROW_FIELDS, "_own", "blocked", "d_k", "scale")

    def __init__(self, result: AttentionResult) -> None:
        self.d_k = result.d_k
        self.scale = result.scale
        self.blocked = _read_only(result.blocked)
        self._own: dict[str, np.ndarray] | None = None
        self._expose({name: getattr(result, name) for name in ROW_FIELDS})

    if TYPE_CHECKING:  # (the per-query fields are slots set by their names: this tells the type checker so)
        def __getattr__(self, name: str) -> np.ndarray: ...

    def _expose(self, arrays: dict[str, np.ndarray]) -> None:
        for name, a in arrays.items():
            setattr(self, name, _read_only(a))

    @property
    def n(self) -> int:
        return int(self.weights.shape[0])

    def stage(self, name: str) -> np.ndarray:
        """The n×n matrix shown for a stage (as :meth:`AttentionResult.stage`)."""
        shown: np.ndarray = getattr(self, shown_matrix(name))
        return shown

    def write_rows(self, rows: np.ndarray, part: AttentionResult) -> None:
        """Overwrite query ``rows`` with ``part`` (computed for those rows alone); for the Session only."""
        if self._own is None:  # (the scene's result is shared with the undo history: copy it once)
            self._own = {name: np.array(getattr(self, name)) for name in ROW_FIELDS}
            self._expose(self._own)
        for name, own in self._own.items():
            own[rows] = getattr(part, name)


class SceneEdit(QUndoCommand):
    """One undoable change of the scene's content, named for the Edit menu ("Edit Q[sat, 1]").

    Commands with the same ``merge_key`` (a drag of one vector, nudges of one cell) merge into one
    undo step while they keep arriving.  ``queries`` = (before, after) is the selected query on either
    side, used when the edit changes the number of tokens (otherwise the current query stays).
    """

    def __init__(self, session: Session, before: Scene, after: Scene, text: str,
                 merge_key: tuple[object, ...] | None = None, rows_hint: tuple[str, list[int]] | None = None,
                 queries: tuple[int, int] = (0, 0)) -> None:
        super().__init__(text)
        self._session = session
        self.before = before
        self.after = after
        self.merge_key = merge_key
        self.rows_hint = rows_hint
        self.queries = queries

    def id(self) -> int:  # noqa: A003 - Qt's name
        return _DRAG_ID if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(other, SceneEdit) or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        self.queries = (self.queries[0], other.queries[1])
        return True

    def redo(self) -> None:
        self._session._apply(self.after, self.rows_hint, self.queries[1])

    def undo(self) -> None:
        self._session._apply(self.before, None, self.queries[0])


class Session(QObject):
    """The app's state: scene (content), view (selected query, stage), file, undo history.

    Signals
    -------
    scene_changed: the scene's content changed (matrices, tokens, mask, scale, mode).
    tokens_changed: the list of tokens changed (names, count or order).
    result_changed(ResultChange): attention was recomputed, in the change's rows or everywhere; read
        :attr:`result`.  Coalesced per event-loop turn (the change is what the edits add up to), and
        delivered before a query, stage or scene that comes after it.
    query_changed(int): the selected query token changed.
    stage_changed(str): the stepper's stage changed.
    head_changed(int): the selected head (0-based) of a multi-head split changed; for a split scene
        the views show another head (:attr:`shown`), and ``result_changed`` follows.
    cell_changed(int): the selected key of the selected query's row changed — the cell (query, key)
        worked out term by term at Q·Kᵀ (:mod:`qkv_studio.core.cellwise`); −1 when none is selected.
    path_changed(str): the file the scene belongs to changed ("" for none).
    modified_changed(bool): unsaved changes appeared or were saved.
    message(str): a refused edit or a notice, for the status bar.
    drag_changed(bool): a vector drag began (True) or ended (False); while it lasts, panels that
        only report its numbers (the calculation table, the editors) may follow a frame late.
    """

    scene_changed = Signal()
    tokens_changed = Signal()
    result_changed = Signal(object)
    query_changed = Signal(int)
    stage_changed = Signal(str)
    head_changed = Signal(int)
    cell_changed = Signal(int)
    path_changed = Signal(str)
    modified_changed = Signal(bool)
    message = Signal(str)
    drag_changed = Signal(bool)

    def __init__(self, scene: Scene, path: str = "", parent: QObject | None = None, *,
                 view: View | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._origin = scene  # the scene as loaded (see keep_description_true)
        self._cell_key: int | None = None  # the selected cell's key (see select_cell)
        self._view = (view or View()).fitted(scene)
        self._path = path
        self._result: LiveResult | None = None
        self._pending_rows: list[int] | None = None  # query rows to recompute when the result is read
        self._change: ResultChange | None = None  # what the next result_changed announces
        self._written = False  # the live arrays changed in place since the last result_changed
        self._drag_serial = 0
        self._dragging = False
        self.undo_stack = QUndoStack(self)
        self.undo_stack.setUndoLimit(1000)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._notify = QTimer(self)
        self._notify.setSingleShot(True)
        self._notify.setInterval(0)
        self._notify.timeout.connect(self._emit_result)

    # ---- state -----------------------------------------------------------------------------------
    @property
    def scene(self) -> Scene:
        return self._scene

    @property
    def path(self) -> str:
        return self._path

    @property
    def shown(self) -> Scene:
        """The scene the views show: :attr:`scene`, or for a scene split into heads the selected head's own
        single-head scene (its columns of Q, K, V; see :func:`~qkv_studio.core.view.shown_scene`).  Read
        its vectors and widths to show them; edit :attr:`scene`."""
        return shown_scene(self._scene, self._view.head)

    @property
    def view(self) -> View:
        """What is being looked at: the selected query and the stage (see :meth:`set_query`, :meth:`set_stage`)."""
        return self._view

    @property
    def query(self) -> int:
        return self._view.query

    @property
    def stage(self) -> str:
        return self._view.stage

    @property
    def head(self) -> int:
        return self._view.head

    @property
    def cell_key(self) -> int | None:
        """The selected cell's key (its query is :attr:`query`), or None: see :meth:`select_cell`."""
        return self._cell_key

    @property
    def modified(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def result(self) -> LiveResult:
        """Attention for the current scene, recomputed on demand (only the changed rows when possible).

        Read the arrays, do not keep them across edits (see :class:`LiveResult`): take a copy to keep.
        """
        if self._result is None:
            self._result = LiveResult(self.shown.result())
        elif self._pending_rows is not None:
            rows = np.asarray(self._pending_rows, dtype=int)
            q, k, v = self.shown.qkv()
            live = self._result
            live.write_rows(rows, compute(q[rows], k, v, mask=live.blocked[rows], scale=live.scale))
            self._written = True
        self._pending_rows = None
        return self._result

    # ---- applying scenes -------------------------------------------------------------------------
    def _apply(self, new: Scene, rows_hint: tuple[str, list[int]] | None, query: int) -> None:
        """Install ``new`` (keeping the current view), mark the result stale, notify."""
        old = self._scene
        old_query, old_head = self._view.query, self._view.head
        # Navigation is not part of the history: keep the current query (unless the token count
        # changed, where the command's own ``query`` is right), the current stage and head (unless
        # there are fewer heads now: the last one).
        if new.n != old.n:
            self._view = self._view.with_query(min(max(query, 0), new.n - 1))
        self._view = self._view.with_head(min(old_head, new.heads - 1))
        if (rows_hint is not None and rows_hint[0] == "Q" and self._result is not None
                and self._result.weights.shape == (new.n, new.n)):
            self._scene = new
            self._pending_rows = sorted(set(self._pending_rows or []) | set(rows_hint[1]))
            self._announce(ResultChange.of_rows(rows_hint[1]))
        else:
            self._flush_written()
            self._scene = new
            self._result = None
            self._pending_rows = None
            self._announce(ResultChange.ALL)
        self.scene_changed.emit()
        if new.tokens != old.tokens:
            self.tokens_changed.emit()
        if self._view.query != old_query:
            self.query_changed.emit(self._view.query)
        if self._view.head != old_head:
            self.head_changed.emit(self._view.head)
        if self._cell_key is not None and new.tokens != old.tokens:
            self.select_cell(None)  # (another token list: the cell is no longer the one chosen)
        self._notify.start()

    def _on_clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(not clean)

    def _announce(self, change: ResultChange) -> None:
        """Add ``change`` to what the next ``result_changed`` says."""
        self._change = change if self._change is None else self._change.merged(change)

    def _flush_written(self) -> None:
        """Deliver a pending ``result_changed`` whose rows were already written in place, before the
        Session changes otherwise: a view holding the arrays is told about them first."""
        if self._written:
            self.flush()

    def _emit_result(self) -> None:
        change, self._change = self._change or ResultChange.ALL, None
        self._written = False
        self.result_changed.emit(change)

    def flush(self) -> None:
        """Emit a pending ``result_changed`` now (tests and exports that cannot wait a turn)."""
        if self._notify.isActive():
            self._notify.stop()
            self._emit_result()

    def edit(self, make: Callable[[Scene], Scene], text: str, *, merge_key: tuple[object, ...] | None = None,
             rows_hint: tuple[str, list[int]] | None = None, query: int | None = None,
             as_given: bool = False) -> bool:
        """Push an undoable edit; a refused edit emits ``message`` and changes nothing.

        ``query`` is the query to select when the edit changes the number of tokens (default: the
        current one, or the last token if there are fewer).  An edit that changes the numbers drops the
        description it inherited (it would say something false); ``as_given`` takes the new scene
        exactly as made (a whole scene from its caller).
        """
        if self._dragging and not (merge_key and merge_key[0] == "drag"):
            self.end_drag()  # (another edit: a drag whose release went astray is over)
        try:
            after = make(self._scene)
        except (SceneError, ValueError) as exc:
            self.message.emit(str(exc))
            return False
        if after.same_as(self._scene):
            return True
        if not as_given:
            after = keep_description_true(self._origin, after)
        before_query = self._view.query
        queries = (before_query, before_query if query is None else query)
        self.undo_stack.push(SceneEdit(self, self._scene, after, text, merge_key, rows_hint, queries))
        return True

    def load(self, scene: Scene, path: str = "", view: View | None = None) -> None:
        """Replace the whole scene (Open, New, preset) and look at it with ``view`` (default: the first
        query, the weights; a query past the scene's tokens becomes its last): a fresh undo history,
        nothing modified."""
        old = self._view
        new = (view or View()).fitted(scene)
        self.end_drag()
        self.undo_stack.clear()
        self._flush_written()
        self._scene = scene
        self._origin = scene  # (whose description is true of the numbers it has: see keep_description_true)
        self._view = new
        self._result = None
        self._pending_rows = None
        self._announce(ResultChange.ALL)
        self._path = path
        self.scene_changed.emit()
        self.tokens_changed.emit()
        self.path_changed.emit(path)
        if new.query != old.query:
            self.query_changed.emit(new.query)
        if new.stage != old.stage:
            self.stage_changed.emit(new.stage)
        if new.head != old.head:
            self.head_changed.emit(new.head)
        self.select_cell(None)
        self.undo_stack.setClean()
        self.modified_changed.emit(False)
        self._notify.start()

    def mark_saved(self, path: str) -> None:
        """The scene was written to ``path``: it is now clean."""
        if path != self._path:
            self._path = path
            self.path_changed.emit(path)
        self.undo_stack.setClean()

    # ---- navigation (not undoable) ---------------------------------------------------------------
    def set_query(self, index: int) -> None:
        index = int(index)
        if index == self._view.query or not 0 <= index < self._scene.n:
            return
        self.flush()  # (views see the numbers of an edit before the query that follows it)
        self._view = self._view.with_query(index)
        self.query_changed.emit(index)

    def select_cell(self, key: int | None, query: int | None = None) -> None:
        """Select the cell (``query``, ``key``) of the score grid (``query`` None: the selected query's row);
        ``key`` None clears it.  Navigation, not an edit."""
        if query is not None:
            self.set_query(query)
        if key is not None and not 0 <= int(key) < self._scene.n:
            return
        key = None if key is None else int(key)
        if key != self._cell_key:
            self._cell_key = key
            self.cell_changed.emit(-1 if key is None else key)

    def step_cell(self, delta: int) -> None:
        """The next (+1) or previous (−1) cell of the grid, row by row (from the query's first key)."""
        from qkv_studio.core.cellwise import step_cell

        if self._cell_key is None:
            row, key = self.query, (0 if delta > 0 else self._scene.n - 1)
        else:
            row, key = step_cell(self.query, self._cell_key, self._scene.n, delta)
        self.select_cell(key, row)

    def move_query(self, delta: int) -> None:
        self.set_query(max(0, min(self._scene.n - 1, self._view.query + delta)))

    def set_stage(self, stage: str) -> None:
        if stage == self._view.stage or stage not in STAGES:
            return
        self.flush()  # (views see the numbers of an edit before the stage that follows it)
        self._view = self._view.with_stage(stage)
        self.stage_changed.emit(stage)

    def set_head(self, index: int) -> None:
        """Select head ``index`` (0-based) of the multi-head split (the heads panel shows it large); every
        view then shows that head (:attr:`shown`, :attr:`result`).  A head the scene has not is ignored."""
        index = int(index)
        if index == self._view.head or not 0 <= index < self._scene.heads:
            return
        self.end_drag()
        self.flush()  # (views see the numbers of an edit before the head that follows it)
        self._view = self._view.with_head(index)
        # Another head is other attention: recomputed when read, announced next turn (as an edit is).
        self._result = None
        self._pending_rows = None
        self._announce(ResultChange.ALL)
        self.head_changed.emit(index)
        self._notify.start()

    def step_stage(self, delta: int) -> bool:
        """Move ``delta`` stages; returns False at either end (a deck then moves to the next scene)."""
        i = STAGES.index(self._view.stage) + delta
        if not 0 <= i < len(STAGES):
            return False
        self.set_stage(STAGES[i])
        return True

    # ---- content edits ---------------------------------------------------------------------------
    def set_value(self, matrix: str, row: int, col: int, value: float, *, merge: bool = False) -> bool:
        """Set one number; ``merge`` joins consecutive nudges of the same cell into one undo step."""
        label = self._scene.token_label(row) if row < self._scene.n and matrix != "Wq" else str(row + 1)
        key = ("cell", matrix, row, col) if merge else None
        hint = (matrix, [row]) if matrix == "Q" else None
        return self.edit(lambda s: s.with_value(matrix, row, col, value), f"Edit {matrix}[{label}, {col + 1}]",
                         merge_key=key, rows_hint=hint)

    def set_block(self, matrix: str, row: int, col: int, block: np.ndarray) -> bool:
        """Paste a block of numbers at (row, col)."""
        return self.edit(lambda s: s.with_block(matrix, row, col, block), f"Paste into {matrix}")

    @property
    def dragging(self) -> bool:
        """Whether a vector is being dragged (between :meth:`begin_drag` and :meth:`end_drag`)."""
        return self._dragging

    def begin_drag(self) -> None:
        """Start a new drag: moves until :meth:`begin_drag` is called again form one undo step."""
        self._drag_serial += 1
        if not self._dragging:
            self._dragging = True
            self.drag_changed.emit(True)

    def end_drag(self) -> None:
        """The drag is over (the button was released): every panel shows its last step now."""
        if self._dragging:
            self._dragging = False
            self.flush()
            self.drag_changed.emit(False)

    def drag_vector(self, matrix: str, row: int, x: float, y: float) -> bool:
        """Move the first two components of a vector (a drag step on the vector plane)."""
        head = self._view.head

        def make(s: Scene) -> Scene:
            # (the plane shows the selected head's vectors of a split scene: its first two columns)
            start = shown_block_start(s, matrix, head)
            width = shown_scene(s, head).matrix(matrix).shape[1]
            block = np.array([[x, y]])[:, : width]
            return s.with_block(matrix, row, start, block)

        hint = (matrix, [row]) if matrix == "Q" else None
        return self.edit(make, f"Drag {matrix.lower()} of {self._scene.token_label(row)}",
                         merge_key=("drag", self._drag_serial, matrix, row), rows_hint=hint)

    def rename_token(self, index: int, name: str) -> bool:
        return self.edit(lambda s: s.rename_token(index, name), f"Rename token {index + 1}")

    def insert_token(self, index: int, name: str) -> bool:
        query = query_after_insert(self._view.query, index, self._scene.n)
        return self.edit(lambda s: s.insert_token(index, name), f"Add token {name!r}", query=query)

    def remove_token(self, index: int) -> bool:
        query = query_after_remove(self._view.query, index, self._scene.n)
        return self.edit(lambda s: s.remove_token(index), f"Remove token {self._scene.token_label(index)!r}",
                         query=query)

    def move_token(self, src: int, dst: int) -> bool:
        return self.edit(lambda s: s.move_token(src, dst), "Move token")

    def add_dim(self, group: str) -> bool:
        return self.edit(lambda s: s.add_dim(group), f"Add dimension ({_GROUP_NAMES[group]})")

    def remove_dim(self, group: str) -> bool:
        return self.edit(lambda s: s.remove_dim(group), f"Remove dimension ({_GROUP_NAMES[group]})")

    def set_mask(self, mask: Mask) -> bool:
        name = mask if isinstance(mask, str) else "custom"
        return self.edit(lambda s: s.with_mask(mask), f"Mask: {name}")

    def toggle_blocked(self, row: int | None, col: int) -> bool:
        return self.edit(lambda s: s.toggle_blocked(row, col), "Block/unblock key")

    def set_scale(self, scale: bool) -> bool:
        return self.edit(lambda s: s.with_scale(scale), "Divide by √dₖ" if scale else "Do not divide by √dₖ")

    def replace_scene(self, scene: Scene, text: str, *, query: int | None = None) -> bool:
        """An undoable switch to another scene (mode switches, randomise, "edit this head"); ``query`` as
        for :meth:`edit`."""
        return self.edit(lambda s: scene, text, query=query, as_given=True)


def shown_block_start(scene: Scene, matrix: str, head: int) -> int:
    """The first column of ``matrix`` that the shown head's column 0 is (0 for a scene of one head)."""
    block = head_block(scene, matrix, head)
    return 0 if block is None else block.start


_GROUP_NAMES = {"qk": "dₖ", "v": "dᵥ", "model": "d_model"}
