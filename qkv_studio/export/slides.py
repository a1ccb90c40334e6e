"""Slide decks of the stages: PowerPoint (python-pptx) and a multi-page vector PDF, one slide per stage.

Each 16:9 slide has the stage's title ("3 / 5 · Weights (softmax)") and its figure filling the rest of
the slide (the heatmap as :mod:`qkv_studio.render.figure` draws it).  In the PPTX the picture is a PNG
of the figure with its alt text (:mod:`qkv_studio.core.describe`) as the picture's description, and the
speaker notes hold the stage's caption with the query's numbers (:mod:`qkv_studio.core.captions`, via
the stage registry) and the stage's formula written out and in words.  In the PDF the figure is vector
(text stays text) and the document carries the alt text of every slide (XMP ``dc:description``).

With the lecture's ink (``ink``, :mod:`qkv_studio.core.ink`, not None: asked for) each slide is instead the
presentation slide of its stage as the audience saw it, ``compose(stage)`` (a
:class:`qkv_studio.export.slide.SlidePainter`: stage bar, formula, caption, the stage's view), filling the
page, with that stage's strokes drawn on it where they were drawn on the projector.  (Ink is never drawn
on the bare figure: its layout is not the slide's, a stroke would land on another cell.)  The PPTX keeps
a title for each slide (behind the picture: the outline and screen readers have it), the picture's
description and the notes.

Public API::

    slide_notes(scene, stage, query) -> str
    pptx_bytes(scene, options, stages, width, *, query, ink=None, compose=None) -> bytes
    slides_pdf_bytes(scene, options, stages, *, query, ink=None, compose=None) -> bytes
    export_slides_pdf(scene, path, *, options=None, stages=None, query=None, ink=None, compose=None) -> Path
"""

from __future__ import annotations

import html
import io
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from qkv_studio.core import STAGES, Scene, progress
from qkv_studio.core.describe import describe
from qkv_studio.core.stages import stage_spec

if TYPE_CHECKING:  # (Qt and the renderer are imported where they are used)
    from PySide6.QtGui import QPainter

    from qkv_studio.core.ink import Ink
    from qkv_studio.export.slide import SlidePainter
    from qkv_studio.render.figure import FigureOptions

    Compose = Callable[[str], SlidePainter]

#: The slide: 13.333 × 7.5 in (PowerPoint's 16:9), in points for the PDF.
SLIDE_PT = (960.0, 540.0)
_TITLE_PT = 54.0  # the title band's height
_MARGIN_PT = 18.0
DEFAULT_STAGES = STAGES

