"""The heatmap's two token axes: labels placed by the shared label layout, drawn by the axis itself.

:class:`TokenAxis` is a pyqtgraph axis that draws the labels it is given — side by side or upright, the
selected query's in bold and the highlight colour — instead of pyqtgraph's tick texts (which cannot
turn and drop labels they find overlapping).  :class:`AxisLabeller` asks
:mod:`qkv_studio.render.label_layout` which labels, at what size and turn, and which axis titles fit, for
the cells in view (zoomed in, every visible token is named), and gives each axis room for exactly that.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter

from qkv_studio.render import label_layout
from qkv_studio.render.label_layout import UPRIGHT, AxisLabels, TextMeasure
from qkv_studio.ui.widgets.plot_cache import RememberingAxis

_REF_PX = 100.0


def pixel_font(px: float, bold: bool = False) -> QFont:
    """The application's font at ``px`` pixels (whole pixels, as the screen draws them)."""
    font = QFont()
    font.setPixelSize(max(1, int(round(px))))
    font.setBold(bold)
    return font


class ScreenMeasure(TextMeasure):
    """The screen font as the label layout asks for it, measured once per text at a reference size."""

    def __init__(self) -> None:
        fm = QFontMetricsF(pixel_font(_REF_PX))
        widths: dict[str, float] = {}

        def width(text: str, px: float) -> float:
            w = widths.get(text)
            if w is None:
                if len(widths) > 20000:  # (a scene of new names each time: keep the memo bounded)
                    widths.clear()
                w = widths[text] = fm.horizontalAdvance(text)
            return w * px / _REF_PX

        super().__init__(width=width, line=fm.height() / _REF_PX)


class TokenAxis(RememberingAxis):
    """An axis that draws given (position, text) labels itself: flat or upright, one of them in bold.

    ``given_ticks()`` still answers with the labels last given (as pyqtgraph's ticks)."""

    def __init__(self, orientation: str, **kwargs) -> None:
        self._labels: list[tuple[float, str]] = []
        self._flat: list[tuple[float, str]] = []
        self._px = 12.0
        self._rotation = 0
        self._bold: int | None = None
        self._bold_colour = QColor("#d6246e")
        self._fonts = (pixel_font(12), pixel_font(12, True))
        super().__init__(orientation, **kwargs)

    def set_labels(self, labels: Sequence[tuple[float, str]], px: float, rotation: int = 0, *,
                   flat: Sequence[tuple[float, str]] = (), bold: int | None = None,
                   bold_colour: str | None = None) -> None:
        """Draw ``labels`` at ``px``, turned ``rotation`` degrees (0 or 90), plus ``flat`` ones never
        turned (the Σ over the row sums); the label at position ``bold`` in bold and ``bold_colour``."""
        labels, flat = list(labels), list(flat)
        look = (labels, flat, px, rotation, bold, bold_colour)
        if look == (self._labels, self._flat, self._px, self._rotation, self._bold,
                    None if bold_colour is None else self._bold_colour.name()):
            return
        if px != self._px:
            self._fonts = (pixel_font(px), pixel_font(px, True))
        self._labels, self._flat, self._px, self._rotation, self._bold = labels, flat, px, rotation, bold
        if bold_colour is not None:
            self._bold_colour = QColor(bold_colour)
        self.setTicks([labels + flat, []])  # (what the axis shows, for anyone asking; and a repaint)

    def shown_labels(self) -> list[tuple[float, str]]:
        """The (position, text) labels drawn now (without the flat extras)."""
        return list(self._labels)

    def flat_labels(self) -> list[tuple[float, str]]:
        """The (position, text) labels drawn never turned (the Σ)."""
        return list(self._flat)

    def label_rotation(self) -> int:
        """0 (side by side) or 90 (upright, reading upwards)."""
        return self._rotation

    def _along(self) -> tuple[float, float]:
        """(offset, scale) mapping a view coordinate to this axis's own coordinate along it."""
        view = self.linkedView()
        if view is None:
            return 0.0, 0.0
        a = self.mapFromScene(view.mapViewToScene(QPointF(0.0, 0.0)))
        b = self.mapFromScene(view.mapViewToScene(QPointF(1.0, 1.0)))
        if self.orientation in ("left", "right"):
            return a.y(), b.y() - a.y()
        return a.x(), b.x() - a.x()

    def paint(self, p: QPainter, opt, widget) -> None:  # noqa: D102 - Qt's
        offset, scale = self._along()
        if scale == 0:
            return
        lo, hi = sorted(self.range)
        gap = float(self.style["tickTextOffset"][0 if self.orientation in ("left", "right") else 1])
        size = self.size()
        font, bold = self._fonts
        line = QFontMetricsF(font).height()
        text_pen = self.textPen()
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        items = [(v, t, self._rotation) for v, t in self._labels] + [(v, t, 0) for v, t in self._flat]
        for v, text, rotation in items:
            if not lo - 0.5 <= v <= hi + 0.5:
                continue
            at = offset + v * scale
            is_bold = self._bold is not None and v == self._bold
            p.setFont(bold if is_bold else font)
            p.setPen(self._bold_colour if is_bold else text_pen.color())
            if self.orientation == "left":
                rect = QRectF(0.0, at - line / 2, size.width() - gap, line)
                p.drawText(rect, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), text)
            elif rotation == UPRIGHT:
                p.save()
                p.translate(at, size.height() - gap)
                p.rotate(-90.0)
                p.drawText(QRectF(0.0, -line / 2, size.height(), line),
                           int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text)
                p.restore()
            else:
                width = QFontMetricsF(bold if is_bold else font).horizontalAdvance(text) + 2
                rect = QRectF(at - width / 2, size.height() - gap - line, width, line)
                p.drawText(rect, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom), text)


