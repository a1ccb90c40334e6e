"""A word-wrapped rich-text label that lays its text out once per text and width.

The captions above the heatmap, the vector plane and the blend view carry the selected query's numbers,
so every edit gives them new text.  A QLabel then parses the HTML, lays it out to answer
``heightForWidth`` (twice, at a scratch width, then restores), and lays it out again to paint: four or
five layouts of the same paragraph per edit, ~1 ms each on a projector-sized font.  :class:`RichLabel`
keeps one QTextDocument laid out at the label's own width for painting and for the height at that width,
and measures other widths on a copy, so an edit costs one parse and one layout.

Its text breaks by one rule (:func:`keep_together`): a short formula fragment — "(q·k = 4)" — stays on
one line, and a paragraph never ends with one short word alone on its last line.

It stays a QLabel (style sheets such as ``QLabel#caption { font-size: … }`` and the palette apply, and
``text()``/``setText()`` work as usual), drawing its text itself, top-left, with the label's foreground
colour as the default.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QFontMetrics, QPainter, QPalette, QPixmap, QTextDocument
from PySide6.QtWidgets import QLabel, QWidget

NBSP = "\u00a0"
_TAG = re.compile(r"(<[^>]*>)")
#: a parenthesis or a vector with up to this many characters stays on one line ("(q·k = 4)", "[1, 2]"; a longer one,
#: glued whole, would leave a line short or take one more)
FRAGMENT_CHARS = 16
#: the last word of a paragraph goes to its line with the one before when it is this short
WIDOW_CHARS = 12
_PAREN = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")  # (a parenthesis, or a vector's brackets)
_PARAGRAPH_END = re.compile(r"(<br\s*/?>|</p>|</li>|$)", re.IGNORECASE)


def _in_text(html: str, change) -> str:
    """``change`` applied to the text between ``html``'s tags (the tags as they are)."""
    return "".join(part if part.startswith("<") else change(part) for part in _TAG.split(html))


def _visible(html: str) -> str:
    return "".join(part for part in _TAG.split(html) if not part.startswith("<"))


def _join_fragment(match: re.Match) -> str:
    inner = match.group(0)
    if len(_visible(inner)) > FRAGMENT_CHARS:
        return inner
    return _in_text(inner, lambda t: t.replace(" ", NBSP))


def _no_widow(paragraph: str) -> str:
    """The last space of ``paragraph``'s text a no-break space when the word after it is short and the
    paragraph has more than three words."""
    words = [w for w in _visible(paragraph).split(" ") if w.strip()]  # (a no-break space joins)
    if len(words) <= 3 or len(words[-1]) > WIDOW_CHARS:
        return paragraph
    parts = _TAG.split(paragraph)
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        if part.startswith("<"):
            continue
        j = part.rstrip().rfind(" ")
        if j >= 0:
            parts[i] = part[:j] + NBSP + part[j + 1:]
            return "".join(parts)
    return paragraph


def keep_together(html: str) -> str:
    """The rule by which a caption's text breaks into lines: no break inside a short parenthesis ("(q·k ="
    / "4)." read as two halves of nothing), and no short word alone on a paragraph's last line (it takes
    the word before it along: the paragraph keeps its number of lines).  Tags are left as they are; only
    spaces become no-break spaces."""
    html = _PAREN.sub(_join_fragment, html)
    pieces = _PARAGRAPH_END.split(html)
    return "".join(_no_widow(p) if i % 2 == 0 else p for i, p in enumerate(pieces))


