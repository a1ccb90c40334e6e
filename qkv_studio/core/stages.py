"""The stage registry: the steps of the lesson, in order, each described once.

vectors → scores (Q·Kᵀ) → scaled (÷√dₖ) → weights (softmax) → output (blend).  Everything that shows
or names a stage reads it from here: the Scene's validation and the session file (``STAGES``), the
stepper (button text, the highlighted piece of the formula, the stage's own formula, the caption),
the heatmap and the exported figures (which matrix, signed or not, titles, legend), the calculation
table (the columns a stage adds), the export dialog and the slide deck, and the command line's
``--stage`` choices.

How to add a stage
------------------
1. Add a :class:`StageSpec` to ``REGISTRY`` at its place in the lesson's order.  ``matrix`` names the
   field of :class:`~qkv_studio.core.attention.AttentionResult` its heatmap shows (None: it previews
   the next stage's matrix, as ``vectors`` does); ``caption`` is a function of
   :mod:`qkv_studio.core.captions` (write one there).  ``reveals`` names the results the stage shows
   first (views hide them before it: see :func:`reveals`).  Its narration is part of the entry: ``spoken``
   (the formula in words, for speaker notes) and ``wording.alt`` (what its figure shows, for alt text).
2. If the stage has a piece of its own in the whole formula, put ``{name[0]}`` (and ``{name[1]}`` …,
   one per entry of ``formula_piece``) into :data:`FORMULA`.
3. Add its test to ``tests/core/test_stages.py``; every consumer picks the new entry up by itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from qkv_studio.core import captions

if TYPE_CHECKING:
    from qkv_studio.core.attention import AttentionResult
    from qkv_studio.core.scene import Scene

Caption = Callable[["Scene", "AttentionResult", int], str]


@dataclass(frozen=True)
class Wording:
    """What a stage's picture is called: the heatmap's title (rich text; ``{d_k}`` is filled in), the
    figure's title and its line of meaning (``{sqrt}`` = √dₖ is filled in), the colour legend's title, and
    ``alt``: what the figure's cells are in its alt text (:mod:`qkv_studio.core.describe`; ``{figure}`` is
    the figure's title, ``{sqrt}`` √dₖ)."""

    heatmap: str
    figure: str
    meaning: str
    legend: str
    alt: str = "{figure}"


@dataclass(frozen=True)
class StageSpec:
    """One stage of the lesson.

    ``title`` names it in menus and the public ``STAGE_TITLES``; ``button`` is the stepper's short
    button text, ``short`` a shorter one for a narrow stage bar (empty: ``button`` is short enough);
    ``export_label`` the export dialog's longer name.  ``slide_view`` is the view a presentation slide of
    the stage shows large: ``"heatmap"`` (the centre) or a panel of ``qkv_studio.ui.registry`` by name.  ``matrix`` is
    the result's n×n
    matrix the heatmap and figures show (None for a stage of vectors, which previews the next stage's);
    ``signed`` says whether that matrix is signed (a diverging map centred at 0, masked cells −∞) or a
    weight (0–1, masked cells 0).  ``formula_piece`` is the part(s) of the whole formula
    (:data:`FORMULA`) the stepper highlights, ``formula`` the stage's own formula (rich text).
    ``caption`` writes the plain-words caption for a query.  ``columns`` are the calculation table's
    columns the stage adds, as (key, heading).  ``reveals`` names the results the stage shows first
    (fields of the result: ``"scores"``, ``"weights"``, ``"output"`` …); a view shows a result only from
    the stage that reveals it on (see :func:`reveals`).  ``row_sums``: the heatmap shows the Σ column;
    ``in_deck``: the slide deck of exported figures has a slide for it.  ``wording`` names its
    picture (and says what it is in the figure's alt text); ``unscaled`` replaces that wording when ÷√dₖ
    is switched off (None: the same).  ``spoken`` is the stage's formula read out in words (the speaker
    notes of an exported slide deck, :mod:`qkv_studio.export.slides`).
    """

    name: str
    title: str
    button: str
    export_label: str
    matrix: str | None
    signed: bool
    formula_piece: tuple[str, ...]
    formula: str
    caption: Caption
    columns: tuple[tuple[str, str], ...]
    wording: Wording
    spoken: str
    unscaled: Wording | None = None
    reveals: tuple[str, ...] = ()
    row_sums: bool = False
    in_deck: bool = True
    short: str = ""
    slide_view: str = "heatmap"

    @property
    def short_button(self) -> str:
        """The button's text where the full one has no room (a narrow stage bar): ``short`` or ``button``."""
        return self.short or self.button

    @property
    def previews(self) -> bool:
        """True for a stage with no matrix of its own: its heatmap previews the next one, dimmed, without numbers."""
        return self.matrix is None

    def words(self, scale: bool = True) -> Wording:
        """The wording for a scene with ÷√dₖ switched on (``scale``) or off."""
        return self.wording if scale or self.unscaled is None else self.unscaled


