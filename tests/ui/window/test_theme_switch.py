"""A theme switch repaints every text and line in the new theme's colours.

The window is opened with every panel shown (the View menu's panels floating beside it, the quiz
open), the theme is switched, and every visible widget is walked: no colour of the old theme may remain
in its palette, in the rich text of its labels, or in the pens, brushes and text of the pyqtgraph axes,
titles and text items it shows — and the axes' titles must be drawn in their new colour.
"""

from __future__ import annotations

import re
from dataclasses import fields

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from qkv_studio.core import load_preset
from qkv_studio.render.theme import THEMES, Theme
from qkv_studio.ui.window.style import theme_palette
from tests.views import LESSON_VIEW, view_of

ROLES = (QPalette.ColorRole.Window, QPalette.ColorRole.WindowText, QPalette.ColorRole.Base,
         QPalette.ColorRole.AlternateBase, QPalette.ColorRole.Text, QPalette.ColorRole.Button,
         QPalette.ColorRole.ButtonText, QPalette.ColorRole.PlaceholderText, QPalette.ColorRole.ToolTipBase,
         QPalette.ColorRole.ToolTipText)
CELL_TEXT = {"#000000", "#111111", "#ffffff"}
_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def _theme_colours(theme: Theme) -> set[str]:
    return {getattr(theme, f.name).lower() for f in fields(theme)
            if isinstance(getattr(theme, f.name), str) and getattr(theme, f.name).startswith("#")}


def _name(c) -> str:
    return QColor(c).name().lower()


def _owner(w: QWidget) -> str:
    chain = []
    while w is not None:
        chain.append(type(w).__name__)
        w = w.parentWidget()
    return "/".join(chain[:5])


def _open_everything(show_window, qtbot):
    window = show_window(load_preset("multihead"), (1600, 950), view=view_of("multihead"))
    for dock in (window.docks.explorer, window.docks.heads, window.docks.model):
        window.show_panel(dock)
        dock.setFloating(True)  # (tabbed, only one of them would be visible)
    window.show_quiz()
    qtbot.wait(30)
    return window


def _stale_colours(old: Theme, new: Theme) -> tuple[set[str], dict]:
    """The old theme's colours the new one does not have, and the window palette's roles that differ."""
    old_pal, new_pal = theme_palette(old), theme_palette(new)
    # (a colour the new theme has too, in its fields or its palette, is not stale: black is the
    # projector's background and the light palette's text)
    stale = _theme_colours(old) - _theme_colours(new) - {_name(new_pal.color(role)) for role in ROLES}
    roles = {role: _name(old_pal.color(role)) for role in ROLES if old_pal.color(role) != new_pal.color(role)}
    return stale, roles


def _walk(window, old: Theme, new: Theme) -> list[str]:
    stale, stale_roles = _stale_colours(old, new)
    problems: list[str] = []

    def check(where: str, colour) -> None:
        # (a transparent colour draws nothing: "background: transparent" reads as #000000)
        if colour is not None and QColor(colour).alpha() > 0 and _name(colour) in stale:
            problems.append(f"{where}: {_name(colour)}")

    def check_html(where: str, html: str) -> None:
        for found in _HEX.findall(html):
            check(where, found)

    windows = {window, window._quiz} | {d for d in (window.docks.explorer, window.docks.heads, window.docks.model)}
    # Only this window's own widgets: QApplication.allWidgets() also hands back widgets of earlier tests
    # that are being deleted, and touching one of those aborted a run once.
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    ours: dict[int, QWidget] = {}
    for top in (x for x in windows if x is not None):
        for w in [top, *top.findChildren(QWidget)]:
            ours.setdefault(id(w), w)
    for w in ours.values():
        if not w.isVisible() or w.window() not in windows:
            continue
        where = _owner(w)
        palette = w.palette()
        for role in ROLES:
            check(f"{where} palette {role.name}", palette.color(role))
            if palette.color(role).alpha() > 0 and stale_roles.get(role) == _name(palette.color(role)):
                problems.append(f"{where} palette {role.name} is the old window's {stale_roles[role]}")
        if isinstance(w, QLabel):
            check_html(f"{where} text", w.text())
        if isinstance(w, pg.GraphicsView):
            check(f"{where} background", w.backgroundBrush().color())
            problems += _walk_scene(w, check, check_html, where)
    return problems


def _walk_scene(view: pg.GraphicsView, check, check_html, where: str) -> list[str]:
    problems: list[str] = []
    image = None
    for item in view.scene().items():
        if not item.isVisible():
            continue
        kind = f"{where} {type(item).__name__}"
        if isinstance(item, pg.AxisItem):
            check(f"{kind} {item.orientation} pen", item.pen().color())
            check(f"{kind} {item.orientation} text pen", item.textPen().color())
            if item.label.isVisible() and item.labelText:
                check_html(f"{kind} {item.orientation} title {item.labelText!r}", item.labelString())
                # The title as drawn: some of its pixels are in its colour (a stale cached picture of
                # the last theme's title had none).
                if image is None:
                    image = view.grab().toImage()
                want = QColor(_HEX.search(item.labelString()).group(0))
                rect = view.mapFromScene(item.label.sceneBoundingRect()).boundingRect()
                if not _has_colour(image, rect, want):
                    problems.append(f"{kind} {item.orientation} title {item.labelText!r} not drawn in {want.name()}")
        elif isinstance(item, pg.TextItem):
            if _on_a_cell(item) and _name(item.color) in CELL_TEXT:
                continue  # (a number on a heatmap cell is dark or light for the cell's colour)
            check(f"{kind} colour", item.color)
            check_html(f"{kind} text", item.textItem.toHtml())
        elif isinstance(item, pg.LabelItem):
            check(f"{kind} colour", item.opts.get("color"))
            check_html(f"{kind} text", item.item.toHtml())
        elif isinstance(item, (pg.PlotCurveItem, pg.InfiniteLine)):
            pen = item.opts.get("pen") if isinstance(item, pg.PlotCurveItem) else item.pen
            if pen is not None:
                check(f"{kind} pen", pg.mkPen(pen).color())
    return problems


