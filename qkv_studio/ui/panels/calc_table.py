"""The lesson's calculator for the selected query: one row per key, columns appearing stage by stage.

token | key kⱼ | value vⱼ | q·kⱼ | ÷√dₖ | weight w | w·vⱼ, then a total row (Σw = 1, the output).
A virtualised table model: it reads the Session's result on demand and never copies it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

import numpy as np
from PySide6.QtCore import SIGNAL, SLOT, QAbstractTableModel, QEvent, QModelIndex, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyle, QStyleOption, QTableView

from qkv_studio.core import STAGES, contributions
from qkv_studio.core.stages import table_columns
from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.state.changes import ResultChange
from qkv_studio.state.session import Session
from qkv_studio.ui.panels.calc_delegate import CalcDelegate
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance
from qkv_studio.ui.widgets.formatting import fmt, fmt_fixed, fmt_vector
from qkv_studio.ui.widgets.frame_throttle import FrameThrottle
from qkv_studio.ui.widgets.table_style import style_table

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult

# Every column in order, its heading and the stage at which it first appears (the stage registry's).
COLUMNS = tuple(key for key, _, _ in table_columns())
HEADERS = {key: heading for key, heading, _ in table_columns()}
APPEARS = {key: stage for key, _, stage in table_columns()}
# Vectors show their first components only: at dₖ = 32 four of them pushed the scores and weights (what
# the table is for) out of view; the editors hold every component.
VECTOR_LIMIT = 2
FIT_DELAY_MS = 250  # columns refit this long after the last edit
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_ALIGN_LEFT = int((Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter).value)
_ALIGN_RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)


#: The forms of a heading, widest first: one line, two lines (broken at its last space: "weight" over
#: "w"), and its symbol alone ("w"; the full heading on hover).
HEADING_FORMS = ("line", "wrapped", "symbol")


def heading(name: str, form: str = "line") -> str:
    """A column's heading in one of :data:`HEADING_FORMS` ("weight w", "weight\\nw" or "w")."""
    head, _, tail = HEADERS[name].rpartition(" ")
    if form == "line" or not head:
        return HEADERS[name]
    return f"{head}\n{tail}" if form == "wrapped" else tail


