"""Full-window overlays for lectures: a black screen (B or .) and the shortcut list (F1 or ?)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.widgets.appearance_binding import FollowsAppearance

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("→  PageDown  Space", "next stage (then the next scene of a deck)"),
    ("←  PageUp", "previous stage"),
    ("Home / End", "first / last stage"),
    ("↑ / ↓", "previous / next query token"),
    ("1 – 9", "pick the query token"),
    ("click a heatmap row", "select that query · Ctrl+click blocks a key"),
    ("drag an arrow head", "edit that vector (one undo step)"),
    ("Alt+↑ / Alt+↓", "nudge a cell by ±0.1 (Shift: ±1) · Ctrl+wheel too"),
    ("Ctrl+Z / Ctrl+Shift+Z", "undo / redo"),
    ("Ctrl+M", "causal mask on / off"),
    ("F5 / Esc", "presentation mode on / off"),
    ("P", "vector plane on / off (presentation)"),
    ("B  or  .", "black screen and back"),
    ("Ctrl++ / Ctrl+− / Ctrl+0", "zoom in / out / actual size"),
    ("Ctrl+E / Ctrl+Shift+E", "export the heatmap (PNG, SVG, PDF) / the numbers (CSV, JSON)"),
    ("Ctrl+Shift+C", "copy the heatmap as an image"),
    ("F1  or  ?", "this list (any key closes it)"),
)


class _Cover(QWidget):
    """A child widget that always covers its parent (follows its resizes)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        parent.installEventFilter(self)
        self.setGeometry(parent.rect())
        self.hide()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if obj is self.parent() and event.type() == QEvent.Resize:
            self.setGeometry(self.parent().rect())
        return False

    def toggle(self) -> bool:
        """Show or hide; returns True when now shown."""
        if self.isVisible():
            self.hide()
        else:
            self.setGeometry(self.parent().rect())
            self.show()
            self.raise_()
        return self.isVisible()


class BlankOverlay(_Cover):
    """Black screen: what a presenter clicker's "blank" button (B or .) expects."""

    def paintEvent(self, event) -> None:  # noqa: N802
        QPainter(self).fillRect(self.rect(), QColor("black"))


class ShortcutsOverlay(FollowsAppearance, _Cover):
    """Every shortcut in large type over a dimmed window; any key or click closes it.  Its type grows
    with the scale of the Appearance it is bound to (``appearance=`` or ``bind_appearance``)."""

    def __init__(self, parent: QWidget, *, appearance: Appearance | None = None) -> None:
        super().__init__(parent)
        rows = "".join(f"<tr><td align=right><b>{k}</b></td><td>&nbsp;&nbsp;{v}</td></tr>" for k, v in SHORTCUTS)
        self.label = QLabel(f"<h2>Keyboard shortcuts</h2><table cellspacing=4>{rows}</table>"
                            "<p style='color:#bbbbbb'>Any key or click closes this list.</p>")
        self.label.setTextFormat(Qt.RichText)
        self.label.setStyleSheet("color: white; background: transparent;")
        self.label.setAlignment(Qt.AlignCenter)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label, 0, Qt.AlignCenter)
        self.setFocusPolicy(Qt.StrongFocus)
        self._restyle_scale(1.0)
        self.bind_appearance(appearance)

    def _restyle_scale(self, f: float) -> None:
        font = QFont()
        font.setPointSizeF(12 * f)
        self.label.setFont(font)

    def paintEvent(self, event) -> None:  # noqa: N802
        QPainter(self).fillRect(self.rect(), QColor(0, 0, 0, 215))

    def keyPressEvent(self, event) -> None:  # noqa: N802
        self.hide()

    def mousePressEvent(self, event) -> None:  # noqa: N802
        self.hide()
