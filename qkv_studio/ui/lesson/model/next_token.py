"""The next-token bars of the Real model panel: a causal model's most likely next tokens, as bars.

:class:`NextTokenBars` draws the top-k tokens of a distribution (their readable pieces, "␣mat") as
horizontal bars on a 0–100 % scale with the probability written beside each, the token that greedy
decoding takes first and highlighted.  It holds no maths: the panel gives it ``(piece, probability)``
pairs from :class:`~qkv_studio.ui.lesson.model.run_state.ModelRunState`.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance


class NextTokenBars(FollowsAppearance, QWidget):
    """Top-k next tokens as bars (most likely first); empty until :meth:`set_choices` is given some."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme: Theme = get_theme(DEFAULT_THEME)
        self._choices: list[tuple[str, float]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_choices(self, choices: list[tuple[str, float]]) -> None:
        """The (piece, probability) pairs to draw, most likely first ([] clears)."""
        self._choices = [(str(piece), float(p)) for piece, p in choices]
        self.updateGeometry()
        self.update()

    def choices(self) -> list[tuple[str, float]]:
        return list(self._choices)

    def _restyle_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.update()

    def _row_h(self) -> float:
        return QFontMetricsF(self.font()).height() + 4

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(300, int(self._row_h() * max(1, len(self._choices))) + 4)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(160, int(self._row_h() * max(1, len(self._choices))) + 4)

    def bar_rect(self, i: int) -> QRectF:
        """Where the bar of choice i is drawn (its full 100 % width; the filled part is p of it)."""
        fm = QFontMetricsF(self.font())
        label_w = min(self.width() * 0.4, max((fm.horizontalAdvance(p) for p, _ in self._choices), default=0) + 8)
        value_w = fm.horizontalAdvance("100.0 %") + 8
        h = self._row_h()
        return QRectF(label_w, 2 + i * h + 2, max(10.0, self.width() - label_w - value_w), h - 4)

    def paintEvent(self, event) -> None:  # noqa: N802
        t = self._theme
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(t.background))
        fm = QFontMetricsF(self.font())
        for i, (piece, prob) in enumerate(self._choices):
            bar = self.bar_rect(i)
            p.setPen(QColor(t.highlight if i == 0 else t.text))
            text = fm.elidedText(piece, Qt.TextElideMode.ElideRight, bar.left() - 8)
            p.drawText(QRectF(0, bar.top() - 2, bar.left() - 6, bar.height() + 4),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
            p.fillRect(bar, QColor(t.panel))
            p.fillRect(QRectF(bar.left(), bar.top(), bar.width() * min(max(prob, 0.0), 1.0), bar.height()),
                       QColor(t.highlight if i == 0 else t.accent))
            p.setPen(QColor(t.text))
            p.drawText(QRectF(bar.right() + 6, bar.top() - 2, self.width() - bar.right() - 6, bar.height() + 4),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, f"{100 * prob:.1f} %")
        p.end()
