"""The heatmap figure as file contents (PNG, SVG, PDF) and as an image, with no window on screen.

The figure is drawn by :mod:`qkv_studio.render.figure` straight onto a ``QImage``, a ``QSvgGenerator``
or a ``QPdfWriter`` (never pyqtgraph's SVG exporter, which is broken on PySide6 ≥ 6.11): in SVG and
PDF the labels and values are text and the cells are shapes.  The PNG encoding is
:mod:`qkv_studio.export.png`'s.

Every file carries the figure's alt text (:func:`alt_text`, written by :mod:`qkv_studio.core.describe`
from the numbers): SVG ``<title>``/``<desc>``, the PDF's document title and its XMP ``dc:description``
(Qt writes no Info ``/Subject`` and no tagged PDF), PNG ``iTXt`` chunks ``Title`` and ``Description``.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QIODevice, QMarginsF, QRectF, QSize, QSizeF
from PySide6.QtGui import QGuiApplication, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter

from qkv_studio.core import Scene
from qkv_studio.core.describe import Description, describe
from qkv_studio.export.png import encode_png
from qkv_studio.render.figure import (
    MAX_WIDTH_PX,
    FigureOptions,
    background_color,
    figure_size,
    figure_title,
    paint_figure,
    render_image,
)

DEFAULT_WIDTH = 1600
#: A PDF point per logical figure pixel (CSS's 96 px = 72 pt), so a 540 px figure is a 405 pt page.
PT_PER_PX = 0.75
_PDF_DPI = 1200

_APP: QGuiApplication | None = None


def ensure_app() -> QGuiApplication:
    """The running QGuiApplication, creating one if there is none (fonts and QPainter text need it).

    Without a display (Linux with neither ``DISPLAY`` nor ``WAYLAND_DISPLAY``) and with
    ``QT_QPA_PLATFORM`` unset, the ``offscreen`` platform is chosen, so exporting works in a terminal,
    over SSH or in CI.
    """
    global _APP
    app = QCoreApplication.instance()
    if app is None:
        headless = sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
        if headless and not os.environ.get("QT_QPA_PLATFORM"):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        app = QGuiApplication([sys.argv[0] if sys.argv and sys.argv[0] else "qkv-studio"])
        _APP = app  # keep it alive for the life of the process
    if not isinstance(app, QGuiApplication):
        raise RuntimeError("a QCoreApplication is running, but drawing figures needs a QGuiApplication")
    return app


# ---- options ----------------------------------------------------------------------------------
def resolve_options(scene: Scene, options: FigureOptions | None = None, *, theme: str | None = None,
                    colormap: str | None = None) -> FigureOptions:
    """``options`` (default: the weights of query 0, light theme) with ``theme``/``colormap`` applied when
    given; ValueError for an unknown stage, theme, background or colormap."""
    opts = options if options is not None else FigureOptions()
    changes: dict[str, Any] = {}
    if theme is not None:
        changes["theme"] = theme
    if colormap is not None:
        changes["colormap"] = colormap
    return replace(opts, **changes).validated()


def check_width(width: int | None) -> int:
    """A PNG width in pixels (``None``: the default 1600); ValueError when it is not a whole number in range."""
    if width is None:
        return DEFAULT_WIDTH
    if isinstance(width, bool) or not isinstance(width, int):
        raise ValueError(f"width must be a whole number of pixels, got {width!r}")
    if not 16 <= width <= MAX_WIDTH_PX:
        raise ValueError(f"width must be 16–{MAX_WIDTH_PX} pixels, got {width}")
    return width


# ---- rendering to bytes -------------------------------------------------------------------------
def figure_image(scene: Scene, options: FigureOptions | None = None, width: int = DEFAULT_WIDTH) -> QImage:
    """The figure as an image ``width`` pixels wide (for the clipboard or a preview)."""
    ensure_app()
    return render_image(scene, resolve_options(scene, options), check_width(width))


def alt_text(scene: Scene, options: FigureOptions) -> Description:
    """The figure's description for readers who cannot see it (title and text), from its numbers."""
    # (the renderer draws the scene's query: the description names the same one)
    return describe(scene, options.stage, options.query, heading=options.heading)