def _on_a_cell(item: pg.TextItem) -> bool:
    """True when ``item`` stands on a shown image (a heatmap's cell)."""
    centre = item.sceneBoundingRect().center()
    return any(isinstance(other, pg.ImageItem) and other.isVisible() and other.sceneBoundingRect().contains(centre)
               for other in item.scene().items(centre))


def _has_colour(image, rect, want: QColor, tolerance: int = 60) -> bool:
    rect = rect.intersected(image.rect())
    for y in range(rect.top(), rect.bottom() + 1):
        for x in range(rect.left(), rect.right() + 1):
            c = image.pixelColor(x, y)
            if abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) <= tolerance:
                return True
    return False


# (offscreen windows cannot be raised: the quiz and the floating panels say so)
@pytest.mark.qt_log_ignore("does not support raise")
def test_a_theme_switch_leaves_no_colour_of_the_old_theme(qtbot, show_window):
    window = _open_everything(show_window, qtbot)
    old = "light"
    problems: list[str] = []
    for new in ("dark", "light", "dark", "projector", "light"):  # Dark → Light and back, and the projector's
        window.apply_theme(new)
        qtbot.wait(30)
        problems += [f"{old} → {new}: {p}" for p in sorted(set(_walk(window, THEMES[old], THEMES[new])))]
        old = new
    assert problems == [], "\n".join(problems)


@pytest.mark.qt_log_ignore("does not support raise")
def test_panels_built_later_are_drawn_in_the_current_theme(qtbot, show_window):
    window = show_window(load_preset("multihead"), (1600, 950), view=view_of("multihead"))
    window.apply_theme("dark")
    window.apply_colormap("magma")
    window.set_zoom(1.5)
    window.show_panel(window.docks.heads)
    window.show_quiz()
    heads, quiz = window.panels.heads, window._quiz
    assert heads.appearance is window.appearance and quiz.appearance is window.appearance
    assert heads._theme is THEMES["dark"] and heads._cmap == "magma"
    assert heads._font_scale == pytest.approx(1.5)
    assert quiz._theme is THEMES["dark"] and quiz.font().pointSizeF() == pytest.approx(15.0)


def test_editors_built_later_follow_the_theme_and_scale(qtbot, show_window, lesson_scene):
    from qkv_studio.ui.widgets.table_style import GridColorStyle, row_height

    window = show_window(lesson_scene, (1600, 950), view=LESSON_VIEW)
    window.apply_theme("projector")
    window.set_zoom(1.5)
    window.acts.projection.trigger()  # projection mode: its four editors are built now
    x = window.editors["X"]
    assert x.appearance is window.appearance
    assert isinstance(x.table.style(), GridColorStyle)
    assert x.table.verticalHeader().defaultSectionSize() == row_height(1.5)
    window.apply_theme("light")
    window.set_zoom(1.0)
    for table in [window.panels.calc] + [e.table for e in window.editors.built()]:
        assert not isinstance(table.style(), GridColorStyle)  # the style's own grid again
        assert table.verticalHeader().defaultSectionSize() == row_height(1.0)


def test_presentation_at_the_largest_zoom_stays_within_the_scale(qtbot, show_window, lesson_scene):
    from qkv_studio.state.appearance import MAX_SCALE

    # (a slide of the 1080-px reference: screen scale 1)
    window = show_window(lesson_scene, (1920, 1080), view=LESSON_VIEW)
    window.set_zoom(4.0)
    window.set_presentation(True, fullscreen=False)  # (×2.2 would be 8.8)
    slide = window.presentation.slide
    assert slide.look.font_scale == MAX_SCALE
    assert slide.views.get("heatmap")._font_scale == MAX_SCALE
    assert window.appearance.font_scale == 4.0 and window.heatmap._font_scale == 4.0  # (the window's own)
    window.set_presentation(False)
    assert window.appearance.font_scale == 4.0 and window.heatmap._font_scale == 4.0


@pytest.mark.parametrize("where", ["plane", "export"])
@pytest.mark.parametrize("theme", ["dark", "projector"])
def test_check_boxes_show_their_box_on_every_theme(qtbot, show_window, lesson_scene, theme, where):
    """In the Dark theme the plane's "show values v" had no visible box (Qt's Fusion draws it a shade
    darker than the window, on the base colour: dark on dark); so had the Export dialog's."""
    window = show_window(lesson_scene, (1600, 950))
    window.apply_theme(theme)
    qtbot.wait(30)
    if where == "plane":
        box = window.panels.plane.values_box
    else:
        from qkv_studio.ui.dialogs.export_dialog import ExportDialog

        dialog = ExportDialog(window, use_settings=False)
        qtbot.addWidget(dialog)
        dialog.show()
        box = dialog.all_stages_check
    image = box.grab().toImage()
    # the box: the first column of the check box whose pixels stand out from the panel's colour
    ground = QColor(THEMES[theme].panel)
    contrast = max(abs(image.pixelColor(x, y).lightnessF() - ground.lightnessF())
                   for x in range(min(image.width(), box.fontMetrics().height() + 4))
                   for y in range(image.height()))
    assert contrast >= 0.4, (theme, contrast)
