"""Full-window overlays for lectures: a black screen (B or .) and the shortcut list (F1 or ?)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance

#: Mouse gestures and editing keys of the panels, listed after the window's own keys (which the window
#: passes to :meth:`ShortcutsOverlay.set_rows`, made from its action and lecture-key tables).
GESTURES: tuple[tuple[str, str], ...] = (
    ("click a heatmap row", "select that query · Ctrl+click blocks a key"),
    ("drag an arrow head", "edit that vector (one undo step) · Shift: round numbers"),
    ("Alt+↑ / Alt+↓", "nudge a cell by ±0.1 (Shift: ±1) · Ctrl+wheel too"),
)


class _Cover(QWidget):
    """A child widget that always covers its parent (follows its resizes)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        parent.installEventFilter(self)
        self.setGeometry(parent.rect())
        self.hide()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        # (asked of Qt each time: while the window is torn down its events still come, after Python has
        # let go of this object's attributes)
        parent = self.parentWidget()
        if parent is not None and obj is parent and event.type() == QEvent.Type.Resize:
            self.setGeometry(parent.rect())
        return False

    def toggle(self) -> bool:
        """Show or hide; returns True when now shown."""
        if self.isVisible():
            self.hide()
        else:
            parent = self.parentWidget()
            if parent is not None:
                self.setGeometry(parent.rect())
            self.show()
            self.raise_()
        return self.isVisible()


class BlankOverlay(_Cover):
    """Black screen: what a presenter clicker's "blank" button (B or .) expects; a click (or any key,
    see the window's key router) brings the picture back."""

    def paintEvent(self, event) -> None:  # noqa: N802
        QPainter(self).fillRect(self.rect(), QColor("black"))

    def mousePressEvent(self, event) -> None:  # noqa: N802
        self.hide()


class ShortcutsOverlay(FollowsAppearance, _Cover):
    """Every shortcut in large type on the theme's background (opaque: nothing of the window shows
    through); any key or click closes it.  The rows are the window's (:meth:`set_rows`), then
    :data:`GESTURES`.  Its type grows with the scale of the Appearance it is bound to (``appearance=``
    or ``bind_appearance``) and it takes the theme's colours."""

    def __init__(self, parent: QWidget, *, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        self._rows: tuple[tuple[str, str], ...] = ()
        self._scale = 1.0
        self._theme: Theme = self._drawn_theme
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label, 0, Qt.AlignmentFlag.AlignCenter)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAutoFillBackground(True)
        self._style_theme(self._theme)
        self._restyle_scale(1.0)
        self.bind_appearance(appearance)

    def set_rows(self, rows) -> None:
        """The shortcuts to list, as (keys, what they do)."""
        self._rows = tuple(rows)
        self._write()
        self._fit()

    def rows(self) -> tuple[tuple[str, str], ...]:
        """Every listed row: the window's, then the gestures."""
        return self._rows + GESTURES

    def _write(self) -> None:
        import html

        muted = self._theme.muted
        rows = [f"<tr><td align=right><b>{html.escape(k)}</b></td><td>&nbsp;&nbsp;{html.escape(v)}</td></tr>"
                for k, v in self.rows()]
        half = (len(rows) + 1) // 2  # two columns: the whole list fits a 16:9 screen
        columns = "<td width=48></td>".join(f"<td valign=top><table cellspacing=4>{''.join(part)}</table></td>"
                                              for part in (rows[:half], rows[half:]))
        self.label.setText(f"<h2>Keyboard shortcuts</h2><table><tr>{columns}</tr></table>"
                           f"<p style='color:{muted}'>Any key or click closes this list.</p>")

    def _restyle_theme(self, theme: Theme) -> None:
        self._style_theme(theme)

    def _style_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._take_theme_colours(theme, fill=False)
        self.label.setStyleSheet(f"color: {theme.text}; background: transparent;")
        self._write()

    def _restyle_scale(self, f: float) -> None:
        self._scale = f
        self._fit()

    def _fit(self) -> None:
        """The list in its type size (12 pt × the scale), smaller if need be so that all of it fits."""
        size = 12 * self._scale
        font = QFont()
        while True:
            font.setPointSizeF(size)
            self.label.setFont(font)
            hint = self.label.sizeHint()
            if not self.isVisible() or size <= 7 or (hint.width() <= 0.96 * self.width()
                                                     and hint.height() <= 0.96 * self.height()):
                return
            size *= 0.9

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.isVisible():
            self._fit()

    def paintEvent(self, event) -> None:  # noqa: N802
        QPainter(self).fillRect(self.rect(), QColor(self._theme.background))

    def keyPressEvent(self, event) -> None:  # noqa: N802
        self.hide()

    def mousePressEvent(self, event) -> None:  # noqa: N802
        self.hide()
