"""Alt text for an exported figure, written from its numbers (NumPy only, no Qt).

Every exported figure carries a description a reader who cannot see it can use (issue 22, item 4):
what the figure is, the tokens, the whole matrix's extremes and the selected query's row in numbers,
e.g. for the lesson's weights::

    Softmax weights for 4 tokens (the, cat, sat, mat); each row sums to 1; the query 'sat' puts
    0.54 on 'cat', 0.27 on 'mat', 0.13 on 'sat', 0.06 on 'the'; ...

Public API::

    describe(scene, stage, query, *, heading="") -> Description   (.title, .text, str() = both)

The stage and the query are given explicitly (never read from the scene).  Long rows are summarised:
the top :data:`TOP_KEYS` keys and a sentence for the rest; long token lists show the first and last
few.  SVG ``<title>``/``<desc>``, the PDF's title/subject, the PNG's ``iTXt`` chunk, the PPTX
picture's description and the export dialog all take their text from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qkv_studio.core.stages import shown_matrix, stage_spec
from qkv_studio.core.text import fmt, fmt_fixed

if TYPE_CHECKING:
    from qkv_studio.core.scene import Scene

#: How many keys of the query's row are named one by one (the rest are summarised).
TOP_KEYS = 4
#: Up to this many tokens are all listed; beyond it the first and last few.
LIST_TOKENS = 8


@dataclass(frozen=True)
class Description:
    """A figure's alt text: a short ``title`` (a document title, a tooltip) and the full ``text``."""

    title: str
    text: str

    def __str__(self) -> str:
        return self.text


def _q(scene: Scene, i: int) -> str:
    return f"'{scene.token_label(int(i))}'"


def _tokens(scene: Scene) -> str:
    labels = [scene.token_label(i) for i in range(scene.n)]
    if len(labels) <= LIST_TOKENS:
        shown = ", ".join(labels)
    else:
        shown = ", ".join(labels[:5]) + ", …, " + ", ".join(labels[-2:])
    return f"{scene.n} token{'s' if scene.n != 1 else ''} ({shown})"


def _number(value: float, signed: bool) -> str:
    return fmt(value, 3) if signed else fmt_fixed(value)


def _what(stage: str, scene: Scene) -> str:
    """What the figure's cells are, in words (the stage registry's alt wording, capitalised)."""
    wording = stage_spec(stage).words(scene.scale)
    words = wording.alt.format(figure=wording.figure, sqrt=fmt(math.sqrt(scene.d_k), 3))
    return words[0].upper() + words[1:]


def _mask(scene: Scene, signed: bool) -> str:
    if isinstance(scene.mask, str) and scene.mask == "none":
        return ""
    kind = "a causal mask (no token looks at tokens after it)" if isinstance(scene.mask, str) else "a custom mask"
    return f"; with {kind}: blocked cells are {'−∞' if signed else '0'}"


def _extremes(scene: Scene, matrix: np.ndarray, blocked: np.ndarray, signed: bool) -> str:
    """The whole matrix's highest and lowest cells (of those not blocked)."""
    open_ = ~blocked & np.isfinite(matrix)
    if not open_.any():
        return "; every cell is blocked"
    values = np.where(open_, matrix, np.nan)
    hi = np.unravel_index(int(np.nanargmax(values)), values.shape)
    lo = np.unravel_index(int(np.nanargmin(values)), values.shape)
    def cell(at: tuple[np.intp, ...]) -> str:
        return f"{_number(float(matrix[at]), signed)} (query {_q(scene, int(at[0]))}, key {_q(scene, int(at[1]))})"

    return f"; the highest cell is {cell(hi)}, the lowest {cell(lo)}"


def _row(scene: Scene, stage: str, query: int, matrix: np.ndarray, blocked: np.ndarray,
         fully_masked: bool, signed: bool) -> str:
    """The query's row: its top keys by value, then a summary of the others."""
    row = matrix[query]
    keys = np.flatnonzero(~blocked[query])
    name = _q(scene, query)
    if fully_masked or keys.size == 0:
        return f"; every key is blocked for the query {name}, so its weights are all 0"
    order = keys[np.argsort(-row[keys], kind="stable")]
    count = TOP_KEYS if order.size > TOP_KEYS + 1 else order.size  # (one key left over is named, not summarised)
    top, rest = order[:count], order[count:]
    verb = "puts" if not signed else "scores"
    joiner = "on" if not signed else "with"
    parts = ", ".join(f"{_number(float(row[j]), signed)} {joiner} {_q(scene, j)}" for j in top)
    text = f"; the query {name} {verb} {parts}"
    if rest.size:
        if signed:
            text += (f"; its other {rest.size} keys score {_number(float(row[rest].min()), True)} to "
                     f"{_number(float(row[rest].max()), True)}")
        else:
            text += f"; its other {rest.size} keys share {fmt_fixed(float(row[rest].sum()))}"
    n_blocked = int(blocked[query].sum())
    if n_blocked:
        text += f"; {n_blocked} key{'s are' if n_blocked != 1 else ' is'} blocked for it"
    return text


def _output(scene: Scene, query: int, weights: np.ndarray, output: np.ndarray, blocked: np.ndarray,
            fully_masked: bool) -> str:
    keys = np.flatnonzero(~blocked[query])
    if fully_masked or keys.size == 0:
        return ""
    top = keys[np.argsort(-weights[query, keys], kind="stable")][:TOP_KEYS]
    blend = " + ".join(f"{fmt_fixed(float(weights[query, j]))}·v({scene.token_label(int(j))})" for j in top)
    more = " + …" if keys.size > TOP_KEYS else ""
    vec = ", ".join(fmt(float(x), 3) for x in output[query][:4]) + (", …" if output.shape[1] > 4 else "")
    return f"; its output is the blend {blend}{more} = [{vec}]"


def describe(scene: Scene, stage: str, query: int, *, heading: str = "") -> Description:
    """The alt text of ``stage``'s figure of ``scene`` with ``query`` selected (ValueError for an
    unknown stage or a query out of range).  ``heading`` names what the figure is of ("head 1 …")."""
    spec = stage_spec(stage)
    query = int(query)
    if not 0 <= query < scene.n:
        raise ValueError(f"query {query} is out of range (0–{scene.n - 1})")
    result = scene.result()
    matrix = getattr(result, shown_matrix(stage))
    signed = spec.signed if spec.matrix is not None else stage_spec(shown_matrix(stage)).signed
    blocked = result.blocked
    fully = bool(result.fully_masked[query])
    what = _what(stage, scene)
    text = f"{heading + ': ' if heading else ''}{what} for {_tokens(scene)}"
    if signed:
        text += f", dₖ = {scene.d_k}"
    else:
        text += "; each row sums to 1"
        if result.fully_masked.any():
            text += " (rows with every key blocked sum to 0)"
    text += _mask(scene, signed)
    text += _row(scene, stage, query, matrix, blocked, fully, signed)
    if "output" in spec.reveals:  # (the blend's stage: its alt text also says what the blend makes)
        text += _output(scene, query, result.weights, result.output, blocked, fully)
    if scene.n > 1:
        text += _extremes(scene, matrix, blocked, signed)
    title = f"{heading + ' · ' if heading else ''}{what} · query '{scene.token_label(query)}'"
    return Description(title=title, text=text + ".")
