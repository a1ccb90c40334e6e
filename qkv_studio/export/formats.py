"""The export formats: one :class:`ExportFormat` per file suffix, in the order they are offered.

Everything that names formats reads this registry at the time it runs: ``export_file`` (which
writer a path gets, and the "unknown format" message), the command line (``qkv-studio export -o``'s
accepted suffixes, its help and its error messages) and the export dialog (its format box and file
filters for figures; the *Export numbers…* file filter for numbers).

This module imports no Qt, and neither do the numbers writers, so ``qkv-studio export s.json -o
w.csv`` runs without loading PySide6 (``tests/test_layering.py`` checks it).  A figure writer imports
what it draws with inside its function.

To add a format, write a function ``(job: ExportJob) -> bytes`` that returns the whole file (raise
``ValueError`` for a scene it cannot show, ``OSError`` when encoding fails; the caller writes the file
atomically and words the message), and add one entry to ``_BUILT_IN`` below, e.g.::

    def _tsv(job: ExportJob) -> bytes:
        from qkv_studio.core.numbers import stage_csv   # Qt-free, so needs_qt=False
        return stage_csv(job.scene, job.stage).replace(",", "\\t").encode("utf-8")

    ExportFormat(".tsv", "TSV — current stage", "numbers", _tsv, needs_qt=False)

then a test in ``tests/export/`` that writes one.  A format may also write two other pictures of the
lesson: ``slide`` (the presentation slide as the audience sees it, painted by ``job.slide``: the
command line's ``--slide``) and ``slides`` (a page per stage: ``--slides``); the export dialog offers
them in its *Picture* box for the formats that have them.  ``job.ink`` (not None: the ink was asked
for) is drawn on those two, the slide's own layout, never on the bare figure: a ``slides`` writer then
makes each page the presentation slide of its stage (``job.compose(stage)``) with that stage's ink.
Kinds: ``figure`` (one stage's heatmap), ``numbers``, ``animation`` (the stage sequence moving: ``job.motion``,
``job.stages``), ``deck``
(a slide per stage: ``job.stages``) and ``page`` (the interactive page: the scene itself, every stage,
editable).  (:func:`register` adds one at run time; tests use it
with a monkeypatched :data:`REGISTRY`.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from qkv_studio.core import Scene
    from qkv_studio.core.ink import Ink
    from qkv_studio.export.slide import SlidePainter
    from qkv_studio.export.timeline import MotionOptions
    from qkv_studio.render.figure import FigureOptions

Kind = Literal["figure", "numbers", "animation", "deck", "page"]
#: How a figure's size is given: ``pixels`` (a raster image ``width`` px wide), ``scalable`` (vector,
#: no size of its own) or ``page`` (vector, one page of the figure's size in points).
Size = Literal["pixels", "scalable", "page"]
KINDS: tuple[str, ...] = ("figure", "numbers", "animation", "deck", "page")
SIZES: tuple[str, ...] = ("pixels", "scalable", "page")


@dataclass(frozen=True)
class ExportJob:
    """What one export file shows, as handed to a writer.

    ``stage`` and ``query`` are the view a numbers file was exported from (a figure's are
    ``options.stage`` and ``options.query``).  ``options`` is the
    validated :class:`qkv_studio.render.figure.FigureOptions` for a figure and None for numbers;
    ``width`` is a raster figure's width in pixels; ``head`` is (index counted from 0, number of
    heads) when the scene is one head of a multi-head scene.  ``stages`` are the stages of an animation or a deck, in
    order (None: the
    format's default), ``motion`` how an animation moves (None: the defaults).  ``slide`` paints the
    presentation slide (for a format's ``slide`` writer: :class:`qkv_studio.export.slide.SlidePainter`).
    ``ink`` is the scene's ink to draw on the slide (None: none was asked for; :mod:`qkv_studio.core.ink`)
    and ``compose(stage)`` paints the presentation slide of any stage (a page per stage with ink).
    """

    scene: Scene
    stage: str
    query: int = 0
    options: FigureOptions | None = None
    width: int | None = None
    head: tuple[int, int] | None = None
    stages: tuple[str, ...] | None = None
    motion: MotionOptions | None = None
    slide: SlidePainter | None = None
    ink: Ink | None = None
    compose: Callable[[str], SlidePainter] | None = None

    @property
    def selected_query(self) -> int:
        """The query the file shows (the view's)."""
        return self.query

    def figure_options(self) -> FigureOptions:
        """``options``, which every writer of a figure needs; ValueError for a job without them."""
        if self.options is None:
            raise ValueError("a figure export needs its figure options")
        return self.options

    def pixel_width(self) -> int:
        """``width``, which every writer of pixels needs; ValueError for a job without one."""
        if self.width is None:
            raise ValueError("a raster export needs its width in pixels")
        return self.width

    def motion_options(self) -> MotionOptions:
        """``motion`` (or the defaults) with ``stages`` applied, validated."""
        from dataclasses import replace

        from qkv_studio.export.timeline import MotionOptions

        motion = self.motion if self.motion is not None else MotionOptions()
        return (replace(motion, stages=self.stages) if self.stages else motion).validated()


@dataclass(frozen=True)
class ExportFormat:
    """One file format: its suffix, what the user sees, what it holds and the function that writes it.

    ``label`` names it in the export dialog's format box and file filters (for numbers it also says
    what is inside: "CSV — current stage").  ``kind`` is ``figure`` (the heatmap, offered by *Export
    heatmap…* and the figure options) or ``numbers`` (*Export numbers…*).  ``write`` returns the file's
    bytes.  ``needs_qt`` is False when the writer runs without a QGuiApplication (the command line then
    writes it without loading Qt).  For figures, ``size`` says how its size is given and
    ``transparent`` whether it can keep a transparent background (a PDF page is opaque).
    ``every_stage`` marks a numbers file that holds all stages rather than the current one.
    ``kind="animation"`` and ``"deck"`` files hold several stages too (``job.stages``).  ``slide`` and
    ``slides`` are the format's writers of the presentation slide and of a page per stage (None: the
    format has none).
    """

    suffix: str
    label: str
    kind: Kind
    write: Callable[[ExportJob], bytes]
    needs_qt: bool
    size: Size = "pixels"
    transparent: bool = True
    every_stage: bool = False
    slide: Callable[[ExportJob], bytes] | None = None
    slides: Callable[[ExportJob], bytes] | None = None

    def __post_init__(self) -> None:
        if not (self.suffix.startswith(".") and len(self.suffix) > 1 and self.suffix == self.suffix.lower()
                and "." not in self.suffix[1:]):
            raise ValueError(f"an export suffix is one lower-case ending such as '.png', not {self.suffix!r}")
        if self.kind not in KINDS:
            raise ValueError(f"export kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if self.size not in SIZES:
            raise ValueError(f"export size must be one of {', '.join(SIZES)}, not {self.size!r}")

    @property
    def is_vector(self) -> bool:
        """A vector figure: it has no pixel width (``width`` is ignored)."""
        return self.size != "pixels"

    @property
    def file_filter(self) -> str:
        """The entry of a file dialog's filter list: ``PNG image (*.png)``."""
        return f"{self.label} (*{self.suffix})"


# ---- the built-in writers (each imports its renderer when first used) -----------------------------
def _png(job: ExportJob) -> bytes:
    from qkv_studio.export.figures import png_bytes

    return png_bytes(job.scene, job.figure_options(), job.pixel_width())


def _svg(job: ExportJob) -> bytes:
    from qkv_studio.export.figures import svg_bytes

    return svg_bytes(job.scene, job.figure_options())


def _pdf(job: ExportJob) -> bytes:
    from qkv_studio.export.figures import pdf_bytes

    return pdf_bytes(job.scene, job.figure_options())


def _slide(suffix: str) -> Callable[[ExportJob], bytes]:
    def write(job: ExportJob) -> bytes:
        from qkv_studio.export.slide import slide_bytes, with_ink

        if job.slide is None:
            raise ValueError("a slide export needs the slide to paint (the window's presentation)")
        options = job.figure_options()
        slide = job.slide if job.ink is None else with_ink(job.slide, job.ink.strokes(options.stage))
        return slide_bytes(suffix, slide, job.scene, options)

    return write


def _slides_pdf(job: ExportJob) -> bytes:
    from qkv_studio.export.slides import slides_pdf_bytes

    return slides_pdf_bytes(job.scene, job.figure_options(), job.stages, query=job.selected_query, ink=job.ink,
                            compose=job.compose)


def _animation(suffix: str) -> Callable[[ExportJob], bytes]:
    def write(job: ExportJob) -> bytes:
        from qkv_studio.export import motion

        encode = {".gif": motion.gif_bytes, ".apng": motion.apng_bytes, ".mp4": motion.mp4_bytes}[suffix]
        return encode(job.scene, job.figure_options(), job.motion_options(), job.pixel_width(),
                      query=job.selected_query)

    return write


def _pptx(job: ExportJob) -> bytes:
    from qkv_studio.export.slides import pptx_bytes

    return pptx_bytes(job.scene, job.figure_options(), job.stages, job.pixel_width(), query=job.selected_query,
                      ink=job.ink, compose=job.compose)


def _csv(job: ExportJob) -> bytes:
    from qkv_studio.export.numbers import csv_bytes

    return csv_bytes(job.scene, job.stage)


def _json(job: ExportJob) -> bytes:
    from qkv_studio.export.numbers import json_bytes

    return json_bytes(job.scene, query=job.query, stage=job.stage, head=job.head)


def _page(job: ExportJob) -> bytes:
    from qkv_studio.core.view import View
    from qkv_studio.export.page import page_bytes

    return page_bytes([(job.scene, View(job.query, job.stage))])


_BUILT_IN = (
    ExportFormat(".png", "PNG image", "figure", _png, needs_qt=True, size="pixels", slide=_slide(".png")),
    ExportFormat(".svg", "SVG (vector)", "figure", _svg, needs_qt=True, size="scalable", slide=_slide(".svg")),
    ExportFormat(".pdf", "PDF (vector)", "figure", _pdf, needs_qt=True, size="page", transparent=False,
                 slide=_slide(".pdf"), slides=_slides_pdf),
    ExportFormat(".csv", "CSV — current stage", "numbers", _csv, needs_qt=False),
    ExportFormat(".json", "JSON — all stages", "numbers", _json, needs_qt=False, every_stage=True),
    ExportFormat(".gif", "GIF animation of the stages", "animation", _animation(".gif"), needs_qt=True,
                 transparent=False),
    ExportFormat(".apng", "Animated PNG of the stages", "animation", _animation(".apng"), needs_qt=True,
                 transparent=False),
    ExportFormat(".mp4", "MP4 video (H.264) of the stages", "animation", _animation(".mp4"), needs_qt=True,
                 transparent=False),
    ExportFormat(".pptx", "PowerPoint deck, a slide per stage", "deck", _pptx, needs_qt=True, transparent=False,
                 slides=_pptx),
    ExportFormat(".html", "Interactive page (.html), one file for phones and laptops", "page", _page,
                 needs_qt=False, size="scalable"),
)

#: suffix → format, in the order the formats are offered.  Read it through the functions below.
REGISTRY: dict[str, ExportFormat] = {f.suffix: f for f in _BUILT_IN}


def register(fmt: ExportFormat) -> ExportFormat:
    """Add ``fmt`` (offered after the formats already there); ValueError if its suffix is taken."""
    if fmt.suffix in REGISTRY:
        raise ValueError(f"an export format for {fmt.suffix} is already registered")
    REGISTRY[fmt.suffix] = fmt
    return fmt


def get(suffix: str) -> ExportFormat | None:
    """The format for a file ending (any case, with its dot: ``.PNG``), or None."""
    return REGISTRY.get(suffix.lower())


def formats(kind: Kind | None = None) -> tuple[ExportFormat, ...]:
    """Every format (or those of one kind), in the order they are offered."""
    return tuple(f for f in REGISTRY.values() if kind is None or f.kind == kind)


def suffixes(kind: Kind | None = None) -> tuple[str, ...]:
    """The suffixes of :func:`formats`: ``(".png", ".svg", …)``."""
    return tuple(f.suffix for f in formats(kind))


def spelled(names: tuple[str, ...] | list[str], last: str = "or") -> str:
    """``.png, .svg or .pdf`` (one name alone as it is)."""
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


#: What an export file can show, as the export dialog's *Picture* box names it: the heatmap figure (for an
#: animation: the figure moving), the presentation slide as the audience sees it, or a slide per stage.
PICTURES: dict[str, str] = {
    "figure": "The heatmap figure",
    "slide": "The slide as the audience sees it",
    "slides": "Slides, a page per stage",
    "page": "The scene itself: every stage, editable, offline",
}


def pictures(fmt: ExportFormat) -> tuple[str, ...]:
    """The pictures (keys of :data:`PICTURES`) a format writes, the first its own."""
    if fmt.kind == "deck":
        return ("slides",)
    if fmt.kind == "page":
        return ("page",)
    if fmt.kind == "animation":
        return ("figure",)
    if fmt.kind != "figure":
        return ()
    return ("figure",) + (("slide",) if fmt.slide else ()) + (("slides",) if fmt.slides else ())


def writer(fmt: ExportFormat, picture: str | None = None) -> Callable[[ExportJob], bytes]:
    """The function that writes ``picture`` in ``fmt`` (None: the format's own, ``write``); ValueError
    naming the formats that have it."""
    if picture is None:
        return fmt.write
    if picture not in pictures(fmt) and not (picture == "figure" and fmt.kind == "numbers"):
        having = [f.suffix for f in formats() if picture in pictures(f)]
        what = PICTURES.get(picture, picture).lower()
        raise ValueError(f"{fmt.suffix} cannot hold {what}: use {spelled(having) or 'another picture'}")
    if picture == "slide" and fmt.slide is not None:
        return fmt.slide
    if picture == "slides":
        return fmt.slides or fmt.write
    return fmt.write
