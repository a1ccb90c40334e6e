"""What the plane's header and axes say: what is drawn (dₖ, first two components or PCA), how to edit
it (drag, Shift for the grid, or why it is read-only), and the best match once the scores are shown."""

from __future__ import annotations

from dataclasses import dataclass

from qkv_studio.core.scene import Scene
from qkv_studio.render.theme import Theme
from qkv_studio.ui.panels.plane.labels import html_escape


@dataclass(frozen=True)
class PlaneCaption:
    """The facts the header is written from (the plane's state when it is written)."""

    scene: Scene
    query: int
    stage: str
    bases: tuple | None  # (q·k basis, explained, v basis) in the PCA view
    values_shown: bool
    read_only: bool
    best: int | None  # the best key, once the scores are revealed
    best_weight: float
    weight_shown: bool  # the weights stage is reached
    step: float  # the Shift grid
    snapping: bool  # Shift holds a dragged tip to the grid now


def title(c: PlaneCaption) -> str:
    if c.stage == "output":
        return "the output: a blend of the values v"
    return "q, k and v as arrows" if c.values_shown else "q and k as arrows"


def dims(c: PlaneCaption) -> str:
    """Which dimensions are drawn."""
    d_k, d_v = c.scene.d_k, c.scene.d_v
    if c.bases is not None:
        text = f"PCA of q and k: 2 directions keep {100 * c.bases[1].sum():.0f}% of dₖ = {d_k}"
        if c.values_shown:
            text += " · values by their own PCA" if d_v > 2 else f" · values: dᵥ = {d_v}"
        return text
    text = "dₖ = 2" if d_k == 2 else (
        f"first 2 of dₖ = {d_k} dimensions" if d_k > 2 else "dₖ = 1: one dimension, on the horizontal axis")
    if d_v != d_k:
        text += f" · values: {'first 2 of ' if d_v > 2 else ''}dᵥ = {d_v}"
    return text


def hint(c: PlaneCaption) -> str:
    """How to edit what is drawn (or why it cannot be)."""
    if c.bases is not None:
        return "a projection: untick PCA to drag the first two components"
    if c.read_only:
        return "derived: Q = X·W<sup>Q</sup>, K = X·W<sup>K</sup> — edit X or W to move them"
    if c.snapping:
        return f"Shift held: the tip snaps to steps of {c.step:g}"
    return f"drag an arrow head to edit it · Shift: steps of {c.step:g}"


def header_html(c: PlaneCaption, t: Theme, px) -> str:
    """The header's rich text; ``px(base)`` is a font's pixel size at the current scale."""
    text = hint(c)
    scene = c.scene
    if c.best is not None and c.best < scene.n:
        q_name, k_name = (html_escape(scene.token_label(i)) for i in (c.query, c.best))
        weight = f" (w&nbsp;=&nbsp;{c.best_weight:.2f})" if c.weight_shown else ""
        # (its own line, the weight kept with its number — "w", as on the heatmap: wrapped anywhere, "(weight" and
        # "0.54)" stood on two lines; the hint follows on the next)
        text = (f'<span style="color:{t.text}">best match for <b style="color:{t.query_color}">q {q_name}'
                f'</b>: <b style="color:{t.key_color}">k {k_name}</b>{weight}'
                f'</span><br>{text}')
    return (f'<span style="font-size:{px(17)}px; font-weight:600; color:{t.text}">{title(c)}</span>'
            f'<span style="font-size:{px(14)}px; color:{t.muted}"> &nbsp;({dims(c)})<br>{text}</span>')


def axis_titles(d_k: int, bases: tuple | None) -> tuple[str, str]:
    """The bottom and left axes' titles."""
    if bases is not None:
        explained = bases[1]
        return f"PCA 1 · {100 * explained[0]:.0f}%", f"PCA 2 · {100 * explained[1]:.0f}%"
    return "dimension 1", "dimension 2" if d_k >= 2 else "(none: dₖ = 1)"