class CalcModel(QAbstractTableModel):
    """Rows = key tokens plus a total row; columns = every column the scene shows by its last stage.

    Which of them the current stage shows is :meth:`shown_columns` (the view hides the others): a stage
    step changes that and nothing else — no model reset, no texts formatted again.
    """

    shown_changed = Signal()
    """The stage shows other columns (the view hides and shows its sections)."""

    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(parent)
        self._session = session
        self._show_all_stages = False
        self._columns = self._visible(STAGES[-1])
        self._shown = self._visible()
        self._rows = session.scene.n
        self._bold = QFont()
        self._bold.setBold(True)
        self.total_brush = QBrush(QColor(0, 0, 0, 18))
        # (row, column name) -> text, until the numbers change: a stage step shows or hides columns
        # and keeps every text (and the widths measured from them) of the columns it keeps
        self._texts: dict[tuple[int, str], str] = {}
        self._forms: dict[str, str] = {}  # column -> its heading's form, when not one line (see set_heading_forms)
        self.generation = 0  # counts the times the texts were forgotten (widths measured go with them)
        self._best_row: int | None = None
        self._contrib: np.ndarray | None = None  # wⱼ·vⱼ of the selected query, until the next refresh
        self._seen: tuple | None = None  # (query, best key, bold?, texts' generation) last shown
        self._vectors_new = True  # the token, key and value columns changed since they were last shown
        session.scene_changed.connect(self._forget)
        session.result_changed.connect(self._on_result)
        session.query_changed.connect(self._refresh)
        # What the table only reports follows at the next frame (see frame_throttle), so that the
        # action's own frame stays within a frame: a stage step's new column (the heatmap and the
        # stepper show the step), and a drag's numbers (the plane and the heatmap show the drag).
        self._next_frame = FrameThrottle(lambda: self._refresh(forget=False), self)
        session.stage_changed.connect(self._next_frame.request)
        session.drag_changed.connect(self._on_drag)
        session.tokens_changed.connect(self._on_tokens)

    def set_show_all_stages(self, on: bool) -> None:
        """Show every stage's columns at every stage (View → Show all stages at once), or only the
        current stage's."""
        if bool(on) != self._show_all_stages:
            self._show_all_stages = bool(on)
            self._refresh(forget=False)

    @property
    def shows_all_stages(self) -> bool:
        """Whether every stage's columns show at every stage (View → Show all stages at once)."""
        return self._show_all_stages

    def _visible(self, stage: str | None = None) -> tuple[str, ...]:
        stage_i = STAGES.index(stage or (STAGES[-1] if self._show_all_stages else self._session.stage))
        cols = [c for c in COLUMNS if STAGES.index(APPEARS[c]) <= stage_i]
        if not self._session.scene.scale and "scaled" in cols:
            cols.remove("scaled")
        scene = self._session.shown  # (a split scene's selected head)
        if max(scene.d_k, scene.d_v) > 2:
            # Long vectors are wide even cut to two components: the numbers this stage computes come
            # first, where they are seen without scrolling, and the vectors after them.
            cols.sort(key=lambda c: c in ("key", "value", "weighted"))
        return tuple(cols)

    def columns(self) -> tuple[str, ...]:
        """The model's columns: every column this scene shows by its last stage."""
        return self._columns

    def shown_columns(self) -> tuple[str, ...]:
        """The columns the current stage shows, in order."""
        return self._shown

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._rows + 1

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._columns)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or section >= len(self._columns):
            return None
        name = self._columns[section]
        if role == _DISPLAY:
            return heading(name, self._forms.get(name, "line"))
        if role == _TOOLTIP:  # (the whole heading, also where the column shows its symbol alone)
            return HEADERS[name]
        return None

    @property
    def heading_forms(self) -> dict[str, str]:
        """Column → the form of its heading (:data:`HEADING_FORMS`), for those not on one line."""
        return dict(self._forms)

    def set_heading_forms(self, forms: dict[str, str]) -> None:
        """The columns whose heading is on two lines or its symbol alone (a narrow table; see
        CalcTable.set_compact)."""
        if forms != self._forms:
            self._forms = dict(forms)
            if self._columns:
                self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self._columns) - 1)

    def best_row(self) -> int:
        """The key with the largest weight for the selected query."""
        return self._best()

    def _best(self) -> int:
        if self._best_row is None:
            r = self._session.result
            self._best_row = int(r.weights[self._session.query].argmax())
        return self._best_row

    def data(self, index, role=_DISPLAY):
        # Called for every visible cell and role on each repaint and column sizing: roles are compared
        # as plain ints and texts are formatted once per refresh (PySide's enum lookups cost µs each).
        if role == _DISPLAY:
            if not index.isValid():
                return None
            return self.text(index.row(), index.column())
        if not index.isValid():
            return None
        if role == _ALIGNMENT:
            return _ALIGN_LEFT if self._columns[index.column()] == "token" else _ALIGN_RIGHT
        j = index.row()
        total = j == self._rows
        if role == _FONT and (total or (j == self._best() and STAGES.index(self._session.stage) >= 1)):
            return self._bold
        if role == _BACKGROUND and total:
            return self.total_brush
        return None

    def text(self, row: int, column: int) -> str:
        """The text of a cell, formatted once until the numbers change (what DisplayRole returns)."""
        return self.text_of(row, self._columns[column])

    def text_of(self, row: int, col: str) -> str:
        """The text of a row in the named column, shown or not (see :meth:`all_columns`)."""
        key = (row, col)
        text = self._texts.get(key)
        if text is None:
            text = self._total_text(col) if row == self._rows else self._cell_text(row, col)
            self._texts[key] = text
        return text

    def is_bold(self, row: int) -> bool:
        """The total row, and the best-weighted key once there are scores."""
        return row == self._rows or (row == self._best() and STAGES.index(self._session.stage) >= 1)

    def is_total(self, row: int) -> bool:
        return row == self._rows

    def is_left_aligned(self, column: int) -> bool:
        return self._columns[column] == "token"

    def _cell_text(self, j: int, col: str) -> str:
        s = self._session.shown
        r = self._session.result
        qi = self._session.query
        if col == "token":
            return s.token_label(j)
        _, k, v = s.qkv()
        if col == "key":
            return fmt_vector(k[j], limit=VECTOR_LIMIT)
        if col == "value":
            return fmt_vector(v[j], limit=VECTOR_LIMIT)
        if col == "score":
            return fmt(float(r.scores[qi, j]), 3)
        if col == "scaled":
            return fmt(float(r.scaled[qi, j]), 3)
        if col == "weight":
            return fmt_fixed(float(r.weights[qi, j]))
        if self._contrib is None:
            # the Session's LiveResult reads as an AttentionResult (state/session.py); core's
            # functions are typed for the dataclass
            self._contrib = contributions(cast("AttentionResult", r), v, qi)
        return fmt_vector(self._contrib[j], limit=VECTOR_LIMIT, decimals=2)

    def _total_text(self, col: str) -> str:
        r = self._session.result
        qi = self._session.query
        if col == "token":
            return "Σ"
        if col == "weight":
            return fmt_fixed(float(r.weights[qi].sum()))
        if col == "weighted":
            return f"o = {fmt_vector(r.output[qi], limit=VECTOR_LIMIT, decimals=2)}"
        return ""

    def _forget(self) -> None:
        """Drop the texts and numbers kept since the last refresh (the scene or result changed)."""
        self._texts.clear()
        self._best_row = None
        self._contrib = None
        self.generation += 1

    def _on_drag(self, dragging: bool) -> None:
        if not dragging:
            self._next_frame.flush()  # (the drag is over: its last step now)

    def _on_tokens(self) -> None:
        self._vectors_new = True
        self._refresh()

    def _on_result(self, change: ResultChange = ResultChange.ALL) -> None:
        if change.everything:  # (a change of some query rows leaves the tokens, keys and values)
            self._vectors_new = True
        if self._session.dragging:
            self._forget()  # (a repaint before the next frame shows the new numbers, not a mix)
            self._next_frame.request()
        else:
            self._refresh()

    def _refresh(self, *_: object, forget: bool = True) -> None:
        self._next_frame.cancel()  # (this shows the current numbers and stage's columns too)
        if forget:
            self._forget()
        cols = self._visible(STAGES[-1])
        rows = self._session.scene.n
        shown = self._visible()
        if cols != self._columns or rows != self._rows:
            self.beginResetModel()
            self._columns = cols
            self._shown = shown
            self._rows = rows
            self.endResetModel()
            self._seen = None
            return
        if shown != self._shown:
            self._shown = shown
            self.shown_changed.emit()
        if rows:
            # An edit of the query's own vector changes the numbers, not the token, key and value
            # columns: repaint only the columns that changed (each run of neighbours in one signal —
            # with long vectors the key and value columns come last, after the numbers).
            changed = list(range(len(cols)))
            seen = (self._session.query, self._best(), STAGES.index(self._session.stage) >= 1, self.generation)
            last = None if self._vectors_new else self._seen
            if last is not None and seen == last:
                return  # (a stage step that keeps the numbers and the bold row: nothing to repaint)
            if last is not None and seen[:-1] == last[:-1]:
                changed = [i for i, c in enumerate(cols) if c not in ("token", "key", "value")] or changed
            self._seen = seen
            self._vectors_new = False
            start = prev = changed[0]
            for c in changed[1:] + [None]:
                if c is not None and c == prev + 1:
                    prev = c
                    continue
                self.dataChanged.emit(self.index(0, start), self.index(rows, prev))
                if c is not None:
                    start = prev = c


