"""The presentation slide (what the audience sees in presentation mode) as a PNG, SVG or PDF file.

The slide itself is composed by the window (stage bar, formula, caption, the stage's main view and the
calculation table, sized for the slide); this module only needs something that paints it, a
:class:`SlidePainter`, and writes what it paints: a PNG of exactly ``size`` pixels, an SVG of that size
(text stays text) or a one-page vector PDF of 0.75 pt per pixel (a 1280 × 720 slide is 960 × 540 pt).
Each file carries the alt text of the slide's figure (title and description), as every figure does.

The ink drawn on the slide (:mod:`qkv_studio.core.ink`: points as fractions of the slide) goes on top
when asked: :func:`with_ink` wraps a painter so that the strokes of its stage are drawn over the slide
by :func:`qkv_studio.render.ink.paint_strokes`, scaled to the picture, as the projector showed them.

Public API::

    SlidePainter (protocol: size, paint(painter))
    with_ink(slide, strokes) -> SlidePainter
    slide_bytes(suffix, slide, scene, options) -> bytes
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSize, QSizeF
from PySide6.QtGui import QColor, QImage, QPageLayout, QPageSize, QPaintDevice, QPainter, QPdfWriter

from qkv_studio.core import Scene
from qkv_studio.core.describe import describe
from qkv_studio.core.ink import Stroke
from qkv_studio.export.png import encode_png
from qkv_studio.render.figure import FigureOptions

_PDF_DPI = 1200
#: the sides a slide may have, in pixels (a 160 px thumbnail to an 8K screen)
SLIDE_RANGE = (160, 7680)


class SlidePainter(Protocol):
    """Paints the presentation slide: ``size`` is (width, height) in pixels; ``paint`` draws the slide onto
    a painter whose coordinates are those pixels (0, 0 at the top left)."""

    @property
    def size(self) -> tuple[int, int]: ...

    def paint(self, painter: QPainter) -> None: ...


@dataclass(frozen=True)
class InkedSlide:
    """A slide with ink on top: ``slide`` painted, then ``strokes`` (fractions of the slide) over all of it."""

    slide: SlidePainter
    strokes: tuple[Stroke, ...]

    @property
    def size(self) -> tuple[int, int]:
        return self.slide.size

    def paint(self, painter: QPainter) -> None:
        from qkv_studio.render.ink import paint_strokes

        self.slide.paint(painter)
        w, h = self.slide.size
        paint_strokes(painter, self.strokes, QRectF(0, 0, w, h), reports=True)


def with_ink(slide: SlidePainter, strokes: Sequence[Stroke]) -> SlidePainter:
    """``slide`` with ``strokes`` drawn over it (``slide`` itself when there are none)."""
    strokes = tuple(strokes)
    return InkedSlide(slide, strokes) if strokes else slide


def slide_text(scene: Scene, options: FigureOptions) -> tuple[str, str]:
    """(title, description) a slide file carries: the slide's stage and its figure's alt text."""
    desc = describe(scene, options.stage, options.query, heading=options.heading)
    return f"Slide: {desc.title}", desc.text


def check_size(size: tuple[int, int]) -> tuple[int, int]:
    """A slide's (width, height) in pixels, or ValueError naming the range."""
    lo, hi = SLIDE_RANGE
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"a slide's size is two whole numbers of pixels, not {size!r}") from None
    if not (lo <= w <= hi and lo <= h <= hi):
        raise ValueError(f"a slide is {lo}–{hi} pixels on each side, not {w}×{h}")
    return w, h


def slide_bytes(suffix: str, slide: SlidePainter, scene: Scene, options: FigureOptions) -> bytes:
    """The slide as file contents: ``.png``, ``.svg`` or ``.pdf``; ValueError for another suffix."""
    w, h = check_size(slide.size)
    title, description = slide_text(scene, options)
    if suffix == ".png":
        img = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        if img.isNull():
            raise ValueError(f"cannot allocate a {w}×{h} slide")
        img.fill(QColor("#ffffff"))
        _paint(img, slide)
        return encode_png(img, opaque=True, text={"Title": title, "Description": description,
                                                  "Software": "QKV Studio"})
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if suffix == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        gen = QSvgGenerator()
        gen.setOutputDevice(buf)
        gen.setSize(QSize(w, h))
        gen.setViewBox(QRectF(0, 0, w, h))
        gen.setResolution(96)
        gen.setTitle(title)
        gen.setDescription(description)
        _paint(gen, slide)
    elif suffix == ".pdf":
        from qkv_studio.export.figures import PT_PER_PX, describe_pdf

        writer = QPdfWriter(buf)
        writer.setResolution(_PDF_DPI)
        describe_pdf(writer, title, description)
        page = QPageSize(QSizeF(w * PT_PER_PX, h * PT_PER_PX), QPageSize.Unit.Point, "slide",
                         QPageSize.SizeMatchPolicy.ExactMatch)
        layout = QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Point)
        layout.setMode(QPageLayout.Mode.FullPageMode)
        if not writer.setPageLayout(layout):
            raise ValueError(f"a {w}×{h} slide page is not possible in a PDF")
        full = writer.pageLayout().fullRectPixels(writer.resolution())
        _paint(writer, slide, full.width() / w)
    else:
        raise ValueError(f"a slide is written as .png, .svg or .pdf, not {suffix or '(no suffix)'!r}")
    buf.close()
    return bytes(data.data())


def _paint(device: QPaintDevice, slide: SlidePainter, scale: float = 1.0) -> None:
    painter = QPainter()
    if not painter.begin(device):
        raise OSError("the slide's writer could not start")
    try:
        if scale != 1.0:
            painter.scale(scale, scale)
        slide.paint(painter)
    finally:
        painter.end()