def document_text(scene: Scene, options: FigureOptions) -> tuple[str, str]:
    """(title, description) a file carries: the figure's own drawn title and its alt text."""
    return figure_title(scene, options)[0], alt_text(scene, options).text


def png_text(title: str, description: str) -> dict[str, str]:
    """The PNG text chunks of a figure: its title, its description and the software."""
    return {"Title": title, "Description": description, "Software": "QKV Studio"}


def png_bytes(scene: Scene, options: FigureOptions, width: int) -> bytes:
    """The figure as PNG file contents, its alt text in ``iTXt`` chunks."""
    img = render_image(scene, options, width)
    opaque = background_color(options).alpha() == 255
    return encode_png(img, opaque=opaque, text=png_text(*document_text(scene, options)))


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def pdf_xmp(title: str, description: str) -> bytes:
    """The XMP packet of an exported PDF: ``dc:title``, ``dc:description`` (the alt text) and the tool."""
    def alt(tag: str, text: str) -> str:
        return (f"<dc:{tag}><rdf:Alt><rdf:li xml:lang=\"x-default\">{_xml(text)}</rdf:li></rdf:Alt></dc:{tag}>")

    return ("<?xpacket begin='\ufeff' id='W5M0MpCehiHzreSzNTczkc9d'?>"
            "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            "<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" "
            "xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" xmp:CreatorTool=\"QKV Studio\">"
            f"<dc:format>application/pdf</dc:format>{alt('title', title)}{alt('description', description)}"
            "</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end='w'?>").encode()


def describe_pdf(writer: QPdfWriter, title: str, description: str) -> None:
    """Give a PDF writer its document title, creator and description (XMP)."""
    writer.setTitle(title)
    writer.setCreator("QKV Studio")
    writer.setDocumentXmpMetadata(QByteArray(pdf_xmp(title, description)))


def svg_bytes(scene: Scene, options: FigureOptions) -> bytes:
    """The figure as an SVG document: labels and values as <text>, cells as shapes."""
    from PySide6.QtSvg import QSvgGenerator

    size = figure_size(scene, options)
    w, h = math.ceil(size.width()), math.ceil(size.height())
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(w, h))
    gen.setViewBox(QRectF(0, 0, w, h))
    gen.setResolution(96)
    title, desc = document_text(scene, options)
    gen.setTitle(title)
    gen.setDescription(desc)
    painter = QPainter()
    if not painter.begin(gen):
        raise OSError("the SVG generator could not start")
    try:
        paint_figure(painter, QRectF(0, 0, w, h), scene, options)
    finally:
        painter.end()
    buf.close()
    return bytes(data.data())


def pdf_bytes(scene: Scene, options: FigureOptions) -> bytes:
    """The figure as a one-page PDF whose page is exactly the figure (0.75 pt per figure pixel)."""
    size = figure_size(scene, options)
    page = QSizeF(size.width() * PT_PER_PX, size.height() * PT_PER_PX)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setResolution(_PDF_DPI)
    describe_pdf(writer, *document_text(scene, options))
    layout = QPageLayout(QPageSize(page, QPageSize.Unit.Point, "figure", QPageSize.SizeMatchPolicy.ExactMatch),
                         QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Point)
    layout.setMode(QPageLayout.Mode.FullPageMode)
    if not writer.setPageLayout(layout):
        raise ValueError(f"a {page.width():.0f}×{page.height():.0f} pt page is not possible in a PDF")
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError("the PDF writer could not start")
    try:
        full = writer.pageLayout().fullRectPixels(writer.resolution())
        paint_figure(painter, QRectF(0, 0, full.width(), full.height()), scene, options)
    finally:
        painter.end()
    buf.close()
    return bytes(data.data())
