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


def _name(scene: Scene, query: int) -> str:
    return f"“{scene.token_label(query)}”"


def _top(result: AttentionResult, query: int, count: int = 4) -> list[int]:
    """The keys with the largest weights for ``query``, largest first."""
    return [int(j) for j in np.argsort(-result.weights[query], kind="stable")[:count]]


def same_numbers(a: Scene, b: Scene) -> bool:
    """True when two scenes attend alike: the same tokens, Q, K, V, mask, ÷√dₖ and heads (a scene's
    description speaks of these; the selected query, the stage, direct or projection mode do not change them).
    Cheap checks first: it runs on edits."""
    if a.tokens != b.tokens or a.scale != b.scale or a.heads != b.heads:
        return False
    if isinstance(a.mask, str) and isinstance(b.mask, str):
        if a.mask != b.mask:
            return False
    elif not np.array_equal(a.mask_matrix(), b.mask_matrix()):
        return False
    if a.wo is None or b.wo is None:
        if (a.wo is None) != (b.wo is None):
            return False
    elif not np.array_equal(a.wo, b.wo):
        return False
    return all(np.array_equal(x, y) for x, y in zip(a.qkv(), b.qkv(), strict=False))


def keep_description_true(origin: Scene, after: Scene) -> Scene:
    """``after`` with the description of ``origin`` (the scene as loaded) only while it is true: an edit
    that changes the numbers it speaks of drops it ("puts 0.54 on cat" is false once Q changed), edits
    that bring the numbers back restore it; a scene's own other description stays."""
    if not origin.description or after.description not in ("", origin.description):
        return after
    true = same_numbers(origin, after)
    if true and not after.description:
        return after._copy(description=origin.description)
    if not true and after.description:
        return after._copy(description="")
    return after


def head_note(scene: Scene, head: int) -> str:
    """Which head the views show of a scene split into heads — "<b>Head 1</b> of 2 (dₖ = 4): " — before
    the stage's words (each head attends on its own; the unsplit attention of
    all the columns is what no head computes); empty for a scene of one head."""
    if scene.heads == 1:
        return ""
    h = min(max(int(head), 0), scene.heads - 1)
    d = scene.d_k // scene.heads
    return f"<b>Head {h}</b> of {scene.heads} (dₖ = {d}): "


def mask_note(scene: Scene) -> str:
    """A sentence about the mask (empty when there is none)."""
    if isinstance(scene.mask, str) and scene.mask == "causal":
        return (" Causal mask: a token may not look at tokens after it (−∞), because a language model "
                "must not peek at the future it is predicting.")
    if not isinstance(scene.mask, str):
        return " Masked keys (−∞) get weight 0 after the softmax."
    return ""


def vectors(scene: Scene, result: AttentionResult, query: int) -> str:
    q = scene.qkv()[0]
    return (f"Every token carries three vectors: a <b>query</b> (what it looks for), a <b>key</b> (how it "
            f"advertises itself) and a <b>value</b> (what it hands over). The query for {_name(scene, query)} is "
            f"{fmt_vector(q[query])}; dₖ = {scene.d_k}.")


def scores(scene: Scene, result: AttentionResult, query: int) -> str:
    name = _name(scene, query)
    best = int(np.argmax(result.scores[query]))
    return (f"Dot the query of {name} with every key: one relevance score per token. "
            f"{name} matches “{scene.token_label(best)}” best (q·k = {fmt(float(result.scores[query, best]))})."
            + mask_note(scene))


def scaled(scene: Scene, result: AttentionResult, query: int) -> str:
    if not scene.scale:
        return ("Scaling is switched off: the raw scores go straight into the softmax, so with a large "
                "dₖ it saturates.")
    return (f"Divide by √dₖ = {fmt(scene.d_k ** 0.5)} so the scores keep unit size: without it, large dₖ "
            f"makes them swing widely and the softmax saturates.")


def _keys_named(count: int) -> str:
    return "1 other key" if count == 1 else f"{count} other keys"