_SCORES = Wording(
    heatmap="scores Q·K<sup>T</sup> — how well each query matches each key",
    figure="raw scores Q·Kᵀ", meaning="the dot product of every query with every key", legend="score q·k")

#: The heatmap's title at the Vectors stage, which previews the scores shaded, without numbers (issue 19).
PREVIEW_TITLE = ("next: scores Q·K<sup>T</sup>, faded — each cell one query·key, shaded by size; "
                 "numbers at Q·K<sup>T</sup>")

REGISTRY: tuple[StageSpec, ...] = (
    StageSpec(
        name="vectors", title="Vectors", button="Vectors", slide_view="plane", export_label="Vectors (shows Q·Kᵀ)",
        matrix=None, signed=True,
        formula_piece=("<i>Q</i>, <i>K</i>, <i>V</i>",),
        formula=("<i>q</i><sub>i</sub> = <i>x</i><sub>i</sub><i>W</i><sup>Q</sup>,&nbsp; "
                 "<i>k</i><sub>j</sub> = <i>x</i><sub>j</sub><i>W</i><sup>K</sup>,&nbsp; "
                 "<i>v</i><sub>j</sub> = <i>x</i><sub>j</sub><i>W</i><sup>V</sup>"),
        caption=captions.vectors,
        columns=(("token", "token j"), ("key", "key kⱼ"), ("value", "value vⱼ")),
        # The map is the scores, faded and without numbers: its title says so (only where the map is shown;
        # a presentation's vectors slide shows the plane instead).
        wording=Wording(heatmap=PREVIEW_TITLE, figure=_SCORES.figure, meaning=_SCORES.meaning,
                        legend=_SCORES.legend, alt="query and key vectors, shown by their dot products ({figure})"),
        spoken=("Each token's embedding x is multiplied by three learned matrices: W-Q gives its query q, "
                "W-K its key k and W-V its value v."),
        in_deck=False,  # (its figure would repeat the scores)
    ),
    StageSpec(
        name="scores", title="Q·Kᵀ", button="Q·Kᵀ", export_label="Scores Q·Kᵀ",
        matrix="scores", signed=True,
        formula_piece=("<i>Q</i><i>K</i><sup>⊤</sup>",),
        formula=("<i>s</i><sub>ij</sub> = <i>q</i><sub>i</sub> · <i>k</i><sub>j</sub> = "
                 "Σ<sub>t</sub> <i>q</i><sub>it</sub> <i>k</i><sub>jt</sub>"),
        caption=captions.scores,
        columns=(("score", "q·kⱼ"),),
        reveals=("scores",),
        wording=_SCORES,
        spoken=("The score of query i for key j is the dot product of q i and k j: multiply them component by "
                "component and add up."),
    ),
    StageSpec(
        name="scaled", title="÷ √dₖ", button="÷ √dₖ", short="÷√dₖ", export_label="Scaled ÷ √dₖ",
        matrix="scaled", signed=True,
        formula_piece=("/ √<i>d</i><sub>k</sub>",),
        formula="<i>s̃</i><sub>ij</sub> = <i>s</i><sub>ij</sub> / √<i>d</i><sub>k</sub>",
        caption=captions.scaled,
        columns=(("scaled", "÷ √dₖ"),),
        reveals=("scaled",),
        wording=Wording(
            heatmap="scaled scores Q·K<sup>T</sup> / √d<sub>k</sub> &nbsp;(÷ √{d_k})",
            figure="scaled scores Q·Kᵀ / √dₖ", meaning="divided by √dₖ = {sqrt} so the softmax does not saturate",
            legend="score q·k / √dₖ", alt="{figure} (divided by √dₖ = {sqrt})"),
        spoken="Each score is divided by the square root of d k, the length of the key vectors.",
        unscaled=Wording(
            heatmap="scaled scores — ÷ √d<sub>k</sub> is switched off, so they equal Q·K<sup>T</sup>",
            figure="scores (÷√dₖ switched off)", meaning="the raw dot products, not divided by √dₖ",
            legend="score q·k (÷√dₖ switched off)"),
    ),
    StageSpec(
        name="weights", title="softmax", button="softmax", export_label="Weights (softmax)",
        matrix="weights", signed=False,
        formula_piece=("softmax(", ")"),
        formula=("<i>w</i><sub>ij</sub> = exp(<i>s̃</i><sub>ij</sub>) / Σ<sub>j′</sub> "
                 "exp(<i>s̃</i><sub>ij′</sub>)"),
        caption=captions.weights,
        columns=(("weight", "weight w"),),
        reveals=("weights",),
        wording=Wording(heatmap="softmax weights w — each row sums to 1", figure="softmax weights",
                        meaning="each row sums to 1: how much each query attends to each key",
                        legend="softmax weight (0–1)"),
        spoken=("Each weight is e to the power of its scaled score, divided by the sum of those powers over "
                "the row, so every row adds up to one."),
        row_sums=True,
    ),
    StageSpec(
        name="output", title="blend", button="blend", slide_view="blend", export_label="Output (blend)",
        matrix="weights", signed=False,
        formula_piece=("<i>V</i>",),
        formula="<i>o</i><sub>i</sub> = Σ<sub>j</sub> <i>w</i><sub>ij</sub> <i>v</i><sub>j</sub>",
        caption=captions.output,
        columns=(("weighted", "w · vⱼ"),),
        reveals=("output",),
        wording=Wording(heatmap="softmax weights w — the blend: output = w · V", figure="softmax weights → blend",
                        meaning="output = weights · V: each query's row blends the values",
                        legend="softmax weight (0–1)"),
        spoken="The output for query i is the sum over all tokens j of weight i j times the value vector v j.",
        row_sums=True,
    ),
)

