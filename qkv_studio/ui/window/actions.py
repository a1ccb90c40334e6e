"""The window's actions and menus, declared as one table (:data:`MENU`).

Each row is an action (id, text, shortcuts, checkable, tip, slot, menu), a separator, a submenu, or a
group filled from elsewhere (the stages, the docks and panels of the registry, the themes and colour
maps: see :mod:`qkv_studio.ui.window.menus`).  :func:`build` makes ``window.acts.<id>`` for every
action row (window-wide, so its shortcut works with the menu bar hidden) and the menu bar, menus in
the order they first appear, entries in row order.  A new menu entry or shortcut is one row.

A slot is either a path from the window (``"files.open_dialog"``: the bound method, connected as is)
or a callable ``slot(window, checked)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from qkv_studio.core.scene import SceneError, projection_of, with_random_projections
from qkv_studio.ui.window import edit_clipboard, menus
from qkv_studio.ui.window.action_factory import Key, Slot, make_action

if TYPE_CHECKING:
    from qkv_studio.ui.window.main_window import MainWindow



@dataclass(frozen=True)
class Action:
    """One action: ``window.acts.<id>``; ``menu`` None keeps it out of the menus (a shortcut only).
    ``create`` makes the QAction itself (undo and redo come from the undo stack)."""

    id: str
    text: str
    slot: Slot | None
    menu: str | None
    keys: tuple[Key, ...] = ()
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    tip: str = ""
    create: Callable[[MainWindow], QAction] | None = None


@dataclass(frozen=True)
class Separator:
    menu: str


@dataclass(frozen=True)
class Submenu:
    """A submenu, kept as ``window.submenus[name]`` (its entries are filled in by its owner)."""

    menu: str
    name: str
    text: str


@dataclass(frozen=True)
class Group:
    """Entries made by ``fill(window, menu)`` (lists known only when the window is built)."""

    menu: str
    fill: Callable[[MainWindow, QMenu], None]


Row = Action | Separator | Submenu | Group


def _export(name: str) -> Callable[[MainWindow, bool], object]:
    def run(window: MainWindow, _checked: bool = False) -> object:
        # The export dialog's module is imported when first used (it is not needed to start).
        from qkv_studio.ui.dialogs import export_dialog

        return getattr(export_dialog, name)(window)

    return run


def _export_heatmap(window: MainWindow, _checked: bool = False) -> object:
    """Export heatmap…, able to export the presentation slide (composed offscreen: .slide_picture)."""
    from qkv_studio.ui.dialogs import export_dialog
    from qkv_studio.ui.window.slide_picture import SlideComposer

    return export_dialog.export_heatmap(window, slide_composer=SlideComposer)


def _clipboard(name: str) -> Callable[[MainWindow, bool], object]:
    def run(window: MainWindow, _checked: bool = False) -> object:
        return getattr(edit_clipboard.attach(window), name)()

    return run


def _projection_mode(window: MainWindow, on: bool) -> None:
    """Switch direct ⇄ projection; the numbers are kept both ways (one undo step)."""
    s = window.session
    try:
        scene = projection_of(s.scene) if on else s.scene.to_direct()
    except SceneError as exc:
        s.message.emit(str(exc))
        sync_toggles(window)
        return
    s.replace_scene(scene, "Projection mode" if on else "Direct Q, K, V")


def _randomise(window: MainWindow, _checked: bool = False) -> None:
    window.projection_seed += 1
    try:
        scene = with_random_projections(window.session.scene, window.projection_seed)
    except SceneError as exc:
        window.session.message.emit(str(exc))
        return
    window.session.replace_scene(scene, f"Randomise W (seed {window.projection_seed})")


def _show_all_stages(window: MainWindow, on: bool) -> None:
    """View → Show all stages at once: the views reveal every stage's results, remembered."""
    window.panels.calc.calc_model.set_show_all_stages(on)
    window.panels.blend.set_show_all_stages(on)
    window.panels.plane.set_show_all_stages(on)
    window.acts.show_all_stages.setChecked(bool(on))
    window.settings_store.store("show_all_stages", bool(on))


def _rope_action(window: MainWindow) -> QAction:
    """View → RoPE pair on the vector plane: kept in step with the plane's view by the plane (its
    factory binds it), disabled until then (the plane may be built after the first paint)."""
    act = QAction("RoPE pair on the vector plane", window)
    act.setCheckable(True)
    act.setEnabled(False)
    if window.panels.built("plane") is not None:
        window.panels.plane.rope.bind_action(act)
    return act


def _about(window: MainWindow, _checked: bool = False) -> None:
    from qkv_studio import __version__

    QMessageBox.about(window, "QKV Studio", f"<b>QKV Studio {__version__}</b><p>Self-attention you can see, "
                                            "touch and show: queries, keys, values, scaled dot-product, softmax "
                                            "and the weighted blend.</p>")


