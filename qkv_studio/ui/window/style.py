"""The window's own look, bound to the :class:`~qkv_studio.state.appearance.Appearance`.

The theme becomes the application's palette (menus, dialogs and message boxes are windows of their
own and follow it) and the stage buttons' sheets; the scale becomes the window's fonts.  Each panel
restyles its own drawing — the plots, the tables' grids and rows — as it binds to the same
Appearance; this module does only what belongs to the window as a whole.

The palette is set before the panels are built, and :class:`WindowStyle` connects to the Appearance
before any panel does, so on a theme switch the palette is in place before the panels restyle: a
widget that restyles with a style sheet takes the palette of the moment for the roles its sheet does
not name, and kept the old theme's colours when it went first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QPushButton

from qkv_studio.render.theme import Theme
from qkv_studio.state.appearance import Appearance
from qkv_studio.ui.panels.stage_stepper import stage_button_sheet  # (re-exported: it lives with the bar)
from qkv_studio.ui.widgets.table_style import BASE_POINT_SIZE

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow


def theme_palette(theme: Theme) -> QPalette:
    """The application's palette in ``theme``: the style's own for light, the theme's colours otherwise."""
    palette = QApplication.style().standardPalette()
    if theme.name == "light":
        return palette
    t = theme
    roles = {
        QPalette.ColorRole.Window: t.panel, QPalette.ColorRole.WindowText: t.text,
        QPalette.ColorRole.Base: t.background, QPalette.ColorRole.AlternateBase: t.panel,
        QPalette.ColorRole.Text: t.text, QPalette.ColorRole.Button: t.panel,
        QPalette.ColorRole.ButtonText: t.text, QPalette.ColorRole.BrightText: t.text,
        QPalette.ColorRole.Highlight: t.accent, QPalette.ColorRole.HighlightedText: t.background,
        QPalette.ColorRole.ToolTipBase: t.panel, QPalette.ColorRole.ToolTipText: t.text,
        QPalette.ColorRole.PlaceholderText: t.muted, QPalette.ColorRole.Mid: t.grid,
        QPalette.ColorRole.Midlight: t.grid, QPalette.ColorRole.Dark: t.grid,
        QPalette.ColorRole.Light: t.grid, QPalette.ColorRole.Shadow: t.background,
    }
    for role, color in roles.items():
        palette.setColor(QPalette.ColorGroup.All, role, QColor(color))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(t.muted))
    return palette


def caption_factor(screen_height: float) -> float:
    """The caption's and formulas' text in the normal window, as a multiple of the window's: 1.45 on a
    screen 720 logical px high or more, down to 1.15 on a 540-px one (a HiDPI laptop at 200 %: at 1.45
    the caption above the heatmap took half the window's height and left the heatmap a strip)."""
    t = min(1.0, max(0.0, (screen_height - 540) / (720 - 540)))
    return 1.15 + 0.30 * t


class WindowStyle(QObject):
    """The window-wide part of the look: the palette, the fonts, the stage buttons' sheets.

    No style sheet on the window: one there, even if it only sets a font size, makes every widget paint
    through Qt's style-sheet style, which matches its rules again for each table cell (an editor row
    took 2.2 ms instead of 0.9, every edit).  Fonts follow the scale through ``setFont``; what a
    palette cannot say — the checked stage button in the accent colour — is a sheet on those buttons.
    """

    def __init__(self, window: MainWindow, appearance: Appearance) -> None:
        super().__init__(window)
        self._window = window
        self._appearance = appearance
        appearance.theme_changed.connect(self._on_theme)
        appearance.scale_changed.connect(self.style_fonts)
        self.apply_palette()

    # ---- the theme --------------------------------------------------------------------------------
    def apply_palette(self) -> None:
        """The theme's palette on the application and the window (a window does not take its parent's)."""
        palette = theme_palette(self._appearance.theme)
        QApplication.setPalette(palette)
        self._window.setPalette(palette)

    def style_stage_buttons(self) -> None:
        """The theme and text size on the stage buttons (their sheets)."""
        sheet = stage_button_sheet(self._appearance.theme, self._window.font().pointSizeF())
        # (each button its own sheet: on the stepper it would cut its labels off the window's palette)
        for button in self._window.stepper.findChildren(QPushButton):
            if sheet != button.styleSheet():  # setting even the same sheet restyles the widget
                button.setStyleSheet(sheet)
        if self._window.stepper.isVisible():  # (before the first show the bar is fitted once, laid out)
            self._window.stepper.fit_bar()  # (whole labels in the room the new text size leaves)

    def _on_theme(self, theme: Theme) -> None:
        self.apply_palette()
        self.style_stage_buttons()

    # ---- the scale --------------------------------------------------------------------------------
    def style_fonts(self, *_: object) -> None:
        """Fonts for the current scale (and the stage buttons' sheets, which name a size)."""
        w = self._window
        f = self._appearance.scale
        font = QFont(QApplication.font())
        font.setPointSizeF(BASE_POINT_SIZE * f)
        w.setFont(font)
        for dock in (w.docks.editors, w.docks.plane, w.docks.calc, w.docks.blend, w.docks.model):
            dock.widget().setFont(font)
        big = QFont(font)
        screen = w.screen()
        tall = screen.availableGeometry().height() if screen is not None else 1080
        big.setPointSizeF(BASE_POINT_SIZE * f * caption_factor(tall))  # (the slide styles its own: ui.slide)
        for label in (w.stepper.caption, w.stepper.formula, w.stepper.stage_formula):
            label.setFont(big)
        self.style_stage_buttons()