#: The whole formula, Attention(Q, K, V) = softmax(QKᵀ/√dₖ)V, with a ``{stage[i]}`` slot for each
#: stage's ``formula_piece`` (``vectors`` has no piece of its own: Q, K and V are the arguments).
FORMULA = ("Attention(<i>Q</i>, <i>K</i>, <i>V</i>) = {weights[0]}{scores[0]}&thinsp;{scaled[0]}{weights[1]}"
           "&thinsp;{output[0]}")

_BY_NAME: dict[str, StageSpec] = {s.name: s for s in REGISTRY}
STAGES: tuple[str, ...] = tuple(_BY_NAME)
STAGE_TITLES: dict[str, str] = {s.name: s.title for s in REGISTRY}
#: The stages whose matrix is signed (looked up per printed cell: a set, not a call).
SIGNED_STAGES: frozenset[str] = frozenset(s.name for s in REGISTRY if s.signed)
#: The stages a slide deck of exported figures has, in order.
DECK_STAGES: tuple[str, ...] = tuple(s.name for s in REGISTRY if s.in_deck)


def stage_spec(name: str) -> StageSpec:
    """The registry entry of a stage; ValueError naming the stages for an unknown one."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown stage {name!r}: use one of {', '.join(STAGES)}") from None


def shown_matrix(name: str) -> str:
    """The result's matrix the stage's heatmap shows: its own, or (a stage of vectors) the next stage's."""
    i = STAGES.index(stage_spec(name).name)
    for spec in REGISTRY[i:]:
        if spec.matrix is not None:
            return spec.matrix
    raise ValueError(f"stage {name!r} shows no matrix and no later stage does")


def formula_html(stage: str, mark: Callable[[str], str]) -> str:
    """:data:`FORMULA` with ``stage``'s piece(s) passed through ``mark`` (the stepper's highlight)."""
    pieces = {s.name: [mark(p) if s.name == stage else p for p in s.formula_piece] for s in REGISTRY}
    return FORMULA.format(**pieces)


def table_columns() -> tuple[tuple[str, str, str], ...]:
    """Every calculation-table column in order, as (key, heading, stage it appears at)."""
    return tuple((key, heading, s.name) for s in REGISTRY for key, heading in s.columns)


#: Each result a stage reveals → the index of that stage in ``STAGES``.
_REVEALED_AT: dict[str, int] = {what: i for i, s in enumerate(REGISTRY) for what in s.reveals}
#: The results the lesson shows, in the order its stages reveal them (fields of
#: :class:`~qkv_studio.core.attention.AttentionResult`: ``scores``, ``scaled``, ``weights``, ``output``).
RESULTS: tuple[str, ...] = tuple(_REVEALED_AT)


def reveals(stage: str, what: str, *, all_stages: bool = False) -> bool:
    """True when a view at ``stage`` may show the result ``what`` (``"scores"``, ``"scaled"``,
    ``"weights"``, ``"output"``): the stage that reveals it has been reached — at the vectors stage and
    Q·Kᵀ the blend's weights and output are not shown yet, the answer before the question.
    ``all_stages`` (View → Show all stages at once) shows everything at every stage."""
    at = _REVEALED_AT.get(what)
    if at is None:
        raise ValueError(f"no stage reveals {what!r}: one of {', '.join(_REVEALED_AT)}")
    return all_stages or STAGES.index(stage_spec(stage).name) >= at