def blend_shape(scene: Scene, result: AttentionResult, query: int) -> str:
    """What the query's weights are, in words true for the numbers shown (rounded as the cells are):
    a pick, almost a pick, an even spread, a near tie, a clear leader or a blend — a phrase without its
    final full stop, for the stepper's captions and the blend view.  (One ``argsort`` of the row.)
    """
    w = result.weights[query]
    visible = int(w.size - np.count_nonzero(result.blocked[query]))
    if result.fully_masked[query] or visible == 0:
        return "every key is masked: nothing is blended, the output is 0"
    order = _top(result, query, 2)
    a = f"“{scene.token_label(order[0])}”"
    w1 = float(w[order[0]])
    if visible == 1:
        return f"a pick, not a blend: {a} is the only key it may see, so it takes all the weight ({fmt_fixed(w1)})"
    w2 = float(w[order[1]])
    b = f"“{scene.token_label(order[1])}”"
    if w1 >= 0.99:
        return (f"almost a pick, not a blend: {a} takes {fmt_fixed(w1)}, the {_keys_named(visible - 1)} "
                f"share {fmt_fixed(1.0 - w1)}")
    low = float(np.min(np.where(result.blocked[query], np.inf, w)))
    if w1 - low < 0.05:
        return f"spread almost evenly (about {fmt_fixed(1.0 / visible)} each): a blend of all {visible} keys"
    if w1 - w2 < 0.05:
        tied = int(np.count_nonzero(~result.blocked[query] & (w > w1 - 0.05)))
        lead = _top(result, query, min(tied, 3))
        w_last = float(w[lead[-1]])
        each = (f"{fmt_fixed(w1)} each" if fmt_fixed(w1) == fmt_fixed(w_last)
                else f"{fmt_fixed(w_last)}–{fmt_fixed(w1)}")
        if tied == 2:
            who = f"{a} and {b}"
        elif tied == 3:
            who = f"{a}, {b} and “{scene.token_label(lead[2])}”"
        else:
            who = f"{tied} keys"
        return f"a near tie: {who} share the lead ({each}) — a blend, not a pick"
    if w1 >= 0.5:
        return (f"a blend led by {a} ({fmt_fixed(w1)}): the {_keys_named(visible - 1)} still add "
                f"{fmt_fixed(1.0 - w1)}")
    return f"a blend, not a pick: no key takes half ({a} leads with {fmt_fixed(w1)})"


def _sentence(phrase: str) -> str:
    return phrase[0].upper() + phrase[1:] + "."


def _more(scene: Scene, shown: int) -> str:
    """ " and 12 smaller" after the largest weights listed (no ellipsis: a full stop follows)."""
    rest = scene.n - shown
    return f" and {rest} smaller" if rest > 0 else ""


def weights(scene: Scene, result: AttentionResult, query: int) -> str:
    name = _name(scene, query)
    if result.fully_masked[query]:
        return f"Every key is masked for {name}: there is nothing to attend to, so all weights are 0."
    top_keys = _top(result, query)
    top = ", ".join(f"{fmt_fixed(float(result.weights[query, j]))} on “{scene.token_label(j)}”"
                    for j in top_keys)
    return (f"softmax turns the scores of {name} into weights that sum to 1: {top}{_more(scene, len(top_keys))}. "
            f"{_sentence(blend_shape(scene, result, query))}")


def contribution(scene: Scene, result: AttentionResult, query: int) -> str:
    """Who contributes to the query's output, true for the weights as shown (a phrase, no full stop)."""
    w = result.weights[query]
    if result.fully_masked[query]:
        return "every key is masked, so nothing contributes: the output is 0"
    shape = blend_shape(scene, result, query)
    if shape.startswith(("a pick", "almost a pick")):
        best = _top(result, query, 1)[0]
        return shape + f" — the output is (almost) v<sub>{scene.token_label(best)}</sub> alone"
    visible = ~np.asarray(result.blocked[query], dtype=bool)
    faint = int(np.count_nonzero(visible & (w < 0.005)))  # weights the cells show as 0.00
    masked = int(np.count_nonzero(~visible))
    notes = []
    if faint:
        notes.append(f"{faint} key{'s' if faint > 1 else ''} add{'s' if faint == 1 else ''} less than 0.01")
    if masked:
        notes.append(f"{masked} masked key{'s' if masked > 1 else ''} add{'s' if masked == 1 else ''} nothing")
    if not notes:
        notes.append("every key it may see contributes" if masked else "every token contributes")
    return shape + "; " + ", ".join(notes)


def output(scene: Scene, result: AttentionResult, query: int) -> str:
    top = " + ".join(f"{fmt_fixed(float(result.weights[query, j]))}·v<sub>{scene.token_label(j)}</sub>"
                     for j in _top(result, query))
    return (f"The output for {_name(scene, query)} is the weighted blend of the values: {top}"
            f"{' + …' if scene.n > 4 else ''} = {fmt_vector(result.output[query], decimals=2)}. "
            f"{_sentence(contribution(scene, result, query))}")