def _plain(rich: str) -> str:
    """Rich text (captions, formulas) as plain text: sub/superscripts inline, tags dropped."""
    text = re.sub(r"<sub>(.*?)</sub>", r"_\1", rich)
    text = re.sub(r"<sup>(.*?)</sup>", r"^\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return " ".join(html.unescape(text).replace("\u2009", " ").split())


def _check_stages(given: Sequence[str] | None) -> tuple[str, ...]:
    stages = tuple(DEFAULT_STAGES if not given else given)
    for s in stages:
        stage_spec(s)
    if len(set(stages)) != len(stages):
        raise ValueError(f"each stage once: {', '.join(stages)}")
    return stages


def _inked_slides(ink: Ink | None, compose: Compose | None) -> Compose | None:
    """Each stage's presentation slide with its ink on top, when the ink was asked for (None when not);
    ValueError when it cannot be drawn."""
    if ink is None:
        return None
    if compose is None:
        raise ValueError("the ink is drawn on the presentation slide of each stage, which only the window "
                         "composes: export the slides with their ink from the window or the command line")

    def inked(stage: str) -> SlidePainter:
        from qkv_studio.export.slide import with_ink

        return with_ink(compose(stage), ink.strokes(stage))

    return inked


def slide_title(stage: str, index: int, total: int) -> str:
    """``3 / 5 · Weights (softmax)``."""
    return f"{index} / {total} · {stage_spec(stage).export_label}"


def slide_notes(scene: Scene, stage: str, query: int) -> str:
    """The speaker notes of a stage's slide: its caption with the query's numbers, the formula, in words."""
    spec = stage_spec(stage)
    caption = _plain(spec.caption(scene, scene.result(), query))
    return f"{caption}\n\nFormula: {_plain(spec.formula)}\n\nIn words: {spec.spoken}"


def pptx_bytes(scene: Scene, options: FigureOptions, stages: tuple[str, ...] | None, width: int, *, query: int,
               ink: Ink | None = None, compose: Compose | None = None) -> bytes:
    """A PowerPoint deck: one 16:9 slide per stage, title, figure picture (with its description) and notes;
    with ``ink`` the picture is the stage's presentation slide with its ink, filling the slide."""
    from pptx import Presentation
    from pptx.util import Emu, Pt

    from qkv_studio.export.figures import ensure_app, png_bytes

    ensure_app()
    stages = _check_stages(stages)
    compose = _inked_slides(ink, compose)
    shown = scene
    prs = Presentation()
    prs.slide_width, prs.slide_height = Emu(12192000), Emu(6858000)  # 13.333 × 7.5 in
    emu_per_pt = 12700
    blank = prs.slide_layouts[6]
    descriptions: dict[tuple[str, str], str] = {}
    for k, stage in enumerate(stages, 1):
        opts = replace(options, stage=stage, query=query).validated()
        slide = prs.slides.add_slide(blank)
        box = slide.shapes.add_textbox(Pt(_MARGIN_PT), Pt(8), Pt(SLIDE_PT[0] - 2 * _MARGIN_PT), Pt(_TITLE_PT - 12))
        box.text_frame.text = slide_title(stage, k, len(stages))
        run = box.text_frame.paragraphs[0].runs[0]
        run.font.size, run.font.bold = Pt(26), True
        if compose is not None:  # the presentation slide with its ink, over the whole slide (and its title)
            from qkv_studio.export.slide import slide_bytes

            with progress.part((k - 1) / len(stages), k / len(stages), f"slide {k} of {len(stages)}"):
                data = slide_bytes(".png", compose(stage), shown, opts)
            area_w, area_h, top = SLIDE_PT[0], SLIDE_PT[1], 0.0
        else:  # the picture fills the slide below the title, keeping its aspect
            data = png_bytes(shown, opts, width)
            area_w, area_h, top = SLIDE_PT[0] - 2 * _MARGIN_PT, SLIDE_PT[1] - _TITLE_PT - _MARGIN_PT, _TITLE_PT
        from PIL import Image

        with Image.open(io.BytesIO(data)) as im:
            pw, ph = im.size
        s = min(area_w / pw, area_h / ph)
        w, h = pw * s, ph * s
        x, y = (SLIDE_PT[0] - w) / 2, top + (area_h - h) / 2
        pic = slide.shapes.add_picture(io.BytesIO(data), Emu(round(x * emu_per_pt)), Emu(round(y * emu_per_pt)),
                                       Emu(round(w * emu_per_pt)), Emu(round(h * emu_per_pt)))
        desc = describe(shown, stage, query, heading=opts.heading)
        pic.name = f"{stage} slide" if compose is not None else f"{stage} heatmap"
        # (python-pptx has no property for a picture's alt text: pptx_alt writes it into the saved file)
        descriptions[(str(slide.part.partname), pic.name)] = desc.text
        slide.notes_slide.notes_text_frame.text = slide_notes(shown, stage, query)
    props = prs.core_properties
    props.title = f"{scene.title or 'Self-attention'}: the stages of attention"
    props.subject = "Self-attention stage by stage (QKV Studio)"
    props.comments = (f"One slide per stage ({', '.join(stages)}); each picture carries its description."
                      + (" The slides as the audience saw them, with the lecture's ink." if compose else ""))
    props.author = "QKV Studio"
    buf = io.BytesIO()
    prs.save(buf)
    from qkv_studio.export.pptx_alt import set_descriptions

    return set_descriptions(buf.getvalue(), descriptions)


def slides_pdf_bytes(scene: Scene, options: FigureOptions, stages: tuple[str, ...] | None, *, query: int,
                     ink: Ink | None = None, compose: Compose | None = None) -> bytes:
    """A multi-page vector PDF: one 16:9 page per stage, the title and the figure (text stays text); with
    ``ink`` each page is the stage's presentation slide with its ink."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSizeF, Qt
    from PySide6.QtGui import QColor, QFont, QPageLayout, QPageSize, QPainter, QPdfWriter

    from qkv_studio.export.figures import describe_pdf, ensure_app
    from qkv_studio.render.figure import FONT_FAMILY, background_color, effective_theme, paint_figure

    ensure_app()
    stages = _check_stages(stages)
    compose = _inked_slides(ink, compose)
    shown = scene
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setResolution(1200)
    describe_pdf(writer, f"{scene.title or 'Self-attention'}: the stages of attention",
                 " ".join(f"Slide {k}: {describe(shown, s, query, heading=options.heading).text}"
                          for k, s in enumerate(stages, 1)))
    page = QPageSize(QSizeF(*SLIDE_PT), QPageSize.Unit.Point, "slide", QPageSize.SizeMatchPolicy.ExactMatch)
    layout = QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Point)
    layout.setMode(QPageLayout.Mode.FullPageMode)
    if not writer.setPageLayout(layout):
        raise ValueError("a 16:9 slide page is not possible in a PDF")
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError("the PDF writer could not start")
    try:
        full = writer.pageLayout().fullRectPixels(writer.resolution())
        k_pt = full.width() / SLIDE_PT[0]  # device units per point
        for k, stage in enumerate(stages, 1):
            if k > 1:
                writer.newPage()
            if compose is not None:
                with progress.part((k - 1) / len(stages), k / len(stages), f"page {k} of {len(stages)}"):
                    _paint_slide_page(painter, compose(stage), full.width(), full.height())
                continue
            opts = replace(options, stage=stage, query=query).validated()
            if opts.background == "transparent":  # (a PDF page is opaque)
                opts = replace(opts, background="white")
            painter.fillRect(QRectF(0, 0, full.width(), full.height()), background_color(opts))
            font = QFont(FONT_FAMILY)
            font.setPointSizeF(24)
            font.setBold(True)
            painter.setFont(font)
            painter.setPen(QColor(effective_theme(opts).text))
            title = QRectF(_MARGIN_PT * k_pt, 8 * k_pt, (SLIDE_PT[0] - 2 * _MARGIN_PT) * k_pt, (_TITLE_PT - 12) * k_pt)
            painter.drawText(title, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                             slide_title(stage, k, len(stages)))
            area = QRectF(_MARGIN_PT * k_pt, _TITLE_PT * k_pt, (SLIDE_PT[0] - 2 * _MARGIN_PT) * k_pt,
                          (SLIDE_PT[1] - _TITLE_PT - _MARGIN_PT) * k_pt)
            paint_figure(painter, area, shown, opts)
    finally:
        painter.end()
    buf.close()
    return bytes(data.data())


def _paint_slide_page(painter: QPainter, slide: SlidePainter, page_w: float, page_h: float) -> None:
    """``slide`` (its pixels) scaled to fill a page of ``page_w`` × ``page_h`` device units, centred."""
    w, h = slide.size
    k = min(page_w / w, page_h / h)
    painter.save()
    painter.translate((page_w - w * k) / 2, (page_h - h * k) / 2)
    painter.scale(k, k)
    slide.paint(painter)
    painter.restore()


def export_slides_pdf(scene: Scene, path: str | os.PathLike[str], *, options: FigureOptions | None = None,
                      stages: tuple[str, ...] | None = None, query: int | None = None, ink: Ink | None = None,
                      compose: Compose | None = None) -> Path:
    """Write :func:`slides_pdf_bytes` to ``path`` atomically (nothing partial on failure); returns the path.
    ``ink`` and ``compose`` as for :func:`slides_pdf_bytes`."""
    from qkv_studio.export.atomic import reason, write_atomic
    from qkv_studio.export.figures import resolve_options

    path = Path(path)
    if path.suffix.lower() != ".pdf":
        raise ValueError(f"cannot write slides to {path}: the name must end in .pdf")
    opts = resolve_options(scene, options)
    try:
        data = slides_pdf_bytes(scene, opts, stages, query=opts.query if query is None else query, ink=ink,
                                compose=compose)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {reason(exc)}") from exc
    write_atomic(path, data)
    return path