class RichLabel(QLabel):
    """A rich-text, word-wrapped QLabel whose layout work follows its text, not its repaints."""

    KEEP = 12  # laid-out texts kept: a stage step goes back to a title or formula seen before

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self._text = ""
        # text -> its document, laid out at the width it was last painted (oldest first)
        self._kept: OrderedDict[str, QTextDocument] = OrderedDict()
        self._doc = self._new_document()
        self._scratch: QTextDocument | None = None  # a copy for measuring at other widths
        self._heights: dict[int, int] = {}  # width -> height, for the current text and font
        self._hint: QSize | None = None
        # the sizes measured of the texts kept (text -> heights, hint), until the font changes: a stage
        # step back to a formula or title seen before measures nothing again
        self._kept_sizes: dict[str, tuple[tuple[int, int], dict[int, int], QSize | None]] = {}
        # the painted text: (text, size, colour, device pixel ratio) -> a pixmap of it, for the
        # texts kept (a formula with sub- and superscripts takes ~0.5 ms to draw, its pixmap ~0.05)
        self._pixmaps: OrderedDict[tuple, QPixmap] = OrderedDict()
        if text:
            self.setText(text)

    def _new_document(self) -> QTextDocument:
        doc = QTextDocument(self)
        doc.setDocumentMargin(0)
        doc.setUndoRedoEnabled(False)
        doc.setDefaultFont(self.font())
        return doc

    # ---- QLabel's text API -------------------------------------------------------------------------
    def text(self) -> str:  # noqa: D102 - QLabel's
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Show ``text`` (HTML); the same text again does nothing, a text shown lately is not laid out
        again (laying out a line with sub- and superscripts in a projector font takes milliseconds)."""
        text = str(text)
        if text == self._text:
            return
        self._kept[self._text] = self._doc
        self._kept_sizes[self._text] = (self._margins(), self._heights, self._hint)
        doc = self._kept.pop(text, None)
        if doc is None:
            if len(self._kept) >= self.KEEP:
                oldest = next(iter(self._kept))
                doc = self._kept.pop(oldest)
                self._kept_sizes.pop(oldest, None)
            else:
                doc = self._new_document()
            doc.setTextWidth(-1)
            doc.setHtml(keep_together(text))
        self._text = text
        self._doc = doc
        self._scratch = None
        margins, self._heights, self._hint = self._kept_sizes.pop(text, (None, {}, None))
        if margins != self._margins():  # (measured with other margins, or never)
            self._heights, self._hint = {}, None
        self.updateGeometry()
        self.update()

    def shown_lines(self) -> list[str]:
        """The text of each line as the label shows it at its width (no-break spaces as spaces)."""
        self._doc.setTextWidth(max(1, self.contentsRect().width()))
        lines = []
        block = self._doc.begin()
        while block.isValid():
            layout, text = block.layout(), block.text()
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                lines.append(text[line.textStart():line.textStart() + line.textLength()]
                             .replace(NBSP, " ").replace("\u2028", "").strip())
            block = block.next()
        return lines

    def clear(self) -> None:
        self.setText("")

    def _forget_sizes(self) -> None:
        self._heights.clear()
        self._hint = None
        self._scratch = None

    # ---- sizes ---------------------------------------------------------------------------------------
    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        # (QLabel re-derives this from its size policy in setText, which callers may have replaced)
        return True

    def _margins(self) -> tuple[int, int]:
        return self._margins_h(), self._margins_v()

    def _margins_h(self) -> int:
        m = self.contentsMargins()
        return m.left() + m.right() + 2 * self.margin()

    def _margins_v(self) -> int:
        m = self.contentsMargins()
        return m.top() + m.bottom() + 2 * self.margin()

    def _document_height(self, text_width: float) -> int:
        """The height of the text wrapped at ``text_width``: the painting document measures its own
        width, a scratch copy every other (so the next paint needs no new layout)."""
        if abs(self._doc.textWidth() - text_width) < 0.5 or self._doc.textWidth() < 0:
            doc = self._doc
        else:
            if self._scratch is None:
                self._scratch = self._doc.clone(self)
                self._scratch.setDocumentMargin(0)
            doc = self._scratch
        if doc.textWidth() != text_width:  # (setting the same width lays the text out again all the same)
            doc.setTextWidth(text_width)
        return math.ceil(doc.size().height())

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        h = self._heights.get(width)
        if h is None:
            if len(self._heights) > 32:
                self._heights.clear()
            h = self._document_height(max(1, width - self._margins_h())) + self._margins_v()
            self._heights[width] = h
        return h

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        if self._hint is None:
            # Like QLabel: a wrapped paragraph prefers a comfortable line length (at most 80 average
            # characters, narrower while that stays under four lines), not one long line.
            fm = QFontMetrics(self.font())
            width = min(self._ideal_width(), 80 * fm.averageCharWidth())
            for fraction in (2, 4):
                narrower = width // 2
                if narrower > 0 and self._document_height(narrower) < (2 * fraction) * fm.lineSpacing():
                    width = narrower
            width += self._margins_h()
            self._hint = QSize(width, self.heightForWidth(width))
        return self._hint

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        fm = QFontMetrics(self.font())
        return QSize(min(self.sizeHint().width(), 8 * fm.averageCharWidth()), fm.lineSpacing() + self._margins_v())

    def _ideal_width(self) -> int:
        if self._scratch is None:
            self._scratch = self._doc.clone(self)
            self._scratch.setDocumentMargin(0)
        self._scratch.setTextWidth(-1)
        return math.ceil(self._scratch.idealWidth())

    # ---- painting ------------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        rect = self.contentsRect().adjusted(self.margin(), self.margin(), -self.margin(), -self.margin())
        if rect.width() <= 0 or rect.height() <= 0:
            return
        if self._doc.textWidth() != rect.width():
            self._doc.setTextWidth(rect.width())
        colour = self.palette().color(self.foregroundRole())
        ratio = self.devicePixelRatioF()
        key = (self._text, rect.width(), rect.height(), colour.rgba(), ratio)
        pixmap = self._pixmaps.pop(key, None)
        if pixmap is None:
            pixmap = QPixmap(round(rect.width() * ratio), round(rect.height() * ratio))
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            palette = QPalette(self.palette())
            palette.setColor(QPalette.ColorRole.Text, colour)
            ctx.palette = palette
            self._doc.documentLayout().draw(painter, ctx)
            painter.end()
            if len(self._pixmaps) >= self.KEEP + 1:
                self._pixmaps.popitem(last=False)
        self._pixmaps[key] = pixmap  # (the newest last)
        painter = QPainter(self)
        painter.drawPixmap(rect.topLeft(), pixmap)
        painter.end()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            for doc in self._kept.values():
                doc.deleteLater()
            self._kept.clear()
            self._kept_sizes.clear()
            self._pixmaps.clear()
            self._doc.setDefaultFont(self.font())
            self._doc.setTextWidth(-1)  # (forces the next paint to lay out again)
            self._forget_sizes()
            self.updateGeometry()
            self.update()
