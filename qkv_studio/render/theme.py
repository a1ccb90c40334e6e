"""Themes: light, dark and projector (high contrast, thick lines, no thin greys)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Theme:
    """Colours (as #rrggbb) and line widths used by the window and the exported figures."""

    name: str
    background: str
    panel: str
    text: str
    muted: str
    grid: str
    highlight: str  # the selected query row
    masked: str  # blocked cells
    accent: str
    line_scale: float  # multiplies every pen width
    query_color: str
    key_color: str
    value_color: str
    output_color: str
    # Right / wrong (the quiz's feedback): green and red, each ≥ 4.5:1 against ``background`` and
    # ``panel`` (WCAG AA for text); never the only sign — the texts carry ✓ / ✗ too.
    good: str = "#1b7a35"
    bad: str = "#b3122f"


THEMES: dict[str, Theme] = {
    "light": Theme("light", "#ffffff", "#f4f4f6", "#111111", "#4a4a4a", "#c8c8cc", "#d6246e", "#e6e6e6",
                   "#1f5fbf", 1.0, "#d6246e", "#1f5fbf", "#1b8a3c", "#b35900", good="#1b7a35", bad="#b3122f"),
    "dark": Theme("dark", "#1d1f23", "#26282d", "#f2f2f2", "#c4c4c4", "#4a4d55", "#ff5fa2", "#3a3c42",
                  "#6fa8ff", 1.0, "#ff5fa2", "#6fa8ff", "#5fd38a", "#ffb04d", good="#5fd38a", bad="#ff7b7b"),
    "projector": Theme("projector", "#000000", "#000000", "#ffffff", "#ffffff", "#ffffff", "#ff2d8a", "#505050",
                       "#ffe000", 2.0, "#ff2d8a", "#38b6ff", "#3dff7a", "#ffb000", good="#3dff7a", bad="#ff5c5c"),
}
DEFAULT_THEME = "light"


def get_theme(name: str) -> Theme:
    """A theme by name; raises ValueError listing the known ones."""
    try:
        return THEMES[name]
    except KeyError:
        raise ValueError(f"unknown theme {name!r} (use {', '.join(THEMES)})") from None