QUERY_TITLES = ("attending from (query)", "query")
KEY_TITLES = ("attending to (key)", "key")


class AxisLabeller:
    """Lays out the heatmap's two token axes and their titles with the shared label layout.

    ``update(...)`` is cheap when nothing it depends on changed (a stage step asks several times)."""

    def __init__(self, left: TokenAxis, top: TokenAxis) -> None:
        self.left, self.top = left, top
        self.measure = ScreenMeasure()
        self._asked: tuple | None = None
        self._kept: tuple = ()
        self._bold_asked: tuple | None = None
        self._bold_w = 0.0
        self.rows: AxisLabels | None = None
        self.keys: AxisLabels | None = None
        self.titles: tuple[str, str] = QUERY_TITLES[0], KEY_TITLES[0]

    def _bold_width(self, text: str, px: float) -> float:
        """``text`` in bold at ``px`` (the query's name is bold: wider than the layout measured it)."""
        key = (text, px)
        if key != self._bold_asked:
            self._bold_asked = key
            self._bold_w = QFontMetricsF(pixel_font(px, True)).horizontalAdvance(text)
        return self._bold_w

    def update(self, names: Sequence[str], *, cell_w: float, cell_h: float, px: float, title_px: float,
               scale: float, keep: Sequence[int], visible_rows: tuple[int, int], visible_cols: tuple[int, int],
               sigma_at: float | None, room_h: float, room_w: float, panel_h: float,
               colours: tuple[str, str]) -> bool:
        """Lay both axes out; returns whether their sizes or titles may have changed (not only which names
        are shown).  ``px`` is the labels' size, ``scale``
        the text scale (minimum sizes grow with it), ``keep`` the indices always named (the query, a
        hovered cell), ``sigma_at`` where the Σ column's label goes (None: no Σ), ``room_h``/``room_w``
        the plot's height and width in px (for the titles), ``panel_h`` the whole panel's height (upright
        key names take at most a quarter of it: the matrix keeps its room), ``colours`` (text, highlight)."""
        names = tuple(names)
        layout = (names, round(cell_w, 2), round(cell_h, 2), px, title_px, scale, visible_rows, visible_cols,
                  sigma_at, round(room_h), round(room_w), round(panel_h), colours)
        keep = tuple(keep)
        if layout == self._asked:
            if keep == self._kept:
                return False
            rows, keys = self.rows, self.keys
            if rows is not None and keys is not None and rows.step == 1 and keys.step == 1:
                # every name is shown anyway: only the bold one moves (a new query, a hover)
                self._kept = keep
                query = keep[0] if keep else None
                self.left.set_labels(self.left.shown_labels(), rows.px, 0, bold=query, bold_colour=colours[1])
                self.top.set_labels(self.top.shown_labels(), keys.px, keys.rotation,
                                    flat=self.top.flat_labels(), bold=query, bold_colour=colours[1])
                return False
        layout_changed = layout != self._asked
        self._asked, self._kept = layout, keep
        m = self.measure
        min_px = 11.0 * scale
        rows = label_layout.row_labels(names, cell_h, px, m, min_px=min_px, max_width=9 * px, keep=keep,
                                       visible=visible_rows)
        upright = max(3 * px, min(7 * px, 0.25 * panel_h))
        keys = label_layout.key_labels(names, cell_w, px, m, min_px=min_px, max_extent=upright, keep=keep,
                                       visible=visible_cols, flat_min_px=min(px, max(min_px, 0.72 * px)))
        flat: list[tuple[float, str]] = []
        key_pairs = keys.pairs()
        if sigma_at is not None:
            sigma_w = m.width("Σ", keys.px)
            # a last key name ("[SEP]") must not run into the Σ over the sums
            along = (lambda t: m.width(t, keys.px)) if keys.rotation == 0 else (lambda t: m.height(keys.px))
            key_pairs = [(i, t) for i, t in key_pairs if (sigma_at - i) * cell_w >= (along(t) + sigma_w) / 2 + 4]
            flat = [(sigma_at, "Σ")]
        self.rows, self.keys = rows, keys
        query = keep[0] if keep else None
        text, highlight = colours
        self.left.set_labels(rows.pairs(), rows.px, 0, bold=query, bold_colour=highlight)
        self.top.set_labels(key_pairs, keys.px, keys.rotation, flat=flat, bold=query, bold_colour=highlight)
        left_title = label_layout.axis_title(QUERY_TITLES, title_px, room_h, m, min_px=min(title_px, 10 * scale))
        top_title = label_layout.axis_title(KEY_TITLES, title_px, room_w, m, min_px=min(title_px, 10 * scale))
        self.titles = left_title.text, top_title.text
        title_room = m.height(title_px) * 0.9 + 2  # (as pyqtgraph places the title: at the outer edge)
        gap = float(self.top.style["tickTextOffset"][1])  # (between the names and the matrix)
        # The axes' room is that of the widest name in view, whichever are shown: a new query (which
        # changes the thinned names) then repaints the two axes, not the whole plot laid out anew.
        in_view = [names[i] for i in range(*visible_rows)]
        widest = min(9 * rows.px, self._bold_width(max(in_view, key=lambda t: m.width(t, 1.0)), rows.px)) \
            if in_view else 0.0
        self.left.setWidth(int(round(title_room + float(self.left.style["tickTextOffset"][0]) + widest + 4)))
        if keys.rotation:
            cols_in_view = [names[i] for i in range(*visible_cols)]
            key_extent = min(upright, max((m.width(t, keys.px) for t in cols_in_view), default=0.0))
        else:
            key_extent = m.height(keys.px)
        if flat:
            key_extent = max(key_extent, m.height(keys.px))
        self.top.setHeight(int(round(title_room + gap + key_extent + 2)))
        return layout_changed