K = QKeySequence.StandardKey
F, E, A, V, H = "&File", "&Edit", "&Attention", "&View", "&Help"

MENU: tuple[Row, ...] = (
    Action("new", "&New", "new_scene", F, (K.New,), tip="Start again from the lesson's example"),
    Action("open", "&Open…", "files.open_dialog", F, (K.Open,)),
    Submenu(F, "preset_menu", "Open &preset"),
    Action("open_deck", "Open &deck…", "lecture.open_deck_dialog", F, tip="An ordered list of scenes for a lecture"),
    Submenu(F, "recent_menu", "Open &recent"),
    Separator(F),
    Action("save", "&Save", "save", F, (K.Save,)),
    Action("save_as", "Save &As…", "save_as", F, (K.SaveAs,)),
    Separator(F),
    Action("export", "&Export heatmap…", _export_heatmap, F, ("Ctrl+E",),
           tip="The heatmap as PNG, SVG or PDF for slides and papers"),
    Action("copy_heatmap", "&Copy heatmap", _export("copy_heatmap"), F, ("Ctrl+Shift+C",),
           tip="The current stage's figure as an image on the clipboard"),
    Action("export_numbers", "Export &numbers…", _export("export_numbers"), F, ("Ctrl+Shift+E",),
           tip="This stage as CSV, or every stage as JSON"),
    Separator(F),
    Action("quit", "&Quit", "close", F, (K.Quit,)),

    # (spelled out: a platform's standard Redo may be Ctrl+Shift+Z itself, which bound it twice — "Ambiguous
    # shortcut overload" — and left Ctrl+Y unbound)
    Action("undo", "&Undo", None, E, ("Ctrl+Z",),
           create=lambda w: w.session.undo_stack.createUndoAction(w, "&Undo")),
    Action("redo", "&Redo", None, E, ("Ctrl+Shift+Z", "Ctrl+Y"),
           create=lambda w: w.session.undo_stack.createRedoAction(w, "&Redo")),
    Separator(E),
    # (the matrix editor worked in last: see edit_clipboard; enabled where they apply)
    Action("cut", "Cu&t", _clipboard("cut"), E, (K.Cut,), enabled=False,
           tip="The selected cells onto the clipboard, and set to 0"),
    Action("copy", "&Copy", _clipboard("copy"), E, (K.Copy,), enabled=False,
           tip="The selected cells onto the clipboard (tab-separated, as a spreadsheet's)"),
    Action("paste", "&Paste", _clipboard("paste"), E, (K.Paste,), enabled=False,
           tip="A block of numbers from the clipboard, at the current cell"),
    Separator(E),
    Action("add_token", "Add token", "tokens_panel.add_token", E, ("Ctrl+T",)),
    Action("remove_token", "Remove selected token", lambda w, _: w.session.remove_token(w.session.query), E),
    Action("add_dk", "Add dimension to dₖ", lambda w, _: w.session.add_dim("qk"), E),
    Action("remove_dk", "Remove dimension from dₖ", lambda w, _: w.session.remove_dim("qk"), E),
    Action("add_dv", "Add dimension to dᵥ", lambda w, _: w.session.add_dim("v"), E),
    Action("remove_dv", "Remove dimension from dᵥ", lambda w, _: w.session.remove_dim("v"), E),

    Action("back", "&Previous stage", "back_step", A, tip="←, PageUp"),
    Action("next", "&Next stage", "next_step", A, tip="→, PageDown or Space"),
    Separator(A),
    Group(A, menus.stages),
    Separator(A),
    Action("causal", "&Causal mask", lambda w, on: w.session.set_mask("causal" if on else "none"), A, ("Ctrl+M",),
           checkable=True, tip="Each token may only attend to itself and earlier tokens"),
    Action("scale", "Divide by √dₖ", lambda w, on: w.session.set_scale(on), A, checkable=True,
           tip="Scale the scores by 1/√dₖ before the softmax"),
    Separator(A),
    Action("projection", "&Projection mode (Q, K, V from X)", _projection_mode, A, ("Ctrl+Shift+P",), checkable=True,
           tip="Edit the embeddings X and the three learned projection matrices; Q, K, V are derived from them"),
    Action("randomise", "&Randomise the projection matrices", _randomise, A, ("Ctrl+R",),
           tip="Seeded random learned matrices (switches to projection mode)"),
    Group(A, menus.panels),  # (Without projections: the registry's panels of this menu)

    Group(V, menus.core_docks),
    Separator(V),
    Group(V, menus.panels),
    Separator(V),
    Group(V, menus.themes),
    Group(V, menus.colormaps),
    Separator(V),
    Action("zoom_in", "Zoom &in", lambda w, _: w.set_zoom(w._zoom * 1.15), V, (K.ZoomIn, "Ctrl+=")),
    Action("zoom_out", "Zoom &out", lambda w, _: w.set_zoom(w._zoom / 1.15), V, (K.ZoomOut,)),
    Action("zoom_reset", "&Actual size", lambda w, _: w.set_zoom(1.0), V, ("Ctrl+0",)),
    Action("heatmap_whole", "&Whole heatmap", lambda w, _: w.heatmap.reset_zoom(), V, ("Ctrl+Shift+F",),
           tip="Ctrl+wheel over the heatmap zooms in (64 tokens and more); this shows the whole grid again"),
    Action("animate", "&Animate stage changes", "set_animate", V, checkable=True, checked=True,
           tip="Colours and numbers morph from one stage to the next (250 ms)"),
    Action("show_all_stages", "Show all stages at &once", _show_all_stages, V, checkable=True,
           tip="Every view shows every stage's results (for exploring at home; a lecture reveals them stage by stage)"),
    Action("reset_layout", "&Reset layout", lambda w, _: w.presentation.reset_layout(), V,
           tip="The panels back where the window puts them for this screen"),
    Separator(V),
    Action("presentation", "&Presentation mode", "toggle_presentation", V, ("F5",), checkable=True,
           tip="Full screen, large text; Esc leaves"),
    Action("rehearse", "&Rehearse with the presenter console", lambda w, on: w.presenter.set_rehearse(on), V,
           checkable=True, tip="One screen: F5 shows the slide and the presenter console side by side"),
    Group(V, lambda w, menu: w.presenter.add_screen_menu(menu)),
    Action("plane", "Show vector &plane", "toggle_plane", V, tip="P (brings the plane back in presentation mode)"),
    Action("fit_plane", "&Fit the vector plane", lambda w, _: w.panels.plane.fit_view(), V, ("Ctrl+Shift+V",),
           tip="Fit the vector plane's view to every arrow and label"),
    # (checkable, enabled only for a RoPE model's head, its tip saying why not: kept in step by the plane)
    Action("rope_pair", "RoPE pair on the vector plane", None, V, ("Ctrl+Shift+L",), checkable=True,
           create=lambda w: _rope_action(w)),
    Action("blank", "&Blank screen", "blank_overlay.toggle", V, tip="B or . (a clicker's blank button)"),
    # Esc keeps its usual meaning (cancel an edit) outside presentations
    Action("leave", "Leave presentation", lambda w, _: w.set_presentation(False), None, ("Esc",), enabled=False),

    Group(H, menus.panels),
    Action("shortcuts", "&Keyboard shortcuts", "show_shortcuts", H, ("F1",)),
    Action("about", "&About QKV Studio", _about, H),
)