class CalcTable(FollowsAppearance, QTableView):
    """The calculation table view (read-only); its grid and rows follow the Appearance it is bound to
    (``appearance=`` or ``bind_appearance``).

    ``content_changed()`` fires after a refit that changed the width its columns need (to the last
    stage it is shown at) or its number of rows: a slide that sized the table to them sizes it again.
    """

    content_changed = Signal()

    def __init__(self, session: Session, parent=None, *, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._widest: dict[tuple, float] = {}  # (column, first row, last row, best key bold) -> px
        self._widths_generation = -1
        self._header_hints: dict[tuple[str, str, str], int] = {}  # (column, header font, form) -> hint
        self._follows_scroll_range = True  # (see _follow_scroll_range)
        self._all_columns_width = 0  # every column's width, the hidden ones too (at the last fit)
        self._last_stage = STAGES[-1]  # the last stage the table is shown at (see set_last_stage)
        self._fitted: dict[str, int] = {}  # column -> its width at the last fit, shown or hidden
        self._content: tuple = (0, 0, ())  # (the columns' width to the last stage, the rows, the
        # headings' forms) at the last fit
        self._compact = False  # (see set_compact)
        self.calc_model = CalcModel(session, self)
        self.setModel(self.calc_model)
        self._delegate = CalcDelegate(self.calc_model, self)
        self.setItemDelegate(self._delegate)
        self._restyle()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.verticalHeader().hide()
        header = self.horizontalHeader()
        # Columns fit their contents, but measuring asks the model for every role of every measured
        # row (~10 ms), so it is not done on each edit (ResizeToContents would): at once when the
        # columns change, and after edits once they pause (a drag refits when it stops).
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # (no stretched last column: it pushed the weights, the numbers the table is for, to the far
        # edge of the dock, away from their tokens)
        header.setStretchLastSection(False)
        header.setResizeContentsPrecision(0)  # measure the rows in view, not all 1024 (refit on scroll)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setWordWrap(False)
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(FIT_DELAY_MS)
        self._fit_timer.timeout.connect(self.fit_columns)
        self.calc_model.modelReset.connect(self._show_columns)
        self.calc_model.shown_changed.connect(self._show_columns)
        self.calc_model.dataChanged.connect(self._fit_timer.start)
        self.verticalScrollBar().valueChanged.connect(self._fit_timer.start)
        self._show_columns()
        style_table(self, scale=self._drawn_scale)  # (the rows as built: the default look's)
        self.bind_appearance(appearance)

    # ---- look (see FollowsAppearance; text and cells follow the palette and font) ------------------
    def _restyle_theme(self, theme: Theme) -> None:
        style_table(self, theme=theme)

    def _restyle_scale(self, f: float) -> None:
        style_table(self, scale=f)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # Every cell in view in one pass.  QTableView's own paint makes ~4 calls into Python per cell
        # (index(), rowCount(), columnCount(), the delegate) and builds a style option for each: ~4.5 ms
        # for the 60 cells of a 1080p dock, on every edit.  The table is read-only, unselectable and
        # never focused, so cells, total row and grid are all there is to paint.
        model = self.calc_model
        rows, cols = model.rowCount(), model.columnCount()
        area = event.rect()
        if rows == 0 or cols == 0:
            return
        first_row = max(0, self.rowAt(area.top()))
        last_row = self.rowAt(area.bottom())
        last_row = rows - 1 if last_row < 0 else last_row
        first_col = max(0, self.columnAt(area.left()))
        last_col = self.columnAt(area.right())
        last_col = cols - 1 if last_col < 0 else last_col
        xs = [(c, self.columnViewportPosition(c), self.columnWidth(c)) for c in range(first_col, last_col + 1)
              if not self.isColumnHidden(c)]
        if not xs:
            return
        painter = QPainter(self.viewport())
        painter.setFont(self.font())
        paint_cell = self._delegate.paint_cell
        grid = self.showGrid()
        # cells leave their last pixel column and row to the grid line, as QTableView does
        shrink = 1 if grid else 0
        y = self.rowViewportPosition(first_row)
        for row in range(first_row, last_row + 1):
            h = self.rowHeight(row)
            for c, x, w in xs:
                paint_cell(painter, QRect(x, y, w - shrink, h - shrink), row, c)
            y += h
        if grid:
            painter.setPen(self._grid_pen)
            bottom = y - 1
            right = xs[-1][1] + xs[-1][2] - 1
            top = self.rowViewportPosition(first_row)
            left = xs[0][1]
            for _, x, w in xs:
                painter.drawLine(x + w - 1, top, x + w - 1, bottom)
            y = top
            for row in range(first_row, last_row + 1):
                y += self.rowHeight(row)
                painter.drawLine(left, y - 1, right, y - 1)
        painter.end()

    def _restyle(self) -> None:
        self._delegate.restyle(self.font(), self.palette())
        self._widest.clear()
        option = QStyleOption()  # (the palette is what the hint reads; making PySide's
        option.initFrom(self)    # QStyleOptionViewItem type cost ~2.5 ms of start-up)
        color = QColor.fromRgba(self.style().styleHint(QStyle.StyleHint.SH_Table_GridLineColor, option, self)
                                & 0xFFFFFFFF)
        self._grid_pen = QPen(color, 0, self.gridStyle())

    def content_width(self, through: str | None = None, *, scroll_bar: bool = True) -> int:
        """The width that shows every column the current stage shows — or, given ``through``, every
        column of the stages up to that one — frame and (unless not ``scroll_bar``: the rows will
        fit) the vertical scroll bar included.  (A column of a later stage is not counted: it is
        hidden, and the dock sized for it left the weights, which are shown, behind a scroll bar where
        the room was short.)"""
        if through is None:
            widths = [self.columnWidth(c) for c in range(self.calc_model.columnCount()) if not self.isColumnHidden(c)]
        else:
            # (a hidden column's section reads 0 wide: the width measured for it at the last fit)
            last = STAGES.index(through)
            widths = [self.columnWidth(c) or self._fitted.get(name, 0) for c,
                      name in enumerate(self.calc_model.columns())
                      if STAGES.index(APPEARS[name]) <= last]
        bar = self.verticalScrollBar().sizeHint().width() if scroll_bar else 0
        return sum(widths) + 2 * self.frameWidth() + bar

    def measure_key(self) -> tuple:
        """What :meth:`content_width` and :meth:`content_height` depend on besides the font and
        :attr:`compact`: the texts (their generation), columns, rows and stages shown, the rows' and the
        header's heights, the style, the viewport's width and the scroll bar's policy (a bar under
        columns wider than the viewport)."""
        m = self.calc_model
        return (m.generation, m.columns(), m.rowCount(), m.shows_all_stages, self.style().name(),
                self.verticalHeader().defaultSectionSize(), self.horizontalHeader().height(),
                self.viewport().width(), self.horizontalScrollBarPolicy())

    def content_height(self) -> int:
        """The height that shows every row (the header, the keys and the Σ row), frame included."""
        rows = self.calc_model.rowCount()
        header = self.horizontalHeader()
        # (the header's hint: its height lags a heading that broke onto two lines until it is laid out)
        height = max(header.height(), header.sizeHint().height()) + 2 * self.frameWidth()
        height += sum(self.rowHeight(r) for r in range(min(rows, 64)))
        bar_on = self.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOn
        if bar_on or sum(self.columnWidth(c) for c in range(self.calc_model.columnCount())) > self.viewport().width():
            height += self.horizontalScrollBar().sizeHint().height()
        return height

    def _show_columns(self) -> None:
        """Hide the columns the stage does not show yet, and fit the others."""
        shown = self.calc_model.shown_columns()
        for c, name in enumerate(self.calc_model.columns()):
            hidden = name not in shown
            if self.isColumnHidden(c) != hidden:
                self.setColumnHidden(c, hidden)
        self.fit_columns()
        self.updateGeometries()
        self.viewport().update()

    def fit_columns(self, *, even_hidden: bool = False) -> None:
        """Size the columns to their contents now (a hidden table does it when shown, unless
        ``even_hidden``: the window sizes its docks to the table before it first shows)."""
        self._fit_timer.stop()
        if self.isVisible() or even_hidden:
            self._fit_pending = False
            self._fit_now()
        else:
            self._fit_pending = True

    def _fit_now(self) -> None:
        # What resizeColumnsToContents does for the rows in view, measured here in one pass: Qt's own
        # asks the model and the delegate through Python for every cell (~2.5 ms on each stage step).
        model, header = self.calc_model, self.horizontalHeader()
        rows, cols = model.rowCount(), model.columnCount()
        if rows == 0 or cols == 0:
            return
        if rows <= 65:  # (a short table: every row, also those below the dock's edge before it is sized)
            first, last = 0, rows - 1
        else:
            first = max(0, self.rowAt(0))
            last = self.rowAt(self.viewport().height() - 1)
            last = rows - 1 if last < 0 else last
        if self._widths_generation != model.generation:
            self._widths_generation = model.generation
            self._widest.clear()
        # Every column the scene shows by its last stage is measured, the hidden ones too, and kept
        # until the numbers change: a stage step measures nothing (formatting and measuring 65 rows
        # took ~5 ms a step), and the table knows whether its last stage will need a scroll bar.
        width_of = self._delegate.text_width_of
        pad = 2 * self._delegate.pad + 2
        best = model.best_row()
        bold_best = model.is_bold(best)
        font_key = header.font().key()
        last_stage = STAGES.index(self._last_stage)
        total = 0
        forms: dict[str, str] = {}
        for c, name in enumerate(model.columns()):
            key = (name, first, last, bold_best)
            widest = self._widest.get(key)
            if widest is None:
                widest = self._widest[key] = max(
                    (width_of(r, name, r == rows - 1 or (bold_best and r == best)) for r in range(first, last + 1)),
                    default=0.0)
            numbers = math.ceil(widest) + pad
            hint = self._header_hint(c, name, font_key, "line")
            if self._compact and " " in HEADERS[name]:
                # (a heading wider than its numbers: on two lines, then its symbol alone — "token j" over
                # three-letter tokens, "weight w" over "0.54": the blend's w·vⱼ then fits a narrow column)
                for form in HEADING_FORMS[1:]:
                    if hint <= numbers:
                        break
                    hint = self._header_hint(c, name, font_key, form)
                    forms[name] = form
            width = max(numbers, hint)
            self._fitted[name] = width
            if STAGES.index(APPEARS[name]) <= last_stage:
                total += width
            if header.sectionSize(c) != width:  # (a hidden column keeps its size for when it shows)
                header.resizeSection(c, width)
        # The horizontal scroll bar stays for every stage once the last one needs it: stepping then
        # keeps the rows where they are (the bar coming and going moved them and re-laid out the dock).
        model.set_heading_forms(forms)
        self._all_columns_width = total
        self._choose_scroll_bar()
        content = (total, rows, tuple(sorted(forms.items())))
        if content != self._content:
            self._content = content
            self.content_changed.emit()

    def _header_hint(self, column: int, name: str, font_key: str, form: str) -> int:
        """A heading's width in one of :data:`HEADING_FORMS` (measured once per font)."""
        hint = self._header_hints.get((name, font_key, form))
        if hint is None:
            # (the section's hint less its text as it reads now is its margins: the heading's text, on
            # one line or two, is measured on top of them)
            header = self.horizontalHeader()
            fm = QFontMetrics(header.font())
            now = str(self.calc_model.headerData(column, Qt.Orientation.Horizontal) or "")
            margins = header.sectionSizeHint(column) - max(fm.horizontalAdvance(t) for t in now.split("\n"))
            text = heading(name, form)
            hint = margins + max(fm.horizontalAdvance(t) for t in text.split("\n"))
            self._header_hints[(name, font_key, form)] = hint
        return hint

    def set_compact(self, on: bool) -> None:
        """A narrow table (a folded side column, a short slide): a heading wider than its column's
        numbers breaks onto two lines ("weight" over "w"), or shows its symbol alone ("w", the whole
        heading on hover) when that is still wider, so the column is as wide as its numbers."""
        if bool(on) != self._compact:
            self._compact = bool(on)
            self._delegate.set_compact(self._compact)
            self.viewport().update()
            self.fit_columns(even_hidden=True)

    @property
    def compact(self) -> bool:
        """Whether headings wider than their numbers are shortened (see :meth:`set_compact`)."""
        return self._compact

    def set_last_stage(self, stage: str | None) -> None:
        """The last stage the table will be shown at (None: the last of all): its columns, and no
        later stage's, decide whether the horizontal scroll bar stays on.  (A slide shows the table at
        the score stages only; the blend stage has a slide of its own.)"""
        stage = stage or STAGES[-1]
        if stage != self._last_stage:
            self._last_stage = stage
            self.fit_columns(even_hidden=True)

    def _choose_scroll_bar(self) -> None:
        wide = self._all_columns_width > self.viewport().width()  # (every column to the last stage shown)
        policy = Qt.ScrollBarPolicy.ScrollBarAlwaysOn if wide else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        if self.horizontalScrollBarPolicy() != policy:
            self.setHorizontalScrollBarPolicy(policy)
            self._follow_scroll_range(not wide)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._choose_scroll_bar()  # (a dock made wide enough for the last stage needs no bar)

    def _follow_scroll_range(self, follow: bool) -> None:
        """Whether the scroll area re-lays out its scroll bars when the horizontal range changes.

        QAbstractScrollArea does that (queued) on every range change, to show or hide the bar; it
        raises both bars' containers as it goes, which repaints them and the dock beneath: ~5 ms on
        each stage step.  A bar that is always on has nothing to show or hide.  (Qt connects by the
        slot's name; should that ever change, disconnecting fails and Qt's behaviour stays.)
        """
        if follow == self._follows_scroll_range:
            return
        signal, slot = SIGNAL("rangeChanged(int,int)"), SLOT("_q_showOrHideScrollBars()")
        bar = self.horizontalScrollBar()
        if follow:
            done = bool(QObject.connect(bar, signal, self, slot, Qt.ConnectionType.QueuedConnection))
        else:
            done = QObject.disconnect(bar, signal, self, slot)
        if done:
            self._follows_scroll_range = follow

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if getattr(self, "_fit_pending", False):
            self._fit_pending = False
            self._fit_now()

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            self._restyle()
            self.viewport().update()
        if event.type() == QEvent.Type.FontChange:
            # The header is given the table's font: left to inherit it, it kept the size of the first
            # change when two came in a row (the slide's screen scale, then its text scale: 4K@2's
            # presentation showed 22-pt headings over 48-pt rows).
            header = self.horizontalHeader()
            if header.font() != self.font():
                header.setFont(self.font())
            # a zoom or presentation mode: refit at once (the headers hear of the font after the table)
            QTimer.singleShot(0, self, self.fit_columns)
