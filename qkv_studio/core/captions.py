"""The stepper's plain words for each stage, with the selected query's own numbers.

Each function takes the scene, its attention result and the selected query and returns rich text
(``<b>``, ``<sub>``); :mod:`qkv_studio.core.stages` names one per stage.  They run on every edit
(n up to 1024): NumPy, never a Python loop over the keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from qkv_studio.core.text import fmt, fmt_fixed, fmt_vector

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult
    from qkv_studio.core.scene import Scene


def _name(scene: "Scene", query: int) -> str:
    return f"“{scene.token_label(query)}”"


def _top(result: "AttentionResult", query: int, count: int = 4) -> list[int]:
    """The keys with the largest weights for ``query``, largest first."""
    return [int(j) for j in np.argsort(-result.weights[query], kind="stable")[:count]]


def mask_note(scene: "Scene") -> str:
    """A sentence about the mask (empty when there is none)."""
    if isinstance(scene.mask, str) and scene.mask == "causal":
        return (" Causal mask: a token may not look at tokens after it (−∞), because a language model "
                "must not peek at the future it is predicting.")
    if not isinstance(scene.mask, str):
        return " Masked keys (−∞) get weight 0 after the softmax."
    return ""


def vectors(scene: "Scene", result: "AttentionResult", query: int) -> str:
    q = scene.qkv()[0]
    return (f"Every token carries three vectors: a <b>query</b> (what it looks for), a <b>key</b> (how it "
            f"advertises itself) and a <b>value</b> (what it hands over). The query for {_name(scene, query)} is "
            f"{fmt_vector(q[query])}; dₖ = {scene.d_k}.")


def scores(scene: "Scene", result: "AttentionResult", query: int) -> str:
    name = _name(scene, query)
    best = int(np.argmax(result.scores[query]))
    return (f"Dot the query of {name} with every key: one relevance score per token. "
            f"{name} matches “{scene.token_label(best)}” best (q·k = {fmt(float(result.scores[query, best]))})."
            + mask_note(scene))


def scaled(scene: "Scene", result: "AttentionResult", query: int) -> str:
    if not scene.scale:
        return ("Scaling is switched off: the raw scores go straight into the softmax, so with a large "
                "dₖ it saturates.")
    return (f"Divide by √dₖ = {fmt(scene.d_k ** 0.5)} so the scores keep unit size: without it, large dₖ "
            f"makes them swing widely and the softmax saturates.")


def weights(scene: "Scene", result: "AttentionResult", query: int) -> str:
    name = _name(scene, query)
    if result.fully_masked[query]:
        return f"Every key is masked for {name}: there is nothing to attend to, so all weights are 0."
    top = ", ".join(f"{fmt_fixed(float(result.weights[query, j]))} on “{scene.token_label(j)}”"
                    for j in _top(result, query))
    return (f"softmax turns the scores of {name} into weights that sum to 1: {top}"
            f"{', …' if scene.n > 4 else ''}. A blend, not a pick.")


def output(scene: "Scene", result: "AttentionResult", query: int) -> str:
    top = " + ".join(f"{fmt_fixed(float(result.weights[query, j]))}·v<sub>{scene.token_label(j)}</sub>"
                     for j in _top(result, query))
    return (f"The output for {_name(scene, query)} is the weighted blend of the values: {top}"
            f"{' + …' if scene.n > 4 else ''} = {fmt_vector(result.output[query])}. Every token contributes a little.")