def _action(window: MainWindow, row: Action) -> QAction:
    if row.create is not None:
        act = row.create(window)
        act.setShortcuts([QKeySequence(k) for k in row.keys])
        window.addAction(act)  # (window-wide, as every action: its shortcut works with the menu bar hidden)
    else:
        if row.slot is None:
            raise ValueError(f"action {row.id!r} has neither a slot nor a create")
        act = make_action(window, row.text, row.slot, row.keys, checkable=row.checkable, tip=row.tip)
    if row.checked:
        act.setChecked(True)
    if not row.enabled:
        act.setEnabled(False)
    window.acts.add(row.id, act)
    return act


def build(window: MainWindow, rows: tuple[Row, ...] | None = None) -> None:
    """Every action of ``rows`` (default :data:`MENU`, read now) as ``window.acts.<id>``, and the menu
    bar they make."""
    rows = MENU if rows is None else rows
    bar = window.menuBar()
    made: dict[str, QMenu] = {}
    for row in rows:
        menu: QMenu | None = None
        if row.menu is not None:
            menu = made.get(row.menu)
            if menu is None:
                menu = made[row.menu] = bar.addMenu(row.menu)
        if isinstance(row, Action):
            act = _action(window, row)
            if menu is not None:
                menu.addAction(act)
        elif menu is None:  # (only an action may be kept out of the menus)
            raise ValueError(f"{row!r} needs a menu")
        elif isinstance(row, Separator):
            menu.addSeparator()
        elif isinstance(row, Submenu):
            window.submenus[row.name] = menu.addMenu(row.text)
        else:
            row.fill(window, menu)
    menus.leftover_panels(window, made)
    window.menu_by_title = made
    window.session.scene_changed.connect(lambda *_: sync_toggles(window))
    window.session.stage_changed.connect(lambda *_: menus.sync_stage(window))
    sync_toggles(window)
    menus.sync_stage(window)
    edit_clipboard.attach(window)  # (the Edit menu's Cut/Copy/Paste follow the focus and selection)


def sync_toggles(window: MainWindow) -> None:
    """The check marks of the scene's options (causal mask, ÷√dₖ, projection mode)."""
    s = window.session.scene
    window.acts.causal.setChecked(isinstance(s.mask, str) and s.mask == "causal")
    window.acts.scale.setChecked(s.scale)
    window.acts.projection.setChecked(s.mode == "projection")
