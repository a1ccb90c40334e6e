"""The panel registry: every panel of the window, declared once.

The window builds its docks and its View (and Help) menu entries from :data:`PANELS`, the command
line's ``screenshot --panel`` choices are :func:`cli_names`, and ``app.prepare_window`` opens panels
by those names.  Importing this module loads no Qt (the command line's ``export`` stays Qt-free): a
factory is a lazy ``"module:attribute"`` path, imported only when the panel is first built.

**Adding a panel** is one entry here plus its test::

    PanelSpec("probe", "Probe", "qkv_studio.ui.lesson.probe:build",
              menu_text="&Probe", shortcut="Ctrl+Shift+R", cli_name="probe",
              tip="What the probe shows")

The factory is called with the main window (it reads ``window.session`` and wires whatever else it
needs) and returns the panel widget (a ``QDialog`` for ``kind="dialog"``).  The window then offers
``window.panel("probe")``, ``window.docks.probe`` and ``window.acts.probe``, a View-menu entry, and
``qkv-studio screenshot --panel probe``.  A panel built lazily is given the window's theme, colour map
and font scale (``set_theme``/``set_colormap``/``set_font_scale``) when it is built.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Factory = str | Callable[[Any], Any]
"""``"module:attribute"`` (imported on first use) or a callable; called as ``factory(window)``."""


@dataclass(frozen=True)
class PanelSpec:
    """One panel of the window.

    ``name`` is the registry key: the dock is ``window.docks.<name>`` (its object name is ``dock_<name>``,
    so saved layouts find it), the action that opens it ``window.acts.<name>`` and the panel
    ``window.panels.<name>`` (declare its type in :class:`qkv_studio.ui.window.parts.Panels`).  ``lazy`` panels
    are built the first time their dock shows or they are asked for (start-up does not wait for them);
    the others (the core docks) are built with the window and their View-menu entry is the dock's own
    show/hide toggle — except ``deferred`` core docks: those are built as the window first shows when
    its layout puts their dock in front, else in the first idle moment after its first paint (a tab behind
    another at the first paint is not drawn in it; start-up does not wait for it), or as soon as anything
    asks for them or brings their dock forward.  ``menu`` is the menu bar's menu the entry goes in (made if no other
    has it).  ``menu_text`` empty: no action of its own; ``cli_name`` None: not a ``--panel`` choice.
    ``focus`` names an attribute of the panel that takes the keyboard focus when the menu opens it;
    ``on_show`` (a factory-like path or callable, called as ``on_show(window)``) runs each time its
    menu entry brings the panel forward.  ``kind="centre"`` is a view shown in the window's centre in
    place of the heatmap (a comparison that needs the room, on the projector too): its menu entry is a
    checkable toggle, and turning it off (or the heatmap's own View → Heatmap) brings the heatmap back.
    """

    name: str
    title: str  # the dock's title (a dialog sets its own)
    factory: Factory
    area: Literal["left", "right"] = "right"
    menu: str = "&View"
    menu_text: str = ""
    shortcut: str = ""
    tip: str = ""
    cli_name: str | None = None
    kind: Literal["dock", "dialog", "centre"] = "dock"
    lazy: bool = True
    focus: str = ""
    on_show: Factory | None = None
    short_title: str = ""  # the dock's tab title where the title's tabs do not fit their column
    deferred: bool = False

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"panel name {self.name!r} is not an identifier")
        if self.kind in ("dialog", "centre") and not self.lazy:
            raise ValueError(f"panel {self.name!r}: a {self.kind} panel is built when first opened (lazy)")
        if self.deferred and (self.lazy or self.kind != "dock"):
            raise ValueError(f"panel {self.name!r}: only a core dock is deferred (lazy ones are built when shown)")

    @property
    def docked(self) -> bool:
        return self.kind == "dock"

    def build(self, window: Any) -> Any:
        """Import the factory (on first use) and make the panel for ``window``."""
        return resolve(self.factory)(window)


def resolve(target: Factory) -> Callable[..., Any]:
    """A factory path ``"package.module:attribute"`` imported now, or the callable itself."""
    if callable(target):
        return target
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"factory {target!r} is not 'module:attribute'")
    return getattr(importlib.import_module(module), attr)


_WIRING = "qkv_studio.ui.window.panel_factories"

PANELS: tuple[PanelSpec, ...] = (
    # The core docks, built with the window: the tokens list and the Q, K, V (and X, W) editors share
    # the left column's first dock; the vector plane below; the calculation and the blend on the right.
    PanelSpec("editors", "Tokens and vectors", f"{_WIRING}:editors", area="left", lazy=False,
              short_title="Editors"),
    # (the plane and the blend are tabs behind the editors or the table in a small window: deferred)
    PanelSpec("plane", "Vector plane", f"{_WIRING}:plane", area="left", lazy=False, short_title="Plane",
              deferred=True),
    PanelSpec("calc", "Calculation", f"{_WIRING}:calc", lazy=False),
    PanelSpec("blend", "Blend", f"{_WIRING}:blend", lazy=False, deferred=True),
    # The lesson in depth, from the View menu: tabbed with the blend view, built when first shown.
    PanelSpec("explorer", "√dₖ explorer", f"{_WIRING}:explorer", menu_text="√dₖ &explorer",
              shortcut="Ctrl+Shift+D", tip="Why divide by √dₖ: watch the softmax saturate as dₖ grows",
              cli_name="explorer"),
    PanelSpec("heads", "Heads", f"{_WIRING}:heads", menu_text="&Heads (multi-head)", shortcut="Ctrl+Shift+H",
              cli_name="heads", on_show=f"{_WIRING}:heads_shown"),
    PanelSpec("model", "Real model", f"{_WIRING}:model", menu_text="&Real model…",
              shortcut="Ctrl+Shift+M", tip="A real transformer's heads on any sentence, offline",
              cli_name="model", focus="sentence"),
    PanelSpec("rope", "RoPE explorer", "qkv_studio.ui.lesson.rope_explorer:build", menu_text="R&oPE explorer",
              shortcut="Ctrl+Shift+O", tip="Rotary position embeddings: a score depends on the offset only",
              cli_name="rope"),
    # The lesson's "why three projections?": the scene with Q = K = V = X beside the learned projections.
    PanelSpec("unprojected", "Without projections", f"{_WIRING}:unprojected", menu="&Attention",
              menu_text="&Without projections", shortcut="Ctrl+Shift+W",
              tip="The embeddings dotted directly (Q = K = V = X) beside the learned projections: why three?",
              cli_name="unprojected", kind="centre"),
    # A dialog of the Help menu: non-modal and kept, so answers survive closing it.
    PanelSpec("quiz", "Check yourself", f"{_WIRING}:quiz", menu="&Help", menu_text="&Check yourself…",
              tip="The lesson's three questions with feedback, and the pipeline card", cli_name="quiz",
              kind="dialog"),
)


def panels() -> tuple[PanelSpec, ...]:
    """Every registered panel, in menu order (read at call time, so a test may register one).

    Raises ValueError when two entries share a name, a ``--panel`` name or a shortcut."""
    for field in ("name", "cli_name", "shortcut"):
        values = [getattr(s, field) for s in PANELS if getattr(s, field)]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise ValueError(f"panels share a {field}: {', '.join(twice)}")
    return PANELS


def get(name: str) -> PanelSpec:
    """The panel called ``name``; KeyError names the known ones."""
    for spec in PANELS:
        if spec.name == name:
            return spec
    raise KeyError(f"unknown panel {name!r} (panels: {', '.join(s.name for s in PANELS)})")


def by_cli_name(name: str) -> PanelSpec:
    """The panel that ``--panel NAME`` opens; ValueError (one line) when there is none."""
    for spec in PANELS:
        if spec.cli_name == name:
            return spec
    raise ValueError(f"unknown panel {name!r} (panels: {', '.join(cli_names())})")


def cli_names() -> tuple[str, ...]:
    """The ``screenshot --panel`` choices, in menu order."""
    return tuple(s.cli_name for s in PANELS if s.cli_name)
