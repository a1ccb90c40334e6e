"""Check boxes and radio buttons whose box shows on every theme.

Qt's Fusion style draws a check box's box in a shade darker than the window's colour, on the base
colour: on a dark theme's palette that is dark on dark, and the box is not there at all ("show values v"
in the Dark theme).  :func:`indicator_sheet` is the one rule: on a theme other than the light one (and
at a text scale other than 1) the box is drawn in the theme's text colour, filled with its accent when
ticked, and as large as the text.  A panel sets it on its own check boxes (never on the window: a sheet
there makes every widget paint through Qt's style-sheet style).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QAbstractButton

from qkv_studio.render.theme import Theme


def indicator_sheet(theme: Theme, scale: float = 1.0) -> str:
    """A style sheet for check boxes and radio buttons in ``theme`` at text ``scale`` (empty: Qt's own
    look, the light theme's at scale 1)."""
    t = theme
    if t.name == "light" and scale == 1.0:
        return ""
    size = max(12, round(14 * scale))
    border = max(1, round(1.5 * scale * t.line_scale))
    return (f"QCheckBox, QRadioButton {{ color: {t.text}; spacing: {round(6 * scale)}px; }}"
            f"QCheckBox::indicator, QRadioButton::indicator {{ width: {size}px; height: {size}px; "
            f"border: {border}px solid {t.text}; background: {t.background}; }}"
            f"QCheckBox::indicator {{ border-radius: 2px; }}"
            f"QRadioButton::indicator {{ border-radius: {size // 2 + border}px; }}"
            f"QCheckBox::indicator:checked, QRadioButton::indicator:checked {{ background: {t.accent}; }}"
            f"QCheckBox::indicator:disabled, QRadioButton::indicator:disabled {{ border-color: {t.muted}; }}")


def style_indicators(buttons: Iterable[QAbstractButton], theme: Theme, scale: float = 1.0) -> None:
    """:func:`indicator_sheet` on each of ``buttons`` (a sheet set again only when it changed: setting
    even the same one restyles the widget)."""
    sheet = indicator_sheet(theme, scale)
    for button in buttons:
        if button.styleSheet() != sheet:
            button.setStyleSheet(sheet)
