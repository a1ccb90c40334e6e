"""The slide: the stage bar, formula and caption over the stage's main view, a side view where the
layout rule (:mod:`.policy`) lets it stand, the P hint where it left the side view out, the black screen
and the ink.

The slide lays itself out whenever its size, its stage's main view, its text size or the table's
numbers change — at once, in that call: nothing waits on a timer.  It can be shown full screen (F5:
:class:`~qkv_studio.ui.window.presentation.Presentation`), painted offscreen (the exports' slide), or
copied by the presenter console.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QLabel, QPushButton, QVBoxLayout, QWidget

from qkv_studio.core.stages import stage_spec
from qkv_studio.state.ink import InkBook
from qkv_studio.state.session import Session
from qkv_studio.ui.lesson.model.next_token import NextTokenBars
from qkv_studio.ui.panels.calc_table import CalcTable
from qkv_studio.ui.panels.stage_stepper import StageStepper, stage_button_sheet
from qkv_studio.ui.slide import measure
from qkv_studio.ui.slide.look import SlideLook
from qkv_studio.ui.slide.policy import Need, Placement, place
from qkv_studio.ui.slide.views import SlideViews
from qkv_studio.ui.widgets.ink_overlay import InkOverlay
from qkv_studio.ui.widgets.overlays import BlankOverlay, ShortcutsOverlay
from qkv_studio.ui.widgets.table_style import BASE_POINT_SIZE

#: The caption's and formulas' text on a slide, as a multiple of the slide's body text.
CAPTION_FACTOR = 1.15
#: The side view each main view can have (None: none); ``True``: shown by default where legible.
SIDE_VIEWS: dict[str, tuple[str, bool]] = {"heatmap": ("calc", True), "plane": ("calc", False),
                                           "blend": ("calc", False)}
#: The P hint's words for a side view the rule left out.
HINTS = {"calc": "P — show the calculation table"}
#: The writer's column (a language model writing the next token, on the last stage's slide): its bars
#: are this many lines of the caption's text wide beside the widest token and its percentage.
WRITER_BAR_LINES = 4
WRITER_TITLE = "Next token — PageDown writes it"


class _Body(QWidget):
    """The room under the stage bar: the slide places its views in it whenever it is resized."""

    def __init__(self, slide: SlideWidget) -> None:
        super().__init__(slide)
        self._slide = slide

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._slide.place_views()


class SlideWidget(QWidget):
    """A presentation slide bound to ``session`` and drawn in ``look`` (see the module's docstring).

    ``placed()`` fires after the views were placed (the presenter console copies the slide).
    ``book`` (the presenter's ink) gives the slide its ink layer.
    """

    placed = Signal()

    def __init__(self, session: Session, look: SlideLook, *, book: InkBook | None = None,
                 parent: QWidget | None = None, flags: Qt.WindowType = Qt.WindowType.Widget) -> None:
        super().__init__(parent, flags)
        self.session = session
        self.look = look
        self.setAutoFillBackground(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.stepper = StageStepper(session, appearance=look)
        self.body = _Body(self)
        self.views = SlideViews(session, look, self.body)
        self.hint = QPushButton(self.body)
        self.hint.setFlat(True)
        self.hint.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hint.setCursor(Qt.CursorShape.PointingHandCursor)
        self.hint.clicked.connect(self.toggle_side)
        self.hint.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.stepper)
        lay.addWidget(self.body, 1)
        self.blank = BlankOverlay(self)
        self._shortcuts: ShortcutsOverlay | None = None
        self.ink = InkOverlay(self, book, appearance=look) if book is not None else None
        self.key_handler: Callable[[int, str], bool] | None = None
        # A language model writing: its next tokens beside the last stage's main view (see set_writer)
        self.writer_source: Callable[[], list[tuple[str, float]]] | None = None
        self.writer_title = QLabel(WRITER_TITLE, self.body)
        self.writer = NextTokenBars(self.body)
        self.writer.bind_appearance(look)
        self.writer_title.hide()
        self.writer.hide()
        self.placement: Placement | None = None
        self.main_name = ""
        self.side_name: str | None = None
        self._side_default = False  # (the stage's side view is shown by default where legible)
        self._forced: bool | None = None  # P: the side view in (True) or out (False); None: the rule's
        self._placing = False
        self._follows_table = False
        self._heatmap_need: tuple[object, tuple, Need] | None = None  # (the result and text it was for, the need)
        session.stage_changed.connect(self._on_stage)
        look.scale_changed.connect(self.restyle)
        look.theme_changed.connect(self.restyle)
        self.restyle()

    # ---- fonts -------------------------------------------------------------------------------------
    def body_font(self) -> QFont:
        font = QFont(QApplication.font())
        font.setPointSizeF(BASE_POINT_SIZE * self.look.scale)
        return font

    def caption_font(self) -> QFont:
        """The caption's text: the slide's reading size, which every legible size is measured in."""
        font = self.body_font()
        font.setPointSizeF(font.pointSizeF() * CAPTION_FACTOR)
        return font

    def restyle(self, *_: object) -> None:
        """The slide's fonts and the stage buttons' sheets for its scale and theme; placed again."""
        body, big = self.body_font(), self.caption_font()
        self.setFont(body)
        for view in self.views.all().values():
            view.setFont(body)
        for label in (self.stepper.caption, self.stepper.formula, self.stepper.stage_formula):
            label.setFont(big)
        self.hint.setFont(body)
        self.writer.setFont(big)
        self.writer_title.setFont(body)
        sheet = stage_button_sheet(self.look.theme, body.pointSizeF())
        for button in self.stepper.findChildren(QPushButton):
            if button.styleSheet() != sheet:
                button.setStyleSheet(sheet)
        self.stepper.hold_height(keep_tallest=True)  # (the views below keep their place between steps)
        if self.stepper.isVisible():
            self.stepper.fit_bar()
        self.place_views()

    # ---- the views ---------------------------------------------------------------------------------
    def _on_stage(self, *_: object) -> None:
        if stage_spec(self.session.stage).slide_view != self.main_name:
            self.place_views()

    def _on_table(self, *_: object) -> None:
        # (the table's numbers need another width or more rows, or it shows another stage's columns — a
        # heading that breaks onto two lines makes it a line taller: placed again by the same rule)
        if not self._placing and self.side_shown():
            self.place_views()

    def toggle_side(self) -> None:
        """P: the side view in where it was left out (or not shown on this stage), out where it stood;
        the choice holds for the following slides until the slide is hidden (:meth:`reset_side`)."""
        self._forced = not self.side_shown()
        self.place_views()

    def reset_side(self) -> None:
        """The side views as the rule places them again (presentation left)."""
        if self._forced is not None:
            self._forced = None
            self.place_views()

    def side_shown(self) -> bool:
        """Whether a side view stands beside or under the main view now."""
        return self.placement is not None and self.placement.side is not None

    def needs(self, *, with_side: bool = True) -> tuple[Need, Need | None]:
        """The main and (``with_side``: it may be shown) the side view's legible sizes in the caption's
        text (:mod:`.measure`)."""
        font = self.caption_font()
        if self.main_name == "heatmap":
            # (measured once per result and text size: a step between the score stages changes neither)
            result, key = self.session.result, (self.session.head, font.toString())
            known = self._heatmap_need
            if known is None or known[0] is not result or known[1] != key:
                self._heatmap_need = known = (result, key, measure.heatmap_need(self.session, font))
            main = known[2]
        else:
            main = measure.lines_need(font, measure.PLANE_LINES if self.main_name == "plane" else measure.BLEND_LINES)
        side: Need | None = None
        if with_side and self.side_name == "calc":
            table = cast(CalcTable, self.views.get("calc"))
            if not self._follows_table:  # (connected after the table's own: it has shown its columns)
                self._follows_table = True
                table.content_changed.connect(self._on_table)
                table.calc_model.shown_changed.connect(self._on_table)
            side = measure.table_need(table, font)
        return main, side

    def place_views(self) -> None:
        """The stage's main view and its side view placed in the body by the rule (:func:`.policy.place`)."""
        if self._placing:
            return
        self._placing = True
        try:
            self._place()
        finally:
            self._placing = False
        self.placed.emit()

    def _place(self) -> None:
        self.main_name = stage_spec(self.session.stage).slide_view
        self.side_name, default = SIDE_VIEWS.get(self.main_name, (None, False))
        self._side_default = default
        wanted, asked = self._side_wishes(default)
        main_need, side_need = self.needs(with_side=wanted or asked)
        gap = int(QFontMetricsF(self.caption_font()).height() / 2)
        room = self.body.size()
        aside = self._place_writer(gap)
        self.placement = place(room.width() - aside, room.height(), main_need, side_need, wanted=wanted or asked,
                               asked=asked, gap=gap)
        if self.placement.side is None and self._side_default:  # (the P hint's line: it covers nothing)
            x, y, w, h = self.placement.main
            self.placement = replace(self.placement, main=(x, y, w, max(0, h - self.hint.sizeHint().height())))
        main = self.views.get(self.main_name)
        side_rect = self.placement.side
        side = self.views.get(self.side_name) if side_rect is not None and self.side_name else None
        for view in self.views.all().values():
            if view is not main and view is not side:
                view.hide()
        main.setGeometry(*self.placement.main)
        main.show()
        if side is not None and side_rect is not None:
            # (placed whole by the rule: no scroll bar, whose coming and going re-measured the columns;
            # asked for with P where it does not fit: it scrolls)
            policy = Qt.ScrollBarPolicy.ScrollBarAsNeeded if self.placement.where == "asked" \
                else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            if isinstance(side, QAbstractScrollArea):
                side.setVerticalScrollBarPolicy(policy)
            side.setGeometry(*side_rect)
            side.show()
        self._place_hint()

    def _side_wishes(self, default: bool) -> tuple[bool, bool]:
        """(wanted, asked): the rule's default (shown where legible) unless P asked for the side view
        (shown, where it must scroll too) or took it out."""
        if self._forced is None:
            return default, False
        return self._forced, self._forced

    def _place_writer(self, gap: int) -> int:
        """The writer's column on the right (a language model's next tokens, where the clicker's PageDown
        writes one), as wide as its longest token, its bars and its percentages in the caption's text;
        returns the width it takes (0 without one)."""
        choices = self.writer_source() if self.writer_source is not None else []
        self.writer.setVisible(bool(choices))
        self.writer_title.setVisible(bool(choices))
        if not choices:
            return 0
        self.writer.set_choices(choices)
        fm = QFontMetricsF(self.caption_font())
        width = int(max(fm.horizontalAdvance(piece) for piece, _ in choices) + fm.horizontalAdvance("100.0 %")
                    + WRITER_BAR_LINES * fm.height() + 16)
        width = max(width, self.writer_title.sizeHint().width())
        x = self.body.width() - width
        title_h = self.writer_title.sizeHint().height()
        self.writer_title.setGeometry(x, 0, width, title_h)
        self.writer.setGeometry(x, title_h, width, self.writer.sizeHint().height())
        return width + gap

    def refresh_writer(self) -> None:
        """The writer's choices changed (a token written, another model): placed again."""
        self.place_views()

    def _place_hint(self) -> None:
        """The visible way to bring a left-out side view in: the P hint, at the body's bottom right."""
        out = self.placement is not None and self.placement.side is None and self._side_default
        text = HINTS.get(self.side_name or "", "") if out else ""
        self.hint.setVisible(bool(text))
        if text:
            self.hint.setText(text)
            self.hint.setToolTip("Press P (or click) to show it beside the main view; P again hides it")
            size = self.hint.sizeHint()
            self.hint.setGeometry(self.body.width() - size.width(), self.body.height() - size.height(),
                                  size.width(), size.height())
            self.hint.raise_()

    # ---- keys --------------------------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # (the window's key router takes the lecture keys first; this is for a slide shown without it)
        handler = self.key_handler
        if handler is not None and handler(int(event.key()), event.text()):
            event.accept()
            return
        super().keyPressEvent(event)

    def shortcuts_overlay(self) -> ShortcutsOverlay:
        """The shortcut list on the slide (F1 or ?), built the first time it is asked for."""
        if self._shortcuts is None:
            self._shortcuts = ShortcutsOverlay(self, appearance=self.look)
        return self._shortcuts

    def covers(self) -> tuple[QWidget, ...]:
        """What can cover the slide, bottom first: the black screen, the shortcut list once built."""
        return (self.blank,) if self._shortcuts is None else (self.blank, self._shortcuts)
